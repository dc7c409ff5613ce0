"""Catalog lines → bytes: one compact JSON object and one newline, never ANSI.

orjson escapes control characters, so a raw ESC byte can never reach the output;
the escape *sequences* a tool printed (colour codes in Bash output) would still be
in the decoded strings, so they are removed from every string before encoding.
The check is one byte search on the encoded line, so clean lines cost nothing.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

# CSI (ESC [ ... final), OSC (ESC ] ... BEL or ST), other two-byte escapes, and the
# 8-bit CSI (U+009B) form.
_ANSI = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]"
    r"|\x1b"
)
_MARKERS = (b"\\u001b", b"\xc2\x9b")


def strip_ansi(value: Any) -> Any:
    if isinstance(value, str):
        return _ANSI.sub("", value)
    if isinstance(value, dict):
        return {strip_ansi(k): strip_ansi(v) for k, v in value.items()}
    if isinstance(value, list):
        return [strip_ansi(v) for v in value]
    return value


def encode(line: dict[str, Any]) -> bytes:
    data: bytes = orjson.dumps(line, option=orjson.OPT_APPEND_NEWLINE)
    if any(marker in data for marker in _MARKERS):
        data = orjson.dumps(strip_ansi(line), option=orjson.OPT_APPEND_NEWLINE)
    return data
