"""Bytes that arrive in pieces → newline-terminated lines: the one splitter.

The reader, the tail follower, the ingest socket and the relay all cut their input
with :class:`LineSplitter`. It is fed whatever a read returned and hands back each
line as soon as its newline is there; the unfinished last line waits for the next
piece. The lines are the same however the bytes are cut into pieces.

Each byte is searched once, with ``find`` (memchr): the search runs over every
byte of every conversion, so it is the fastest one there is, and a line inside one
piece is one slice of it, never copied twice.

A line longer than the limit is not held past it: it comes out with ``skipped``
set to its length and only its first bytes kept, whatever its size. The limit is
on the line without its newline and a CR before it; with ``nuls`` (the reader's
rule), NUL bytes are not counted either, and a read of nothing but NULs inside a
line is dropped as it comes (counted in ``Line.nuls``): a NUL region is what a
crash leaves, and the record written after it is still read.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

#: The longest line read whole, in bytes (``--max-line-bytes``). A longer one is
#: reported (one system/error naming file:line and its length) and skipped in linear
#: time, never held: one 2 GB line must not take 2 GB. The same number wherever
#: lines are read (the reader, the tail follower, the ingest socket, the relay),
#: and :func:`line_too_long` the same message.
MAX_LINE_BYTES = 64 << 20
SHOWN = 200  # bytes of a skipped line kept to show


def line_too_long(length: int, limit: int) -> str:
    """The report for a line over the limit (the same words wherever it is read)."""
    return f"line of {length} bytes is longer than the limit ({limit}); skipped"


@dataclass(slots=True)
class Line:
    """One line of input, without its newline (a trailing CR is kept out too)."""

    path: str
    number: int  # 1-based
    offset: int  # byte offset of the line's first byte
    data: bytes
    terminated: bool  # False only for a last line with no newline
    #: A line longer than the limit: its length in bytes (``data`` holds only its
    #: first bytes, to show). 0 for every line read whole.
    skipped: int = 0
    #: NUL bytes already taken out of ``data`` (a long run of them, dropped as it
    #: was read so that it never counted against the limit).
    nuls: int = 0


class LineSplitter:
    """Lines out of bytes fed in pieces (see the module's docstring).

    ``number`` and ``offset`` are those of the line before the first one (where a
    reading goes on): each line comes numbered, with the offset of its first byte,
    and ``offset`` is always just past the last line handed out. ``strip_cr``
    False keeps a CR before the newline in ``data`` (bytes passed on unchanged).
    """

    __slots__ = ("_line", "limit", "nuls", "number", "offset", "path", "strip_cr")

    def __init__(
        self,
        path: str = "",
        limit: int = MAX_LINE_BYTES,
        *,
        number: int = 0,
        offset: int = 0,
        nuls: bool = False,
        strip_cr: bool = True,
    ) -> None:
        self.path = path
        self.limit = limit
        self.number = number
        self.offset = offset
        self.nuls = nuls
        self.strip_cr = strip_cr
        self._line = _LongLine(limit, nuls)  # a line begun in an earlier piece

    @property
    def pending(self) -> int:
        """Bytes of the unfinished last line (held, or only counted past the limit)."""
        return self._line.length

    @property
    def passing_over(self) -> bool:
        """The unfinished last line is over the limit: nothing more of it is held."""
        return self._line.skipping

    def feed(self, chunk: bytes) -> Iterator[Line]:
        """The lines ``chunk`` completes, in order."""
        path, limit, nuls = self.path, self.limit, self.nuls
        start = 0
        if self._line.length:  # the line goes on
            nl = chunk.find(b"\n")
            self._line.add(chunk if nl < 0 else chunk[:nl])
            if nl < 0:
                return
            line, self._line = self._line, _LongLine(limit, nuls)
            self.number += 1
            at, self.offset = self.offset, self.offset + line.length + 1
            yield line.end(path, self.number, at, True, self.strip_cr)
            start = nl + 1
        find = chunk.find
        strip = self.strip_cr
        number, offset = self.number, self.offset
        end = find(b"\n", start)
        while end >= 0:
            number += 1
            stop = end - 1 if end > start and chunk[end - 1] == 13 else end  # CR LF
            at = offset
            offset += end + 1 - start
            self.number, self.offset = number, offset
            if stop - start > limit and (
                not nuls or stop - start - chunk.count(0, start, stop) > limit
            ):
                yield Line(
                    path,
                    number,
                    at,
                    chunk[start : min(stop, start + SHOWN)],
                    True,
                    skipped=end - start,
                )
            else:
                yield Line(path, number, at, chunk[start : stop if strip else end], True)
            start = end + 1
            end = find(b"\n", start)
        if start < len(chunk):
            self._line.add(chunk[start:])

    def end(self) -> Line | None:
        """At the end of the input: the last line, cut off before its newline."""
        line = self._line
        if not line.length:
            return None
        self._line = _LongLine(self.limit, self.nuls)
        self.number += 1
        at, self.offset = self.offset, self.offset + line.length
        return line.end(self.path, self.number, at, False, self.strip_cr)


class _LongLine:
    """A line that spans pieces, as its parts arrive: held while it is within the
    limit, only counted once it is past it (its first bytes kept to show)."""

    __slots__ = (
        "cr",
        "drop_nuls",
        "held",
        "length",
        "limit",
        "nuls",
        "pieces",
        "shown",
        "skipping",
        "squeeze",
    )

    def __init__(self, limit: int, drop_nuls: bool) -> None:
        self.limit = limit
        self.drop_nuls = drop_nuls
        self.pieces: list[bytes] = []
        self.held = 0  # bytes in pieces
        self.length = 0  # bytes of the line in the input (NULs dropped too)
        self.nuls = 0  # NULs dropped
        self.shown = b""
        self.cr = False  # its last byte so far is a CR
        self.skipping = False
        self.squeeze = False  # past the limit once: NULs are dropped from here on

    def add(self, part: bytes) -> None:
        if not part:
            return
        self.length += len(part)
        if len(self.shown) < SHOWN:
            self.shown += part[: SHOWN - len(self.shown)]
        self.cr = part[-1] == 13
        if self.skipping:
            return
        if self.drop_nuls:
            if part[0] == 0 and part[-1] == 0 and part.count(0) == len(part):
                self.nuls += len(part)  # a read of a NUL region: counted, not kept
                return
            if self.squeeze and 0 in part:
                kept = part.replace(b"\x00", b"")  # (10 ms a MB: only past the limit)
                self.nuls += len(part) - len(kept)
                part = kept
        self.pieces.append(part)
        self.held += len(part)
        if self.held > self.limit + 1:  # (+1: a CR before the newline is no part of it)
            if self.drop_nuls and not self.squeeze:
                self.squeeze = True
                pieces = self.pieces
                for i, piece in enumerate(pieces):  # in place: never the line twice
                    if 0 in piece:
                        pieces[i] = piece.replace(b"\x00", b"")
                        self.nuls += len(piece) - len(pieces[i])
                self.held = sum(map(len, pieces))
            if self.held > self.limit + 1:
                self.skipping = True
                self.pieces, self.held = [], 0

    def end(self, path: str, number: int, offset: int, terminated: bool, strip_cr: bool) -> Line:
        cr = terminated and self.cr
        if not self.skipping:
            data = b"".join(self.pieces) if len(self.pieces) != 1 else self.pieces[0]
            size = len(data) - cr
            if cr and strip_cr:
                data = data[:-1]
            if size <= self.limit or (self.drop_nuls and size - data.count(0) <= self.limit):
                return Line(path, number, offset, data, terminated, nuls=self.nuls)
        shown = self.shown[: self.length - 1] if cr else self.shown
        return Line(path, number, offset, shown, terminated, skipped=self.length)
