"""--to claude: every line parses with the real Claude Agent SDK's own message
parser, and a print-mode stream survives the trip through stream_v1."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import CORPUS_2_1_332, ROOT, need
from corpora import all_inputs, durable_files, input_path, scenario_dir, scenario_ids, stream_files
from helpers import convert_bytes, convert_file, convert_session_files

sdk = pytest.importorskip("claude_agent_sdk._internal.message_parser")
types = pytest.importorskip("claude_agent_sdk.types")


def parse_all(data: bytes) -> list[Any]:
    out = []
    for raw in data.splitlines():
        parsed = sdk.parse_message(orjson.loads(raw))  # raises MessageParseError on a misfit
        assert parsed is not None, raw[:200]
        out.append(parsed)
    return out


@pytest.mark.parametrize("name", all_inputs())
def test_every_corpus_line_parses_with_the_sdk(name: str) -> None:
    out, totals = convert_file(input_path(name), to="claude")
    assert totals.errors == 0
    parsed = parse_all(out)
    assert isinstance(parsed[0], types.SystemMessage) and parsed[0].subtype == "init"
    assert isinstance(parsed[-1], types.ResultMessage)


def _fixtures() -> list[Path]:
    out = []
    for source in ("stella", "stream_v1", "claude-session", "claude-stream", "gemini", "codex"):
        out += sorted(
            p for p in (ROOT / "testdata" / source).rglob("*.jsonl") if ".expected." not in p.name
        )
    return out


@pytest.mark.parametrize("path", _fixtures(), ids=lambda p: str(p.relative_to(ROOT / "testdata")))
def test_every_fixture_parses_with_the_sdk(path: Path) -> None:
    source = path.relative_to(ROOT / "testdata").parts[0]
    out, _ = convert_file(path, source, to="claude")
    parse_all(out)


def test_milk_goldens_feed_legacy_tools() -> None:
    folder = need(CORPUS_2_1_332.parent / "public" / "scoutme__milk")
    for path in sorted(folder.glob("*.jsonl")):
        out, totals = convert_file(path, None, to="claude")  # auto-detected as stream_v1
        assert totals.errors == 0
        results = [m for m in parse_all(out) if isinstance(m, types.ResultMessage)]
        assert len(results) == 1


def test_result_has_what_the_sdk_requires_even_when_the_source_does_not_know() -> None:
    out, _ = convert_file(
        ROOT / "testdata" / "claude-session" / "thinking.jsonl", "claude-session", to="claude"
    )
    result = orjson.loads(out.splitlines()[-1])
    assert result["duration_api_ms"] == 0  # not in durable files: the neutral value
    thinking = [orjson.loads(x) for x in out.splitlines() if b'"thinking"' in x]
    assert thinking and all(
        b["signature"]
        for x in thinking
        if x["type"] == "assistant"
        for b in x["message"]["content"]
        if b["type"] == "thinking"
    )


# -- round trip --------------------------------------------------------------------------

#: What stream_v1 cannot carry back, by design (docs/mapping.md):
#: stream_event uuids, the API-framing stream events dropped on purpose
#: (message_start/stop, content_block_start/stop, message_delta, signature_delta),
#: the result's usage beyond the four catalog counts (service_tier, iterations, …).
DROPPED_EVENTS = {
    "message_start",
    "message_stop",
    "content_block_start",
    "content_block_stop",
    "message_delta",
}


def comparable(msg: Any) -> tuple[Any, ...] | None:
    if isinstance(msg, types.StreamEvent):
        event = msg.event
        if event.get("type") in DROPPED_EVENTS:
            return None
        if event.get("delta", {}).get("type") == "signature_delta":
            return None
        return (
            "stream_event",
            msg.session_id,
            msg.parent_tool_use_id,
            event.get("delta"),
            event.get("index"),
        )
    if isinstance(msg, types.AssistantMessage):
        return (
            "assistant",
            msg.content,
            msg.model,
            msg.message_id,
            msg.parent_tool_use_id,
            msg.usage,
            msg.stop_reason,
            msg.session_id,
            msg.uuid,
        )
    if isinstance(msg, types.UserMessage):
        return ("user", msg.content, msg.parent_tool_use_id, msg.tool_use_result, msg.uuid)
    if isinstance(msg, types.ResultMessage):
        usage = {
            k: (msg.usage or {}).get(k)
            for k in (
                "input_tokens",
                "output_tokens",
                "cache_read_input_tokens",
                "cache_creation_input_tokens",
            )
        }
        return (
            "result",
            msg.subtype,
            msg.is_error,
            msg.num_turns,
            msg.duration_ms,
            msg.duration_api_ms,
            msg.total_cost_usd,
            msg.result,
            msg.session_id,
            msg.stop_reason,
            msg.model_usage,
            msg.permission_denials,
            usage,
            msg.uuid,
        )
    if isinstance(msg, types.SystemMessage):
        data = msg.data
        keep = ("subtype", "session_id", "task_id", "status", "description", "tool_use_id")
        core = tuple(data.get(k) for k in keep)
        if msg.subtype == "init":
            core += (
                data.get("cwd"),
                data.get("tools"),
                data.get("model"),
                data.get("mcp_servers"),
                data.get("permissionMode"),
            )
        return (type(msg).__name__, *core)
    raise AssertionError(f"unexpected message {msg!r}")


def _streams() -> list[str]:
    if not CORPUS_2_1_332.exists():
        return []
    streams = CORPUS_2_1_332.glob("*/stream*.jsonl")
    return sorted(str(p.relative_to(CORPUS_2_1_332)) for p in streams)


@pytest.mark.parametrize("name", _streams())
def test_print_mode_round_trips_through_stream_v1(name: str) -> None:
    original_bytes = (need(CORPUS_2_1_332) / name).read_bytes()
    original = [comparable(m) for m in parse_all(original_bytes)]
    stream_v1, _ = convert_bytes(original_bytes, name, "claude-stream")
    # stream_v1 read back as a source (--source stream_v1), then --to claude
    back, totals = convert_bytes(stream_v1, "v1.jsonl", "stream_v1", to="claude")
    assert totals.errors == 0
    again = [comparable(m) for m in parse_all(back)]
    want = [c for c in original if c is not None]
    got = [c for c in again if c is not None]
    if "s10" in name:
        # The only reordering: a run that began before the previous one's result is
        # held until that result (runs never overlap in stream_v1).
        assert sorted(map(repr, got)) == sorted(map(repr, want))
    else:
        assert got == want


def test_tail_speaks_claude_too(tmp_path: Path) -> None:
    from streamv1.translator.output.shapes import encoder_for
    from streamv1.translator.tail.daemon import TailDaemon
    from streamv1.translator.tail.output import OutputSink

    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    src = ROOT / "testdata" / "claude-session" / "interactive_four_turns.jsonl"
    (proj / src.name).write_bytes(src.read_bytes())
    d = TailDaemon(
        [tmp_path / "projects"],
        OutputSink(tmp_path / "out.jsonl"),
        tmp_path / "state.json",
        idle_close=0,
        encoder=lambda: encoder_for("claude"),
    )
    d.start()
    d.stop()
    parsed = parse_all((tmp_path / "out.jsonl").read_bytes())
    assert sum(isinstance(m, types.ResultMessage) for m in parsed) == 4


def _cli_results(folder: Path) -> list[dict[str, Any]]:
    """The result records the CLI printed in a scenario (JSON lines, or the
    ``--output-format json`` array)."""
    found = []
    for path in stream_files(folder):
        data = path.read_bytes()
        records = (
            orjson.loads(data)
            if data.lstrip().startswith(b"[")
            else [orjson.loads(x) for x in data.splitlines()]
        )
        found += [r for r in records if isinstance(r, dict) and r.get("type") == "result"]
    return found


@pytest.mark.parametrize("scenario", scenario_ids())
def test_a_reader_that_stops_at_the_first_result_gets_the_clis_answer(scenario: str) -> None:
    """``--to claude`` of a scenario's durable files, converted together as
    ``convert`` does (a subagent's lines inside its parent's run): exactly as many
    ResultMessages as the CLI printed, and a consumer that stops at the first
    (claude-agent-sdk's receive_response, ``jq 'select(.type=="result")' | head -1``)
    reads the CLI's first answer, not a subagent's."""
    folder = scenario_dir(scenario)
    cli = _cli_results(folder)
    durable = durable_files(folder)
    if not cli or not durable:
        pytest.skip("no print-mode result (interactive, or a killed run) or no durable files")
    out, _ = convert_session_files(durable, to="claude")
    parsed = parse_all(out)
    results = [m for m in parsed if isinstance(m, types.ResultMessage)]
    assert len(results) == len(cli)
    assert (results[0].result, results[0].is_error) == (cli[0].get("result"), cli[0]["is_error"])
