"""The multi-pattern scanner: Hyperscan and the re fallback give the same answers,
and the encoder removes ANSI escapes whichever engine found them."""

from __future__ import annotations

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from translator import encode as enc
from translator.scan import Scanner, hyperscan, literal

PATTERNS = [
    literal(b"\\u001b"),
    literal(b"\xc2\x9b"),
    rb"sk-ant-[A-Za-z0-9_-]{8,}",
    rb"AKIA[0-9A-Z]{16}",
]
ENGINES = ["re"] + (["hyperscan"] if hyperscan is not None else [])

_ALPHABET = st.sampled_from(
    ["a", "Z", "0", "-", "_", "\\u001b", "\x1b", "\x9b", "sk-ant-", "AKIA", "ABCDEFGH", "[31m", " "]
)


@pytest.mark.parametrize("engine", ENGINES)
def test_each_pattern_is_reported(engine: str) -> None:
    scanner = Scanner(PATTERNS, engine=engine)
    assert scanner.hits(b"plain text") == frozenset()
    assert scanner.hits(b"x \\u001b[31m y") == {0}
    assert scanner.hits("a \x9b b".encode()) == {1}
    assert scanner.hits(b"sk-ant-abcdefgh1234 and AKIAABCDEFGHIJKLMNOP") == {2, 3}
    assert scanner.hits(b"plain again") == frozenset()  # no hits left over


@given(st.lists(_ALPHABET, max_size=40).map("".join))
def test_engines_agree(text: str) -> None:
    data = text.encode()
    answers = {engine: Scanner(PATTERNS, engine=engine).hits(data) for engine in ENGINES}
    assert len(set(answers.values())) == 1, answers


@pytest.mark.parametrize("engine", ENGINES)
def test_encode_strips_ansi_with_either_engine(
    engine: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(enc, "_MARKS", Scanner([literal(enc._ESC), literal(enc._CSI8)], engine))
    line = {"text": "\x1b[1;31merror\x1b[0m and \x1b]0;title\x07 and \x9b2K done", "n": 1}
    out = enc.encode(line)
    assert b"\\u001b" not in out and b"\xc2\x9b" not in out
    assert orjson.loads(out) == {"text": "error and  and  done", "n": 1}
    literal_text = {"text": "a backslash-u text: \\u001b[31m stays"}
    assert orjson.loads(enc.encode(literal_text)) == literal_text
