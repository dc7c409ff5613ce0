"""stella: the two rules of its client contract, every surface, the conformance
fixture."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
from conftest import ROOT
from helpers import convert_bytes, convert_file, framing_violations, lines_of, schema_violations

STELLA = ROOT / "testdata" / "stella"


def _convert(name: str, source: str | None = "stella") -> tuple[list[dict], object]:
    out, totals = convert_file(STELLA / name, source)
    assert framing_violations(out) == [] and schema_violations(out) == []
    return lines_of(out), totals


def test_from_a_newer_stella_reconstructs_the_run_and_reports_two_unknowns() -> None:
    lines, totals = _convert("from_a_newer_stella.jsonl", source=None)  # auto-detected
    unknown = [x for x in lines if x.get("subtype") == "unrecognized"]
    assert [x["kind"] for x in unknown] == ["quantum_reticulation", "hyperlane_sync"]
    assert unknown[0]["extension"]["record"] == {
        "type": "quantum_reticulation",
        "call_id": "q_1",
        "splines": ["alpha", "beta"],
    }
    result = lines[-1]
    assert result["type"] == "result" and result["subtype"] == "success"
    assert result["is_error"] is False and result["result"] == "Done."
    assert result["total_cost_usd"] == 0.002
    assert result["extension"]["unrecognized"] == {"hyperlane_sync": 1, "quantum_reticulation": 1}
    assert totals.errors == 0  # type: ignore[attr-defined]


def test_known_type_with_bad_body_is_an_error_naming_the_line() -> None:
    lines, totals = _convert("bad_body.jsonl")
    errors = [x["message"] for x in lines if x.get("subtype") == "error"]
    assert [e.split(": ", 1)[0].rsplit(":", 1)[1] for e in errors] == ["2", "3", "4"]
    assert "no call_id" in errors[0]
    assert totals.errors == 3  # type: ignore[attr-defined]
    # the rest converted, unknown fields kept
    still = [x for x in lines if x["type"] == "assistant"]
    assert still[-1]["extension"] == {"unknown_field": {"kept": True}}


def test_a_line_that_is_not_json_is_only_forgiven_at_the_end() -> None:
    good = (STELLA / "basic_turn.jsonl").read_bytes().splitlines(keepends=True)
    _, totals = convert_bytes(
        b"".join(good[:3]) + b'{"type":"te\n' + b"".join(good[3:]), source="stella"
    )
    assert totals.errors == 1
    lines, totals = _convert("killed_mid_run.jsonl")
    assert totals.errors == 0 and totals.framing.tolerated == 1  # type: ignore[attr-defined]
    assert lines[-1]["subtype"] == "interrupted" and lines[-1]["is_error"] is True


def test_the_json_document_converts_like_the_lines() -> None:
    as_lines, _ = convert_file(STELLA / "basic_turn.jsonl", "stella")
    pretty, _ = convert_file(STELLA / "basic_turn.document.json", "stella")
    assert pretty == as_lines
    events = [json.loads(x) for x in (STELLA / "basic_turn.jsonl").read_text().splitlines()]
    compact = json.dumps({"events": events}).encode() + b"\n"
    one_line, _ = convert_bytes(compact, str(STELLA / "basic_turn.json"), None)
    assert one_line == as_lines


def test_text_replaces_its_deltas_and_aliases_work() -> None:
    lines, _ = _convert("retry_restreams_deltas.jsonl")
    assert lines[0]["capabilities"] == ["stream_v1", "partial_messages_v1"]
    texts = [b["text"] for x in lines if x["type"] == "assistant" for b in x["message"]["content"]]
    assert texts == ["The answer is 42."]
    assert lines[-1]["result"] == "The answer is 42."
    lines, _ = _convert("aliases.jsonl")
    deltas = [x["event"]["delta"]["text"] for x in lines if x["type"] == "stream_event"]
    assert deltas == ["Hel", "lo"]
    assert lines[-1]["result"] == "Hello"


def test_ts_keeps_input_order_and_the_envelope_rule() -> None:
    lines, _ = _convert("ts_missing_and_backwards.jsonl")
    assert [x["seq"] for x in lines] == list(range(len(lines)))
    body = [x for x in lines if x["type"] in ("assistant", "user")]
    assert [x["ts"] for x in body] == [
        "2026-11-30T11:00:01.000Z",
        "2026-11-30T11:00:00.400Z",
        "2026-11-30T11:00:00.400Z",
        "2026-11-30T11:00:00.400Z",
    ]
    assert lines[-1]["duration_ms"] == 601  # the span of the source's own times, never < 0


def test_usage_adds_up_per_model_and_scopes_stay_apart() -> None:
    lines, _ = _convert("basic_turn.jsonl")
    result = lines[-1]
    assert result["usage"] == {
        "input_tokens": 2500,
        "output_tokens": 52,
        "cache_read": 2700,
        "cache_creation": 100,
    }
    assert result["model_usage"] == {"m-large": result["usage"]}
    stages = [(x["category"], x["value"]) for x in lines if x.get("subtype") == "stage"]
    assert stages == [("run", "plan"), ("turn", "execute"), ("turn", "done"), ("run", "report")]
    tool = next(x for x in lines if x["type"] == "user")
    assert tool["tool_use_result"] == {"duration_ms": 4200}
    assert tool["message"]["content"][0]["tool_use_id"] == "c1"


def test_a_journal_holds_one_run_after_another() -> None:
    lines, _ = _convert("journal_two_runs.jsonl")
    results = [x for x in lines if x["type"] == "result"]
    assert [r["result"] for r in results] == ["First run.", "Resumed."]
    assert {x["session_id"] for x in lines} == {"stl_01journal"}
    assert results[1]["model_usage"] == {"m-large": results[1]["usage"]}


def test_session_id_from_option_or_file_name(tmp_path: Path) -> None:
    data = (STELLA / "from_a_newer_stella.jsonl").read_bytes()
    journal = tmp_path / "sess-42" / "stella-events.jsonl"
    journal.parent.mkdir()
    journal.write_bytes(data)
    lines = lines_of(convert_file(journal, "stella")[0])
    assert lines[0]["session_id"] == "sess-42"
    import io

    from streamv1.translator.reading.sources import sources
    from streamv1.translator.translate.one_input import Totals, convert_stream

    out = io.BytesIO()
    convert_stream(
        io.BytesIO(data), "-", out.write, Totals(), source=sources()["stella"], session_id="given"
    )
    assert lines_of(out.getvalue())[0]["session_id"] == "given"


def test_two_streams_on_stdin_are_two_sessions() -> None:
    """#23 item 20: stella on stdin with no session id got the id ``stdin``, so two
    such runs collided in one session. Now ``stdin-<digest of the first record>``:
    two streams, two sessions; the same bytes, the same session again."""
    ids = []
    for name in ("killed_mid_run.jsonl", "aliases.jsonl", "killed_mid_run.jsonl"):
        out, _ = convert_bytes((STELLA / name).read_bytes(), "-", "stella")
        ids.append(orjson.loads(out.splitlines()[0])["session_id"])
    assert ids[0] == ids[2] != ids[1]
    assert all(i.startswith("stdin-") for i in ids)
