"""One session, one stream, as a consumer reads it: the validator keys runs by
session_id and refuses a run inside a run; the same inputs give the same bytes
whatever the clock, the order they are named in or --jobs."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import orjson
import pytest
from conftest import CAPTURES
from corpora import durable_files, scenario_dir, scenario_ids, stream_files
from helpers import framing_violations


def _lines(*records: dict[str, object]) -> bytes:
    ts = "2026-12-01T10:00:00.000Z"
    return b"".join(orjson.dumps({"ts": ts, **r}) + b"\n" for r in records)


S = "sess-1"
INIT = {"type": "system", "subtype": "init", "session_id": S, "seq": 0}
NESTED_INIT = {**INIT, "seq": 2, "parent_tool_use_id": "toolu_1"}
TOOL = {
    "type": "assistant",
    "session_id": S,
    "seq": 1,
    "message": {
        "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "Agent", "input": {}}],
    },
}


def _result(seq: int, **kw: object) -> dict[str, object]:
    return {
        "type": "result",
        "subtype": "success",
        "session_id": S,
        "seq": seq,
        "is_error": False,
        **kw,
    }


def test_a_nested_init_inside_the_open_run_is_refused() -> None:
    found = framing_violations(_lines(INIT, TOOL, NESTED_INIT, _result(3)))
    assert any("system/init while the run of session 'sess-1'" in v for v in found)


def test_a_nested_result_inside_the_open_run_is_refused() -> None:
    nested = {
        "type": "assistant",
        "session_id": S,
        "seq": 2,
        "parent_tool_use_id": "toolu_1",
        "message": {"role": "assistant", "content": [{"type": "text", "text": "2"}]},
    }
    found = framing_violations(
        _lines(INIT, TOOL, nested, _result(3, parent_tool_use_id="toolu_1"), _result(4))
    )
    assert any("result of a nested actor inside its parent's run" in v for v in found)


def test_nested_lines_in_the_runs_seq_and_a_subagent_alone_are_accepted() -> None:
    nested = {
        "type": "user",
        "session_id": S,
        "seq": 2,
        "parent_tool_use_id": "toolu_1",
        "message": {"role": "user", "content": [{"type": "text", "text": "go"}]},
    }
    assert framing_violations(_lines(INIT, TOOL, nested, _result(3))) == []
    alone = {**INIT, "parent_tool_use_id": "toolu_1"}
    assert framing_violations(_lines(alone, _result(1, parent_tool_use_id="toolu_1"))) == []


def test_validate_refuses_a_second_run_of_a_session_inside_the_first(
    streamv1_bin: str, tmp_path: Path
) -> None:
    path = tmp_path / "old.jsonl"
    path.write_bytes(_lines(INIT, TOOL, NESTED_INIT, _result(3), _result(4)))
    proc = subprocess.run(
        [streamv1_bin, "validate", str(path)], capture_output=True, timeout=60, check=False
    )
    assert proc.returncode == 1
    assert f"{path}:3: system/init while the run of session" in proc.stdout.decode()


def _convert(bin_: str, *args: str) -> bytes:
    proc = subprocess.run(
        [bin_, "--log-level", "error", "convert", *args],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    return proc.stdout


def _inputs() -> list[list[Path]]:
    """Each scenario's durable files (one session's), and each print-mode stdout."""
    out = []
    for scenario in scenario_ids():
        folder = scenario_dir(scenario)
        if durable_files(folder):
            out.append(durable_files(folder))
        out += [[p] for p in stream_files(folder)]
    return out


def test_the_same_inputs_give_the_same_bytes(streamv1_bin: str, tmp_path: Path) -> None:
    """No clock leaks in (a print-mode init has no time of its own; a file of
    summaries none at all): converting twice, whatever the order the files are
    named in, gives the same bytes; so does --jobs 2."""
    summary = tmp_path / "5eccd76e-a2bd-46d3-9ac7-285807858239.jsonl"
    summary.write_bytes(_lines({"type": "summary", "summary": "Fix the tests", "leafUuid": "u-1"}))
    groups = [*_inputs(), [summary]]
    files = [str(p) for group in groups for p in group]
    first = _convert(streamv1_bin, *files)
    assert first
    assert _convert(streamv1_bin, *reversed(files)) == first
    assert _convert(streamv1_bin, "--jobs", "2", *files) == first
    assert framing_violations(first) == []
    init = orjson.loads(_convert(streamv1_bin, str(summary)).splitlines()[0])
    assert init["ts"] != "" and init["extension"]["synthetic"] is True


def test_a_subagent_named_before_its_parent_is_still_inside_its_run(
    streamv1_bin: str, tmp_path: Path
) -> None:
    src = CAPTURES / "x_subagent_nested" / "projects"
    if not src.exists():
        pytest.skip("capture not present")
    shutil.copytree(src, tmp_path / "projects")
    files = sorted(str(p) for p in (tmp_path / "projects").rglob("*.jsonl"))
    out = _convert(streamv1_bin, *reversed(files))
    lines = [orjson.loads(x) for x in out.splitlines()]
    assert sum(x["type"] == "result" for x in lines) == 1
    assert [x.get("subtype") for x in lines].count("task_started") == 2
    assert framing_violations(out) == []


@pytest.mark.parametrize(
    ("lines", "expected"),
    [
        (
            [b'{"type":"system","subtype":"init"}', b'{"ts":1796036400000,"type":"x"}'],
            "2026-11-30T11:00:00.000Z",
        ),
        (
            [b'{"type":"a"}', b'{"timestamp":"2026-01-02T03:04:05.678Z"}'],
            "2026-01-02T03:04:05.678Z",
        ),
        # an escaped key is the same key: read, though the plain name is not in the bytes
        ([b'{"\\u0074s":1796036400000}'], "2026-11-30T11:00:00.000Z"),
        ([b'{"\\u0074imestamp":"2026-01-02T03:04:05.678Z"}'], "2026-01-02T03:04:05.678Z"),
        # print mode: no time anywhere; a "ts" that is no key gives none either
        ([b'{"type":"assistant","message":{"content":[{"text":"\\"ts\\": 5"}]}}'], ""),
        ([b'{"type":"result","subtype":"success"}'], ""),
    ],
)
def test_first_time_reads_only_what_can_hold_a_time(
    tmp_path: Path, lines: list[bytes], expected: str
) -> None:
    from streamv1.translator.reading.sources import first_time

    path = tmp_path / "s.jsonl"
    path.write_bytes(b"\n".join(lines) + b"\n")
    assert first_time(str(path)) == expected
