"""Property tests of the line reader: any chunking, damaged lines, cut-off tails."""

from __future__ import annotations

import io
from typing import Any

import orjson
from fuzzing import Chunked
from hypothesis import given, settings
from hypothesis import strategies as st

from streamv1.translator.reading.reader import Line, parse_line, read_lines, read_parsed

_keys = st.text(st.characters(min_codepoint=97, max_codepoint=122), min_size=1, max_size=6)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.text(max_size=30),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_keys, inner, max_size=4)),
    max_leaves=12,
)
records = st.lists(
    st.dictionaries(_keys, _values, min_size=1, max_size=5).map(lambda d: {"type": "r", **d}),
    min_size=1,
    max_size=12,
)


def encode(recs: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in recs)


@given(records, st.lists(st.integers(1, 64), min_size=1, max_size=20), st.booleans())
def test_any_chunking_yields_the_same_lines(
    recs: list[dict[str, Any]], sizes: list[int], crlf: bool
) -> None:
    data = encode(recs)
    if crlf:
        data = data.replace(b"\n", b"\r\n")
    lines = list(read_lines(Chunked(data, sizes), "p"))  # type: ignore[arg-type]
    assert [orjson.loads(line.data) for line in lines] == recs
    assert [line.number for line in lines] == list(range(1, len(recs) + 1))
    assert all(line.terminated for line in lines)
    # offsets point at each line's first byte
    for line in lines:
        assert data[line.offset : line.offset + len(line.data)] == line.data


@given(records, st.lists(st.integers(1, 64), min_size=1, max_size=20))
def test_array_documents_yield_the_same_records(
    recs: list[dict[str, Any]], sizes: list[int]
) -> None:
    data = orjson.dumps(recs, option=orjson.OPT_INDENT_2)
    parsed = list(read_parsed(Chunked(data, sizes), "p"))  # type: ignore[arg-type]
    assert [r for p in parsed for r in p.records] == recs
    assert not any(p.damage for p in parsed)


def _parse(data: bytes) -> tuple[list[dict[str, Any]], list[Any]]:
    recs: list[dict[str, Any]] = []
    damage: list[Any] = []
    for parsed in read_parsed(io.BytesIO(data), "p"):
        recs += parsed.records
        damage += parsed.damage
    return recs, damage


@given(records, st.data())
def test_joined_lines_are_split_again(recs: list[dict[str, Any]], data: st.DataObject) -> None:
    """`}{`: a missing newline between two records loses neither."""
    i = data.draw(st.integers(0, len(recs) - 1))
    lines = [orjson.dumps(r) for r in recs]
    if i + 1 < len(lines):
        lines[i : i + 2] = [lines[i] + lines[i + 1]]
    got, damage = _parse(b"\n".join(lines) + b"\n")
    assert got == recs
    assert damage == []


@given(records, st.data())
def test_nul_runs_are_dropped_and_records_kept(
    recs: list[dict[str, Any]], data: st.DataObject
) -> None:
    i = data.draw(st.integers(0, len(recs)))
    n = data.draw(st.integers(1, 300))
    lines = [orjson.dumps(r) for r in recs]
    lines.insert(i, b"\x00" * n)
    got, damage = _parse(b"\n".join(lines) + b"\n")
    assert got == recs
    assert len(damage) == 1 and "NUL" in damage[0].reason


@given(records, st.data())
def test_truncated_record_spliced_onto_the_next_loses_only_itself(
    recs: list[dict[str, Any]], data: st.DataObject
) -> None:
    if len(recs) < 2:
        return
    i = data.draw(st.integers(0, len(recs) - 2))
    lines = [orjson.dumps(r) for r in recs]
    cut = data.draw(st.integers(1, len(lines[i]) - 1))
    lines[i : i + 2] = [lines[i][:cut] + lines[i + 1]]
    got, damage = _parse(b"\n".join(lines) + b"\n")
    # Every record but the truncated one survives; what was lost is reported.
    assert got[:i] == recs[:i]
    assert got[-(len(recs) - i - 1) :] == recs[i + 1 :]
    assert any(d.lost for d in damage)


@given(records, st.data())
def test_cut_off_final_line_is_tolerated(recs: list[dict[str, Any]], data: st.DataObject) -> None:
    raw = encode(recs)
    last = orjson.dumps(recs[-1])
    cut = data.draw(st.integers(1, len(last) - 1))
    raw = raw[: len(raw) - len(last) - 1] + last[:cut]
    got, damage = _parse(raw)
    assert got == recs[:-1]
    assert len(damage) == 1 and damage[0].tolerated


@settings(max_examples=50)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_never_raise(blob: bytes) -> None:
    for parsed in read_parsed(io.BytesIO(blob), "p"):
        for rec in parsed.records:
            assert isinstance(rec, dict)


def test_invalid_utf8_is_replaced_and_reported() -> None:
    parsed = parse_line(Line("p", 1, 0, b'{"type":"x","v":"caf\xe9"}', True))
    assert parsed.records == [{"type": "x", "v": "caf\ufffd"}]
    assert len(parsed.damage) == 1 and not parsed.damage[0].lost


@given(records, st.lists(st.integers(1, 64), min_size=1, max_size=20))
def test_object_documents_stream_their_array_members(
    recs: list[dict[str, Any]], sizes: list[int]
) -> None:
    doc = {"session_id": "s1", "events": recs, "meta": {"n": [1, 2]}, "tags": ["a"]}
    data = orjson.dumps(doc, option=orjson.OPT_INDENT_2)
    parsed = list(read_parsed(Chunked(data, sizes), "p"))  # type: ignore[arg-type]
    got = [r for p in parsed for r in p.records]
    assert got == [{"session_id": "s1"}, *recs, {"meta": {"n": [1, 2]}}, {"tags": ["a"]}]
    assert not any(p.damage for p in parsed)
