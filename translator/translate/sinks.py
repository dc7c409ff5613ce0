"""Where a batch conversion's lines go: the output file or stdout, and the errors
that are the output's, never an input's.

Apart from the conversion: a sink knows only where bytes go. ``-o FILE`` is written
whole or not at all, stdout a megabyte a write off a terminal; a worker's spool file
is copied to the output in the kernel (:func:`append_file`). A failed write is an
:class:`OutputWriteError`, told apart from an input's read errors.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Protocol

from streamv1.translator.exits import Interrupted

OUT_BUFFER = 1 << 20  # bytes an output file is written in
#: Seconds an input's end may leave its lines in the output buffer (Sink.settle).
SETTLE_AFTER = 0.2


class Writer(Protocol):
    """Where lines go: an output file, or a :class:`Sink` around one."""

    def write(self, data: bytes, /) -> int: ...

    def flush(self) -> None: ...

    def fileno(self) -> int: ...


def settle(sink: Writer) -> None:
    """An input is over: a :class:`Sink` (or a writer that passes it on) flushes
    soon (:meth:`Sink.settle`); any other writer now."""
    getattr(sink, "settle", sink.flush)()


class OutputError(Exception):
    """The output cannot be opened: ``where`` names it, ``reason`` says why."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.where = where
        self.reason = reason


class OutputWriteError(Exception):
    """Writing the output failed (a full disk, an I/O error): never an input's
    fault, so no input is blamed; one line naming the output (``where``)."""

    def __init__(self, where: str, exc: OSError) -> None:
        super().__init__(f"{where}: {exc.strerror or exc}")
        self.where = where
        self.reason = exc.strerror or str(exc)


class Sink:
    """An output file whose write and flush failures are :class:`OutputWriteError`,
    told apart from the input's read errors (a closed pipe stays BrokenPipeError:
    the reader went away, the job is over)."""

    def __init__(self, raw: IO[bytes], where: str) -> None:
        self.raw, self.where = raw, where
        self._flushed = time.monotonic()

    def settle(self) -> None:
        """An input is over: its lines go out now if the last flush is
        :data:`SETTLE_AFTER` old, so a reader of the output sees each input soon
        after it is converted, and an archive of small files is not one write per
        file (3,925 files of ~8 KB: 8% of the conversion)."""
        now = time.monotonic()
        if now - self._flushed >= SETTLE_AFTER:
            self.flush()

    def write(self, data: bytes) -> int:
        try:
            return self.raw.write(data)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputWriteError(self.where, exc) from exc

    def flush(self) -> None:
        self._flushed = time.monotonic()
        try:
            self.raw.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputWriteError(self.where, exc) from exc

    def fileno(self) -> int:
        return self.raw.fileno()


@contextlib.contextmanager
def output_sink(output: Path | None) -> Iterator[Sink]:
    """Where ``convert`` writes one stream of all its inputs: stdout (no FILE, or
    ``-``), or ``-o FILE``, written whole or not at all. Off a terminal, stdout is
    written whole megabytes a write, not 8 KiB: lines are flushed at an input's end
    when the last flush is :data:`SETTLE_AFTER` old, before an input that may wait
    (stdin, a FIFO), and after each line of a live pipe. A failed write is an
    :class:`OutputWriteError`, raised once (closing after it says nothing more)."""
    if output is not None and str(output) != "-":
        with _atomic_output(output) as fh:
            yield Sink(fh, str(output))
        return
    if sys.stdout.isatty():
        yield Sink(sys.stdout.buffer, "stdout")
        return
    sys.stdout.flush()
    fh = open(sys.stdout.fileno(), "wb", buffering=OUT_BUFFER, closefd=False)
    sink = Sink(fh, "stdout")
    try:
        yield sink
        sink.flush()
    finally:
        with contextlib.suppress(OSError):  # a failure is said once, where it happened
            fh.close()


@contextlib.contextmanager
def _atomic_output(output: Path) -> Iterator[IO[bytes]]:
    """``-o FILE``, never half a conversion of a failure: a temp file in the same
    folder, fsynced and renamed over FILE when the conversion ends, removed when it
    fails. Interrupted (Ctrl-C, SIGTERM: ``… | streamv1 convert -o run.jsonl``
    stopped), what was converted is kept as a conversion's end keeps it, the open
    run ended with an interrupted result (one_input): the summary counts it, and a
    stream's reader may have no other copy. A device or FIFO (``/dev/null``, a
    pipe) is written as is."""
    if output.is_dir():
        raise OutputError(str(output), "a directory; -o takes a file (or use --out-dir)")
    try:
        special = not stat.S_ISREG(os.stat(output).st_mode)
    except OSError:
        special = False  # not there yet: a file is made
    if special:
        try:
            fh = open(output, "wb", buffering=OUT_BUFFER)
        except OSError as exc:
            raise OutputError(str(output), exc.strerror or str(exc)) from exc
        try:
            yield fh
        finally:
            with contextlib.suppress(OSError):  # already said: the write failed
                fh.close()
        return
    import tempfile

    folder = output.parent if str(output.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".part", dir=folder)
    except OSError as exc:
        raise OutputError(
            str(output), f"no file can be made there ({exc.strerror or exc})"
        ) from exc
    done = False
    fh = open(fd, "wb", buffering=OUT_BUFFER)
    stopped: Interrupted | None = None
    try:
        try:
            try:
                yield fh
            except Interrupted as exc:
                stopped = exc  # kept as an end keeps it, then raised again
            try:
                fh.flush()
                os.fsync(fh.fileno())
            except OSError as exc:
                raise OutputWriteError(str(output), exc) from exc
        finally:
            with contextlib.suppress(OSError):  # a failure is said once, where it happened
                fh.close()
        with contextlib.suppress(OSError):
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, output)
        done = True
        if stopped is not None:
            raise stopped
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


#: sendfile's answers for an output it cannot write to (a terminal, a socket of
#: some kinds): copied in user space instead. Any other error is the output's.
_NO_SENDFILE = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EBADF})


def append_file(spooled: str, shared: Writer) -> None:
    """Copy a spool file to the output in the kernel where it can (no user copy)."""
    shared.flush()
    with open(spooled, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        sent = 0
        try:
            out_fd = shared.fileno()
            while sent < size:
                n = os.sendfile(out_fd, fh.fileno(), sent, size - sent)
                if n == 0:
                    break
                sent += n
            if sent == size:
                return
        except (ValueError, AttributeError, io.UnsupportedOperation):
            pass  # not a file descriptor: copy in user space
        except BrokenPipeError:
            raise
        except OSError as exc:
            if exc.errno not in _NO_SENDFILE:
                raise OutputWriteError(getattr(shared, "where", "the output"), exc) from exc
        fh.seek(sent)  # from where sendfile stopped: nothing twice
        while chunk := fh.read(1 << 20):
            shared.write(chunk)
