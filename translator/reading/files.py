"""Opening a file that input names, safely: every file the daemon or ``convert``
opens beside what it was asked to read (a subagent's ``.meta.json`` sidecar, a
parent session file, the checkpoint, a pid file) goes through here.

Such a name is decided by whoever can write in a watched folder, so what is there
may be a FIFO (whose ``open()`` waits for a writer for good, and a blocked
``open()`` is not woken by SIGTERM's handler), a device (``/dev/zero`` through a
symlink: a read that never ends), or a file of gigabytes. So a file is opened
non-blocking, must be a regular file, and a small document is read with a bound.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from typing import BinaryIO

#: A sidecar the CLIs write is a few hundred bytes: this is far above any.
SIDECAR_LIMIT = 1 << 20
#: A line of a file read beside a transcript (a parent session file searched): at
#: most what the reader takes of a transcript's line (reading.lines.MAX_LINE_BYTES).
LINE_LIMIT = 64 << 20


class NotRegular(OSError):
    """The name is a FIFO, a device, a socket or a folder, not a regular file."""


class TooLarge(OSError):
    """A document read whole is larger than its bound."""


def open_regular(path: str | os.PathLike[str], follow: bool = True) -> BinaryIO:
    """``path`` opened to read, if it is a regular file; anything else is an OSError
    (NotRegular). ``follow=False``: a symlink is refused too (O_NOFOLLOW), for a
    file that is ours or a CLI's and never a link. The open never waits (O_NONBLOCK:
    a FIFO's open returns at once, and then is refused)."""
    flags = os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | (0 if follow else os.O_NOFOLLOW)
    fd = os.open(path, flags)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegular(f"{os.fspath(path)}: not a regular file")
    except BaseException:
        os.close(fd)
        raise
    # Outside the try: once fdopen's file object holds fd it closes it itself, and a
    # second close (a signal raised inside fdopen) could close a file opened since.
    return os.fdopen(fd, "rb")


def read_regular(path: str | os.PathLike[str], limit: int, follow: bool = False) -> bytes:
    """A regular file's bytes, whole, at most ``limit`` of them: a larger one is an
    OSError (TooLarge), and so is anything :func:`open_regular` refuses. Read with a
    bound even when the size said fits: a file may grow while it is read."""
    with open_regular(path, follow) as fh:
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(f"{os.fspath(path)}: larger than {limit} bytes")
    return data


def lines_of(fh: BinaryIO, limit: int = LINE_LIMIT) -> Iterator[tuple[bytes, int, bool]]:
    """The lines from ``fh``'s position, each as (its bytes, how many bytes it takes
    in the file, whether it is whole: ends in a newline). A line longer than
    ``limit`` is read past, never held: its bytes are b"". The last one may be a
    line still being written (not whole), and then nothing follows it."""
    while True:
        raw = fh.readline(limit + 1)
        if not raw:
            return
        if len(raw) <= limit or raw.endswith(b"\n"):
            yield raw, len(raw), raw.endswith(b"\n")
            if not raw.endswith(b"\n"):
                return
            continue
        n = len(raw)  # over the limit: read on to its newline, a bounded piece at a time
        while not raw.endswith(b"\n"):
            raw = fh.readline(limit)
            if not raw:
                yield b"", n, False
                return
            n += len(raw)
        yield b"", n, True
