"""One followed file: read what was appended, translate complete lines only.

The offset only ever moves past a newline: bytes after the last one are a line
still being written, and wait for the rest (the loss fluent-bit #11265 and several
Claude Code viewers shipped). A file is known by its inode, a hash of its head and
the bytes just before the offset, so a file truncated and rewritten in place (same
inode, same head, grown past the old offset before the next look) or replaced under
the same name is noticed, not read from the middle of a line.

Running out of file descriptors is not a file gone: :class:`NoDescriptors` tells
the daemon to give some back and come again, and nothing about the file changes.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import os
import stat
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from streamv1.translator.model.events import Problem
from streamv1.translator.output.shapes import Encoder
from streamv1.translator.reading import reader
from streamv1.translator.reading.lines import Line, LineSplitter
from streamv1.translator.reading.reader import parse_line
from streamv1.translator.state import StateError, load
from streamv1.translator.tail.checkpoint import FileMark, digest
from streamv1.translator.tail.uncounted import open_run_written, unwritten
from streamv1.translator.translate.translation import InputError, Totals, Translation

HEAD_BYTES = 1024
#: A line longer than this is reported and skipped, never held whole (the reader's).
MAX_LINE_BYTES = reader.MAX_LINE_BYTES
#: The bytes just before the offset that must be unchanged for reading to go on
#: there: enough to reach into the last line's own ids and time (Claude Code
#: records end with their uuid and timestamp), one pread a growing poll.
TAIL_BYTES = 4096
READ_CHUNK = 1 << 20
_OUT_OF_FDS = (errno.EMFILE, errno.ENFILE)


class NoDescriptors(Exception):
    """open() failed with EMFILE/ENFILE: the file is there, the process is full."""


class Unfollowable(Exception):
    """The path is there but is not a file we may read: no permission, or not a
    regular file (a FIFO would block the daemon's one thread in ``open``)."""


def open_file(path: str) -> int | None:
    """A read descriptor on a regular file; None when the file is gone;
    NoDescriptors when none is left; Unfollowable when it cannot be read."""
    try:
        # O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as exc:
        if exc.errno in _OUT_OF_FDS:
            raise NoDescriptors(path) from exc
        if exc.errno in (errno.EACCES, errno.EPERM):
            raise Unfollowable(f"permission denied ({exc.strerror})") from exc
        return None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise Unfollowable("not a regular file")
    return fd


def _same_prefix(
    fd: int,
    offset: int,
    head_len: int,
    head_hash: str,
    tail: bytes,
    tail_len: int,
    tail_matches: Callable[[bytes], bool],
) -> bool:
    """The file at ``fd`` holds, up to ``offset``, what a head digest and the bytes
    before the offset say was read there (each checked where known; an offset the
    head does not reach needs the tail)."""
    if offset == 0:
        return True
    if not head_len or digest(os.pread(fd, head_len, 0)) != head_hash:
        return False
    if head_len >= offset:
        return True  # the head is all that was read
    return bool(tail_len) and len(tail) == tail_len and tail_matches(tail)


@dataclass(slots=True)
class Change:
    """What a poll found besides new lines."""

    kind: str  # "ok" | "gone" | "truncated" | "replaced"


class FileFollower:
    # Slots: a daemon holds one follower per file, 10,000 for a heavy user (#23 item 4).
    __slots__ = (
        "_clock",
        "_encoder",
        "_hashed_crc",
        "_long",
        "_next_close",
        "_now",
        "_redact",
        "_replaying",
        "_seen",
        "broken",
        "closes",
        "counted",
        "dirty",
        "fd",
        "head_hash",
        "head_len",
        "ino",
        "last_data",
        "line_no",
        "new",
        "offset",
        "out",
        "path",
        "pending_replay",
        "progress",
        "retry_sig",
        "start",
        "start_line",
        "started",
        "tail_crc",
        "tail_hash",
        "tail_len",
        "translation",
    )

    def __init__(
        self,
        path: str,
        totals: Totals,
        clock: Callable[[], str],
        now: Callable[[], float] = time.monotonic,
        encoder: Callable[[], Encoder] | None = None,
        redact: bool = True,
    ) -> None:
        self.path = path
        self._clock = clock
        self._now = now
        self._encoder = encoder
        self._redact = redact
        self.out: list[bytes] = []
        self.translation = self._translation(totals)
        self.offset = 0
        self.line_no = 0
        self.ino = 0
        self.head_len = 0
        self.head_hash = ""
        #: The TAIL_BYTES before ``offset`` as last read: their length and hash only
        #: (the bytes themselves, 4 KiB a file, were most of a follower's memory at
        #: 10,000 files; one pread and a hash check them when the file changes).
        self.tail_len = 0
        self.tail_crc = 0  # zlib.crc32 of those bytes: the cheap check of every poll
        self.tail_hash = ""  # their BLAKE2b (the checkpoint's), made when a mark asks
        self._hashed_crc: int | None = None  # the crc tail_hash was made for
        self.closes: list[int] = []  # offsets where the daemon closed runs itself
        self.start = self.start_line = 0  # where translation began (--from end: later)
        self.counted = True  # translation.framed counts every line framed since start
        self._replaying: list[int] | None = None
        self._next_close = 0
        #: An over-long line whose end was not written yet: its splitter, and how far
        #: it was read.
        self._long: tuple[LineSplitter, int] | None = None
        self.fd: int | None = None
        self._seen: tuple[int, int, int] = (0, -1, -1)  # (ino, size, mtime_ns) last polled
        self.last_data = now()
        self.dirty = True  # the mark changed since the last checkpoint
        self.broken: str | None = None  # why it is left alone (no source reads it, ...)
        self.retry_sig: tuple[int, ...] | None = None  # try again when its stat differs
        self.started = True  # False: a placeholder for a file that could not begin
        self.new = True  # (placeholders) found after the first scan
        self.pending_replay: FileMark | None = None  # resume(replay=False) left it
        #: Told after each chunk a long read took (its lines made so far in ``out``):
        #: the daemon writes them (memory stays flat over a big catch-up),
        #: checkpoints when one is due, and answers False to stop reading here (a
        #: signal: a stop takes a second, whatever the file's size).
        self.progress: Callable[[FileFollower], bool] | None = None

    def _translation(self, totals: Totals) -> Translation:
        encoder = self._encoder() if self._encoder else None
        return Translation(
            self.path,
            self.out.append,
            totals,
            clock=self._clock,
            encoder=encoder,
            redact=self._redact,
        )

    def fresh_translation(self) -> Translation:
        """A new translation of this file from its start (a session replayed
        together), with the same last step (the daemon's gate and its state)."""
        old = self.translation
        new = self._translation(old.totals)
        new.extra = old.extra
        new.decorate = old.decorate
        new.on_spawn = old.on_spawn
        return new

    # -- checkpoints ---------------------------------------------------------------

    def _tail_identity(self) -> tuple[int, str]:
        """(length, BLAKE2b) of the bytes before the offset, for a checkpoint: read
        again here, once per commit of a changed file, not at every read. Bytes no
        longer as read (rewritten since) give no identity: (0, "")."""
        if not self.tail_len:
            return 0, ""
        if self._hashed_crc != self.tail_crc:
            fd = self.fd if self.fd is not None else open_file(self.path)
            if fd is None:
                return 0, ""
            try:
                data = self._tail_at(fd)
            finally:
                if fd != self.fd:
                    os.close(fd)
            if len(data) != self.tail_len or zlib.crc32(data) != self.tail_crc:
                return 0, ""
            self.tail_hash, self._hashed_crc = digest(data), self.tail_crc
        return self.tail_len, self.tail_hash

    def mark(self) -> FileMark:
        tail_len, tail_hash = self._tail_identity()
        try:
            state: dict[str, Any] | None = self.translation.snapshot()
        except StateError:
            state = None  # (a record nested past what can be walked) a restart replays
        return FileMark(
            self.offset,
            self.line_no,
            self.ino,
            self.head_len,
            self.head_hash,
            tail_len,
            tail_hash,
            state,
            list(self.closes),
            self.translation.framed if self.counted else None,
            self.start,
            self.start_line,
        )

    def is_same_head(self, path: str) -> bool:
        """Does the file at ``path`` begin as this follower's file did (its head's
        hash): the same file, moved?"""
        fd = open_file(path)
        if fd is None:
            return False
        try:
            return not self.head_len or digest(os.pread(fd, self.head_len, 0)) == self.head_hash
        finally:
            os.close(fd)

    def is_file_of(self, mark: FileMark) -> bool:
        """Is the file at our path still the one ``mark`` describes (up to its offset)?
        Another inode is too when it begins with what the mark says was read (the
        file written again whole by a rename over it while the daemon was down:
        ``sed -i``, an editor, rsync, Syncthing): the digests decide, the head's and
        the bytes before the offset, both needed."""
        fd = open_file(self.path)
        if fd is None:
            return False
        try:
            st = os.fstat(fd)
            if st.st_size < mark.offset:
                return False
            tail = os.pread(fd, mark.tail_len, mark.offset - mark.tail_len)
            if st.st_ino != mark.ino:
                return _same_prefix(
                    fd,
                    mark.offset,
                    mark.head_len,
                    mark.head_hash,
                    tail,
                    mark.tail_len,
                    lambda data: digest(data) == mark.tail_hash,
                )
            if mark.head_len and digest(os.pread(fd, mark.head_len, 0)) != mark.head_hash:
                return False
            return not mark.tail_len or digest(tail) == mark.tail_hash
        finally:
            os.close(fd)

    def resume(self, mark: FileMark, replay: bool = True) -> str:
        """Go on from a checkpoint of this very file: from its state, or, when the
        state is of a layout this release does not read, by replaying the file up
        to the offset with every line it makes dropped (they are in the output).
        ``replay`` False: the replay is left to the caller (``pending_replay``; a
        session's files are replayed together)."""
        self.offset, self.line_no, self.ino = mark.offset, mark.line_no, mark.ino
        self.head_len, self.head_hash = mark.head_len, mark.head_hash
        self.closes = list(mark.closes)
        self.start, self.start_line = mark.start, mark.start_line
        if mark.state is not None:
            try:
                self.translation.restore(mark.state)
            except StateError as exc:
                reason = str(exc)
            else:
                self.counted = mark.framed is not None
                self.translation.framed = mark.framed or 0
                self._reread_tail()
                self.dirty = False
                return "resumed"
        else:
            reason = "a checkpoint of an older release"
        if not replay:
            self.pending_replay = mark
            return f"to be replayed with its session ({reason})"
        self._replay(mark)
        return f"replayed to the checkpoint ({reason})"

    def replay_in_session(self, mark: FileMark, last: Callable[[], None] | None = None) -> None:
        """Replay to ``mark`` as one file of a session replayed together (the
        session's merge drops each file's first lines, as many as its mark counts:
        :attr:`translator.translate.session.Part.skip`); ``last`` runs at the end, inside the
        replay (the merge framing what the files handed in)."""
        self._replay(dataclasses.replace(mark, framed=mark.framed or 0), last)
        self.pending_replay = None

    def _replay(self, mark: FileMark, last: Callable[[], None] | None = None) -> None:
        """Read the file again from where its translation began (byte 0, or where
        ``--from end`` found its end) to the mark's offset, ending runs where the
        daemon ended them before. Where the mark counts the lines the file's
        translation framed, exactly that many are dropped and any beyond them (a run
        held back then, released now) are kept; a v1 mark drops all it makes."""
        fd = open_file(self.path)
        if fd is None:
            raise FileNotFoundError(self.path)
        translation = self.translation
        scratch = Totals()  # the replay's counts are not the daemon's
        counts = translation.totals, translation.framer.stats
        translation.totals, translation.framer.stats = scratch, scratch.framing
        extra = mark.state.get("extra") if mark.state else None
        with contextlib.suppress(StateError):
            if extra is not None:
                translation.extra.update(load(extra))  # the gate as it was at the mark
        decorate = translation.decorate
        #: A mark without a count (an older release's) whose state still says how much
        #: of its open run it wrote: the replay's lines are kept here, not written, and
        #: those the output lacks are written at the end (:func:`unwritten`).
        written = open_run_written(mark.state) if mark.framed is None else None
        made: list[dict[str, Any]] = []
        if mark.framed is None:
            # Lines unseen: all of them are dropped (gathered, where the state can
            # tell which the output lacks).
            translation.decorate = None if written is None else made.append
        else:
            translation.skip = mark.framed
        self.offset, self.line_no = mark.start, mark.start_line  # where it began before
        self._replaying = [c for c in mark.closes if c <= mark.offset]
        self._next_close = 0
        try:
            self._read(fd, mark.offset)
            self._set_tail(self._tail_at(fd))  # what precedes the offset, not only what was read
            if last is not None:
                last()
        finally:
            self._replaying = None
            os.close(fd)
            translation.totals, translation.framer.stats = counts
            translation.decorate = decorate
        if mark.framed is None:
            self.out.clear()  # made before: they are in the output already
            if written is not None:
                translation.emit(unwritten(made, written))
        translation.skip = 0
        self.counted = True  # from here on the count is this replay's own
        self.dirty = True

    def skip_to_end(self) -> None:
        """``--from end``: start after what the file holds now (whole lines only)."""
        fd = open_file(self.path)
        if fd is None:
            return
        try:
            st = os.fstat(fd)
            self.ino = st.st_ino
            pos = 0
            last_nl = 0
            lines = 0
            while pos < st.st_size:
                chunk = os.pread(fd, min(READ_CHUNK, st.st_size - pos), pos)
                if not chunk:
                    break
                lines += chunk.count(b"\n")
                nl = chunk.rfind(b"\n")
                if nl >= 0:
                    last_nl = pos + nl + 1
                pos += len(chunk)
            self.offset, self.line_no = last_nl, lines
            self.start, self.start_line = last_nl, lines
            self._update_head(fd)
            self._set_tail(self._tail_at(fd))
        finally:
            os.close(fd)

    # -- reading ---------------------------------------------------------------------

    def poll(self) -> Change:
        """Translate the complete lines appended since the last poll."""
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            self._drain()
            return Change("gone")
        seen = (st.st_ino, st.st_size, st.st_mtime_ns)
        if seen == self._seen:
            return Change("ok")  # nothing happened to it: one stat is all it costs
        if self.ino and st.st_ino != self.ino:
            return self._replaced(seen)
        if st.st_size < self.offset:
            self._seen = seen
            return Change("truncated")
        fd = self._open()  # may raise NoDescriptors: then nothing here changed
        self._seen = seen
        if fd is None:
            return Change("gone")
        if self.head_len and digest(os.pread(fd, self.head_len, 0)) != self.head_hash:
            return Change("replaced")
        if self.tail_len and not self._tail_is_same(fd):
            return Change("truncated")  # rewritten in place: what we read is not there
        if st.st_size > self.offset:
            self._read(fd, st.st_size)
        return Change("ok")

    def _replaced(self, seen: tuple[int, int, int]) -> Change:
        """Another file at the path (a rename over it: ``sed -i``, an editor's save,
        rsync, Syncthing). The old file's last bytes are read first, through the
        descriptor still open on it. A new file that begins with every byte read
        is the same file written again whole, plus more: followed on from where
        the old one ended (:meth:`begins_as_read`). Any other is "replaced"."""
        try:
            new = open_file(self.path)  # may raise NoDescriptors: nothing changed yet
        except Unfollowable:
            new = None  # (a FIFO now): the fresh follower says what it is
        self._seen = seen
        self._drain(close=False)
        try:
            if new is not None and self.begins_as_read(new, self.fd):
                self.close_fd()
                self.fd, new = new, None
                st = os.fstat(self.fd)
                self.ino, self.dirty = st.st_ino, True
                if st.st_size > self.offset:
                    self._read(self.fd, st.st_size)
                return Change("ok")
        finally:
            if new is not None:
                os.close(new)
        self.close_fd()
        return Change("replaced")

    def begins_as_read(self, fd: int, old: int | None = None) -> bool:
        """Does the file open at ``fd`` begin with the bytes this follower read (up to
        its offset)? Compared with the old file byte for byte where it is still open
        on ``old``; else (a restart, a descriptor given back) by the digests kept:
        the head's and the bytes just before the offset. Without both (an offset
        past the head, no tail bytes known) it cannot tell: no."""
        if os.fstat(fd).st_size < self.offset:
            return False
        if old is not None and os.fstat(old).st_size >= self.offset:
            at = 0
            while at < self.offset:
                n = min(1 << 20, self.offset - at)
                if os.pread(fd, n, at) != os.pread(old, n, at):
                    return False
                at += n
            return True
        return _same_prefix(
            fd,
            self.offset,
            self.head_len,
            self.head_hash,
            self._tail_at(fd),
            self.tail_len,
            lambda tail: zlib.crc32(tail) == self.tail_crc,
        )

    def _open(self) -> int | None:
        if self.fd is None:
            self.fd = open_file(self.path)
            if self.fd is not None:
                self.ino = os.fstat(self.fd).st_ino
        return self.fd

    def close_fd(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _drain(self, close: bool = True) -> None:
        if self.fd is not None:
            size = os.fstat(self.fd).st_size
            if size > self.offset and (not self.tail_len or self._tail_is_same(self.fd)):
                self._read(self.fd, size)
        if close:
            self.close_fd()

    def _read(self, fd: int, size: int) -> None:
        """Whole lines from ``offset`` to ``size``. A line still being written is left
        for the next look; one longer than ``MAX_LINE_BYTES`` is reported and passed
        over without being held (each byte is read once: a look goes on reading an
        over-long line where the last one stopped)."""
        if self._long is not None:  # an over-long line, its end not seen before
            lines, pos = self._long
            self._long = None
        else:
            lines = LineSplitter(self.path, MAX_LINE_BYTES, number=self.line_no, offset=self.offset)
            pos = self.offset
        while pos < size:
            chunk = os.pread(fd, min(READ_CHUNK, size - pos), pos)
            if not chunk:
                break
            before = self.offset
            for line in lines.feed(chunk):
                self._take(line, lines.offset)
            pos += len(chunk)
            if self.offset > before:
                self._keep_tail(fd, chunk, pos - len(chunk), before)
                self.last_data = self._now()
                self.dirty = True
                if (
                    pos < size
                    and self.progress is not None
                    and self._replaying is None
                    and not lines.passing_over
                    and not self.progress(self)
                ):
                    # Stopped between two chunks: the offset is past the last whole
                    # line; the next look reads on from there.
                    self._seen = (0, -1, -1)
                    break
        if lines.passing_over:
            self._long = (lines, pos)  # the next look reads on from here, not from its start
            return
        if self.head_len < HEAD_BYTES:
            self._update_head(fd)

    def _take(self, line: Line, end: int) -> None:
        """One line read (``end``: the offset just past it): translated, or reported
        when it is over the limit."""
        self.line_no = line.number
        self.offset = end
        if line.skipped:
            self._problem(
                reader.line_too_long(line.skipped, MAX_LINE_BYTES),
                "line_too_long",
                {"offset": line.offset, "length": line.skipped},
            )
            return
        try:
            self.translation.feed(parse_line(line))
        except InputError:
            raise  # the whole file is unreadable: the daemon leaves it alone
        except Exception as exc:  # a line the translator fails on: said, not fatal
            self._problem(
                f"line could not be translated ({type(exc).__name__}: {exc})",
                "untranslatable",
                {"offset": line.offset},
            )
        closes = self._replaying
        while (
            closes and self._next_close < len(closes) and (closes[self._next_close] <= self.offset)
        ):
            self._next_close += 1
            self._finish()  # where the daemon closed runs before: the same again

    def _problem(self, message: str, kind: str, ext: dict[str, Any]) -> None:
        self.translation.problem(
            Problem(message, self.path, self.line_no, kind=kind, extension=ext)
        )

    def _keep_tail(self, fd: int, chunk: bytes, at: int, before: int) -> None:
        """The bytes before the new offset, from ``chunk`` (read at ``at``) when it
        holds them; ``before``: the offset before its lines were taken."""
        end = self.offset - at
        if end >= TAIL_BYTES or at == 0:
            self._set_tail(chunk[max(0, end - TAIL_BYTES) : end])
        else:  # the bytes before reach into an earlier read
            self._set_tail(self._tail_at(fd))

    def _set_tail(self, data: bytes) -> None:
        self.tail_len, self.tail_crc = len(data), zlib.crc32(data)

    def _tail_is_same(self, fd: int) -> bool:
        """Are the bytes before the offset still those read (not rewritten in place)?"""
        data = self._tail_at(fd)
        return len(data) == self.tail_len and zlib.crc32(data) == self.tail_crc

    def _tail_at(self, fd: int) -> bytes:
        start = max(0, self.offset - TAIL_BYTES)
        return os.pread(fd, self.offset - start, start)

    def _reread_tail(self) -> None:
        fd = open_file(self.path)
        if fd is not None:
            try:
                self._set_tail(self._tail_at(fd))
            finally:
                os.close(fd)

    def _update_head(self, fd: int) -> None:
        length = min(HEAD_BYTES, self.offset)
        if length > self.head_len:
            self.head_len = length
            self.head_hash = digest(os.pread(fd, length, 0))
            self.dirty = True

    # -- ends ------------------------------------------------------------------------------

    def close_runs(self) -> None:
        """End what is open as batch conversion does at the end of a file (remembered
        by offset, so a replay ends them at the same place)."""
        if not self.closes or self.closes[-1] != self.offset:
            self.closes.append(self.offset)
        self._finish()
        self.dirty = True

    def _finish(self) -> None:
        with contextlib.suppress(InputError):  # nothing readable yet: nothing to close
            self.translation.finish()

    @property
    def seen_size(self) -> int:
        """The file's size at its last look (for ``status``'s behind bytes; read from
        another thread: a descriptor closed meanwhile is as good as no look)."""
        size = self._seen[1]
        if size < 0 and self.fd is not None:
            try:
                size = os.fstat(self.fd).st_size  # a long read stopped between chunks
            except OSError:
                size = 0
        return max(size, 0)

    @property
    def run_open(self) -> bool:
        return self.translation.run_open
