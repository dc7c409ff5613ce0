"""Catalog lines → bytes: one compact JSON object and one newline.

The bytes still pass :mod:`translator.output.scrub` on their way to any sink, which takes
out ANSI escape sequences and masks secrets; :func:`clean_ansi` is its ANSI half.
orjson escapes control characters, so a raw ESC byte never reaches the output, but
the escape *sequences* a tool printed (colour codes in Bash output) are still in
the strings, written as ``\\u001b[31m``.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

_OPTIONS = orjson.OPT_APPEND_NEWLINE

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), other two-byte escapes, and the
# 8-bit CSI (U+009B) form.
_ANSI = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|\x1b"
)
ESC = b"\\u001b"  # how orjson writes ESC
CSI8 = b"\xc2\x9b"  # U+009B, the 8-bit CSI, in UTF-8

# The common colour codes (CSI with plain parameters), as orjson escapes them, cut
# straight out of the encoded line: every byte matched is literal ASCII inside a
# JSON string, so the result is the encoding of the stripped strings. The pattern
# starts with its literal, so re skips to candidates instead of trying every byte
# (a look-behind first cost ~60 instructions a byte on long lines); whether the
# ESC is a real one (an even run of backslashes before it, not a literal
# backslash-u text) is checked on each match.
_CSI_ENCODED = re.compile(rb"\\u001b\[[0-?]*[ !#-/]*[@-\[\]-~]")


def _drop_csi(m: re.Match[bytes]) -> bytes:
    line, at = m.string, m.start()
    run = 0  # backslashes just before the match
    while at > run and line[at - run - 1] == 0x5C:
        run += 1
    return m[0] if run % 2 else b""


def encode(line: dict[str, Any]) -> bytes:
    try:
        return orjson.dumps(line, option=_OPTIONS)
    except TypeError:
        # The last defence, for values no JSON encoder takes (a lone surrogate, an
        # integer past 64 bits): the line still goes out, as valid JSON.
        return orjson.dumps(_encodable(line), option=_OPTIONS)


#: orjson writes at most 255 levels; deeper values go out as their JSON text.
_DEEPEST = 200


def _encodable(value: Any, depth: int = 0) -> Any:
    if isinstance(value, str):
        return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    if isinstance(value, dict | list | tuple) and depth >= _DEEPEST:
        import json

        try:
            return json.dumps(value, default=str)  # ASCII: no surrogate survives
        except (RecursionError, ValueError):
            return "[nested too deep to keep]"
    if isinstance(value, dict):
        return {_encodable(str(k)): _encodable(v, depth + 1) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encodable(v, depth + 1) for v in value]
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return value
    if isinstance(value, int):
        return value if -(2**63) <= value < 2**64 else str(value)
    return str(value)


def strip_ansi(value: Any) -> Any:
    if isinstance(value, str):
        return _ANSI.sub("", value)
    if isinstance(value, dict):
        return {strip_ansi(k): strip_ansi(v) for k, v in value.items()}
    if isinstance(value, list):
        return [strip_ansi(v) for v in value]
    return value


def clean_ansi(line: bytes) -> bytes:
    """One encoded line without ANSI escapes (the line holds an ESC or U+009B)."""
    line = _CSI_ENCODED.sub(_drop_csi, line)
    if ESC in line or CSI8 in line:
        # Anything rarer (OSC, two-byte escapes, 8-bit CSI): strip the strings.
        line = orjson.dumps(strip_ansi(orjson.loads(line)), option=_OPTIONS)
    return line
