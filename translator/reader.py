"""Bytes → complete lines → JSON records, with recovery of damaged lines.

The reader knows bytes and JSON, nothing about any source. It works on chunks, so a
file of any size is read with flat memory, and a pipe is read live: ``read1`` hands
back whatever has arrived, so each complete line is yielded as soon as its newline
does.

Damage seen in real Claude Code files (anthropics/claude-code #52387, #81843):

* runs of NUL bytes (a preallocated, never-written region after a crash);
* ``}{`` — two records with the newline between them missing;
* a truncated record spliced onto the start of the next one;
* a cut-off final line (a process killed mid-write);
* bytes that are not UTF-8.

Every complete record that can be found on a line is recovered; what cannot be is
reported as :class:`Damage` naming the file, line and byte offset.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

CHUNK_SIZE = 1 << 20
_DECODER = json.JSONDecoder()
_WS = " \t\r\n"


@dataclass(slots=True)
class Line:
    """One line of input, without its newline (a trailing CR is kept out too)."""

    path: str
    number: int  # 1-based
    offset: int  # byte offset of the line's first byte
    data: bytes
    terminated: bool  # False only for a last line with no newline


@dataclass(slots=True)
class Damage:
    """Part of a line that could not be read as a JSON object."""

    reason: str
    fragment: str
    lost: bool = True  # False: the record was kept (e.g. bytes replaced), only reported
    tolerated: bool = False  # a cut-off final line: counted, not an error


@dataclass(slots=True)
class ParsedLine:
    line: Line
    records: list[dict[str, Any]] = field(default_factory=list)
    damage: list[Damage] = field(default_factory=list)


def read_parsed(stream: IO[bytes], path: str, chunk_size: int = CHUNK_SIZE) -> Iterator[ParsedLine]:
    """Records from JSONL, or from one JSON document (``--output-format json``).

    A document is a top-level array of records, or an object whose array members
    hold them (stella's ``{"events": [...]}``): its records are read one at a time,
    never the whole document at once. A file is a document when it starts with
    ``[``, or with ``{`` on a first line that is not a JSON object by itself (a
    pretty-printed object); otherwise it is JSONL, read line by line.
    """
    # (lstrip hands back the same bytes when there is nothing to strip: no copy of
    # the first chunk, which strip() made for every file, its last newline.)
    read = getattr(stream, "read1", stream.read)
    head = b""
    while not head.lstrip():
        chunk = read(chunk_size)
        if not chunk:
            break
        head += chunk
    first = head.lstrip()[:1]
    if first == b"{":
        # Read the whole first line: only it tells a JSONL record from the opening
        # of a pretty-printed document.
        while head.find(b"\n", len(head) - len(head.lstrip())) < 0:
            chunk = read(chunk_size)
            if not chunk:
                break
            head += chunk
    if first == b"[" or (first == b"{" and _is_document(head)):
        yield from _read_document(_Buffer(read, head, chunk_size), path)
        return
    yield from map(parse_line, read_lines(stream, path, chunk_size, head=head))


def read_lines(
    stream: IO[bytes], path: str, chunk_size: int = CHUNK_SIZE, head: bytes = b""
) -> Iterator[Line]:
    """Split a byte stream into lines, yielding each as soon as it is complete.

    ``head`` holds bytes already read from the stream (they come first).
    """
    read = getattr(stream, "read1", stream.read)
    pieces: list[bytes] = []  # a line still being read, in the chunks it came in
    number = 0
    offset = 0  # offset of the next line's first byte
    pending = head
    while True:
        chunk = pending or read(chunk_size)
        pending = b""
        if not chunk:
            break
        if chunk.find(b"\n") < 0:
            pieces.append(chunk)
            continue
        if pieces:
            pieces.append(chunk)
            chunk = b"".join(pieces)
            pieces = []
        # find() is memchr; bytes.split(b"\n") compares byte by byte, and measured
        # as 8% of a whole conversion's instructions.
        find = chunk.find
        start = 0
        end = find(b"\n")
        while end >= 0:
            number += 1
            stop = end - 1 if end > start and chunk[end - 1] == 13 else end  # CR LF
            yield Line(path, number, offset, chunk[start:stop], True)
            offset += end + 1 - start
            start = end + 1
            end = find(b"\n", start)
        if start < len(chunk):
            pieces.append(chunk[start:])
    if pieces:
        number += 1
        yield Line(path, number, offset, b"".join(pieces), False)


def parse_line(line: Line) -> ParsedLine:
    """Parse one line into the JSON objects it holds, recovering what can be."""
    data = line.data
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        parsed = False
    else:
        if type(value) is dict:
            return ParsedLine(line, [value], [])  # the common case: no list appends
        parsed = True
    out = ParsedLine(line, [], [])
    if not data.strip():
        return out
    if parsed:
        out.damage.append(Damage("not a JSON object", _show(data)))
        return out
    _recover(data, out, line.terminated)
    if not line.terminated and out.damage and not out.records:
        # A process killed mid-write leaves a partial object at the end: tolerated
        # (a multi-byte character it cut in two is part of the same cut).
        fragment = next((d.fragment for d in out.damage if d.fragment), "")
        out.damage = [Damage("truncated final line", fragment, tolerated=True)]
    return out


def _recover(data: bytes, out: ParsedLine, terminated: bool) -> None:
    if b"\x00" in data:
        count = data.count(b"\x00")
        data = data.replace(b"\x00", b"")
        if not data.strip():
            out.damage.append(Damage(f"line holds only NUL bytes ({count})", ""))
            return
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        out.damage.append(
            Damage(
                f"invalid UTF-8 at byte {exc.start}; replaced with U+FFFD",
                "",
                lost=False,
            )
        )
    _split_objects(text, out, terminated)


def _split_objects(text: str, out: ParsedLine, terminated: bool) -> None:
    """Find every complete JSON object on the line (``}{`` joins, splices).

    A newline is written after a complete record, so a terminated line ends with
    one: an object that runs to the end of a terminated line is a record. On a
    cut-off final line it may be a nested object of the cut record instead, so it
    only counts there when another object follows it.
    """
    pos = 0
    end = len(text)
    while pos < end:
        while pos < end and text[pos] in _WS:
            pos += 1
        if pos >= end:
            break
        value: Any = None
        failed_at = -1
        try:
            value, stop = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            stop, failed_at = -1, exc.pos
        if stop > pos and isinstance(value, dict):
            out.records.append(value)
            pos = stop
            continue
        # Not an object from here. Where the parse broke is where a spliced record
        # begins (a `{` where a `,` was due); else look for the next object start.
        nxt = _splice_start(text, pos, failed_at)
        if nxt < 0:
            nxt = _next_object_start(text, pos + 1, terminated)
        out.damage.append(Damage("unreadable JSON fragment", text[pos:nxt]))
        pos = nxt


def _splice_start(text: str, pos: int, failed_at: int) -> int:
    """The start of the record a truncated one was spliced onto, or -1."""
    if failed_at <= pos or failed_at >= len(text.rstrip(_WS)):
        return -1  # ran out of input: a cut-off record, nothing spliced after it
    start = text.rfind("{", pos + 1, failed_at + 1)
    if start < 0:
        return -1
    try:
        value, stop = _DECODER.raw_decode(text, start)
    except ValueError:
        return -1
    rest = text[stop : stop + 64].lstrip(_WS)
    return start if isinstance(value, dict) and (not rest or rest[0] == "{") else -1


def _next_object_start(text: str, pos: int, terminated: bool) -> int:
    """The next ``{"`` that starts a whole record, or the end of the text.

    A whole record is a complete object followed by nothing or by another object:
    an object nested inside a truncated record (a content block, say) is followed by
    the rest of its parent instead, so it is never mistaken for a record.
    """
    while True:
        i = text.find('{"', pos)
        if i < 0:
            return len(text)
        try:
            value, stop = _DECODER.raw_decode(text, i)
        except ValueError:
            pos = i + 1
            continue
        rest = text[stop : stop + 64].lstrip(_WS)
        if isinstance(value, dict) and ((not rest and terminated) or rest[:1] == "{"):
            return i
        pos = i + 1


def _show(data: bytes, limit: int = 200) -> str:
    return data[:limit].decode("utf-8", errors="backslashreplace")


def _is_document(head: bytes) -> bool:
    """A pretty-printed object: its first line alone is no complete JSON object."""
    start = len(head) - len(head.lstrip())
    end = head.find(b"\n", start)
    if end < 0:
        return False  # one line, the whole input: JSONL of one record
    first_line = head[start:end]  # (split() copied the rest of the chunk too)
    try:
        return not isinstance(orjson.loads(first_line), dict)
    except orjson.JSONDecodeError:
        return first_line.strip() == b"{" or first_line.rstrip().endswith((b"[", b",", b"{"))


class _Buffer:
    """Decoded text of a byte stream, refilled as a parse needs more of it."""

    def __init__(self, read: Any, head: bytes, chunk_size: int) -> None:
        self._read = read
        self._size = chunk_size
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self.text = self._decoder.decode(head)
        self.pos = 0
        self.line = 1  # line number of text[pos]
        self.eof = False

    def more(self) -> bool:
        """Read another chunk (dropping what was consumed); False at the end."""
        if self.eof:
            return False
        chunk = self._read(self._size)
        self.eof = not chunk
        self.text = self.text[self.pos :] + self._decoder.decode(chunk, final=self.eof)
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

    def value(self) -> tuple[bool, Any]:
        """Decode the JSON value at pos (reading on as needed): (ok, value)."""
        while True:
            try:
                value, stop = _DECODER.raw_decode(self.text, self.pos)
            except ValueError:
                if self.more():
                    continue
                return False, None
            self.advance(stop)
            return True, value


def _read_document(buf: _Buffer, path: str) -> Iterator[ParsedLine]:
    def item(line: int) -> ParsedLine:
        return ParsedLine(Line(path, line, -1, b"", True))

    def broken(reason: str) -> ParsedLine:
        bad = item(buf.line)
        bad.damage.append(Damage(reason, buf.text[buf.pos : buf.pos + 200]))
        return bad

    opening = buf.skip(_WS)
    buf.advance(buf.pos + 1)
    if opening == "[":
        yield from _read_items(buf, path, item, broken)
        return
    while True:  # members of a top-level object
        nxt = buf.skip(_WS + ",")
        if nxt in ("}", ""):
            return
        line = buf.line
        ok, key = buf.value()
        if not ok or not isinstance(key, str) or buf.skip(_WS) != ":":
            yield broken("unreadable JSON document member")
            return
        buf.advance(buf.pos + 1)
        if buf.skip(_WS) == "[":
            buf.advance(buf.pos + 1)
            if buf.skip(_WS) == "{":
                yield from _read_items(buf, path, item, broken)
                continue
            ok, value = _rest_of_list(buf)  # an array of plain values: one member
        else:
            ok, value = buf.value()
        if not ok:
            yield broken(f"unreadable JSON document member {key!r}")
            return
        member = item(line)
        member.records.append({key: value})
        yield member


def _rest_of_list(buf: _Buffer) -> tuple[bool, list[Any]]:
    """The values of an array whose "[" was consumed, up to its "]"."""
    values: list[Any] = []
    while True:
        nxt = buf.skip(_WS + ",")
        if nxt == "]":
            buf.advance(buf.pos + 1)
            return True, values
        if nxt == "":
            return False, values
        ok, value = buf.value()
        if not ok:
            return False, values
        values.append(value)


def _read_items(buf: _Buffer, path: str, item: Any, broken: Any) -> Iterator[ParsedLine]:
    """The items of an array whose "[" was consumed, up to its "]"."""
    while True:
        nxt = buf.skip(_WS + ",")
        if nxt == "]":
            buf.advance(buf.pos + 1)
            return
        if nxt == "":
            yield broken("JSON document ends inside an array")
            return
        line = buf.line
        ok, value = buf.value()
        if not ok:
            yield broken("unreadable JSON array item")
            return
        parsed = item(line)
        if isinstance(value, dict):
            parsed.records.append(value)
        else:
            parsed.damage.append(Damage("array item is not a JSON object", repr(value)[:200]))
        yield parsed
