"""The daemon's socket side: live streams in, subscribers out, status on request.

Threads here only move bytes; every translation, claim and output write happens on
the daemon's main thread (:mod:`translator.tail.daemon`). That keeps the rules
simple and makes the one promise this module exists for easy to keep: nothing on
the socket side ever waits for anything slower than a socket.

* A relay's lines go into a bounded queue (``protocol.STREAM_LINES``) for the
  main thread; when it is full the line is dropped and counted
  (``stream_dropped``). The reader never waits for the translator, so the relay's
  writes never wait for it either.
* Each subscriber has a bounded queue of its own (4 MiB) and a thread that writes
  it out.
  The main thread only offers lines; a full queue drops them for that subscriber
  alone (counted), and when the subscriber has caught up it is told how many it
  lost with a system/warning line.
"""

from __future__ import annotations

import contextlib
import errno
import os
import queue
import socket
import stat
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from streamv1.translator import logs
from streamv1.translator.reading import reader
from streamv1.translator.reading.lines import LineSplitter
from streamv1.translator.tail import protocol
from streamv1.translator.timefmt import now_ts

#: A relayed line longer than this is dropped (counted), never held whole.
MAX_LINE_BYTES = reader.MAX_LINE_BYTES
#: Clients connected at once, at most; more are closed at once (counted).
MAX_CLIENTS = 64
#: What may wait for one subscriber. Bytes, not items: one item can be a whole
#: file's first read.
SUBSCRIBER_BYTES = 4 << 20
HELLO_TIMEOUT = 5.0
_MAX_HELLO = 64 * 1024
#: accept() errors that pass (out of descriptors or memory for a moment).
_TRANSIENT = (errno.EMFILE, errno.ENFILE, errno.ENOBUFS, errno.ENOMEM, errno.ECONNABORTED)


class LiveStream:
    """One relay's run: its lines, waiting for the main thread."""

    def __init__(
        self, stream_id: str, conn: socket.socket, hello: dict[str, Any], wake: Callable[[], None]
    ) -> None:
        self.id = stream_id
        self.conn = conn
        self.hello = hello
        self.queue: queue.Queue[bytes] = queue.Queue(maxsize=protocol.STREAM_LINES)
        self.closed = False
        self.tail: bytes | None = None  # a last line with no newline, read after the queue
        self.dropped = 0  # lines the queue had no room for
        self.relay_dropped = 0  # lines the relay could not send (it says so at the end)
        self._wake = wake
        # The main thread's part (see TailDaemon): its translation and claim.
        self.translation: Any = None
        self.session: str | None = None
        self.lines = 0
        self.broken = False

    def read(self, pending: bytes = b"") -> None:
        """In the stream's own thread: socket → queue, until the relay closes. A line
        over ``MAX_LINE_BYTES`` is dropped (counted as dropped) without being held."""
        lines = LineSplitter(self.id, MAX_LINE_BYTES)
        try:
            data = pending
            while True:
                offered = False
                for line in lines.feed(data):
                    if line.skipped:
                        self.dropped += 1
                    else:
                        self._offer(line.data)
                    offered = True
                if offered:
                    self._wake()
                data = self.conn.recv(1 << 16)
                if not data:
                    break
            last = lines.end()
            if last is not None:  # cut off: the relay or its connection ended mid-line
                if last.skipped:
                    self.dropped += 1
                else:
                    self.tail = last.data
        except OSError:
            pass  # the relay went away: what arrived stands
        finally:
            self.closed = True
            with contextlib.suppress(OSError):
                self.conn.close()
            self._wake()

    def _offer(self, line: bytes) -> None:
        if line.startswith(protocol.CONTROL):
            with contextlib.suppress(orjson.JSONDecodeError, AttributeError, TypeError):
                self.relay_dropped += int(orjson.loads(line[1:]).get("relay_dropped", 0))
            return
        try:
            self.queue.put_nowait(line)
        except queue.Full:
            self.dropped += 1


class Subscriber:
    """One ``streamv1 subscribe``: a bounded queue and a thread that writes it out."""

    def __init__(self, conn: socket.socket, number: int, limit: int = SUBSCRIBER_BYTES) -> None:
        self.conn = conn
        self.number = number
        self.queue: queue.Queue[bytes | None] = queue.Queue()
        self.limit = limit
        self.waiting = 0  # bytes in the queue
        self.dropped = 0  # lines lost in all
        self._lost = 0  # lost since the last warning
        self._lock = threading.Lock()
        self.alive = True
        self._warnings = 0

    def offer(self, data: bytes) -> None:
        """Main thread: never waits; a full queue loses the data for this one only.
        An empty queue takes any one batch, however large: a subscriber that is idle
        (not slow) loses nothing."""
        with self._lock:
            if self.waiting and self.waiting + len(data) > self.limit:
                n = data.count(b"\n") or 1
                self.dropped += n
                self._lost += n
                return
            self.waiting += len(data)
        self.queue.put_nowait(data)

    def write(self) -> None:
        """In the subscriber's own thread, until it goes away or the daemon stops."""
        try:
            while self.alive:
                data = self.queue.get()
                if data is None:
                    break
                self.conn.sendall(data)
                with self._lock:
                    self.waiting -= len(data)
                if self.queue.empty():
                    with self._lock:
                        lost, self._lost = self._lost, 0
                    if lost:
                        self.conn.sendall(self._warning(lost))
        except OSError:
            pass
        finally:
            self.alive = False
            with contextlib.suppress(OSError):
                self.conn.close()

    def _warning(self, lost: int) -> bytes:
        """The daemon's word to this subscriber that it lost lines: a run of the
        daemon's own session (init, the warning, a result), so what a consumer
        reads still frames (#23 item 20: a bare warning was a line outside any run,
        which validate --allow-open refused)."""
        self._warnings += 1
        ts = now_ts()
        session = f"streamv1-subscriber-{self.number}"
        meta = {"origin": "daemon"}
        lines = [
            {
                "type": "system",
                "subtype": "init",
                "session_id": session,
                "seq": 0,
                "ts": ts,
                "agent": {"name": "streamv1", "provider": "streamv1"},
                "capabilities": ["stream_v1"],
                "extension": {"synthetic": True},
                "_meta": meta,
            },
            {
                "type": "system",
                "subtype": "warning",
                "session_id": session,
                "seq": 1,
                "ts": ts,
                "kind": "subscriber_dropped",
                "count": lost,
                "body": f"{lost} lines were not sent to this subscriber: it read too slowly",
                "_meta": meta,
            },
            {
                "type": "result",
                "subtype": "success",
                "session_id": session,
                "seq": 2,
                "ts": ts,
                "is_error": False,
                "num_turns": 0,
                "extension": {"synthetic": True},
                "_meta": meta,
            },
        ]
        return b"".join(orjson.dumps(line) + b"\n" for line in lines)

    def stop(self) -> None:
        self.alive = False
        self.queue.put_nowait(None)
        with contextlib.suppress(OSError):
            self.conn.shutdown(socket.SHUT_RDWR)


class SocketTaken(OSError):
    """Another daemon listens on the socket: it has this job (a second daemon
    started for it stops), unlike a folder this daemon cannot use."""


class IngestServer:
    """The listening socket and the threads behind it."""

    def __init__(
        self, path: Path, wake: Callable[[], None], status: Callable[[], dict[str, Any]]
    ) -> None:
        self.path = path
        self._wake = wake
        self._status = status
        self._sock: socket.socket | None = None
        self._lock = threading.Lock()
        self.new_streams: list[LiveStream] = []  # taken by the main thread
        self.subscribers: list[Subscriber] = []
        self._count = 0
        self._clients = 0
        self.refused = 0  # connections closed: another user, or too many at once
        self.log = logs.get()

    # -- life -------------------------------------------------------------------------

    def start(self) -> None:
        protocol.private_folder(self.path.parent, create=True)  # raises Untrusted
        if self.path.exists() or self.path.is_symlink():
            if not stat.S_ISSOCK(os.lstat(self.path).st_mode):
                raise OSError(f"{self.path} exists and is not a socket")
            probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                probe.connect(str(self.path))
            except OSError:
                self.path.unlink()  # a socket no daemon listens on: left by a crash
            else:
                probe.close()
                raise SocketTaken(f"another daemon is listening on {self.path}")
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.bind(str(self.path))
        os.chmod(self.path, 0o600)  # the user's runs and streams only
        sock.listen(64)
        self._sock = sock
        threading.Thread(target=self._accept, name="ingest-accept", daemon=True).start()

    def close(self) -> None:
        sock, self._sock = self._sock, None
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
            sock.close()
            with contextlib.suppress(OSError):
                self.path.unlink()
        for sub in self.subscribers_now():
            sub.stop()

    # -- the main thread's view ---------------------------------------------------------

    def take_streams(self) -> list[LiveStream]:
        with self._lock:
            streams, self.new_streams = self.new_streams, []
        return streams

    def subscribers_now(self) -> list[Subscriber]:
        with self._lock:
            self.subscribers = [s for s in self.subscribers if s.alive]
            return list(self.subscribers)

    def publish(self, data: bytes) -> None:
        for sub in self.subscribers_now():
            sub.offer(data)

    # -- threads ---------------------------------------------------------------------------

    def _accept(self) -> None:
        """Accept until closed. Out of descriptors is not closed: wait and go on
        (said once), or relays would stop being heard for good."""
        short = False
        while self._sock is not None:
            try:
                conn = self._take()
            except OSError as exc:
                if self._sock is None or exc.errno not in _TRANSIENT:
                    return  # closed
                if not short:
                    short = True
                    self.log.warning(
                        "socket accept failed; retrying",
                        path=str(self.path),
                        reason=exc.strerror or str(exc),
                    )
                time.sleep(0.2)
                continue
            with self._lock:
                crowded = self._clients >= MAX_CLIENTS
                if not crowded:
                    self._clients += 1
            if crowded:
                self.refused += 1
                conn.close()
                continue
            threading.Thread(target=self._serve_counted, args=(conn,), daemon=True).start()

    def _take(self) -> socket.socket:
        if self._sock is None:
            raise OSError(errno.EBADF, "closed")
        return self._sock.accept()[0]

    def _serve_counted(self, conn: socket.socket) -> None:
        try:
            self._serve(conn)
        finally:
            with self._lock:
                self._clients -= 1

    def _serve(self, conn: socket.socket) -> None:
        try:
            uid = protocol.peer_uid(conn)
        except OSError:
            uid = -1
        if uid != os.getuid():
            self.refused += 1  # the folder is 0700; this is the second lock on the door
            self.log.warning("socket client of another user; closed", uid=uid)
            conn.close()
            return
        # The hello must be whole within HELLO_TIMEOUT in all (a byte every few
        # seconds does not keep a connection).
        deadline = time.monotonic() + HELLO_TIMEOUT
        buf = b""
        try:
            while b"\n" not in buf and len(buf) < _MAX_HELLO:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise TimeoutError
                conn.settimeout(left)
                data = conn.recv(4096)
                if not data:
                    break
                buf += data
        except OSError:
            conn.close()
            return
        first, _, rest = buf.partition(b"\n")
        hello = protocol.read_hello(first)
        if hello is None:
            self.log.warning("socket client without a valid hello; closed", path=str(self.path))
            conn.close()
            return
        conn.settimeout(None)
        with self._lock:
            self._count += 1
            number = self._count
        role = hello["role"]
        if role == "status":
            with contextlib.suppress(OSError):
                conn.sendall(orjson.dumps(self._status()) + b"\n")
            conn.close()
        elif role == "subscribe":
            sub = Subscriber(conn, number)
            with self._lock:
                self.subscribers.append(sub)
            self.log.info("subscriber connected", subscriber=number)
            sub.write()
            self.log.info("subscriber gone", subscriber=number, dropped=sub.dropped)
        else:
            pid = hello.get("pid")
            stream = LiveStream(
                f"relay-{number}" + (f":{pid}" if pid else ""), conn, hello, self._wake
            )
            with self._lock:
                self.new_streams.append(stream)
            self._wake()
            stream.read(rest)
