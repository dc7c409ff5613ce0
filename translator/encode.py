"""Catalog lines → bytes: one compact JSON object and one newline, never ANSI.

orjson escapes control characters, so a raw ESC byte can never reach the output;
the escape *sequences* a tool printed (colour codes in Bash output) would still be
in the decoded strings, so they are removed from every string before encoding.
The check is one pass of a multi-pattern scanner over the encoded line
(:mod:`translator.scan`), so clean lines cost next to nothing.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from translator.scan import Scanner, literal

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), other two-byte escapes, and the
# 8-bit CSI (U+009B) form.
_ANSI = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|\x1b"
)
_ESC = b"\\u001b"  # how orjson writes ESC
_CSI8 = b"\xc2\x9b"  # U+009B, the 8-bit CSI, in UTF-8


def strip_ansi(value: Any) -> Any:
    if isinstance(value, str):
        return _ANSI.sub("", value)
    if isinstance(value, dict):
        return {strip_ansi(k): strip_ansi(v) for k, v in value.items()}
    if isinstance(value, list):
        return [strip_ansi(v) for v in value]
    return value


# The common colour codes (CSI with plain parameters), as orjson escapes them, cut
# straight out of the encoded line: every byte matched is literal ASCII inside a
# JSON string, so the result is the encoding of the stripped strings. The ESC must
# not be a literal backslash-u text (an even run of backslashes before it).
_CSI_ENCODED = re.compile(rb"(?<!\\)((?:\\\\)*)\\u001b\[[0-?]*[ !#-/]*[@-\[\]-~]")


_MARKS = Scanner([literal(_ESC), literal(_CSI8)])


def encode(line: dict[str, Any]) -> bytes:
    data: bytes = orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE)
    if _MARKS.hits(data):
        data = _CSI_ENCODED.sub(rb"\1", data)
        if _ESC in data or _CSI8 in data:
            # Anything rarer (OSC, two-byte escapes, 8-bit CSI): strip the strings.
            data = orjson.dumps(strip_ansi(orjson.loads(data)), option=orjson.OPT_APPEND_NEWLINE)
    return data
