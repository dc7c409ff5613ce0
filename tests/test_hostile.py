"""Hostile input (issue #14, points 6, 8 and 11): each input the issue names,
converted without a traceback, reported where it must be (a system/error naming
file:line, the rest of the file converted), every output line schema-valid; long
lines and NUL regions in bounded memory and linear time; no code-bearing
deserialisation anywhere."""

from __future__ import annotations

import ast
import io
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import ROOT
from fuzzing import Chunked
from helpers import convert_bytes, framing_violations, lines_of, schema_violations

from streamv1.translator.contract.validate import validate_stream
from streamv1.translator.reading.reader import MAX_LINE_BYTES, PART_RECORDS, read_lines, read_parsed
from streamv1.translator.translate.one_input import Totals, convert_stream
from streamv1.translator.translate.translation import Translation

SID = "0b6a3c9e-1111-4222-8333-944455556666"
PATH = f"{SID}.jsonl"


def prompt(text: str = "hi", **kw: Any) -> bytes:
    rec = {
        "type": "user",
        "sessionId": SID,
        "uuid": "u1",
        "parentUuid": None,
        "timestamp": "2026-12-01T10:00:00.000Z",
        "message": {"role": "user", "content": text},
        **kw,
    }
    return orjson.dumps(rec)


def reply(*blocks: Any, **kw: Any) -> bytes:
    rec = {
        "type": "assistant",
        "sessionId": SID,
        "uuid": "a1",
        "parentUuid": "u1",
        "timestamp": "2026-12-01T10:00:01.000Z",
        "message": {
            "id": "m1",
            "role": "assistant",
            "model": "claude-x",
            "content": list(blocks) or [{"type": "text", "text": "yo"}],
            "stop_reason": "end_turn",
            "usage": {
                "input_tokens": 1,
                "output_tokens": 2,
                "cache_read_input_tokens": 0,
                "cache_creation_input_tokens": 0,
            },
        },
        **kw,
    }
    return orjson.dumps(rec)


def session(bad: bytes) -> bytes:
    """A turn, the hostile line (line 3), and another whole turn after it."""
    return b"\n".join([prompt(), reply(), bad, prompt("again"), reply()]) + b"\n"


def converted(
    data: bytes, source: str | None = "claude-session", path: str = PATH
) -> tuple[list[dict[str, Any]], Totals]:
    out, totals = convert_bytes(data, path, source)
    assert framing_violations(out) == [], out
    assert schema_violations(out) == []
    return lines_of(out), totals


def errors(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [x for x in lines if x["type"] == "system" and x.get("subtype") == "error"]


def one_error_at(lines: list[dict[str, Any]], line: int, words: str) -> dict[str, Any]:
    found = errors(lines)
    assert len(found) == 1, found
    err = found[0]
    assert err["message"].startswith(f"{PATH}:{line}: "), err["message"]
    assert words in err["message"], err["message"]
    assert err["extension"]["path"] == PATH and err["extension"]["line"] == line
    return err


def the_rest_converted(lines: list[dict[str, Any]]) -> None:
    """The turn after the hostile line is there, whole."""
    inits = [x for x in lines if x.get("subtype") == "init"]
    assert len(inits) == 2 and inits[-1]["extension"]["prompt"] == "again"
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "yo"


# -- point 6: no traceback on any input ---------------------------------------------


def deep(levels: int, inner: bytes = b"1") -> bytes:
    return b"[" * levels + inner + b"]" * levels


@pytest.mark.parametrize("levels", [300, 500])
def test_deep_nesting_that_can_be_read_is_kept(levels: int) -> None:
    """Deeper than orjson writes (254): the encoder's last defence writes the deep
    part as its JSON text; nothing is lost and the line is schema-valid."""
    tool = b'{"type":"tool_use","id":"t1","name":"X","input":{"v":' + deep(levels) + b"}}"
    bad = reply().replace(b'[{"type":"text","text":"yo"}]', b"[" + tool + b"]")
    lines, totals = converted(session(bad))
    assert errors(lines) == [] and totals.framing.errors == 0
    line = orjson.dumps(next(x for x in lines if "tool_use" in orjson.dumps(x).decode()))
    assert line.count(b"[") + line.count(b"\\u005b") >= levels  # all of it, some as text
    the_rest_converted(lines)


@pytest.mark.parametrize("levels", [1_100, 100_000])
def test_nesting_too_deep_to_read_is_one_error_naming_the_line(levels: int) -> None:
    bad = b'{"type":"user","sessionId":"' + SID.encode() + b'","x":' + deep(levels) + b"}"
    started = time.monotonic()
    lines, totals = converted(session(bad))
    assert time.monotonic() - started < 5
    one_error_at(lines, 3, "nested too deep to read")
    assert totals.framing.errors == 1
    the_rest_converted(lines)


def test_deep_objects_too() -> None:
    bad = b'{"type":"user","x":' + b'{"a":' * 1_100 + b"1" + b"}" * 1_100 + b"}"
    lines, _ = converted(session(bad))
    one_error_at(lines, 3, "nested too deep to read")
    the_rest_converted(lines)


def test_validate_reports_deep_lines_and_never_crashes() -> None:
    for where in ("extension", "agent", "message"):
        line = {
            "type": "system",
            "subtype": "init",
            "session_id": "s",
            "seq": 0,
            "ts": "2026-12-01T10:00:00.000Z",
        }
        raw = orjson.dumps(line)[:-1] + b',"' + where.encode() + b'":' + deep(990) + b"}\n"
        found = [str(v) for v in validate_stream(io.BytesIO(raw), "v.jsonl")]
        assert all(v.startswith("v.jsonl:1: ") for v in found), found
        if where != "extension":  # a free-form field: deep is no violation there
            assert any("schema" in v for v in found), found


def test_a_type_that_is_a_list_is_a_body_that_does_not_fit() -> None:
    for source in ("claude-session", "claude-stream", "stella", "stream_v1"):
        bad = b'{"type":["user"],"sessionId":"' + SID.encode() + b'","session_id":"s","seq":1}'
        out, totals = convert_bytes(session(bad), PATH, source)
        assert framing_violations(out) == [] and schema_violations(out) == []
        assert any("type is list, not a string" in e["message"] for e in errors(lines_of(out)))
        assert totals.framing.errors >= 1


def test_a_session_id_that_is_a_list() -> None:
    lines, _ = converted(session(prompt("x", sessionId=[SID])))
    one_error_at(lines, 3, "sessionId is list, not a string")
    the_rest_converted(lines)
    stream = b'{"type":"system","subtype":"init","session_id":["s"],"tools":[]}\n'
    out, _ = convert_bytes(stream, "p.jsonl", "claude-stream")
    assert "session_id is list" in out.decode()


@pytest.mark.parametrize(
    "number", [b"1" * 5_000, b"-" + b"9" * 4_301, b"1e400", b"Infinity", b"-Infinity", b"NaN"]
)
def test_numbers_that_no_double_holds_are_one_error(number: bytes) -> None:
    bad = reply().replace(b'"input_tokens":1', b'"input_tokens":' + number)
    lines, totals = converted(session(bad))
    err = one_error_at(lines, 3, "number out of range")
    assert err["extension"]["kind"] == "damaged_line"
    assert totals.framing.errors == 1
    the_rest_converted(lines)


def test_token_counts_of_64_bits_and_more_are_errors_elsewhere_numbers_are_kept() -> None:
    bad = reply().replace(b'"input_tokens":1', b'"input_tokens":18446744073709551616')
    lines, _ = converted(session(bad))
    one_error_at(lines, 3, "usage.input_tokens is 1.8446744073709552e+19, not a token count")
    the_rest_converted(lines)
    free = prompt("x", big=2**64 - 1)[:-1] + b',"bigger":184467440737095516160}'
    lines, totals = converted(session(free))
    assert totals.framing.errors == 0
    init = [x for x in lines if x.get("subtype") == "init"][1]
    assert init["extension"]["big"] == 2**64 - 1


def test_usage_sums_stay_within_64_bits() -> None:
    big = reply().replace(b'"input_tokens":1', b'"input_tokens":9223372036854775807')
    second = big.replace(b'"id":"m1"', b'"id":"m2"')
    out, _ = convert_bytes(b"\n".join([prompt(), big, second]) + b"\n", PATH, "claude-session")
    assert schema_violations(out) == []
    assert lines_of(out)[-1]["usage"]["input_tokens"] == 2**63 - 1


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("0999-12-31T23:59:59Z", "0999-12-31T23:59:59.000Z"),  # below 1000: repaired
        ("2026-12-01T10:00:02+05:00", "2026-12-01T05:00:02.000Z"),
        ("0000-01-01T00:00:00Z", None),  # year 0: no time Python (or we) can carry
        ("9999-12-31T23:59:59-05:00", None),  # past 9999 once the offset is applied
        ("0001-01-01T00:00:00+05:00", None),  # before year 1 likewise
        ("2026-13-45T99:99:99Z", None),
        ("2026-02-30T10:00:00.000Z", None),  # the canonical shape, no such day
        ("now", None),
    ],
)
def test_timestamps_are_repaired_or_reported_never_passed_on(
    given: str, expected: str | None
) -> None:
    lines, _ = converted(session(reply(timestamp=given)))
    second = [x for x in lines if x["type"] == "assistant"][1]
    if expected is not None:
        assert second["ts"] == expected and errors(lines) == []
    else:
        err = one_error_at(lines, 3, "is not a time stream_v1 can carry")
        assert err["extension"]["kind"] == "invalid_timestamp"
        assert second["ts"] == "2026-12-01T10:00:01.000Z"  # the line before's time
    the_rest_converted(lines)


@pytest.mark.parametrize("source", ["stella", "stream_v1"])
def test_other_sources_times_too(source: str) -> None:
    if source == "stella":
        data = (
            b'{"type":"text","text":"a","ts":1796036400000}\n'
            b'{"type":"text","text":"b","ts":1e300}\n'
        )
        key = "ts 1e+300 is not a time"
    else:
        head = {
            "type": "system",
            "subtype": "init",
            "session_id": "s",
            "seq": 0,
            "ts": "2026-12-01T10:00:00.000Z",
        }
        data = (
            orjson.dumps(head)
            + b"\n"
            + orjson.dumps(
                {
                    "type": "user",
                    "session_id": "s",
                    "seq": 1,
                    "ts": "2026-12-01 25:00",
                    "message": {"role": "user", "content": []},
                }
            )
            + b"\n"
        )
        key = "ts '2026-12-01 25:00'"
    out, _ = convert_bytes(data, "p.jsonl", source)
    assert framing_violations(out) == [] and schema_violations(out) == []
    assert any(e["message"].startswith(f"p.jsonl:2: {key}") for e in errors(lines_of(out)))


def test_validate_knows_a_month_13_is_no_time() -> None:
    line = {
        "type": "system",
        "subtype": "init",
        "session_id": "s",
        "seq": 0,
        "ts": "2026-13-01T00:00:00Z",
    }
    found = [str(v) for v in validate_stream(io.BytesIO(orjson.dumps(line) + b"\n"), "v")]
    assert any("not an RFC 3339 timestamp" in v for v in found)


def test_a_content_block_that_is_a_number_is_kept_in_the_catalog_shape() -> None:
    lines, totals = converted(session(reply(5, {"type": 7, "text": "x"})))
    assert totals.framing.errors == 0
    blocks = [x for x in lines if x["type"] == "assistant"][1]["message"]["content"]
    assert blocks == [
        {"type": "unknown", "extension": {"value": 5}},
        {"type": "unknown", "text": "x", "extension": {"type": 7}},
    ]
    the_rest_converted(lines)


def test_lone_surrogates_are_replaced_and_reported() -> None:
    bad = prompt("x").replace(b'"x"', b'"a\\ud800b"')
    lines, totals = converted(session(bad))
    err = one_error_at(lines, 3, "lone surrogate escape replaced with U+FFFD")
    assert err["extension"]["kind"] == "repaired_line"
    init = [x for x in lines if x.get("subtype") == "init"][1]
    assert init["extension"]["prompt"] == "a\ufffdb"
    assert totals.framing.errors == 1


def test_a_durable_record_of_type_system_init_is_no_second_init() -> None:
    bad = orjson.dumps(
        {
            "type": "system",
            "subtype": "init",
            "sessionId": SID,
            "timestamp": "2026-12-01T10:00:02.000Z",
            "tools": ["Bash"],
        }
    )
    lines, _ = converted(session(bad))
    kept = [x for x in lines if x.get("subtype") == "unrecognized"]
    assert [x["kind"] for x in kept] == ["system/init"]
    assert kept[0]["extension"]["record"]["tools"] == ["Bash"]
    the_rest_converted(lines)


def test_stream_v1_input_that_does_not_fit_the_schema_is_made_to_fit() -> None:
    init = {
        "type": "system",
        "subtype": "init",
        "session_id": "s",
        "seq": 0,
        "ts": "2026-12-01T10:00:00.000Z",
        "tools": ["Bash", 5, {"x": 1}],
        "capabilities": 7,
        "agent": {"name": ["x"], "provider": "p"},
    }
    msg = {
        "type": "assistant",
        "session_id": "s",
        "seq": 1,
        "ts": "2026-12-01T10:00:01.000Z",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "a", "signature": "s1"},
                3,
                {"type": ["x"]},
                {"type": "text", "text": 9},
            ],
        },
    }
    data = b"".join(orjson.dumps(x) + b"\n" for x in (init, msg))
    out, _ = convert_bytes(data, "p.jsonl", "stream_v1")
    assert framing_violations(out) == [] and schema_violations(out) == []
    first, second = lines_of(out)[:2]
    assert "tools" not in first and first["extension"]["tools"] == ["Bash", 5, {"x": 1}]
    assert first["agent"]["name"] == "unknown"
    assert second["message"]["content"] == [
        {"type": "text", "text": "a", "extension": {"signature": "s1"}},
        {"type": "unknown", "extension": {"value": 3}},
        {"type": "unknown", "extension": {"type": ["x"]}},
        {"type": "text", "extension": {"text": 9}},
    ]


def test_a_line_of_another_nested_actor_in_a_nested_actors_run_is_a_line_of_that_run() -> None:
    """stream_v1 input: a subagent's run open (converted alone), and a line of
    another nested actor: a line of the one open run of the session, as the
    validator keys runs (by session), never a second init inside it."""
    init = {
        "type": "system",
        "subtype": "init",
        "session_id": "s",
        "seq": 0,
        "ts": "2026-12-01T10:00:00.000Z",
        "parent_tool_use_id": "t1",
    }
    other = {
        "type": "user",
        "session_id": "s",
        "seq": 1,
        "ts": "2026-12-01T10:00:01.000Z",
        "parent_tool_use_id": "t2",
        "message": {"role": "user", "content": []},
    }
    data = b"".join(orjson.dumps(x) + b"\n" for x in (init, other))
    out, _ = convert_bytes(data, "p.jsonl", "stream_v1")
    assert framing_violations(out) == [] and schema_violations(out) == []
    lines = lines_of(out)
    inits = [x for x in lines if x.get("subtype") == "init"]
    assert [x.get("parent_tool_use_id") for x in inits] == ["t1"]
    assert [x.get("parent_tool_use_id") for x in lines if x["type"] == "user"] == ["t2"]


# -- point 8: bounded memory and time -------------------------------------------------


class Endless(io.RawIOBase):
    """``size`` bytes of ``fill`` then ``tail``, made as they are read: never all
    in memory at once, as a 2 GB file is not."""

    def __init__(self, size: int, fill: bytes, tail: bytes = b"", read_size: int = 1 << 16):
        self.left = size
        self.block = (fill * (read_size // len(fill) + 1))[:read_size]
        self.tail = tail

    def readable(self) -> bool:
        return True

    def read1(self, n: int = -1) -> bytes:
        if self.left <= 0:
            tail, self.tail = self.tail, b""
            return tail
        block = self.block[: min(self.left, len(self.block), n if n > 0 else len(self.block))]
        self.left -= len(block)
        return block

    read = read1  # type: ignore[assignment]


def peak_while(run: Any) -> tuple[int, float]:
    """(peak bytes allocated, seconds) while ``run()`` runs."""
    tracemalloc.start()
    started = time.monotonic()
    try:
        run()
        return tracemalloc.get_traced_memory()[1], time.monotonic() - started
    finally:
        tracemalloc.stop()


def test_the_limit_is_one_named_constant_64_mib() -> None:
    assert MAX_LINE_BYTES == 64 << 20


def test_a_line_over_the_limit_is_reported_and_skipped_without_being_held() -> None:
    """32 MB with no newline, a limit of 1 MiB: one report naming the line and its
    length, then the next line; never more than the limit held (the path a 2 GB
    line takes at the 64 MiB default)."""
    limit = 1 << 20
    size = 32 << 20
    after = b"\n" + prompt() + b"\n" + reply() + b"\n"
    out = io.BytesIO()
    totals = Totals()

    def run() -> None:
        convert_stream(Endless(size, b'{"a":"x",', after), PATH, out.write, totals, max_line=limit)  # type: ignore[arg-type]

    peak, _ = peak_while(run)
    assert peak < 3 * limit, peak
    lines = lines_of(out.getvalue())
    err = one_error_at(lines, 1, f"line of {size} bytes is longer than the limit ({limit})")
    assert err["extension"]["kind"] == "line_too_long"
    assert err["extension"]["length"] == size and err["extension"]["offset"] == 0
    assert lines[-1]["type"] == "result" and lines[-1]["result"] == "yo"  # line 2 on: read


def test_skipping_is_linear_in_the_line_length() -> None:
    def seconds(size: int) -> float:
        def run() -> None:
            for _ in read_lines(
                Endless(size, b"ab", b"\n"),
                "p",  # type: ignore[arg-type]
                max_line=1 << 16,
            ):
                pass

        start = time.monotonic()
        run()
        return time.monotonic() - start

    small, large = seconds(8 << 20), seconds(64 << 20)
    assert large < 8 * 3 * small + 0.5, (small, large)  # 8x the bytes: ~8x the time


def test_a_nul_region_is_counted_not_held_and_the_record_after_it_is_read() -> None:
    """A crash leaves a preallocated region of NULs; the next record is written
    right after it, on the same line. 48 MB of them with a 1 MiB limit."""
    size = 48 << 20
    out = io.BytesIO()
    totals = Totals()

    def run() -> None:
        stream = Endless(size, b"\x00", prompt() + b"\n" + reply() + b"\n")
        convert_stream(
            stream,
            PATH,
            out.write,
            totals,  # type: ignore[arg-type]
            source=None,
            max_line=1 << 20,
        )

    peak, _ = peak_while(run)
    assert peak < 4 << 20, peak
    lines = lines_of(out.getvalue())
    assert errors(lines) == []  # NULs before a record on its line: dropped, as before
    assert [x["type"] for x in lines] == ["system", "assistant", "result"]


def test_a_file_of_nul_bytes_is_one_report() -> None:
    out = io.BytesIO()
    totals = Totals()
    from streamv1.translator.reading.sources import sources

    convert_stream(
        Endless(24 << 20, b"\x00"),
        PATH,
        out.write,
        totals,  # type: ignore[arg-type]
        source=sources()["claude-session"],
    )
    lines = lines_of(out.getvalue())
    one_error_at(lines, 1, f"line holds only NUL bytes ({24 << 20})")


def test_records_of_one_long_joined_line_are_translated_in_parts() -> None:
    """`}{`-joined records on one line: never all parsed at once (a 50 MB line of
    them took 2.9 GB)."""
    recs = [b'{"type":"text","text":"t%d"}' % i for i in range(5 * PART_RECORDS + 3)]
    data = b"".join(recs) + b"\n" + b'{"type":"run_complete"}\n'
    parts = list(read_parsed(io.BytesIO(data), "p"))
    assert [len(p.records) for p in parts[:-1]] == [PART_RECORDS] * 5 + [3]
    assert [p.continued for p in parts[:-1]] == [False] + [True] * 5
    totals = Totals()
    out = io.BytesIO()
    translation = Translation("p", out.write, totals)
    for part in parts:
        translation.feed(part)
    translation.finish()
    assert translation.lines == 2  # a line in parts is still one line
    assert sum(x["type"] == "assistant" for x in lines_of(out.getvalue())) == len(recs)


def test_memory_of_a_joined_line_does_not_grow_with_its_records() -> None:
    record = b'{"type":"text","text":"hello"}'

    def peak(count: int) -> int:
        data = record * count + b"\n"
        return peak_while(lambda: [None for _ in read_parsed(io.BytesIO(data), "p")])[0]

    # The line is held (its bytes, and its text for the stdlib decoder): a few
    # times its size, and never a parsed object per record for all of them at once
    # (those alone were ~25 times the bytes), nor orjson's failed parse of it all
    # (12 times: a long line goes to the stdlib decoder, whose failures are free).
    large = peak(160_000)
    assert large < 6 * len(record) * 160_000, large


def test_recovery_is_linear_on_a_line_of_unclosed_objects() -> None:
    """Every `{"` of a damaged line is a place a record might start; each one is
    tried with a budget for the line, not from scratch to its end."""
    data = b'{"a":' * 20_000 + b"\n"
    started = time.monotonic()
    parsed = list(read_parsed(io.BytesIO(data), "p"))
    assert time.monotonic() - started < 5
    assert [d.lost for p in parsed for d in p.damage] == [True]


def test_a_document_item_over_the_limit_is_reported_and_reading_stops() -> None:
    item = b'{"type":"text","text":"' + b"x" * 5_000 + b'"}'
    data = b"[" + item + b"," + item + b"]"
    parsed = list(read_parsed(io.BytesIO(data), "p", max_line=1_000))
    assert [d.reason for p in parsed for d in p.damage] == [
        "JSON document item longer than the limit (1000)"
    ]
    # The same however the reads fall (a pipe).
    again = list(read_parsed(Chunked(data, [7, 300]), "p", max_line=1_000))  # type: ignore[arg-type]
    assert [d.reason for p in again for d in p.damage] == [
        d.reason for p in parsed for d in p.damage
    ]


def test_a_large_document_item_is_read_in_linear_time_from_small_reads() -> None:
    """An item that does not parse yet is tried again once the text has doubled,
    not after every read (4 MB in reads of 1 KiB was 4,000 parses of ~2 MB)."""
    item = b'{"type":"text","text":"' + b"x" * (4 << 20) + b'"}'
    started = time.monotonic()
    parsed = list(read_parsed(Chunked(b"[" + item + b"]", [1024]), "p"))  # type: ignore[arg-type]
    assert time.monotonic() - started < 5
    assert len(parsed[0].records[0]["text"]) == 4 << 20


def test_a_first_line_of_2_gb_is_not_read_whole_to_tell_the_format() -> None:
    for fill in (b" ", b"{"):

        def run(fill: bytes = fill) -> None:
            for _ in read_parsed(
                Endless(40 << 20, fill),
                "p",  # type: ignore[arg-type]
                max_line=1 << 20,
            ):
                pass

        peak, _ = peak_while(run)
        assert peak < 4 << 20, (fill, peak)


def test_validate_skips_long_lines_too() -> None:
    data = b'{"type":"x"}' * 1_000 + b"\n"
    found = [str(v) for v in validate_stream(io.BytesIO(data), "v", max_line=100)]
    assert found[0] == "v:1: line of 12000 bytes is longer than the limit (100); skipped"


def test_cli_takes_max_line_bytes(streamv1_bin: str, tmp_path: Path) -> None:
    import subprocess

    src = tmp_path / f"{SID}.jsonl"
    long_line = b'{"type":"user","pad":"' + b"x" * 5_000 + b'"}'
    src.write_bytes(session(long_line))
    proc = subprocess.run(
        [streamv1_bin, "convert", "--max-line-bytes", "1000", str(src)],
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 1
    assert b"Traceback" not in proc.stderr
    said = (
        f"{src}:3: line too long: line of {len(long_line)} bytes is longer than the limit "
        "(1000); skipped"
    )
    assert said.encode() in proc.stderr
    assert framing_violations(proc.stdout) == []
    converted = tmp_path / "converted.jsonl"  # validate reads stream_v1
    converted.write_bytes(proc.stdout)
    proc = subprocess.run(
        [streamv1_bin, "validate", "--max-line-bytes", "100", str(converted)],
        capture_output=True,
        check=False,
        timeout=60,
    )
    assert proc.returncode == 1 and b"longer than the limit (100)" in proc.stdout


# -- point 11: no unsafe deserialisation --------------------------------------------

#: Modules whose loading runs code named by the data (or that wrap one that does).
UNSAFE_MODULES = {
    "pickle",
    "cPickle",
    "_pickle",
    "marshal",
    "shelve",
    "dill",
    "cloudpickle",
    "jsonpickle",
    "joblib",
    "yaml",
}
UNSAFE_CALLS = {"eval", "exec", "__import__"}


def _sources() -> Iterator[Path]:
    for top in ("translator", "adapters"):
        yield from sorted((ROOT / top).rglob("*.py"))


def unsafe_uses(text: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.split(".")[0] in UNSAFE_MODULES]
        elif isinstance(node, ast.ImportFrom):
            if (node.module or "").split(".")[0] in UNSAFE_MODULES:
                found.append(f"from {node.module}")
        elif isinstance(node, ast.Call):
            func = node.func
            name = (
                func.id
                if isinstance(func, ast.Name)
                else (func.attr if isinstance(func, ast.Attribute) else "")
            )
            if name in UNSAFE_CALLS:
                found.append(f"{name}()")
            if (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and (func.value.id in UNSAFE_MODULES)
            ):
                found.append(f"{func.value.id}.{func.attr}()")
    return found


def test_no_code_bearing_deserialisation_in_translator_or_adapters() -> None:
    """pickle, marshal, shelve, yaml (even safe_load: no YAML is read at all),
    eval, exec: none, in any module (comments and docstrings may name them)."""
    files = list(_sources())
    assert len(files) > 20
    found = {str(p.relative_to(ROOT)): unsafe_uses(p.read_text("utf-8")) for p in files}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_check_finds_what_it_looks_for() -> None:
    sample = (
        "import pickle\nfrom yaml import load\nimport marshal as m\n"
        "x = eval('1')\npickle.loads(b'')\n"
    )
    assert unsafe_uses(sample) == ["pickle", "from yaml", "marshal", "eval()", "pickle.loads()"]


def test_stella_holds_at_most_hold_limit_events_before_content() -> None:
    """A run's init waits for its first content (are deltas coming?), and the
    events before it wait with it: never more than HOLD_LIMIT of them (25 million
    events with no content were all held: 4 GB)."""
    from streamv1.adapters.stella import HOLD_LIMIT, StellaAdapter
    from streamv1.translator.reading.sources import Where

    adapter = StellaAdapter("p.jsonl")
    out: list[Any] = []
    for n in range(3 * HOLD_LIMIT):
        out += adapter.feed({"type": "mystery", "n": n}, Where("p.jsonl", n + 1))
        assert len(adapter._held) < HOLD_LIMIT
    out += adapter.feed({"type": "text_delta", "delta": "x"}, Where("p.jsonl", 0))
    assert type(out[0]).__name__ == "RunStart" and not out[0].partial_messages
    data = b"".join(b'{"type":"mystery"}\n' for _ in range(3 * HOLD_LIMIT))
    lines, _ = converted(data + b'{"type":"text","text":"x"}\n', "stella", "p.jsonl")
    assert len(lines) == 3 * HOLD_LIMIT + 3


@pytest.mark.parametrize("value", [b"true", b"false", b"1e400", b"-0.5"])
def test_a_count_that_is_not_a_whole_number_never_reaches_the_output(value: bytes) -> None:
    """JSON's true is a Python int; a line carrying it as ``duration_ms`` would fail
    the schema's integer. Counts go through one rule (events.whole)."""
    source = ROOT / "testdata" / "claude-session" / "interactive_four_turns.jsonl"
    data = source.read_bytes().replace(b'"durationMs":296', b'"durationMs":' + value)
    assert data != source.read_bytes()
    out, _ = convert_bytes(data, source="claude-session")
    assert schema_violations(out) == [] and framing_violations(out) == []
    assert b'"duration_ms":' + value not in out
