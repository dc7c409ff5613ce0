"""One followed file: read what was appended, translate complete lines only.

The offset only ever moves past a newline: bytes after the last one are a line
still being written, and wait for the rest (the loss fluent-bit #11265 and several
Claude Code viewers shipped). A file is known by its inode and a hash of its head,
so a file truncated or replaced under the same name is noticed, not misread.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from translator.pipeline import InputError, Totals, Translation
from translator.reader import Line, parse_line
from translator.tail.checkpoint import FileMark

HEAD_BYTES = 1024
READ_CHUNK = 1 << 20


@dataclass(slots=True)
class Change:
    """What a poll found besides new lines."""

    kind: str  # "ok" | "gone" | "truncated" | "replaced"


class FileFollower:
    def __init__(
        self,
        path: str,
        totals: Totals,
        clock: Callable[[], str],
        now: Callable[[], float] = time.monotonic,
        encoder: Callable[[], Any] | None = None,
    ) -> None:
        self.path = path
        self._totals = totals
        self._clock = clock
        self._now = now
        self.out: list[bytes] = []
        self.translation = Translation(
            path, self.out.append, totals, clock=clock, encoder=encoder() if encoder else None
        )
        self.offset = 0
        self.line_no = 0
        self.ino = 0
        self.head_len = 0
        self.head_hash = ""
        self.fd: int | None = None
        self._seen: tuple[int, int, int] = (0, -1, -1)  # (ino, size, mtime_ns) last polled
        self.last_data = now()
        self.dirty = True  # the mark changed since the last checkpoint

    # -- checkpoints ---------------------------------------------------------------

    def mark(self) -> FileMark:
        return FileMark(
            self.offset,
            self.line_no,
            self.ino,
            self.head_len,
            self.head_hash,
            self.translation.snapshot(),
        )

    def resume(self, mark: FileMark) -> bool:
        """Go on from a checkpoint if the file is still the one it describes."""
        try:
            st = os.stat(self.path)
        except OSError:
            return False
        if st.st_ino != mark.ino or st.st_size < mark.offset:
            return False
        if self._head_hash(mark.head_len) != mark.head_hash:
            return False
        try:
            self.translation.restore(mark.state)
        except ValueError:
            return False
        self.offset, self.line_no, self.ino = mark.offset, mark.line_no, mark.ino
        self.head_len, self.head_hash = mark.head_len, mark.head_hash
        self.dirty = False
        return True

    def skip_to_end(self) -> None:
        """``--from end``: start after what the file holds now (whole lines only)."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except OSError:
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
            self._update_head(fd)
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
        self._seen = seen
        if self.ino and st.st_ino != self.ino:
            self._drain()  # the old file's last bytes, through the fd still open on it
            return Change("replaced")
        if st.st_size < self.offset:
            return Change("truncated")
        fd = self._open()
        if fd is None:
            return Change("gone")
        if self.head_len and self._head_hash(self.head_len, fd) != self.head_hash:
            return Change("replaced")
        if st.st_size > self.offset:
            self._read(fd, st.st_size)
        return Change("ok")

    def _open(self) -> int | None:
        if self.fd is None:
            try:
                self.fd = os.open(self.path, os.O_RDONLY)
            except OSError:
                return None
            self.ino = os.fstat(self.fd).st_ino
        return self.fd

    def close_fd(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None

    def _drain(self) -> None:
        if self.fd is not None:
            size = os.fstat(self.fd).st_size
            if size > self.offset:
                self._read(self.fd, size)
        self.close_fd()

    def _read(self, fd: int, size: int) -> None:
        pos = self.offset
        pending = b""
        while pos < size:
            chunk = os.pread(fd, min(READ_CHUNK, size - pos), pos)
            if not chunk:
                break
            pos += len(chunk)
            data = pending + chunk
            nl = data.rfind(b"\n")
            if nl < 0:
                pending = data
                continue
            self._translate(data[: nl + 1])
            pending = data[nl + 1 :]
        if self.head_len < HEAD_BYTES:
            self._update_head(fd)

    def _translate(self, block: bytes) -> None:
        start = 0
        while start < len(block):
            nl = block.index(b"\n", start)
            raw = block[start:nl]
            if raw.endswith(b"\r"):
                raw = raw[:-1]
            self.line_no += 1
            line = Line(self.path, self.line_no, self.offset, raw, True)
            self.offset += nl + 1 - start
            start = nl + 1
            self.translation.feed(parse_line(line))
        self.last_data = self._now()
        self.dirty = True

    def _update_head(self, fd: int) -> None:
        length = min(HEAD_BYTES, self.offset)
        if length > self.head_len:
            self.head_len = length
            self.head_hash = self._head_hash(length, fd)
            self.dirty = True

    def _head_hash(self, length: int, fd: int | None = None) -> str:
        own = fd is None
        if own:
            try:
                fd = os.open(self.path, os.O_RDONLY)
            except OSError:
                return ""
        assert fd is not None
        try:
            return hashlib.blake2b(os.pread(fd, length, 0), digest_size=16).hexdigest()
        finally:
            if own:
                os.close(fd)

    # -- ends ------------------------------------------------------------------------------

    def close_runs(self) -> None:
        """End what is open as batch conversion does at the end of a file."""
        with contextlib.suppress(InputError):  # nothing readable yet: nothing to close
            self.translation.finish()
        self.dirty = True

    @property
    def run_open(self) -> bool:
        return self.translation.framer.in_run
