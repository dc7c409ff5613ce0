"""Codex CLI 0.171.0: both views of every shared scenario agree; each rollout's
usage is its own per-call accounting; a parent and its subagents' rollouts are one
session, the children's lines inside the parent's run. Scenarios are skipped
cleanly where ../shared is absent; the fixtures in testdata/codex always run."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import ROOT, SHARED, need
from helpers import (
    FIXED_NOW,
    convert_bytes,
    convert_file,
    convert_session_files,
    framing_violations,
    lines_of,
    schema_violations,
    tree_violations,
)

from streamv1.adapters import codex
from streamv1.translator.contract.validate import validate_stream
from streamv1.translator.reading.sources import sources
from streamv1.translator.translate.one_input import Totals, convert_stream

CORPUS = SHARED / "corpus" / "codex-0.171.0"
FIXTURES = ROOT / "testdata" / "codex"
C10 = FIXTURES / "c10_subagent" / "sessions"


def c10_files(root: Path = C10) -> list[Path]:
    return sorted(p for p in root.rglob("rollout-*.jsonl") if ".expected." not in p.name)


#: What one view truly cannot know, as rules (docs/mapping.md says the same); nothing
#: else is excused. Each names the view that cannot know it and the capture that shows it.
CANNOT_KNOW = {
    "exec_usage_of_unfinished_run": (
        "exec --json",
        "usage is printed only on turn.completed: a run killed (c8) or "
        "failed after model calls has none there; the rollout's token_usage_record has it",
    ),
    "exec_total_of_a_fork": (
        "exec --json",
        "a forked thread's turn.completed total starts at its parent's (c16_fork: 113442 = "
        "the parent's 56113 + the fork's own 57329), and thread.started names only the new "
        "thread: a fork looks like any new thread in a stream (c12 then c15 in one stream "
        "grow the same way), so its first total is taken whole; the fork's rollout "
        "(session_meta.forked_from_id, its own token_usage_record) counts each call once",
    ),
}


def excused(
    rollout_result: dict[str, Any],
    exec_result: dict[str, Any],
    rollout_init: dict[str, Any] | None = None,
    first_of_thread: bool = False,
) -> str | None:
    """The rule that excuses a token difference between the views' results, if any."""
    if "usage" not in exec_result and exec_result["subtype"] != "success":
        return "exec_usage_of_unfinished_run"
    forked = (rollout_init or {}).get("extension", {}).get("forked_from_id")
    if forked and first_of_thread and (tokens(exec_result) or 0) > (tokens(rollout_result) or 0):
        return "exec_total_of_a_fork"
    return None


def scenarios() -> list[str]:
    return (
        sorted(p.name for p in CORPUS.iterdir() if p.is_dir())
        if CORPUS.exists()
        else ["(no corpus)"]
    )


def fixture_cases() -> list[str]:
    """Our captures kept in testdata/codex with both views: ``<case>.exec.jsonl``
    beside ``<case>.rollout.jsonl`` or a ``<case>/sessions`` tree."""
    return sorted(
        p.name[: -len(".exec.jsonl")]
        for p in FIXTURES.glob("*.exec.jsonl")
        if (FIXTURES / p.name.replace(".exec.", ".rollout.")).exists()
        or (FIXTURES / p.name[: -len(".exec.jsonl")]).is_dir()
    )


def fixture_rollouts(case: str) -> list[Path]:
    tree = FIXTURES / case / "sessions"
    return c10_files(tree) if tree.is_dir() else [FIXTURES / f"{case}.rollout.jsonl"]


def rollouts(folder: Path) -> list[Path]:
    return sorted((folder / "durable" / ".codex" / "sessions").rglob("rollout-*.jsonl"))


def exec_stream(folder: Path) -> bytes:
    """The scenario's exec --json stdout, in order (a resume's second process after
    the first, as one pipe would carry them)."""
    return b"".join(p.read_bytes() for p in sorted(folder.glob("stdout*.jsonl")))


def runs(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per main-thread run: its init, its result and its own assistant text."""
    out: list[dict[str, Any]] = []
    texts: list[str] = []
    init: dict[str, Any] = {}
    for line in lines:
        if "parent_tool_use_id" in line:
            continue
        if line["type"] == "system" and line.get("subtype") == "init":
            texts, init = [], line
        elif line["type"] == "assistant":
            texts += [b["text"] for b in line["message"]["content"] if b.get("type") == "text"]
        elif line["type"] == "result":
            out.append({"init": init, "result": line, "texts": texts})
    return out


def tokens(result: dict[str, Any]) -> int | None:
    usage = result.get("usage")
    if usage is None:
        return None
    return sum(usage[k] for k in ("input_tokens", "output_tokens", "cache_read", "cache_creation"))


def assert_views_agree(durable: bytes, live: bytes) -> None:
    """Per session (a thread and its children; a fork is a thread of its own in both
    views), the same runs: is_error, result, main-thread text, and tokens but where
    a CANNOT_KNOW rule says why not."""
    d, s = lines_of(durable), lines_of(live)
    for data in (durable, live):
        assert framing_violations(data) == [] and schema_violations(data) == []
    assert tree_violations(d) == []
    sessions = {x["session_id"] for x in d}
    assert sessions == {x["session_id"] for x in s}
    for sid in sorted(sessions):
        rd = runs([x for x in d if x["session_id"] == sid])
        rs = runs([x for x in s if x["session_id"] == sid])
        assert len(rd) == len(rs), sid
        for i, (a, b) in enumerate(zip(rd, rs, strict=True)):
            assert a["result"]["is_error"] == b["result"]["is_error"], (sid, i)
            assert a["result"].get("result") == b["result"].get("result"), (sid, i)
            assert a["texts"] == b["texts"], (sid, i)
            if tokens(a["result"]) != tokens(b["result"]):
                rule = excused(a["result"], b["result"], a["init"], i == 0)
                assert rule in CANNOT_KNOW, (sid, i, tokens(a["result"]), tokens(b["result"]))


@pytest.mark.parametrize("scenario", scenarios())
def test_both_views_agree(scenario: str) -> None:
    folder = need(CORPUS / scenario)
    if not list(folder.glob("stdout*.jsonl")):
        pytest.skip("no exec --json stream (a TUI session: screens only)")
    durable, _ = convert_session_files(rollouts(folder))
    live, _ = convert_bytes(exec_stream(folder), "stdout.jsonl")
    assert_views_agree(durable, live)


@pytest.mark.parametrize("case", fixture_cases())
def test_both_views_of_our_fixtures_agree(case: str) -> None:
    """The same on the captures kept here (review, web search, tool search, goals,
    a failing apply_patch, a fork, an image, parallel calls: README.md)."""
    durable, td = convert_session_files(fixture_rollouts(case))
    live, tl = convert_bytes((FIXTURES / f"{case}.exec.jsonl").read_bytes(), "stdout.jsonl")
    assert td.errors == tl.errors == 0
    assert not [x for x in lines_of(durable) + lines_of(live) if x.get("subtype") == "unrecognized"]
    assert_views_agree(durable, live)


def test_the_excuse_is_needed() -> None:
    """c8 (killed after one model call) is the excuse's case: the rollout counts the
    call, the exec stream has no usage to give."""
    folder = need(CORPUS / "c8_killed")
    durable, _ = convert_session_files(rollouts(folder))
    live, _ = convert_bytes(exec_stream(folder), "stdout.jsonl")
    a, b = runs(lines_of(durable))[0]["result"], runs(lines_of(live))[0]["result"]
    assert tokens(a) and tokens(b) is None
    assert excused(a, b) == "exec_usage_of_unfinished_run"


def test_a_fork_looks_like_any_new_thread_in_an_exec_stream() -> None:
    """Why exec_total_of_a_fork is excused, not fixed: the fork's stream (c16) and
    two unrelated threads in one stream (c12 then c15) have the same shape, a second
    thread.started and a total grown in every count over the first thread's; only
    the fork's total holds its parent's (the rollouts say which is the fork)."""

    def totals(data: bytes) -> list[tuple[str, dict[str, int]]]:
        out, thread = [], ""
        for rec in (orjson.loads(raw) for raw in data.splitlines()):
            if rec["type"] == "thread.started":
                thread = rec["thread_id"]
            elif rec["type"] == "turn.completed":
                out.append((thread, rec["usage"]))
        return out

    fork = totals((FIXTURES / "c16_fork.exec.jsonl").read_bytes())
    unrelated = totals(
        (FIXTURES / "c12_web_search.exec.jsonl").read_bytes()
        + (FIXTURES / "c15_patch_fail.exec.jsonl").read_bytes()
    )
    for (t1, u1), (t2, u2) in (fork, unrelated):
        assert t1 != t2 and all(u2[k] >= u1[k] for k in u1)
    parent, child = fixture_rollouts("c16_fork")
    meta = orjson.loads(child.read_bytes().splitlines()[0])["payload"]
    assert meta["forked_from_id"] == fork[0][0]
    own = _own_accounting(child)[0]
    assert tokens_of(fork[1][1]) == tokens_of(fork[0][1]) + own
    live, _ = convert_bytes((FIXTURES / "c16_fork.exec.jsonl").read_bytes(), "s.jsonl")
    durable, _ = convert_session_files([parent, child])
    (a,), (b,) = (
        [r for r in runs(lines_of(x)) if r["result"]["session_id"] == fork[1][0]]
        for x in (durable, live)
    )
    assert tokens(a["result"]) == own and tokens(b["result"]) == tokens_of(fork[1][1])
    assert excused(a["result"], b["result"], a["init"], True) == "exec_total_of_a_fork"


def tokens_of(usage: dict[str, int]) -> int:
    """An exec total's tokens, counted as :func:`tokens` counts a result's."""
    return usage["input_tokens"] + usage["output_tokens"] + usage["cache_write_input_tokens"]


def _records(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(raw) for raw in path.read_bytes().splitlines()]


def _own_accounting(path: Path) -> tuple[int, int]:
    """Σ over the file's token_usage_record of (input + output + cache_write), and
    of cached input: its own per-call accounting."""
    total = cached = 0
    for rec in _records(path):
        if rec.get("type") == "token_usage_record":
            u = rec["payload"]["usage"]
            total += u["input_tokens"] + u["output_tokens"] + u["cache_write_input_tokens"]
            cached += u["cached_input_tokens"]
    return total, cached


def _usage_files() -> list[Path]:
    found = [p for s in scenarios() if (CORPUS / s).exists() for p in rollouts(CORPUS / s)]
    return found + sorted(FIXTURES.rglob("*.jsonl"))


@pytest.mark.parametrize(
    "path",
    [p for p in _usage_files() if ".expected." not in p.name and "exec" not in p.name],
    ids=lambda p: p.name,
)
def test_a_rollout_alone_counts_its_own_usage(path: Path) -> None:
    if not any(r.get("type") == "token_usage_record" for r in _records(path)):
        pytest.skip("no token_usage_record (an older rollout)")
    out, totals = convert_file(path, "codex")
    assert totals.errors == 0
    results = [x for x in lines_of(out) if x["type"] == "result"]
    total, cached = _own_accounting(path)
    assert sum(tokens(r) or 0 for r in results) == total
    assert sum(r.get("usage", {}).get("cache_read", 0) for r in results) == cached
    # Every usage record is one API call: one assistant line carries it.
    calls = sum(1 for r in _records(path) if r.get("type") == "token_usage_record")
    assert sum(r["num_turns"] for r in results) == calls


def test_subagent_rollouts_are_one_session_nested_in_the_parents_run() -> None:
    files = c10_files()
    parent, child = files  # the parent's thread id sorts first here
    assert codex.session_of(str(parent)) == codex.session_of(str(child)) == str(parent)[:-6]
    out, totals = convert_session_files(list(reversed(files)))
    assert totals.errors == 0
    lines = lines_of(out)
    assert framing_violations(out) == [] and schema_violations(out) == []
    assert tree_violations(lines) == []
    assert [x["subtype"] for x in lines if x["type"] == "result"] == ["success"]
    assert [x.get("subtype") for x in lines if x["type"] == "system"] == [
        "init",
        "task_started",
        "task_notification",
        "task_notification",
    ]
    spawn = next(
        b["id"]
        for x in lines
        if x["type"] == "assistant"
        for b in x["message"]["content"]
        if b.get("name") == "collaboration.spawn_agent"
    )
    started = next(x for x in lines if x.get("subtype") == "task_started")
    assert started["task_id"] == "01a23326-d17a-7f81-8719-cf28a17540f3"
    child_texts = [
        b["text"]
        for x in lines
        if x["type"] == "assistant" and x.get("parent_tool_use_id") == spawn
        for b in x["message"]["content"]
        if b.get("type") == "text"
    ]
    assert child_texts == ["This directory has 2 entries: README.md and main.py."]
    # The child's nested command is a child of its own exec call.
    command = next(
        x
        for x in lines
        if x["type"] == "assistant"
        and any(b.get("name") == "command_execution" for b in x["message"]["content"])
    )
    assert command["parent_tool_use_id"] != spawn
    # usage: the parent's own calls; model_usage: every actor's.
    result = lines[-1]
    assert tokens(result) == _own_accounting(parent)[0]
    mu = result["model_usage"]["gpt-6.2-sol"]
    assert sum(mu.values()) == _own_accounting(parent)[0] + _own_accounting(child)[0]


def test_a_copy_elsewhere_is_another_session(tmp_path: Path) -> None:
    import shutil

    copy = tmp_path / "sessions"
    shutil.copytree(C10, copy)
    a = {codex.session_of(str(p)) for p in c10_files()}
    b = {codex.session_of(str(p)) for p in c10_files(copy)}
    assert len(a) == len(b) == 1 and a != b


def test_a_child_in_another_date_folder_finds_its_parent(tmp_path: Path) -> None:
    import shutil

    parent, child = c10_files()
    (tmp_path / "2026/12/01").mkdir(parents=True)
    (tmp_path / "2026/12/02").mkdir(parents=True)
    p = tmp_path / "2026/12/01" / parent.name
    c = tmp_path / "2026/12/02" / child.name
    shutil.copy(parent, p)
    shutil.copy(child, c)
    assert codex.session_of(str(c)) == str(p)[:-6]
    out, _ = convert_file(c, "codex")  # alone: its lines still name their spawner
    lines = lines_of(out)
    assert {x.get("parent_tool_use_id") for x in lines} == {
        "call_qD3YW7mAPkvu4hnbInR7l4H6",
        "call_WNRFbj7mgCZ1KhyUGTclbEkF",
    }


def test_auto_detects_both_views() -> None:
    for name in (
        "c2_shell.rollout.jsonl",
        "c2_shell.exec.jsonl",
        "legacy_bare.jsonl",
        "legacy_ccl.rollout.jsonl",
        "legacy_shell.rollout.jsonl",
    ):
        auto, _ = convert_file(FIXTURES / name)
        given, _ = convert_file(FIXTURES / name, "codex")
        assert auto == given, name
        assert lines_of(auto)[0]["agent"]["name"] == "codex"


def test_a_resumed_exec_stream_alone_cannot_split_the_threads_total() -> None:
    """exec resume's stream: its first turn.completed is the thread's total (this view
    cannot tell a resume); the same two processes as one stream give each run its share."""
    folder = need(CORPUS / "c6_resume")
    second, _ = convert_file(folder / "stdout-2.jsonl", "codex")
    result = lines_of(second)[-1]
    assert result["extension"]["thread_usage"]["input_tokens"] == 93789
    assert result["usage"]["input_tokens"] + result["usage"]["cache_read"] == 93789
    both, _ = convert_bytes(exec_stream(folder), "stdout.jsonl", "codex")
    shares = [x["usage"] for x in lines_of(both) if x["type"] == "result"]
    assert [u["input_tokens"] + u["cache_read"] for u in shares] == [56041, 37748]


def test_a_bad_body_is_one_error_naming_file_and_line() -> None:
    data = (FIXTURES / "c1_text.rollout.jsonl").read_bytes().splitlines()
    at = next(i for i, raw in enumerate(data) if b'"token_usage_record"' in raw)
    bad = orjson.loads(data[at])
    bad["payload"]["usage"]["input_tokens"] = "many"
    data[at] = orjson.dumps(bad)
    out, totals = convert_bytes(b"\n".join(data) + b"\n", "x.jsonl", "codex")
    errors = [x for x in lines_of(out) if x.get("subtype") == "error"]
    assert totals.errors == 1 and len(errors) == 1
    assert errors[0]["message"] == (
        f"x.jsonl:{at + 1}: token_usage_record: usage.input_tokens is 'many', "
        "not a whole number ≥ 0"
    )
    assert framing_violations(out) == []


def test_every_fixture_validates_with_the_validator() -> None:
    for path in sorted(FIXTURES.rglob("*.expected.jsonl")):
        assert list(validate_stream(io.BytesIO(path.read_bytes()), str(path))) == [], path


def test_streaming_holds_no_more_than_one_response() -> None:
    """A long rollout converts line by line: each line's events come out with it
    (only one response's items wait for its usage record)."""
    data = (FIXTURES / "c2_shell.rollout.jsonl").read_bytes()
    body = [r for r in data.splitlines()]
    head, turn = body[:1], body[1:]
    big = b"\n".join(head + turn * 300) + b"\n"
    written: list[int] = []
    out = io.BytesIO()

    def write(chunk: bytes) -> None:
        out.write(chunk)
        written.append(len(chunk))

    convert_stream(
        io.BytesIO(big),
        "big.jsonl",
        write,
        Totals(),
        source=sources()["codex"],
        clock=lambda: FIXED_NOW,
    )
    assert len([x for x in lines_of(out.getvalue()) if x["type"] == "result"]) == 300


def _comparable(data: bytes) -> dict[str, list[bytes]]:
    """Per session, its lines without the times and the daemon's _meta."""
    out: dict[str, list[bytes]] = {}
    for line in lines_of(data):
        line.pop("ts", None)
        line.pop("_meta", None)
        out.setdefault(line["session_id"], []).append(
            orjson.dumps(line, option=orjson.OPT_SORT_KEYS)
        )
    return out


@pytest.mark.parametrize("seed", [7, 11])
def test_tail_of_a_sessions_tree_written_in_chunks_with_a_kill_is_convert(
    streamv1_bin: str, tmp_path: Path, seed: int
) -> None:
    """The daemon follows a Codex sessions tree (a parent, its subagent, a resumed
    thread) written in random chunks, SIGKILLed half way: per session the same lines
    as convert of the finished tree."""
    import os
    import random
    import signal
    import subprocess
    import time

    tmp_path.chmod(0o700)
    day = tmp_path / "sessions" / "2026" / "12" / "01"
    day.mkdir(parents=True)
    sources_ = {day / p.name: p.read_bytes() for p in c10_files()}
    sources_[day / "rollout-2026-12-01T19-47-30-01a23325-e2a3-7d82-bfa0-f863f3d771ff.jsonl"] = (
        FIXTURES / "c6_resume.rollout.jsonl"
    ).read_bytes()
    rng = random.Random(seed)
    written = dict.fromkeys(sources_, 0)

    def write_some(limit: float) -> None:
        for path, data in sources_.items():
            end = min(len(data), written[path] + int(len(data) * limit * rng.random()) + 1)
            with open(path, "ab") as fh:
                fh.write(data[written[path] : end])
            written[path] = end

    def start() -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [
                streamv1_bin,
                "--log-level",
                "error",
                "tail",
                str(tmp_path / "sessions"),
                "--output",
                str(tmp_path / "out.jsonl"),
                "--state",
                str(tmp_path / "state.json"),
                "--idle-close",
                "2",
                "--rescan-every",
                "0.5",
                "--commit-every",
                "0.05",
                "--ingest-socket",
                str(tmp_path / "i.sock"),
            ],
            stderr=subprocess.DEVNULL,
        )

    proc = start()
    for _ in range(4):
        write_some(0.2)
        time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    for path, data in sources_.items():
        with open(path, "ab") as fh:
            fh.write(data[written[path] :])
    proc = start()
    want, _ = convert_session_files(sorted(sources_))
    expected = _comparable(want)
    deadline = time.monotonic() + 30
    got: dict[str, list[bytes]] = {}
    while time.monotonic() < deadline:
        time.sleep(0.5)
        out = tmp_path / "out.jsonl"
        got = _comparable(out.read_bytes()) if out.exists() else {}
        if got == expected:
            break
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
    assert got == expected
    assert os.path.exists(tmp_path / "state.json")


def test_a_subagent_session_as_claude_print_mode_parses_with_the_sdk() -> None:
    sdk = pytest.importorskip("claude_agent_sdk._internal.message_parser")
    out, _ = convert_session_files(c10_files(), to="claude")
    parsed = [sdk.parse_message(orjson.loads(raw)) for raw in out.splitlines()]
    assert parsed and all(m is not None for m in parsed)
    assert type(parsed[-1]).__name__ == "ResultMessage"
