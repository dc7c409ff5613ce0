"""The daemon's Unix socket: who may connect, and what each says first.

One socket serves three kinds of client. Each opens with one JSON line, the hello:
``{"streamv1": 1, "role": "relay" | "subscribe" | "status", ...}``.

* relay: then the lines of a run's stdout, as they came. A line that starts with
  the byte 0x1E (ASCII record separator, never the start of a JSON line) is the
  relay's own: ``\\x1e{"relay_dropped": N}`` reports lines it could not send.
* subscribe: then reads the unified stream, one encoded line at a time.
* status: then reads one JSON line (the counters), and the daemon closes.
"""

from __future__ import annotations

import os
import socket
import stat
import struct
from pathlib import Path
from typing import Any

import orjson

VERSION = 1
CONTROL = b"\x1e"
ROLES = ("relay", "subscribe", "status")
#: A relay's lines waiting at once, at most: in the relay for the socket, and in the
#: daemon for its main thread. One number for both ends, so a relay that keeps up
#: with its daemon's queue never drops a line the queue had room for.
STREAM_LINES = 512


def default_socket() -> Path:
    """``$XDG_RUNTIME_DIR/streamv1/ingest.sock`` (a per-user tmpfs under systemd),
    else a folder of the user's own under /tmp."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime:
        return Path(runtime) / "streamv1" / "ingest.sock"
    return Path(f"/tmp/streamv1-{os.getuid()}") / "ingest.sock"


def hello(role: str, **fields: Any) -> bytes:
    return orjson.dumps({"streamv1": VERSION, "role": role, **fields}) + b"\n"


def read_hello(line: bytes) -> dict[str, Any] | None:
    """The hello's fields, or None if the line is not one."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(value, dict) or value.get("streamv1") != VERSION:
        return None
    if value.get("role") not in ROLES:
        return None
    return value


class Untrusted(OSError):
    """A socket, or the folder it is in, that another user could own or reach."""


def private_folder(folder: Path, create: bool = False) -> None:
    """The socket's folder must be ours, a real folder (not a symlink), and closed
    to group and others (0700): under /tmp anyone could have made it first, and
    whoever owns it can put their own socket there and read every relayed run."""
    if create:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    try:
        st = os.lstat(folder)
    except FileNotFoundError:
        return  # nothing there: nothing listens (connect will say so)
    if not stat.S_ISDIR(st.st_mode):
        raise Untrusted(f"{folder} is not a folder (a symlink?); refusing it")
    if st.st_uid != os.getuid():
        raise Untrusted(f"{folder} belongs to uid {st.st_uid}, not to you; refusing it")
    if st.st_mode & 0o077:
        raise Untrusted(
            f"{folder} is open to others (mode {st.st_mode & 0o777:o}); "
            "refusing it (chmod 700 it if it is yours)"
        )


def peer_uid(sock: socket.socket) -> int:
    """The user on the other end of a Unix socket, from the kernel (SO_PEERCRED)."""
    creds = sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def connect(path: Path, timeout: float | None = None) -> socket.socket:
    """A connection to the daemon at ``path``, only if the folder is private and
    the listening process is our own user. Raises OSError (Untrusted for a socket
    we must not talk to)."""
    private_folder(path.parent)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        if timeout is not None:
            sock.settimeout(timeout)
        sock.connect(str(path))
        uid = peer_uid(sock)
        if uid != os.getuid():
            raise Untrusted(f"{path} is served by uid {uid}, not by you; refusing it")
    except OSError:
        sock.close()
        raise
    return sock
