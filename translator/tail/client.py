"""``streamv1 subscribe`` and ``streamv1 status``: the daemon's socket, from outside."""

from __future__ import annotations

import socket
import sys
from pathlib import Path
from typing import IO, Any

import orjson

from streamv1.translator.tail import protocol


class NoDaemon(Exception):
    """Nothing listens on the socket."""


def _connect(path: Path, role: str) -> socket.socket:
    try:
        sock = protocol.connect(path)
    except protocol.Untrusted as exc:
        raise NoDaemon(str(exc)) from exc
    except OSError as exc:
        raise NoDaemon(f"no daemon listening ({exc.strerror or exc})") from exc
    try:
        sock.sendall(protocol.hello(role))
    except OSError as exc:
        sock.close()
        raise NoDaemon(f"no daemon listening ({exc.strerror or exc})") from exc
    return sock


def subscribe(path: Path, out: IO[bytes] | None = None) -> None:
    """Copy the unified stream to ``out`` (stdout) until the daemon stops."""
    sink = out if out is not None else sys.stdout.buffer
    sock = _connect(path, "subscribe")
    try:
        while True:
            data = sock.recv(1 << 16)
            if not data:
                return
            sink.write(data)
            sink.flush()
    finally:
        sock.close()


def status(path: Path, timeout: float = 5.0) -> dict[str, Any]:
    sock = _connect(path, "status")
    sock.settimeout(timeout)
    buf = b""
    try:
        while not buf.endswith(b"\n"):
            data = sock.recv(1 << 16)
            if not data:
                break
            buf += data
    finally:
        sock.close()
    value = orjson.loads(buf)
    if not isinstance(value, dict):
        raise ValueError("the daemon's status is not a JSON object")
    return value
