"""Property tests of the one line splitter (translator/reading/lines.py): however a byte
string is cut into pieces, the lines, the cut-off tail, the numbers and offsets
are those of splitting it whole, under every option its callers use."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from streamv1.translator.reading.lines import Line, LineSplitter

# Bytes rich in what the splitter cares about: newlines, CRs, NULs.
_bytes = st.lists(
    st.one_of(
        st.sampled_from([b"\n", b"\r", b"\r\n", b"\x00", b"\x00" * 9, b"{}", b"x"]),
        st.binary(max_size=12),
    ),
    max_size=40,
).map(b"".join)


def _split(data: bytes, cuts: list[int], limit: int, nuls: bool, strip_cr: bool) -> list[Line]:
    lines = LineSplitter("p", limit, nuls=nuls, strip_cr=strip_cr)
    out: list[Line] = []
    at = 0
    for cut in sorted(c % (len(data) + 1) for c in cuts):
        out += lines.feed(data[at:cut])
        at = cut
    out += lines.feed(data[at:])
    last = lines.end()
    return out + ([last] if last is not None else [])


def _whole(data: bytes, limit: int, nuls: bool, strip_cr: bool) -> list[Line]:
    return _split(data, [], limit, nuls, strip_cr)


@given(
    _bytes,
    st.lists(st.integers(0, 10_000), max_size=12),
    st.integers(1, 40),
    st.booleans(),
    st.booleans(),
)
def test_any_pieces_give_the_lines_of_the_whole(
    data: bytes, cuts: list[int], limit: int, nuls: bool, strip_cr: bool
) -> None:
    whole = _whole(data, limit, nuls, strip_cr)
    pieces = _split(data, cuts, limit, nuls, strip_cr)
    key = [(x.number, x.offset, x.terminated, x.skipped) for x in whole]
    assert [(x.number, x.offset, x.terminated, x.skipped) for x in pieces] == key
    for a, b in zip(whole, pieces, strict=True):
        if a.skipped:
            assert a.data[:20] == b.data[:20]  # what is shown of it
        else:
            # NULs dropped as they came may differ by where the cuts fell; never the rest.
            assert a.data.replace(b"\0", b"") == b.data.replace(b"\0", b"")
            assert a.nuls + len(a.data) == b.nuls + len(b.data)


@given(_bytes, st.lists(st.integers(0, 10_000), max_size=12))
def test_lines_are_the_newline_split_when_under_the_limit(data: bytes, cuts: list[int]) -> None:
    got = _split(data, cuts, 1 << 20, nuls=False, strip_cr=False)
    parts = data.split(b"\n")
    want, tail = parts[:-1], parts[-1]
    assert [x.data for x in got if x.terminated] == want
    assert [x.data for x in got if not x.terminated] == ([tail] if tail else [])
    for x in got:  # each offset is its line's first byte
        assert data[x.offset : x.offset + len(x.data)] == x.data


@given(_bytes, st.lists(st.integers(0, 10_000), max_size=12), st.integers(1, 40))
def test_a_line_over_the_limit_is_skipped_with_its_length(
    data: bytes, cuts: list[int], limit: int
) -> None:
    for x in _split(data, cuts, limit, nuls=False, strip_cr=True):
        raw = data[x.offset :].split(b"\n", 1)[0]
        body = raw[:-1] if x.terminated and raw.endswith(b"\r") else raw
        if len(body) > limit:
            assert x.skipped == len(raw) and len(x.data) <= 200
        else:
            assert not x.skipped and x.data == body
