"""The tail daemon's publisher (:mod:`translator.tail.publisher`) in a process of its
own.

Why a process: sending a line to JetStream (its message id, headers, the client's
framing) costs about as much CPU as converting it, and the daemon and a publisher
thread shared one interpreter, so a burst reached the stream at ~0.45× of the rate
it reached the output file (bench/fleet.py). A process gets a core of its own.

Nothing is lost by the move, since the publisher never read the daemon's memory: it
reads the output file up to the length the daemon vouches for, and keeps its own
checkpoint. What crosses between them, one JSON object a line:

- the daemon → its stdin (a Unix socket): first the job (the output, the checkpoint,
  the bus, how to log), then after each checkpoint what the daemon vouches for
  (every output inode's length, and which one it writes now; each message is the
  whole of it, so only the newest needs to arrive), ``{"stop": seconds}`` at the end.
  With the first message that names an output file goes a descriptor of the file
  itself (``SCM_RIGHTS``; ``"fds"`` lists their inodes): a file renamed away by a
  rotation before the publisher opened it (it starts ~0.3 s after the daemon; CI
  lost a whole first file so) or deleted while it was behind stays readable. The
  daemon closes its copies of the files the publisher has read to their end;
- its stdout → the daemon: the publisher's report whenever it changes (connected or
  not, a batch checkpointed, an error), for ``status``.

Its stdin's end is its stop: a daemon killed with SIGKILL closes it, and the
publisher finishes the batch in hand, checkpoints and exits; it is never left
behind. A publisher that dies is started again (1 s, doubling to 30 s), from its
checkpoint; the server drops what it sends twice. Two publishers never run on one
checkpoint: a new one waits for the lock the old one holds until it has exited.
The publisher's own session: a Ctrl-C at the terminal is the daemon's to handle,
which then stops it; SIGTERM (systemd stopping the unit's cgroup) stops it as the
end of its stdin does.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from functools import partial
from pathlib import Path
from typing import IO, Any

import orjson

from streamv1.translator import logs
from streamv1.translator.fleet import bus
from streamv1.translator.tail.publisher import OutputPublisher, files_before, status

log = logs.get()

#: The exit status of a publisher that stopped for good (its error said): the daemon
#: does not start it again.
GAVE_UP = 3
RESTART_FIRST, RESTART_MAX = 1.0, 30.0
#: Most descriptors sent with one message (the reader takes up to twice as many: a
#: message's that did not fit would be closed by the kernel, and the inodes named
#: would get the wrong files).
FDS_AT_ONCE = 32
#: How long a stop waits past the publisher's own timeout before killing it.
KILL_AFTER = 3.0


class PublisherProcess:
    """The daemon's handle on its publisher: the same calls as
    :class:`~translator.tail.publisher.OutputPublisher`'s daemon side."""

    def __init__(self, output: Path, state: Path, config: bus.BusConfig) -> None:
        level, fmt = logs.settings()
        self.output = output
        self._job = orjson.dumps(
            {
                "output": os.fsdecode(output),
                "state": os.fsdecode(state),
                "bus": dataclasses.asdict(config),
                "log": {"level": level, "format": fmt},
            }
        )
        self.log = logs.get()
        self._changed = threading.Condition()
        self._limits: dict[int, int] = {}  # inode -> length, the daemon's order
        self._fds: dict[int, int] = {}  # inode -> the daemon's reader of that file
        self._current = 0
        self._version = 0  # of the limits; each change is one more
        self._stopping: float | None = None  # the stop's timeout, once asked
        self._exited = False
        self._report: dict[str, Any] = {
            "connected": False,
            "sent_lines": 0,
            "too_large": 0,
            "ino": 0,
            "offset": 0,
            "error": None,
        }
        self.pid: int | None = None
        self._thread: threading.Thread | None = None

    # -- the daemon's side -----------------------------------------------------------

    def committed(self, ino: int, length: int, reader: Callable[[], int] | None = None) -> None:
        if ino not in self._fds and reader is not None:
            try:
                fd = reader()
            except OSError as exc:  # the publisher will open the path instead
                self.log.warning(
                    "output not opened for the publisher: a rotation before it is read to "
                    "its end loses its rest",
                    reason=exc.strerror or str(exc),
                )
            else:
                with self._changed:
                    self._fds[ino] = fd
        with self._changed:
            self._limits[ino] = length
            self._current = ino
            self._version += 1
            self._changed.notify_all()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._supervise, name="publisher", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Let the publisher finish the batch in hand (for up to ``timeout``), then
        wait for it to exit; killed if it has not ``KILL_AFTER`` later."""
        with self._changed:
            self._stopping = timeout
            self._changed.notify_all()
        if self._thread is not None:
            self._thread.join(timeout + KILL_AFTER + 1.0)

    def status(self) -> dict[str, Any]:
        with self._changed:
            out = status(self._report, dict(self._limits), self._current)
        out["pid"] = self.pid
        return out

    # -- its thread: run the process, again when it dies -------------------------------

    def _supervise(self) -> None:
        delay = RESTART_FIRST
        while True:
            code = self._run_once()
            if code is None or self._stopping is not None:
                return
            if code == GAVE_UP:
                return  # said by the publisher; the output file keeps every line
            with self._changed:
                self._report["connected"] = False
            self.log.error(
                "publisher exited; starting it again from its checkpoint",
                status=code,
                delay_s=f"{delay:g}",
            )
            with self._changed:
                self._changed.wait_for(lambda: self._stopping is not None, delay)
                if self._stopping is not None:
                    return
            delay = min(delay * 2, RESTART_MAX)

    def _run_once(self) -> int | None:
        """One publisher process, until it exits (its status) or is stopped (None
        when it could not be started)."""
        mine, theirs = socket.socketpair()
        try:
            with theirs:
                proc = subprocess.Popen(
                    [
                        sys.executable,
                        "-P",
                        "-m",
                        "streamv1.translator.cli.publisher",
                        os.fsdecode(self.output),
                    ],
                    stdin=theirs.fileno(),
                    stdout=subprocess.PIPE,
                    start_new_session=True,
                )
        except OSError as exc:
            mine.close()
            with self._changed:
                self._report["error"] = f"cannot start the publisher: {exc}"
            self.log.error(
                "cannot start the publisher; the output file keeps every line", reason=str(exc)
            )
            return None
        assert proc.stdout is not None
        self.pid = proc.pid
        with self._changed:
            self._exited = False
        reader = threading.Thread(
            target=self._read_reports, args=(proc.stdout,), name="publisher-reports", daemon=True
        )
        reader.start()
        try:
            self._feed(mine)
        finally:
            mine.close()
        try:
            code = proc.wait(
                (self._stopping or 0) + KILL_AFTER if self._stopping is not None else None
            )
        except subprocess.TimeoutExpired:
            self.log.warning(
                "publisher did not stop in time; killed (its unacked batch "
                "goes again at the next start)",
                pid=proc.pid,
            )
            proc.kill()
            code = proc.wait()
        reader.join(1.0)
        return code

    def _feed(self, channel: socket.socket) -> None:
        """The job, then the limits whenever they change (with the files this
        process has not been given yet), until a stop (sent on) or its exit."""
        sent, given = -1, set[int]()
        try:
            channel.sendall(self._job + b"\n")
            while True:
                with self._changed:
                    self._changed.wait_for(partial(self._news, sent))
                    if self._exited:
                        return
                    version, stopping = self._version, self._stopping
                    new = [ino for ino in self._fds if ino not in given]
                    # (copies: the report thread may close the daemon's meanwhile)
                    fds = [os.dup(self._fds[ino]) for ino in new] if version != sent else []
                    limits = {str(k): v for k, v in self._limits.items()}
                    current = self._current
                try:
                    if version != sent and version:  # (nothing vouched for yet: nothing)
                        for at in range(0, max(len(new), 1), FDS_AT_ONCE):
                            message = orjson.dumps(
                                {
                                    "limits": limits,
                                    "current": current,
                                    "fds": new[at : at + FDS_AT_ONCE],
                                }
                            )
                            _send(channel, message + b"\n", fds[at : at + FDS_AT_ONCE])
                        given.update(new)
                    sent = version
                finally:
                    for fd in fds:
                        os.close(fd)
                if stopping is not None:
                    channel.sendall(orjson.dumps({"stop": stopping}) + b"\n")
                    return
        except OSError:
            return  # it exited: the supervisor sees why

    def _news(self, sent: int) -> bool:
        return self._version != sent or self._exited or self._stopping is not None

    def _read_reports(self, stdout: IO[bytes]) -> None:
        for raw in stdout:
            try:
                message = orjson.loads(raw)
                report, last_error = message["report"], message.get("last_error")
            except (orjson.JSONDecodeError, KeyError, TypeError):
                continue  # not ours (nothing else writes there)
            with self._changed:
                self._report = report
                self._forget_before(report.get("ino"))
            if last_error is not None and last_error != logs.last_error:
                logs.last_error = last_error
        with self._changed:
            self._exited = True
            self._changed.notify_all()

    def _forget_before(self, ino: object) -> None:
        """The files before the one the publisher's checkpoint names are read to
        their end: their lengths and descriptors go (never the one written now)."""
        for old in files_before(list(self._limits), ino):
            if old != self._current:
                del self._limits[old]
                fd = self._fds.pop(old, -1)
                if fd >= 0:
                    os.close(fd)


def _send(channel: socket.socket, data: bytes, fds: list[int]) -> None:
    """``data`` whole, the descriptors with its first bytes."""
    done = socket.send_fds(channel, [data], fds) if fds else 0
    channel.sendall(data[done:])


def _messages(channel: socket.socket) -> Iterator[tuple[Any, list[int]]]:
    """The daemon's messages, each with the descriptors that came for it, until the
    channel ends. (Read with ``recvmsg``: a plain read would drop descriptors.)"""
    buffer, fds = b"", list[int]()
    while True:
        data, got, flags, _ = socket.recv_fds(channel, 1 << 16, 2 * FDS_AT_ONCE)
        if flags & socket.MSG_CTRUNC:
            raise ValueError("descriptors from the daemon were cut off")
        fds.extend(got)
        if not data:
            return
        *lines, buffer = (buffer + data).split(b"\n")
        for raw in lines:
            message = orjson.loads(raw)
            count = len(message.get("fds", ())) if isinstance(message, dict) else 0
            yield message, fds[:count]
            del fds[:count]


# -- the publisher's process -----------------------------------------------------------


def main() -> int:
    """The process (its one argument, the output's path, names it in ``ps``): the
    job from stdin, the publisher run until stdin ends (or a
    stop, or SIGTERM), its reports on stdout. Returns the exit status."""
    stop = threading.Event()

    def on_signal(_signum: int, _frame: Any) -> None:
        stop.set()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the daemon's (it stops us)
    out = sys.stdout.buffer
    channel = socket.socket(fileno=os.dup(sys.stdin.fileno()))
    messages = _messages(channel)
    try:
        job, _ = next(messages)
    except (StopIteration, orjson.JSONDecodeError):
        return 2
    if not isinstance(job, dict):
        return 2
    logs.configure(job["log"]["level"], job["log"]["format"])
    fields = dict(job["bus"])
    fields["servers"] = tuple(fields["servers"])
    config = bus.BusConfig(**fields)
    logs.secret(*config.secrets())  # masked in this process's lines too
    written = threading.Lock()
    timeout = [5.0]

    def report() -> None:
        line = orjson.dumps({"report": publisher.report(), "last_error": logs.last_error})
        with written, contextlib.suppress(OSError, ValueError):
            out.write(line + b"\n")
            out.flush()

    publisher = OutputPublisher(Path(job["output"]), Path(job["state"]), config, on_change=report)

    def orders() -> None:
        try:
            for order, fds in messages:
                for ino, fd in zip(order.get("fds", ()), fds, strict=False):
                    publisher.given(int(ino), fd)
                if "stop" in order:
                    timeout[0] = float(order["stop"])
                    break
                limits = {int(ino): int(length) for ino, length in order["limits"].items()}
                current = int(order["current"])
                for ino, length in limits.items():  # the one written now last
                    if ino != current:
                        publisher.committed(ino, length)
                if current in limits:
                    publisher.committed(current, limits[current])
        except (
            orjson.JSONDecodeError,
            KeyError,
            TypeError,
            ValueError,
            AttributeError,
            OSError,
        ) as exc:
            log.error(
                "publisher: a message from the daemon it cannot read; stopping", reason=str(exc)
            )
        stop.set()

    threading.Thread(target=orders, name="orders", daemon=True).start()
    lock = _locked(Path(job["state"]), stop)
    if lock is None:
        return 0  # stopped while an older publisher still ran
    publisher.start()
    while not stop.wait(0.2):
        if publisher.ended:
            break
    gave_up = publisher.ended and publisher.error is not None
    publisher.stop(timeout[0])
    report()
    os.close(lock)
    return GAVE_UP if gave_up else 0


def _locked(state: Path, stop: threading.Event) -> int | None:
    """The lock beside the publish checkpoint, held until exit; waits (said after
    2 s) while an older publisher finishes. None: stopped meanwhile."""
    fd = os.open(state.with_name(state.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    said, start = False, time.monotonic()
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            pass
        if not said and time.monotonic() - start > 2.0:
            log.info("waiting for the previous publisher to finish its batch", path=str(state))
            said = True
        if stop.wait(0.05):
            os.close(fd)
            return None
