"""The daemon's output: a file (appended, fsynced at commits, locked against a
second writer) or stdout, and what it does when a write cannot be made.

Split from the daemon (#23 item 21) so each part of a round has its own module
and tests: the sink knows bytes and files, nothing of sessions or checkpoints
beyond the identity a checkpoint vouches for.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from pathlib import Path
from typing import IO

from streamv1.translator import logs
from streamv1.translator.tail import checkpoint as cp

log = logs.get()

#: A held output write is tried again after this long, doubling up to the cap.
RETRY_FIRST, RETRY_CAP = 0.5, 30.0


class Backoff:
    """When a write that failed (disk full) is tried again: RETRY_FIRST after the
    failure, doubling to RETRY_CAP while it keeps failing."""

    def __init__(self) -> None:
        self.at = 0.0
        self.wait = RETRY_FIRST

    def due(self, now: float) -> bool:
        return now >= self.at

    def begin(self, now: float) -> None:
        """A write just failed: the first wait."""
        self.wait = RETRY_FIRST
        self.at = now + self.wait

    def failed(self, now: float) -> None:
        self.wait = min(self.wait * 2, RETRY_CAP)
        self.at = now + self.wait

    def now(self) -> None:
        """Try at the next chance (a stop: one last try)."""
        self.at = 0.0


class OutputBusy(Exception):
    """Another process writes the output file: two writers would each cut it back
    to their own idea of its length (#23 item 1: 0 of 8 answers kept)."""


def _locked(path: Path, fd: int) -> int:
    """``fd`` with an exclusive lock on the output file, held while it is open:
    one writer per output, whatever state file each daemon has."""
    import fcntl

    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(fd)
        raise OutputBusy(
            f"{path}: another streamv1 tail writes this output; one writer per output "
            "(stop that one, or give this one another --output)"
        ) from None
    return fd


def _rotations(path: Path) -> list[tuple[Path, int]]:
    """The regular files in ``path``'s folder named ``path``'s name plus a suffix,
    with their inodes. The name rule keeps an unrelated file (one that reuses a
    deleted output's inode number, or happens to hold the same bytes) out of it."""
    prefix = path.name
    found: list[tuple[Path, int]] = []
    try:
        with os.scandir(path.parent) as entries:
            for entry in entries:
                if (
                    entry.name != prefix
                    and entry.name.startswith(prefix)
                    and entry.is_file(follow_symlinks=False)
                ):
                    found.append((Path(entry.path), entry.inode()))
    except OSError:
        return []
    return sorted(found)


def _holds(fd: int, saved: cp.Checkpoint) -> bool:
    """Does the file hold the checkpointed bytes up to the checkpoint's length?"""
    length = saved.output_length or 0
    if os.fstat(fd).st_size < length:
        return False
    n = saved.output_tail_len
    return not n or cp.digest(os.pread(fd, n, length - n)) == saved.output_tail_hash


class OutputClosed(Exception):
    """The daemon writes to stdout and its reader went away (``| head``, ``jq``
    quitting): the job is over, as for ``convert`` (a file output is another
    matter: a full disk is waited out)."""


class OutputFailed(Exception):
    """The output cannot be vouched for (a failed fsync): stop, checkpoint nothing more."""


class OutputSink:
    """Where lines go: a file (appended with ``write(2)``, fsynced at commits) or stdout.

    For a file the sink knows the length it wrote whole: a write that fails part
    way (ENOSPC, EIO) is cut back to it before the error goes up, so the file never
    ends in a broken line and a later line is never spliced onto one."""

    def __init__(self, path: Path | None, stdout: IO[bytes] | None = None) -> None:
        """``path`` None: stdout, or ``stdout`` where it is given (the view for
        people, translator.views.pretty, at a terminal)."""
        self.path = path
        #: Told (inode, length) before the first line goes into a file the sink
        #: starts anew after the checkpoint (truncated from outside, or a new file
        #: at the path): what a restart after a crash cuts it back to.
        self.on_fresh_start: Callable[[int, int], None] | None = None
        self._out: IO[bytes] | None = None
        self._fd = -1
        self._length = 0
        if path is None:
            import sys

            self._out = stdout if stdout is not None else sys.stdout.buffer
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = _locked(path, os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644))
            st = os.fstat(self._fd)
            self.ino = st.st_ino
            self._length = st.st_size
            self._load_tail()

    #: How much of the output's end a checkpoint vouches for (see ``tail``).
    TAIL_BYTES = 4096
    ino = 0
    tail = b""  # the last bytes written whole: a checkpoint keeps their hash

    def _load_tail(self) -> None:
        start = max(0, self._length - self.TAIL_BYTES)
        self.tail = os.pread(self._fd, self._length - start, start)

    def is_as_checkpointed(self, saved: cp.Checkpoint) -> bool:
        """Is this the file, and are these the bytes, the checkpoint describes up to
        its length? (Not after a rotation by rename or copytruncate, or an edit.)"""
        length = saved.output_length
        if self.path is None or length is None or saved.output_ino is None:
            return True  # an older checkpoint: nothing to compare
        return saved.output_ino == self.ino and _holds(self._fd, saved)

    def cut_back_rotated(self, saved: cp.Checkpoint) -> str | None:
        """The file at the path is not the one the checkpoint describes: it was
        rotated (renamed away, or copied and truncated) or deleted while the daemon
        was down or before it checkpointed what it had written. A crash in that
        window printed every line after the checkpoint twice (#23, the model test:
        once in the rotated file, once made again here). Cut back so that what the
        restart makes again is in no other file: this one to where it began anew
        (when the checkpoint says the daemon opened it, or found it truncated), and
        every rotation of the output that holds the checkpointed bytes (the hash
        of the 4 KiB before its length) to the checkpoint. A rotation is a file in
        the output's folder named the output's name plus a suffix (logrotate's
        ``out.jsonl.1``, ``out.jsonl-20261202``): the old inode itself (a rename),
        or a copy (copytruncate; told by the hash only, so never when the
        checkpoint has no bytes to compare). Returns a warning
        when lines after the checkpoint may still come twice, or None."""
        if self.path is None or saved.output_length is None or saved.output_ino is None:
            return None
        opened: dict[int, int] = {}
        for ino, length in saved.output_reopened:  # the earliest start counts
            opened[ino] = min(length, opened.get(ino, length))
        if self.ino in opened:
            dropped = self._truncate_to(opened[self.ino])
            if dropped:
                log.info(
                    "output cut back to where it began anew after the last checkpoint",
                    path=str(self.path),
                    dropped_bytes=dropped,
                )
        kept = False
        for old, ino in _rotations(self.path):
            if ino != saved.output_ino and not saved.output_tail_len:
                continue
            try:
                fd = os.open(old, os.O_RDWR | os.O_NOFOLLOW)
            except OSError as exc:
                log.warning(
                    "rotated output not cut back: lines after the checkpoint may come twice",
                    path=str(old),
                    reason=exc.strerror or str(exc),
                )
                continue
            try:
                size = os.fstat(fd).st_size
                if not _holds(fd, saved):
                    continue
                kept = True  # (a copy of just the checkpointed bytes: nothing to cut)
                if size > saved.output_length:
                    os.ftruncate(fd, saved.output_length)
                    os.fsync(fd)
                    log.warning(
                        "rotated output cut back to the last checkpoint: its "
                        "lines after it are made again in the output",
                        path=str(old),
                        output=str(self.path),
                        dropped_bytes=size - saved.output_length,
                    )
            finally:
                os.close(fd)
        if kept:
            return None
        if self.ino == saved.output_ino and self.ino not in opened:
            return (
                "output is not the file the checkpoint describes (truncated or edited "
                "since, and no copy of it in its folder); appending, not cutting back: "
                "lines after the checkpoint may come twice"
            )
        return (
            "the file the checkpoint describes is no longer in the output's folder "
            "(deleted, or moved elsewhere): lines written after the checkpoint are "
            "made again here (twice, if that file was kept)"
        )

    def _truncate_to(self, length: int) -> int:
        """Cut the file to ``length`` when it is longer; how many bytes went."""
        size = os.fstat(self._fd).st_size
        if size <= length:
            return 0
        os.ftruncate(self._fd, length)
        self._length = length
        self._load_tail()
        return size - length

    def cut_back(self, length: int | None) -> None:
        """Drop what a crash wrote after the last checkpoint (file output only)."""
        if self.path is None or length is None:
            return
        size = os.fstat(self._fd).st_size
        if size > length:
            log.info(
                "output cut back to the last checkpoint",
                path=str(self.path),
                dropped_bytes=self._truncate_to(length),
            )
        elif size < length:
            log.warning(
                "output is shorter than the checkpoint says; appending",
                path=str(self.path),
                expected=length,
                found=size,
            )

    def write(self, data: bytes) -> None:
        if not data:
            return
        if self._out is not None:
            self._out.write(data)
            self._out.flush()
            return
        size = os.fstat(self._fd).st_size
        if size > self._length:
            os.ftruncate(self._fd, self._length)  # a failed write's leftovers
        elif size < self._length:
            # Cut from outside (logrotate's copytruncate, ``: > out``): go on from
            # there; never fill the gap.
            log.warning(
                "output was truncated by someone else; appending from its new end",
                path=str(self.path),
                expected=self._length,
                found=size,
            )
            self._length = size
            self._load_tail()
            if self.on_fresh_start is not None:
                self.on_fresh_start(self.ino, size)
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(self._fd, view) :]
        except OSError:
            with contextlib.suppress(OSError):
                os.ftruncate(self._fd, self._length)
            raise
        self._length += len(data)
        keep = self.TAIL_BYTES
        self.tail = data[-keep:] if len(data) >= keep else (self.tail + data)[-keep:]

    def reader_gone(self) -> bool:
        """stdout is a pipe whose reader closed it (a quiet daemon learns it without
        writing: the kernel marks the pipe's writing end with an error)."""
        if self._out is None:
            return False
        import select

        try:
            poll = select.poll()
            poll.register(self._out.fileno(), 0)  # POLLERR and POLLHUP are always asked
            return any(ev & (select.POLLERR | select.POLLHUP) for _, ev in poll.poll(0))
        except (OSError, ValueError):
            return False

    def moved(self) -> bool:
        """Is the file at the path no longer the one written (deleted, or replaced:
        renamed away by a rotation with nobody telling the daemon)?"""
        if self.path is None:
            return False
        try:
            return os.stat(self.path).st_ino != self.ino
        except FileNotFoundError:
            return True
        except OSError:
            return False

    def reopen(self) -> None:
        """Open the path anew (after a rotation by rename: a new, empty file)."""
        if self.path is None:
            return
        with contextlib.suppress(OSError):
            if os.stat(self.path).st_ino == self.ino:
                # Already the file at the path (a move seen within a round reopened
                # it before the SIGHUP came): a second descriptor's lock would be
                # refused as another daemon's.
                return
        fd = _locked(self.path, os.open(self.path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644))
        os.close(self._fd)
        self._fd = fd
        st = os.fstat(fd)
        self.ino, self._length = st.st_ino, st.st_size
        self._load_tail()

    def reader(self) -> int:
        """A new read-only descriptor of the file written now, whatever becomes of its
        name (renamed away by a rotation, deleted): the publisher's, so that no line
        the daemon wrote is out of its reach (``/proc``'s link reopens the file
        itself; without ``/proc``, a duplicate of the daemon's own, only ever
        read with ``pread``)."""
        try:
            return os.open(f"/proc/self/fd/{self._fd}", os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            return os.dup(self._fd)

    def sync(self) -> None:
        if self.path is not None:
            os.fsync(self._fd)

    @property
    def name(self) -> str:
        """The output as log lines name it: its path, or stdout."""
        return str(self.path) if self.path is not None else "stdout"

    @property
    def length(self) -> int | None:
        """What the file holds whole (None for stdout)."""
        return None if self.path is None else self._length

    def close(self) -> None:
        if self.path is not None and self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
