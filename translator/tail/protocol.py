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
from pathlib import Path
from typing import Any

import orjson

VERSION = 1
CONTROL = b"\x1e"
ROLES = ("relay", "subscribe", "status")


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
