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
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

from streamv1.translator.reading.lines import MAX_LINE_BYTES, Line, LineSplitter, line_too_long

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
#: The most of an unreadable fragment kept in its report.
FRAGMENT_CHARS = 2000
#: Lines up to this size are parsed by orjson first. A failed orjson parse
#: allocates 12 times the line for its error (a 50 MB ``}{`` line: 600 MB), so a
#: longer line goes straight to the stdlib decoder, whose failures cost nothing
#: (and which reads a valid long line 2-3 times slower: such lines are rare).
ORJSON_MAX = 4 << 20

_WS = " \t\r\n"
_SURROGATE = re.compile("[\ud800-\udfff]")


def _parse_int(digits: str) -> Any:
    """orjson's rule for integers, in the stdlib decoder of the recovery path: a
    long one becomes a float (infinite when it does not fit a double, refused by
    :func:`_unfit`), and ``int()`` never meets 4,300 digits (it raises there)."""
    return int(digits) if len(digits) < 40 else float(digits)


_DECODER = json.JSONDecoder(parse_int=_parse_int)


#: Deeper than either decoder reads (orjson: 1,024 levels; the stdlib's: the
#: interpreter's recursion limit, ~1,000).
TOO_DEEP = "nested too deep to read (over ~1,000 levels)"


@dataclass(slots=True)
class Damage:
    """Part of a line that could not be read as a JSON object."""

    reason: str
    fragment: str
    lost: bool = True  # False: the record was kept (e.g. bytes replaced), only reported
    tolerated: bool = False  # a cut-off final line: counted, not an error
    kind: str | None = None  # the system/error's kind, where the default does not say it
    extension: dict[str, Any] | None = None  # more to report (a skipped line's length)


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
    items = _recover(data, line.terminated)
    if not line.terminated:
        items = _tolerate(items)
    records: list[dict[str, Any]] = []
    damage: list[Damage] = []
    continued = False
    for item in items:
        if type(item) is dict:
            records.append(item)
            if len(records) >= PART_RECORDS:
                yield ParsedLine(line, records, damage, continued)
                records, damage, continued = [], [], True
        else:
            damage.append(item)  # type: ignore[arg-type]
    if records or damage or not continued:
        yield ParsedLine(line, records, damage, continued)


def _tolerate(items: Iterator[dict[str, Any] | Damage]) -> Iterator[dict[str, Any] | Damage]:
    """A cut-off final line: a process killed mid-write leaves a partial object at
    the end. When no record at all is found on it, its damage is one tolerated
    report (a multi-byte character it cut in two is part of the same cut)."""
    held: list[Damage] = []
    for item in items:
        if type(item) is dict:
            yield from held
            held = []
            yield item
            yield from items
            return
        held.append(item)  # type: ignore[arg-type]
    if held:
        fragment = next((d.fragment for d in held if d.fragment), "")
        yield Damage("truncated final line", fragment, tolerated=True)


def _recover(data: bytes, terminated: bool) -> Iterator[dict[str, Any] | Damage]:
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        yield Damage(f"invalid UTF-8 at byte {exc.start}; replaced with U+FFFD", "", lost=False)
    yield from _split_objects(text, terminated)


def _split_objects(text: str, terminated: bool) -> Iterator[dict[str, Any] | Damage]:
    """Find every complete JSON object on the line (``}{`` joins, splices).

    A newline is written after a complete record, so a terminated line ends with
    one: an object that runs to the end of a terminated line is a record. On a
    cut-off final line it may be a nested object of the cut record instead, so it
    only counts there when another object follows it.

    Linear time on any line: every decode attempt is charged to a budget of a few
    times the line's length; once it is spent, the rest of the line is one
    unreadable fragment (a line of 100k nested objects would otherwise be parsed
    again from each of its 100k starts).
    """
    pos = 0
    end = len(text)
    last = end  # just past the last character that is not white space
    while last > 0 and text[last - 1] in _WS:
        last -= 1
    first = True
    budget = _Budget(4 * end + 65536)
    escapes = "\\ud" in text or "\\uD" in text  # lone surrogates need one
    while pos < end:
        while pos < end and text[pos] in _WS:
            pos += 1
        if pos >= end:
            break
        value, stop, failed_at, why = budget.decode(text, pos)
        if first and stop == last and type(value) is not dict:
            # The whole line is one value, not an object (as orjson would have said).
            yield Damage("not a JSON object", _cut(text, pos, min(stop, pos + 200)))
            return
        first = False
        if stop > pos and type(value) is dict:
            reason = _unfit(value)
            if reason is None:
                if escapes and _fix_surrogates(value):
                    yield Damage("lone surrogate escape replaced with U+FFFD", "", lost=False)
                yield value
            else:
                yield Damage(reason, _cut(text, pos, stop))
            pos = stop
            continue
        # Not an object from here. Where the parse broke is where a spliced record
        # begins (a `{` where a `,` was due); else look for the next object start.
        nxt = _splice_start(text, pos, failed_at, budget)
        if nxt < 0:
            nxt = _next_object_start(text, pos + 1, terminated, budget)
        yield Damage(why or "unreadable JSON fragment", _cut(text, pos, nxt))
        pos = nxt


class _Budget:
    """What the recovery of one line may still spend on decode attempts (chars)."""

    __slots__ = ("left",)

    def __init__(self, chars: int) -> None:
        self.left = chars

    def decode(self, text: str, pos: int) -> tuple[Any, int, int, str | None]:
        """(value, stop, where it failed, why when the reason is not plain syntax);
        stop is -1 on failure."""
        try:
            value, stop = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            self.left -= exc.pos - pos + 1
            return None, -1, exc.pos, None
        except RecursionError:
            self.left -= len(text) - pos  # how far it went is not known: all of it
            return None, -1, -1, TOO_DEEP
        self.left -= stop - pos
        return value, stop, -1, None


def _splice_start(text: str, pos: int, failed_at: int, budget: _Budget) -> int:
    """The start of the record a truncated one was spliced onto, or -1."""
    if failed_at <= pos or failed_at >= len(text.rstrip(_WS)) or budget.left <= 0:
        return -1  # ran out of input: a cut-off record, nothing spliced after it
    start = text.rfind("{", pos + 1, failed_at + 1)
    if start < 0:
        return -1
    value, stop, _, _ = budget.decode(text, start)
    if stop < 0:
        return -1
    rest = text[stop : stop + 64].lstrip(_WS)
    return start if isinstance(value, dict) and (not rest or rest[0] == "{") else -1


def _next_object_start(text: str, pos: int, terminated: bool, budget: _Budget) -> int:
    """The next ``{"`` that starts a whole record, or the end of the text.

    A whole record is a complete object followed by nothing or by another object:
    an object nested inside a truncated record (a content block, say) is followed by
    the rest of its parent instead, so it is never mistaken for a record.
    """
    while budget.left > 0:
        i = text.find('{"', pos)
        if i < 0:
            return len(text)
        value, stop, _, _ = budget.decode(text, i)
        if stop < 0:
            pos = i + 1
            continue
        rest = text[stop : stop + 64].lstrip(_WS)
        if isinstance(value, dict) and ((not rest and terminated) or rest[:1] == "{"):
            return i
        pos = i + 1
    return len(text)


def _unfit(value: Any) -> str | None:
    """Why a record the stdlib decoder read (the recovery path) is not one orjson
    would have read, or None: NaN or an infinity (``NaN``, ``Infinity``,
    ``1e400``: orjson refuses them, and writes NaN as null). An integer beyond 64
    bits is made a float, as orjson reads it. (Depth is the encoder's concern:
    :func:`translator.model.catalog.writable`.)
    """
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        items = node.items() if type(node) is dict else enumerate(node)
        for key, child in items:
            kind = type(child)
            if kind is dict or kind is list:
                stack.append(child)
            elif kind is float:
                if not math.isfinite(child):
                    return "number out of range (NaN, Infinity or beyond a double)"
            elif kind is int and not -(2**63) <= child < 2**64:
                node[key] = float(child)  # (below 40 digits: always a finite double)
    return None


def _fix_surrogates(value: Any) -> int:
    """Lone surrogates (``\\ud800`` escapes with no pair) → U+FFFD, in place; how
    many strings changed. orjson refuses them (it writes only valid UTF-8); the
    stdlib decoder of the recovery path reads them. Node writes them for a string
    cut inside a surrogate pair, so the record is kept, as with invalid UTF-8."""
    fixed = 0
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            if any(_SURROGATE.search(k) for k in node):
                items = [(_SURROGATE.sub("\ufffd", k), v) for k, v in node.items()]
                node.clear()
                node.update(items)
                fixed += 1
            keys: Any = list(node)
        else:
            keys = range(len(node))
        for key in keys:
            child = node[key]
            kind = type(child)
            if kind is str:
                if _SURROGATE.search(child):
                    node[key] = _SURROGATE.sub("\ufffd", child)
                    fixed += 1
            elif kind is dict or kind is list:
                stack.append(child)
    return fixed


def _cut(text: str, start: int, stop: int) -> str:
    """A fragment for its report: at most FRAGMENT_CHARS of it."""
    if stop - start <= FRAGMENT_CHARS:
        return text[start:stop]
    return text[start : start + FRAGMENT_CHARS] + "…"


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
                value, stop = _DECODER.raw_decode(self.text, self.pos)
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
        ok, key, _ = buf.value()
        if not ok or not isinstance(key, str) or buf.skip(_WS) != ":":
            yield broken("unreadable JSON document member")
            return
        buf.advance(buf.pos + 1)
        if buf.skip(_WS) == "[":
            buf.advance(buf.pos + 1)
            if buf.skip(_WS) == "{":
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
        nxt = buf.skip(_WS + ",")
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
        nxt = buf.skip(_WS + ",")
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
    reason = _unfit(value)
    if reason is not None:
        parsed.damage.append(Damage(reason, ""))
        return
    if _fix_surrogates(value):
        parsed.damage.append(Damage("lone surrogate escape replaced with U+FFFD", "", lost=False))
    parsed.records.append(value)


def _short(value: Any) -> str:
    """What a non-object item was, briefly (repr of a deep or huge value is not)."""
    if isinstance(value, list | dict):
        return f"<{type(value).__name__} of {len(value)}>"
    return repr(value)[:200]
