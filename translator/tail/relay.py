"""``streamv1 relay``: a run's stdout, passed through unchanged and handed to the daemon.

    streamv1 relay -- claude -p --output-format stream-json --verbose "..."

The relay runs the command (or reads stdin when there is none) and writes every
byte it prints to its own stdout at once, as if it were not there. Each complete
line also goes to the tail daemon's socket. The pass-through never waits for the
daemon: the socket is non-blocking, lines for it wait in a bounded buffer
(``protocol.STREAM_LINES``, as many as the daemon's own queue holds), and what
does not fit is dropped, counted and reported to the daemon at the end. A daemon
that is absent or goes away costs the run nothing. The relay exits with the
command's status (128 + N for signal N).
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson

from streamv1.translator import logs
from streamv1.translator.reading import reader
from streamv1.translator.reading.lines import LineSplitter
from streamv1.translator.tail import protocol

log = logs.get()

#: A line longer than this is not sent to the daemon (the reader's limit).
MAX_LINE_BYTES = reader.MAX_LINE_BYTES
#: After the command ends: how long the last lines may take to reach the daemon.
GRACE_SECONDS = 2.0


class _ToDaemon:
    """The socket side: whole lines only, never blocking, drops counted."""

    def __init__(self, path: Path, command: list[str] | None) -> None:
        self.path = path
        self.sock: socket.socket | None = None
        self.buf = bytearray()  # whole lines, ready to send
        self.lines_waiting = 0
        self.dropped = 0
        self.refused: str | None = None  # why a socket there was not trusted
        try:
            sock = protocol.connect(path, timeout=2.0)
        except protocol.Untrusted as exc:
            self.refused = str(exc)
            sock = None
        except OSError:
            sock = None
        if sock is not None:
            try:
                sock.sendall(protocol.hello("relay", pid=os.getpid(), command=command or None))
                sock.setblocking(False)
                self.sock = sock
            except OSError:
                sock.close()
        self.connected = int(self.sock is not None)

    def add(self, line: bytes) -> None:
        if self.sock is None:
            self.dropped += self.connected  # lost only if a daemon was there to get it
            return
        if self.lines_waiting >= protocol.STREAM_LINES:
            self.dropped += 1
            return
        self.buf += line
        self.buf += b"\n"
        self.lines_waiting += 1

    def send(self) -> None:
        if self.sock is None or not self.buf:
            return
        try:
            n = self.sock.send(self.buf)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            self._lost()
            return
        self.lines_waiting -= self.buf[:n].count(b"\n")
        del self.buf[:n]

    def _lost(self) -> None:
        """The daemon went away: what waits is dropped, and so is what comes."""
        self.dropped += self.lines_waiting
        self.lines_waiting = 0
        self.buf.clear()
        if self.sock is not None:
            self.sock.close()
        self.sock = None

    def finish(self) -> None:
        deadline = time.monotonic() + GRACE_SECONDS
        while self.sock is not None and self.buf and time.monotonic() < deadline:
            select.select([], [self.sock], [], max(0.0, deadline - time.monotonic()))
            self.send()
        if self.sock is not None and self.buf:
            # Only whole lines were sent; a line cut by the deadline would be half a
            # record, so the daemon gets no part of it.
            self.dropped += self.lines_waiting
        if self.sock is not None:
            with contextlib.suppress(OSError):
                if not self.buf and self.dropped:
                    self.sock.setblocking(True)
                    self.sock.settimeout(0.5)
                    trailer = orjson.dumps({"relay_dropped": self.dropped})
                    self.sock.sendall(protocol.CONTROL + trailer + b"\n")
            self.sock.close()
            self.sock = None


def relay(command: list[str], socket_path: Path) -> int:
    daemon = _ToDaemon(socket_path, command)
    if daemon.refused is not None:
        log.error("the daemon refused the stream; passing through only", reason=daemon.refused)
    elif daemon.sock is None:
        log.warning("no daemon listening; passing through only", path=str(socket_path))
    proc: subprocess.Popen[bytes] | None = None
    if command:
        try:
            proc = subprocess.Popen(command, stdout=subprocess.PIPE)
        except OSError as exc:
            log.error("cannot run the command", command=command[0], reason=exc.strerror or str(exc))
            return 127
        assert proc.stdout is not None
        src = proc.stdout.fileno()
        # Ctrl-C reaches the command from the terminal itself; SIGTERM is passed on.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, lambda *_: proc.terminate() if proc else None)
    else:
        src = sys.stdin.fileno()
    _pump(src, sys.stdout.fileno(), daemon)
    daemon.finish()
    if daemon.dropped:
        log.warning(
            "lines not delivered to the daemon", count=daemon.dropped, path=str(socket_path)
        )
    if proc is None:
        return 0
    if proc.stdout is not None:
        proc.stdout.close()
    code = proc.wait()
    return 128 - code if code < 0 else code


def _pump(src: int, out: int, daemon: _ToDaemon) -> None:
    """Command output → our stdout (first, whole) and → the daemon (whole lines, as
    they were). A line longer than ``MAX_LINE_BYTES`` is not sent to the daemon
    (counted as dropped) and not held."""
    lines = LineSplitter(limit=MAX_LINE_BYTES, strip_cr=False)
    while True:
        wait_write: list[Any] = [daemon.sock] if daemon.sock is not None and daemon.buf else []
        readable, writable, _ = select.select([src], wait_write, [])
        if writable:
            daemon.send()
        if not readable:
            continue
        data = os.read(src, 1 << 16)
        if not data:
            break
        if not _write_all(out, data):
            return  # our reader went away: the command meets a closed pipe too
        sent = False
        for line in lines.feed(data):
            if line.skipped:
                daemon.dropped += daemon.connected
            else:
                daemon.add(line.data)
            sent = True
        if sent:
            daemon.send()
    last = lines.end()  # the last line, cut off by the command's end
    if last is not None:
        if last.skipped:
            daemon.dropped += daemon.connected
        else:
            daemon.add(last.data)


def _write_all(fd: int, data: bytes) -> bool:
    view = memoryview(data)
    while view:
        try:
            n = os.write(fd, view)
        except BrokenPipeError:
            return False
        view = view[n:]
    return True
