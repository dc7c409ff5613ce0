"""Gemini CLI (adapters/gemini.py): both views of every shared 0.61.0 scenario agree,
each chat file's usage is its own per-call accounting, a subagent's lines are its
parent's run's, and every output validates."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import ROOT, SHARED
from helpers import (
    convert_bytes,
    convert_file,
    convert_session_files,
    framing_violations,
    lines_of,
    schema_violations,
    tree_violations,
)

from streamv1.adapters import gemini
from streamv1.adapters._gemini_files import session_hint, session_of

CORPUS = SHARED / "corpus" / "gemini-0.61.0"
FIXTURES = ROOT / "testdata" / "gemini"

#: What one view truly cannot know, and nothing else (docs/mapping.md says the same):
CANNOT_KNOW = {
    # stream-json's usage counts the model router's calls (and subagents'): the chat
    # file never records the router, and keeps a subagent's calls in its own file.
    "router_usage": "usage is not compared",
    # A killed run's streamed partial answer is never written to the chat file.
    "killed_partial_answer": "an interrupted run's stream text may go on past the file's",
    # A failed prompt is rolled back: the chat file has no error message.
    "error_message": "a failed run's result text is only the stream's",
}


def scenarios() -> list[str]:
    return sorted(p.name for p in CORPUS.iterdir() if p.is_dir()) if CORPUS.exists() else []


def chat_files(folder: Path) -> list[Path]:
    return sorted((folder / "durable" / ".gemini" / "tmp").rglob("chats/**/*.jsonl"))


def stream_outputs(folder: Path) -> list[Path]:
    return sorted(folder.glob("stdout*.json*"))


def runs(out: bytes) -> list[dict[str, Any]]:
    """The session's top-level runs: their is_error, result text, main-thread text."""
    found: list[dict[str, Any]] = []
    for line in lines_of(out):
        if "parent_tool_use_id" in line:
            continue
        if line["type"] == "system" and line.get("subtype") == "init":
            found.append({"session": line["session_id"], "texts": []})
        elif line["type"] == "assistant":
            found[-1]["texts"] += [
                b["text"] for b in line["message"]["content"] if b["type"] == "text"
            ]
        elif line["type"] == "result":
            found[-1].update(
                is_error=line["is_error"], subtype=line["subtype"], result=line.get("result")
            )
    return found


def test_the_cannot_know_list_is_in_the_docs() -> None:
    doc = (ROOT / "docs" / "mapping.md").read_text("utf-8")
    section = doc[doc.index("## gemini") : doc.index("<!-- BEGIN mapping:gemini -->")]
    for phrase in ("router", "partial answer", "error message"):
        assert phrase in section
    assert len(CANNOT_KNOW) == 3


#: Our own captures kept in testdata/gemini (README): both views of one session each.
OWN = ("mcp_image", "compress", "parallel")


def _views(case: str) -> tuple[list[Path], list[Path]]:
    """A case's chat files and stream-json outputs: ``corpus/<scenario>`` or ``own/<name>``."""
    where, name = case.split("/", 1)
    if where == "own":
        return [FIXTURES / f"chat_{name}.jsonl"], [FIXTURES / f"stream_{name}.jsonl"]
    folder = CORPUS / name
    return chat_files(folder), stream_outputs(folder)


@pytest.mark.parametrize("case", [f"corpus/{s}" for s in scenarios()] + [f"own/{n}" for n in OWN])
def test_both_views_agree(case: str) -> None:
    files, streams = _views(case)
    if not streams:
        pytest.skip("a TUI scenario: no stream-json")
    chat, chat_totals = convert_session_files(files)
    live = b"".join(convert_file(p)[0] for p in streams)
    assert chat_totals.errors == 0
    a, b = runs(chat), runs(live)
    assert {r["session"] for r in a} == {r["session"] for r in b}
    assert len(a) == len(b)
    for file_run, stream_run in zip(a, b, strict=True):
        assert file_run["is_error"] == stream_run["is_error"]
        if stream_run["subtype"] == "interrupted":  # killed_partial_answer
            assert file_run["subtype"] == "interrupted"
            assert stream_run["texts"][: len(file_run["texts"])] == file_run["texts"]
            continue
        assert file_run["texts"] == stream_run["texts"]
        if not stream_run["is_error"]:  # error_message
            assert file_run["result"] == stream_run["result"]


def _prompts(out: bytes) -> list[str]:
    """Each top-level run's prompt text ("" for a run no prompt opened)."""
    found: list[str] = []
    for line in lines_of(out):
        if line["type"] == "system" and line.get("subtype") == "init":
            found.append("")
        elif line["type"] == "user" and found and found[-1] == "":
            texts = [b.get("text") for b in line["message"]["content"] if b["type"] == "text"]
            found[-1] = "".join(t for t in texts if t) or found[-1]
    return found


def test_a_compression_mid_run_is_no_rollback() -> None:
    """g12: the history rebuilt (new ids, the prompt among them under a new one) while
    the second prompt's run goes on: one run per prompt, both successes."""
    out, _ = convert_file(FIXTURES / "chat_compress.jsonl")
    results = [x for x in lines_of(out) if x["type"] == "result"]
    assert [(x["subtype"], x["num_turns"]) for x in results] == [("success", 2)] * 2
    assert _prompts(out) == ["Run `echo one`.", "Now run `echo two`."]


def test_a_compress_command_between_prompts_makes_no_run() -> None:
    out, _ = convert_file(FIXTURES / "chat_compress_tui.jsonl")
    assert _prompts(out) == [
        "Run `echo one`.",
        "Run `echo two`.",
        "What did we run earlier",
    ]  # the TUI took "?" for its help key
    assert all(x["subtype"] == "success" for x in lines_of(out) if x["type"] == "result")


def test_a_restore_copies_no_run_and_its_rerun_call_is_a_notification() -> None:
    """g13: /restore records copies of its checkpoint's history (no model call wrote
    them) and runs the checkpoint's write_file again itself: no run of its own."""
    out, totals = convert_file(FIXTURES / "chat_restore.jsonl")
    assert totals.errors == 0
    lines = lines_of(out)
    assert _prompts(out) == [
        "Create notes.txt containing the lines alpha, beta and gamma.",
        "Add a line delta to notes.txt.",
        "What does notes.txt contain",  # "?" is the TUI's help key
    ]
    assert all(x["subtype"] == "success" for x in lines if x["type"] == "result")
    rerun = [x for x in lines if x.get("kind") == "command_tool_calls"]
    assert [x["extension"]["tools"] for x in rerun] == [["write_file"]]
    dropped = sum(
        x.get("extension", {}).get("dropped", {}).get("gemini/history_copy", 0)
        for x in lines
        if x["type"] == "result"
    )
    assert dropped >= 1


def test_an_mcp_image_beside_a_function_response_is_its_result() -> None:
    out, _ = convert_file(FIXTURES / "chat_mcp_image.jsonl")
    results = [
        b
        for x in lines_of(out)
        if x["type"] == "user"
        for b in x["message"]["content"]
        if b["type"] == "tool_result"
    ]
    assert len(results) == 1
    assert results[0]["extension"]["parts"][0]["inlineData"]["mimeType"] == "image/png"
    assert len(_prompts(out)) == 1


def _own_accounting(path: Path) -> tuple[int, int]:
    """The file's per-call accounting: each message id's last ``tokens`` (total,
    cached), records as written (never a checkpoint's replayed list)."""
    last: dict[str, dict[str, int]] = {}
    for raw in path.read_bytes().splitlines():
        rec = orjson.loads(raw)
        if rec.get("type") == "gemini" and isinstance(rec.get("tokens"), dict):
            last[rec["id"]] = rec["tokens"]
    return sum(t["total"] for t in last.values()), sum(t["cached"] for t in last.values())


def _chat_inputs() -> list[Path]:
    out = [p for s in scenarios() for p in chat_files(CORPUS / s)]
    return out + sorted(
        p
        for p in FIXTURES.rglob("*.jsonl")
        if ".expected." not in p.name
        and (p.name.startswith(("chat_", "session-")) or p.parent.name == session_hint(str(p)))
    )


@pytest.mark.parametrize("path", _chat_inputs(), ids=lambda p: "/".join(p.parts[-4:]))
def test_usage_is_the_files_own_accounting(path: Path) -> None:
    out, totals = convert_file(path)
    assert totals.errors == 0
    results = [x for x in lines_of(out) if x["type"] == "result"]
    total = sum(sum(x["usage"].values()) for x in results if "usage" in x)
    cached = sum(x["usage"]["cache_read"] for x in results if "usage" in x)
    assert (total, cached) == _own_accounting(path)


def test_a_resume_counts_both_processes_calls_not_the_replayed_history() -> None:
    out, _ = convert_file(FIXTURES / "chat_resume.jsonl")
    results = [x for x in lines_of(out) if x["type"] == "result"]
    assert [x["num_turns"] for x in results] == [2, 1]
    assert [x["usage"]["output_tokens"] for x in results] == [38, 24]


def test_a_subagents_lines_are_its_parents_runs() -> None:
    chats = FIXTURES / "subagent" / "chats"
    files = [p for p in chats.rglob("*.jsonl") if ".expected." not in p.name]
    keys = {session_of(str(p)) for p in files}
    assert keys == {str(chats / "session-2026-12-01T19-50-6cf9178a")}
    out, totals = convert_session_files(files)
    assert totals.errors == 0 and framing_violations(out) == []
    lines = lines_of(out)
    assert tree_violations(lines) == []
    assert [x["subtype"] for x in lines if x["type"] == "system"] == [
        "init",
        "task_started",
        "notification",
        "task_notification",
    ]
    spawn = "invoke_agent__invoke_agent_1796154652376_0"
    nested = [x for x in lines if x.get("parent_tool_use_id") == spawn]
    assert len(nested) == 6  # prompt, 2 calls, 2 results, the summary
    first, last = lines.index(nested[0]), lines.index(nested[-1])
    answer = next(
        i
        for i, x in enumerate(lines)
        if x["type"] == "user" and x["message"]["content"][0].get("tool_use_id") == spawn
    )
    assert first < last < answer  # between the call and its result
    result = lines[-1]
    assert result["type"] == "result" and result["num_turns"] == 2
    # usage: the parent's own calls; model_usage: every actor's
    assert result["usage"]["input_tokens"] + result["usage"]["cache_read"] == 12141 + 12322
    assert result["model_usage"]["gemini-3.8-flash"]["cache_read"] == 5632 + 6144 + 6144 * 2


def test_a_resumes_stub_file_makes_no_lines(tmp_path: Path) -> None:
    chats = tmp_path / "chats"
    chats.mkdir()
    head = (FIXTURES / "chat_resume.jsonl").read_bytes().splitlines()[:2]
    main = chats / "session-2026-12-01T19-48-2e64fa7e.jsonl"
    stub = chats / "session-2026-12-01T19-49-2e64fa7e.jsonl"
    main.write_bytes((FIXTURES / "chat_resume.jsonl").read_bytes())
    stub.write_bytes(b"\n".join(head) + b"\n")
    assert session_of(str(stub)) == session_of(str(main)) == str(main)[:-6]
    assert convert_file(stub)[0] == b""
    together, _ = convert_session_files([stub, main])
    assert together == convert_file(main)[0]


def test_a_rolled_back_prompt_is_an_error_run() -> None:
    out, _ = convert_file(FIXTURES / "chat_api_error.jsonl")
    result = lines_of(out)[-1]
    assert (result["subtype"], result["is_error"]) == ("error_during_execution", True)
    assert result["extension"]["rolled_back"] is True and "result" not in result


def _every_output() -> list[Path]:
    out = sorted(p for p in FIXTURES.rglob("*.jsonl") if ".expected." not in p.name)
    for s in scenarios():
        out += stream_outputs(CORPUS / s) + chat_files(CORPUS / s)
    return out


@pytest.mark.parametrize("path", _every_output(), ids=lambda p: "/".join(p.parts[-3:]))
def test_every_output_validates_and_is_auto_detected(path: Path) -> None:
    out, totals = convert_file(path)  # --source auto
    assert totals.sources == {"gemini": 1}
    assert totals.errors == 0
    assert schema_violations(out) == []
    assert framing_violations(out) == []


def test_bad_tokens_are_one_error_naming_the_line() -> None:
    records = [
        {"sessionId": "s", "projectHash": "h", "startTime": "2026-01-01T00:00:00Z"},
        {
            "id": "p",
            "timestamp": "2026-01-01T00:00:01Z",
            "type": "user",
            "content": [{"text": "hi"}],
        },
        {
            "id": "r",
            "timestamp": "2026-01-01T00:00:02Z",
            "type": "gemini",
            "content": "x",
            "tokens": {"input": [1]},
        },
    ]
    data = b"".join(orjson.dumps(r) + b"\n" for r in records)
    out, totals = convert_bytes(data, "chat.jsonl")
    errors = [x for x in lines_of(out) if x.get("subtype") == "error"]
    assert totals.errors == 1 and len(errors) == 1
    assert errors[0]["message"].startswith("chat.jsonl:3: gemini: tokens.input")


def test_the_chat_file_is_translated_in_flat_memory() -> None:
    """A long session (2,000 turns with tool calls, written as the CLI writes them):
    the adapter's state (what a checkpoint holds) stays the size of one turn."""
    from streamv1.translator.reading.sources import Where
    from streamv1.translator.state import dump

    lines = (FIXTURES / "chat_shell.jsonl").read_bytes().splitlines()
    head, body = lines[:2], lines[2:]
    adapter = gemini.GeminiAdapter("session-2026-12-01T19-47-9d89fbee.jsonl")
    sizes = []
    n = 0
    for turn in range(2000):
        for raw in (head if turn == 0 else []) + body:
            n += 1
            list(adapter.feed(orjson.loads(raw), Where("x", n)))
        if turn % 500 == 499:
            sizes.append(len(orjson.dumps(dump(adapter))))
    assert max(sizes) < 20_000 and max(sizes) - min(sizes) < 2_000, sizes


def test_a_subagent_file_waits_for_its_spawner_and_learns_it() -> None:
    """Live, the subagent's file is written before its parent names it: its lines
    wait (``holding``) until a task_notification hands on the link."""
    from streamv1.translator.reading.sources import Where

    agent = f"{'f' * 8}-0000-4000-8000-{'0' * 12}"
    path = f"/nonexistent/chats/6cf9178a-33e2-4c83-98d0-c2921fb5f629/{agent}.jsonl"
    adapter = gemini.GeminiAdapter(path)
    sub = FIXTURES / "subagent" / "chats" / "6cf9178a-33e2-4c83-98d0-c2921fb5f629"
    records = (sub / "f056c7df-c8c5-46d3-be59-5966957e9f07.jsonl").read_bytes().splitlines()
    held = [
        e
        for n, raw in enumerate(records, 1)
        for e in adapter.feed(orjson.loads(raw), Where(path, n))
    ]
    assert held == [] and adapter.holding
    assert adapter.learn_spawner("someone else", "t9") == []
    released = adapter.learn_spawner(agent, "t1")
    marked = [e for e in released if hasattr(e, "parent_tool_use_id")]
    assert marked and all(e.parent_tool_use_id == "t1" for e in marked)
