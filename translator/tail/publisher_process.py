"""The tail daemon's publisher (:mod:`translator.tail.publisher`) in a process of its
own.

Why a process: sending a line to JetStream (its message id, headers, the client's
framing) costs about as much CPU as converting it, and the daemon and a publisher
thread shared one interpreter, so a burst reached the stream at ~0.45× of the rate
it reached the output file (bench/fleet.py). A process gets a core of its own.

Nothing is lost by the move, since the publisher never read the daemon's memory: it
reads the output file up to the length the daemon vouches for, and keeps its own
checkpoint. What crosses the pipes, one JSON object a line:

- the daemon → its stdin: first the job (the output, the checkpoint, the bus, how to
  log), then after each checkpoint what the daemon vouches for (every output inode's
  length, and which one it writes now; each message is the whole of it, so only the
  newest needs to arrive), ``{"stop": seconds}`` at the end;
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
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path
from typing import IO, Any

import orjson

from streamv1.translator import bus, logs
from streamv1.translator.tail.publisher import OutputPublisher, status

#: The exit status of a publisher that stopped for good (its error said): the daemon
#: does not start it again.
GAVE_UP = 3
RESTART_FIRST, RESTART_MAX = 1.0, 30.0
#: How long a stop waits past the publisher's own timeout before killing it.
KILL_AFTER = 3.0


class PublisherProcess:
    """The daemon's handle on its publisher: the same calls as
    :class:`~translator.tail.publisher.OutputPublisher`'s daemon side."""

    def __init__(self, output: Path, state: Path, config: bus.BusConfig) -> None:
        level, fmt = logs.settings()
        self.output = output
        self._job = orjson.dumps({"output": os.fsdecode(output), "state": os.fsdecode(state),
                                  "bus": dataclasses.asdict(config),
                                  "log": {"level": level, "format": fmt}})
        self.log = logs.get()
        self._changed = threading.Condition()
        self._limits: dict[int, int] = {}
        self._current = 0
        self._version = 0  # of the limits; each change is one more
        self._stopping: float | None = None  # the stop's timeout, once asked
        self._exited = False
        self._report: dict[str, Any] = {"connected": False, "sent_lines": 0, "too_large": 0,
                                        "ino": 0, "offset": 0, "error": None}
        self.pid: int | None = None
        self._thread: threading.Thread | None = None

    # -- the daemon's side -----------------------------------------------------------

    def committed(self, ino: int, length: int) -> None:
        with self._changed:
            self._limits[ino] = length
            self._current = ino
            self._version += 1
            self._changed.notify_all()

    def start(self) -> None:
        self._thread = threading.Thread(target=self._supervise, name="publisher",
                                        daemon=True)
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
            self.log.error(f"publisher exited (status {code}); starting it again in "
                           f"{delay:g} s, from its checkpoint")
            with self._changed:
                self._changed.wait_for(lambda: self._stopping is not None, delay)
                if self._stopping is not None:
                    return
            delay = min(delay * 2, RESTART_MAX)

    def _run_once(self) -> int | None:
        """One publisher process, until it exits (its status) or is stopped (None
        when it could not be started)."""
        try:
            proc = subprocess.Popen(
                [sys.executable, "-P", "-m", __name__, os.fsdecode(self.output)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, start_new_session=True)
        except OSError as exc:
            with self._changed:
                self._report["error"] = f"cannot start the publisher: {exc}"
            self.log.error(f"cannot start the publisher ({exc}); the output file keeps "
                           "every line")
            return None
        assert proc.stdin is not None and proc.stdout is not None
        self.pid = proc.pid
        with self._changed:
            self._exited = False
        reader = threading.Thread(target=self._read_reports, args=(proc.stdout,),
                                  name="publisher-reports", daemon=True)
        reader.start()
        try:
            self._feed(proc.stdin)
        finally:
            with contextlib.suppress(OSError):
                proc.stdin.close()
        try:
            code = proc.wait((self._stopping or 0) + KILL_AFTER
                             if self._stopping is not None else None)
        except subprocess.TimeoutExpired:
            self.log.warning("publisher did not stop in time; killed (its unacked batch "
                             "goes again at the next start)", pid=proc.pid)
            proc.kill()
            code = proc.wait()
        reader.join(1.0)
        return code

    def _feed(self, stdin: IO[bytes]) -> None:
        """The job, then the limits whenever they change, until a stop (sent on)
        or the process's exit."""
        sent = -1
        try:
            stdin.write(self._job + b"\n")
            stdin.flush()
            while True:
                with self._changed:
                    self._changed.wait_for(partial(self._news, sent))
                    if self._exited:
                        return
                    version = self._version
                    message = orjson.dumps({"limits": {str(k): v for k, v in
                                                       self._limits.items()},
                                            "current": self._current})
                    stopping = self._stopping
                if version != sent:
                    if version:  # (nothing vouched for yet: nothing to say)
                        stdin.write(message + b"\n")
                    sent = version
                if stopping is not None:
                    stdin.write(orjson.dumps({"stop": stopping}) + b"\n")
                    stdin.flush()
                    return
                stdin.flush()
        except (BrokenPipeError, ValueError):
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
            if last_error is not None and last_error != logs.last_error:
                logs.last_error = last_error
        with self._changed:
            self._exited = True
            self._changed.notify_all()


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
    stdin, out = sys.stdin.buffer, sys.stdout.buffer
    job = orjson.loads(stdin.readline() or b"null")
    if not isinstance(job, dict):
        return 2
    logs.configure(job["log"]["level"], job["log"]["format"])
    fields = dict(job["bus"])
    fields["servers"] = tuple(fields["servers"])
    config = bus.BusConfig(**fields)
    written = threading.Lock()
    timeout = [5.0]

    def report() -> None:
        line = orjson.dumps({"report": publisher.report(), "last_error": logs.last_error})
        with written, contextlib.suppress(OSError, ValueError):
            out.write(line + b"\n")
            out.flush()

    publisher = OutputPublisher(Path(job["output"]), Path(job["state"]), config,
                                on_change=report)

    def orders() -> None:
        try:
            for raw in stdin:
                order = orjson.loads(raw)
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
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
            logs.get().error(f"publisher: a message from the daemon it cannot read ({exc}); "
                             "stopping")
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
            logs.get().info("waiting for the previous publisher to finish its batch",
                            path=str(state))
            said = True
        if stop.wait(0.05):
            os.close(fd)
            return None


if __name__ == "__main__":
    sys.exit(main())
