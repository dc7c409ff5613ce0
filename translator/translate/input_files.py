"""An input file as a batch conversion looks at it before converting it: refused when
it is plainly not JSON lines, its first record sniffed when ``--source`` may name
the wrong source, and its size.

Apart from the conversion: these read a file's first bytes or its ``stat``, never
its records (``validate`` sniffs with :func:`first_record` too).
"""

from __future__ import annotations

import os
import stat
from typing import IO, Any

import orjson

from streamv1.translator import logs
from streamv1.translator.reading.sources import Source
from streamv1.translator.translate.translation import InputError

log = logs.get()

_BINARY_PROBE = 8192
_PRINTABLE = bytes([9, 10, 13, *range(0x20, 0x100)])


def is_regular(path: str) -> bool:
    """A regular file (not a FIFO or a device, whose open or reads may wait)."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True  # the open says what is wrong


def refuse_binary(stream: IO[bytes]) -> bytes:
    """The input's first bytes, after refusing what is plainly not JSON lines."""
    head = stream.read(_BINARY_PROBE)
    stream.seek(0)
    if not head:
        return head
    text = head.replace(b"\x00", b"")
    if not text.strip():
        return head  # only NULs: the reader reports them per line
    unprintable = len(text.translate(None, _PRINTABLE))
    if unprintable > 0.15 * len(text):
        raise InputError("binary data, not a JSONL transcript")
    if b"{" not in text and b"[" not in text:
        raise InputError("plain text, not JSON lines (each line must be one JSON object)")
    return head


def first_record(head: bytes) -> dict[str, Any] | None:
    """The first JSON object among an input's first lines (what a sniff looks at)."""
    for raw in head.splitlines()[:5]:
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict):
            return record
    return None


def looks_like_another(head: bytes, named: Source, path: str) -> bool:
    """``--source`` names one source and the first record is plainly another's
    (decisive for it, nothing for the named one): said once, counted; the input is
    still converted as named (the user may know better)."""
    from streamv1.translator.reading.sources import DECISIVE, sniff

    record = first_record(head)
    if record is None:
        return False
    best, score = sniff(record)
    if best is None or best is named or score < DECISIVE or named.sniff(record):
        return False
    log.warning(
        "these records look like another source's; converting them as the one named",
        path=path,
        hint="--source auto tells by itself",
        source=named.name,
        looks_like=best.name,
    )
    return True


def size_of(path: str) -> int:
    """Its size in bytes; 0 for stdin, or a file that cannot be looked at."""
    try:
        return os.stat(path).st_size if path != "-" else 0
    except OSError:
        return 0
