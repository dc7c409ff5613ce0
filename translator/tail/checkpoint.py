"""Checkpoints of the tail daemon: written whole, atomically, after the output.

One JSON document holds the output's committed length and, per followed file, its
identity (path, inode, a hash of its head and one of the bytes just before the
offset), the byte offset just past its last complete line, the offsets at which
the daemon itself closed runs (idle, or the subagent's end), and the translation's
state as plain JSON (:mod:`translator.state`; nothing is ever unpickled). It is
written to a temp file, fsynced, renamed over the old one, and the folder fsynced:
a crash leaves either the old checkpoint or the new one, never a torn one. The
file is the user's own (0600): it holds what the transcripts hold.

Version 1 (releases before versioned state) is still read: its offsets and
identities stand, and its pickled translator state is never loaded; each of its
files is replayed up to its offset instead (``state`` is None).
"""

from __future__ import annotations

import fcntl
import hashlib
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

VERSION = 2
READS = (1, 2)


@dataclass(slots=True)
class FileMark:
    offset: int
    line_no: int
    ino: int
    head_len: int
    head_hash: str
    tail_len: int = 0
    tail_hash: str = ""
    state: dict[str, Any] | None = None  # None: replay the file up to ``offset``
    closes: list[int] = field(default_factory=list)
    framed: int | None = None  # lines framed since ``start`` (None: not known, e.g. v1)
    start: int = 0  # where translation began (``--from end``: the end it found)
    start_line: int = 0

    def as_json(self) -> dict[str, Any]:
        return {
            "offset": self.offset,
            "line_no": self.line_no,
            "ino": self.ino,
            "head_len": self.head_len,
            "head_hash": self.head_hash,
            "tail_len": self.tail_len,
            "tail_hash": self.tail_hash,
            "closes": self.closes,
            "framed": self.framed,
            "start": self.start,
            "start_line": self.start_line,
            "state": self.state,
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any], version: int) -> FileMark:
        state = raw.get("state") if version >= 2 else None
        return cls(
            offset=int(raw["offset"]),
            line_no=int(raw["line_no"]),
            ino=int(raw["ino"]),
            head_len=int(raw["head_len"]),
            head_hash=str(raw["head_hash"]),
            tail_len=int(raw.get("tail_len", 0)),
            tail_hash=str(raw.get("tail_hash", "")),
            state=state if isinstance(state, dict) else None,
            closes=[int(x) for x in raw.get("closes", [])],
            framed=int(raw["framed"]) if raw.get("framed") is not None else None,
            start=int(raw.get("start", 0)),
            start_line=int(raw.get("start_line", 0)),
        )


@dataclass(slots=True)
class Checkpoint:
    output_path: str | None = None
    output_length: int | None = None
    files: dict[str, FileMark] = field(default_factory=dict)
    #: The first scan is done (``--from end`` skips what files held before it only).
    scanned: bool = True
    #: The output file's identity at ``output_length``: its inode and a hash of the
    #: bytes just before that length (a rotated or edited output is not cut back).
    output_ino: int | None = None
    output_tail_len: int = 0
    output_tail_hash: str = ""


class CheckpointError(Exception):
    pass


def load(path: Path) -> Checkpoint | None:
    """The last committed checkpoint, or None when there is none yet."""
    try:
        raw = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError, RecursionError) as exc:
        raise CheckpointError(f"{path}: unreadable checkpoint ({exc})") from exc
    version = raw.get("version") if isinstance(raw, dict) else None
    if version not in READS:
        raise CheckpointError(
            f"{path}: not a streamv1 checkpoint this release reads (version {version!r}; "
            f"reads {', '.join(map(str, READS))})"
        )
    try:
        files = {p: FileMark.from_json(m, version) for p, m in raw.get("files", {}).items()}
        output = raw.get("output") or {}
        ino = output.get("ino")
        return Checkpoint(
            output.get("path"),
            output.get("length"),
            files,
            bool(raw.get("scanned", True)),
            int(ino) if ino is not None else None,
            int(output.get("tail_len", 0)),
            str(output.get("tail_hash", "")),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"{path}: damaged checkpoint entry ({exc})") from exc


def save(path: Path, checkpoint: Checkpoint, entries: dict[str, str]) -> None:
    """Write atomically. ``entries`` are the files' marks, already JSON-encoded
    (the daemon re-encodes only the files that changed)."""
    output = (
        {
            "path": checkpoint.output_path,
            "length": checkpoint.output_length,
            "ino": checkpoint.output_ino,
            "tail_len": checkpoint.output_tail_len,
            "tail_hash": checkpoint.output_tail_hash,
        }
        if checkpoint.output_path is not None
        else None
    )
    parts = [
        '{"version":',
        str(VERSION),
        ',"scanned":',
        "true" if checkpoint.scanned else "false",
        ',"output":',
        json.dumps(output),
        ',"files":{',
        ",".join(f"{json.dumps(p)}:{e}" for p, e in entries.items()),
        "}}",
    ]
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "w", encoding="utf-8") as fh:
        fh.write("".join(parts))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def digest(data: bytes) -> str:
    """The identity hash of file bytes (a head, the bytes before an offset)."""
    return hashlib.blake2b(data, digest_size=16).hexdigest()


def encode_mark(mark: FileMark) -> str:
    return json.dumps(mark.as_json(), separators=(",", ":"))


class StateLock:
    """One daemon per state file: an exclusive ``flock`` on ``<state>.lock``, held
    for the daemon's life (the kernel drops it when the process dies, SIGKILL
    included, so a crash never leaves a stale lock)."""

    def __init__(self, state_path: Path) -> None:
        self.path = state_path.with_name(state_path.name + ".lock")
        self._fd: int | None = None

    def acquire(self) -> None:
        """Raises CheckpointError naming the state file when another daemon holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = _read_pid(self.path)
            raise CheckpointError(
                f"{self.path.with_suffix('')}: another streamv1 tail uses this state file"
                + (f" (pid {holder})" if holder else "")
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd

    @property
    def held(self) -> bool:
        return self._fd is not None

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def _read_pid(path: Path) -> str:
    try:
        return path.read_text().strip()
    except OSError:
        return ""
