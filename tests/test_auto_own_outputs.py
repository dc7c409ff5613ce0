"""--source auto knows streamv1's own outputs (#23 item 16): its stream_v1 is read
as stream_v1 (times, the model, cache usage kept), its --to claude output as
print mode (as many runs as it holds), on every capture."""

from __future__ import annotations

import io

import pytest
from corpora import durable_files, scenario_dir, scenario_ids
from helpers import FIXED_NOW, convert_session_files, lines_of

from streamv1.translator.reading.sources import sources
from streamv1.translator.translate.one_input import Totals, convert_stream


def _auto(data: bytes) -> tuple[bytes, Totals]:
    out, totals = io.BytesIO(), Totals()
    convert_stream(io.BytesIO(data), "own.jsonl", out.write, totals, clock=lambda: FIXED_NOW)
    return out.getvalue(), totals


def _named(data: bytes, source: str) -> bytes:
    out = io.BytesIO()
    convert_stream(
        io.BytesIO(data),
        "own.jsonl",
        out.write,
        Totals(),
        source=sources()[source],
        clock=lambda: FIXED_NOW,
    )
    return out.getvalue()


def _scenarios() -> list[str]:
    return [s for s in scenario_ids() if durable_files(scenario_dir(s))]


@pytest.mark.parametrize("scenario", _scenarios())
def test_auto_reads_its_own_stream_v1_as_stream_v1(scenario: str) -> None:
    ours, _ = convert_session_files(durable_files(scenario_dir(scenario)))
    again, totals = _auto(ours)
    assert dict(totals.sources) == {"stream_v1": 1}
    assert again == _named(ours, "stream_v1")
    assert [x.get("ts") for x in lines_of(again)] == [x.get("ts") for x in lines_of(ours)]


@pytest.mark.parametrize("scenario", _scenarios())
def test_auto_reads_its_own_claude_shape_as_print_mode(scenario: str) -> None:
    legacy, _ = convert_session_files(durable_files(scenario_dir(scenario)), to="claude")
    again, totals = _auto(legacy)
    assert dict(totals.sources) == {"claude-stream": 1}
    results = sum(1 for x in lines_of(legacy) if x["type"] == "result")
    assert sum(1 for x in lines_of(again) if x["type"] == "result") == results
    assert sum(totals.framing.unrecognized.values()) == 0
