"""Bytes → complete lines → JSON records, with recovery of damaged lines.

The reader knows bytes and JSON, nothing about any source. It works on chunks, so a
file of any size is read with flat memory, and a pipe is read live: ``read1`` hands
back whatever has arrived, so each complete line is yielded as soon as its newline
does.

A line is one record, parsed by orjson in the loop itself. Where it is not, the
plain reasons are said here (a line too long to hold; only NUL bytes, the
preallocated, never-written region a crash leaves; a value that is no object), and
the rest goes to :mod:`translator.reading.recovery`, which finds every complete
record on the line (``}{`` joins, splices, a cut-off final line, bytes that are not
UTF-8) and reports what it cannot read as :class:`Damage` naming the file, line and
byte offset. A JSON document (not JSONL) is read here too, item by item.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

from streamv1.translator.reading.lines import MAX_LINE_BYTES, Line, LineSplitter, line_too_long
from streamv1.translator.reading.recovery import (
    DECODER,
    TOO_DEEP,
    WS,
    Damage,
    fix_surrogates,
    recover,
    unfit,
)

__all__ = [
    "MAX_LINE_BYTES",
    "Damage",
    "Line",
    "ParsedLine",
    "line_too_long",
    "parse_line",
    "read_lines",
    "read_parsed",
]

CHUNK_SIZE = 1 << 20
#: Records of one damaged line handed on at a time: a 50 MB line of ``}{``-joined
#: records is translated as it is split, never held as one list.
PART_RECORDS = 64
#: Lines up to this size are parsed by orjson first. A failed orjson parse
#: allocates 12 times the line for its error (a 50 MB ``}{`` line: 600 MB), so a
#: longer line goes straight to the stdlib decoder, whose failures cost nothing
#: (and which reads a valid long line 2-3 times slower: such lines are rare).
ORJSON_MAX = 4 << 20


@dataclass(slots=True)
class ParsedLine:
    line: Line
    records: list[dict[str, Any]] = field(default_factory=list)
    damage: list[Damage] = field(default_factory=list)
    #: A later part of the same line (a damaged line's records come in parts).
    continued: bool = False


def read_parsed(
    stream: IO[bytes], path: str, chunk_size: int = CHUNK_SIZE, max_line: int = MAX_LINE_BYTES
) -> Iterator[ParsedLine]:
    """Records from JSONL, or from one JSON document (``--output-format json``).

    A document is a top-level array of records, or an object whose array members
    hold them (stella's ``{"events": [...]}``): its records are read one at a time,
    never the whole document at once. A file is a document when it starts with
    ``[``, or with ``{`` on a first line that is not a JSON object by itself (a
    pretty-printed object); otherwise it is JSONL, read line by line.

    A line holds one record, except a damaged one (``}{``): its records come in
    parts of at most ``PART_RECORDS`` (``continued`` set on all but the first).
    """
    read = getattr(stream, "read1", stream.read)
    # What decides the format: the first byte that is not white space and, for a
    # "{", the rest of its line, looked at only within max_line (a 2 GB line of
    # spaces, or one "{" line of 2 GB, is JSONL whose long line is reported). Each
    # read is looked at once, never the growing head again (linear time), and what
    # decides never depends on how the reads fall.
    pieces: list[bytes] = []
    size = 0
    at = -1  # offset of the first byte that is not white space
    while size <= max_line:
        chunk = read(chunk_size)
        if not chunk:
            break
        pieces.append(chunk)
        rest = chunk.lstrip()
        size += len(chunk)
        if rest:
            at = size - len(rest)
            if rest[:1] == b"{" and rest.find(b"\n") < 0:
                # Read the whole first line, or enough of it to know it is no short
                # opening of a pretty-printed document (see _is_document).
                while size <= at + min(max_line, ORJSON_MAX):
                    chunk = read(chunk_size)
                    if not chunk:
                        break
                    pieces.append(chunk)
                    size += len(chunk)
                    if chunk.find(b"\n") >= 0:
                        break
            break
    head = b"".join(pieces) if len(pieces) != 1 else pieces[0]
    first = head[at : at + 1] if 0 <= at <= max_line else b""
    if first == b"[" or (first == b"{" and _is_document(head, at, max_line)):
        yield from _read_document(_Buffer(read, head, chunk_size, max_line), path)
        return
    # read_lines' loop, inline (one generator fewer a line: this is the hot path).
    lines = LineSplitter(path, max_line, nuls=True)
    feed, loads = lines.feed, orjson.loads
    chunk = head or read(chunk_size)
    while chunk:
        for line in feed(chunk):
            data = line.data
            if not line.nuls and not line.skipped and len(data) <= ORJSON_MAX:
                # The common case, inline: one whole record on its line.
                try:
                    value = loads(data)
                except orjson.JSONDecodeError:
                    pass
                else:
                    if type(value) is dict:
                        yield ParsedLine(line, [value], [])
                        continue
            yield from _parse_parts(line, max_line)
        chunk = read(chunk_size)
    last = lines.end()
    if last is not None:
        yield from _parse_parts(last, max_line)


def read_lines(
    stream: IO[bytes],
    path: str,
    chunk_size: int = CHUNK_SIZE,
    head: bytes = b"",
    max_line: int = MAX_LINE_BYTES,
) -> Iterator[Line]:
    """Split a byte stream into lines, yielding each as soon as it is complete.

    ``head`` holds bytes already read from the stream (they come first). A line
    longer than ``max_line`` bytes (NUL bytes not counted) is yielded with
    ``skipped`` set to its length and only its first bytes kept: nothing of it is
    held past the limit, and every byte is looked at once. NUL bytes of a line
    that spans reads are dropped as they come (counted in ``nuls``): a NUL region
    is what a crash leaves, and the record written after it is still read. The
    lines are the same however the stream hands its bytes over.
    """
    read = getattr(stream, "read1", stream.read)
    lines = LineSplitter(path, max_line, nuls=True)
    feed = lines.feed
    chunk = head or read(chunk_size)
    while chunk:
        yield from feed(chunk)
        chunk = read(chunk_size)
    last = lines.end()
    if last is not None:
        yield last


def parse_line(line: Line, limit: int = MAX_LINE_BYTES) -> ParsedLine:
    """Parse one line into the JSON objects it holds, recovering what can be.

    All of them at once (the tail daemon's line-at-a-time use); :func:`read_parsed`
    hands a damaged line's records on in parts instead.
    """
    data = line.data
    if not line.nuls and not line.skipped and len(data) <= ORJSON_MAX:
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
        else:
            if type(value) is dict:
                return ParsedLine(line, [value], [])  # the common case: no list appends
    out = ParsedLine(line, [], [])
    for part in _parse_parts(line, limit):
        out.records += part.records
        out.damage += part.damage
    return out


def _parse_parts(line: Line, limit: int = MAX_LINE_BYTES) -> Iterator[ParsedLine]:
    """A line the fast path did not take: its records and damage, in parts."""
    data = line.data
    if line.skipped:
        yield ParsedLine(
            line,
            [],
            [
                Damage(
                    line_too_long(line.skipped, limit),
                    _show(data),
                    kind="line_too_long",
                    extension={"length": line.skipped},
                )
            ],
        )
        return
    if line.nuls or b"\x00" in data:
        kept = data.replace(b"\x00", b"")
        if not kept.strip():
            count = line.nuls + len(data)
            yield ParsedLine(line, [], [Damage(f"line holds only NUL bytes ({count})", "")])
            return  # (never a cut-off record, even as the last line)
        data = kept
    elif not data.strip():
        yield ParsedLine(line, [], [])  # a blank line
        return
    if len(data) <= ORJSON_MAX:
        try:
            value = orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
        else:  # (a dict here came with NULs, taken out: the fast path did not see it)
            if type(value) is dict:
                yield ParsedLine(line, [value], [])
            else:
                yield ParsedLine(line, [], [Damage("not a JSON object", _show(data))])
            return
    records: list[dict[str, Any]] = []
    damage: list[Damage] = []
    continued = False
    for item in recover(data, line.terminated):
        if type(item) is dict:
            records.append(item)
            if len(records) >= PART_RECORDS:
                yield ParsedLine(line, records, damage, continued)
                records, damage, continued = [], [], True
        else:
            damage.append(item)  # type: ignore[arg-type]
    if records or damage or not continued:
        yield ParsedLine(line, records, damage, continued)


def _show(data: bytes, limit: int = 200) -> str:
    return data[:limit].decode("utf-8", errors="backslashreplace")


def _is_document(head: bytes, start: int, max_line: int) -> bool:
    """A pretty-printed object: its first line alone is no complete JSON object."""
    end = head.find(b"\n", start)
    if end < 0 or end - start > min(max_line, ORJSON_MAX):
        return False  # one line, the whole input (or a record, long): JSONL
    first_line = head[start:end]  # the first line only: never a copy of the rest
    try:
        return not isinstance(orjson.loads(first_line), dict)
    except orjson.JSONDecodeError:
        return first_line.strip() == b"{" or first_line.rstrip().endswith((b"[", b",", b"{"))


class _Buffer:
    """Decoded text of a byte stream, refilled as a parse needs more of it.

    An item that does not parse yet is tried again only once the text after it has
    doubled (linear time however large it is), and never past ``max_line`` bytes:
    then the document is reported as unreadable from there and reading stops.
    """

    def __init__(self, read: Any, head: bytes, chunk_size: int, max_line: int) -> None:
        self._read = read
        self._size = chunk_size
        self.max_line = max_line
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.text = self._decoder.decode(head)
        self.pos = 0
        self.line = 1  # line number of text[pos]
        self.eof = False

    def more(self, at_least: int = 0) -> bool:
        """Read on (dropping what was consumed): a chunk, or at least ``at_least``
        characters' worth; False at the end."""
        if self.eof:
            return False
        chunks = [self.text[self.pos :]]
        got = 0
        while True:
            chunk = self._read(self._size)
            self.eof = not chunk
            chunks.append(self._decoder.decode(chunk, final=self.eof))
            got += len(chunk)
            if self.eof or got >= at_least:
                break
        self.text = "".join(chunks)
        self.pos = 0
        return True

    def advance(self, to: int) -> None:
        self.line += self.text.count("\n", self.pos, to)
        self.pos = to

    def skip(self, chars: str) -> str:
        """Skip ``chars``; the next character, or "" at the end of the input."""
        while True:
            pos = self.pos
            while pos < len(self.text) and self.text[pos] in chars:
                pos += 1
            self.advance(pos)
            if pos < len(self.text):
                return self.text[pos]
            if not self.more():
                return ""

    def value(self) -> tuple[bool, Any, str | None]:
        """Decode the JSON value at pos (reading on as needed): (ok, value, why not
        when the reason is more than the syntax). A value longer than max_line
        is not one, however the reads fell."""
        too_long = f"JSON document item longer than the limit ({self.max_line})"
        while True:
            try:
                value, stop = DECODER.raw_decode(self.text, self.pos)
            except RecursionError:
                return False, None, TOO_DEEP
            except ValueError:
                held = len(self.text) - self.pos
                if held > self.max_line:
                    return False, None, too_long
                if self.more(held):
                    continue
                return False, None, None
            if stop - self.pos > self.max_line:
                return False, None, too_long
            self.advance(stop)
            return True, value, None


def _read_document(buf: _Buffer, path: str) -> Iterator[ParsedLine]:
    def item(line: int) -> ParsedLine:
        return ParsedLine(Line(path, line, -1, b"", True))

    def broken(reason: str) -> ParsedLine:
        while len(buf.text) - buf.pos < 200 and buf.more():
            pass  # (what it shows must not depend on how the reads fell)
        bad = item(buf.line)
        bad.damage.append(Damage(reason, buf.text[buf.pos : buf.pos + 200]))
        return bad

    opening = buf.skip(WS)
    buf.advance(buf.pos + 1)
    if opening == "[":
        yield from _read_items(buf, path, item, broken)
        return
    while True:  # members of a top-level object
        nxt = buf.skip(WS + ",")
        if nxt in ("}", ""):
            return
        line = buf.line
        ok, key, _ = buf.value()
        if not ok or not isinstance(key, str) or buf.skip(WS) != ":":
            yield broken("unreadable JSON document member")
            return
        buf.advance(buf.pos + 1)
        if buf.skip(WS) == "[":
            buf.advance(buf.pos + 1)
            if buf.skip(WS) == "{":
                yield from _read_items(buf, path, item, broken)
                continue
            ok, value, why = _rest_of_list(buf)  # an array of plain values: one member
        else:
            ok, value, why = buf.value()
        if not ok:
            yield broken(why or f"unreadable JSON document member {key[:200]!r}")
            return
        member = item(line)
        _take({key: value}, member)
        yield member


def _rest_of_list(buf: _Buffer) -> tuple[bool, list[Any], str | None]:
    """The values of an array whose "[" was consumed, up to its "]"."""
    values: list[Any] = []
    while True:
        nxt = buf.skip(WS + ",")
        if nxt == "]":
            buf.advance(buf.pos + 1)
            return True, values, None
        if nxt == "":
            return False, values, None
        ok, value, why = buf.value()
        if not ok:
            return False, values, why
        values.append(value)


def _read_items(buf: _Buffer, path: str, item: Any, broken: Any) -> Iterator[ParsedLine]:
    """The items of an array whose "[" was consumed, up to its "]"."""
    while True:
        nxt = buf.skip(WS + ",")
        if nxt == "]":
            buf.advance(buf.pos + 1)
            return
        if nxt == "":
            yield broken("JSON document ends inside an array")
            return
        line = buf.line
        ok, value, why = buf.value()
        if not ok:
            yield broken(why or "unreadable JSON array item")
            return
        parsed = item(line)
        if isinstance(value, dict):
            _take(value, parsed)
        else:
            parsed.damage.append(Damage("array item is not a JSON object", _short(value)))
        yield parsed


def _take(value: dict[str, Any], parsed: ParsedLine) -> None:
    """A document's record, held to the rules a line's record is held to."""
    reason = unfit(value)
    if reason is not None:
        parsed.damage.append(Damage(reason, ""))
        return
    if fix_surrogates(value):
        parsed.damage.append(Damage("lone surrogate escape replaced with U+FFFD", "", lost=False))
    parsed.records.append(value)


def _short(value: Any) -> str:
    """What a non-object item was, briefly (repr of a deep or huge value is not)."""
    if isinstance(value, list | dict):
        return f"<{type(value).__name__} of {len(value)}>"
    return repr(value)[:200]
