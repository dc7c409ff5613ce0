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
        closes = raw.get("closes", [])
        if not isinstance(closes, list):
            raise ValueError(f"closes is {type(closes).__name__}, not a list")
        return cls(
            offset=_count(raw, "offset"),
            line_no=_count(raw, "line_no"),
            ino=_count(raw, "ino"),
            head_len=_count(raw, "head_len"),
            head_hash=_text(raw, "head_hash"),
            tail_len=_count(raw, "tail_len", 0),
            tail_hash=_text(raw, "tail_hash", ""),
            state=state if isinstance(state, dict) else None,
            closes=[_count({"closes": x}, "closes") for x in closes],
            framed=_count(raw, "framed") if raw.get("framed") is not None else None,
            start=_count(raw, "start", 0),
            start_line=_count(raw, "start_line", 0),
        )


def _count(raw: dict[str, Any], key: str, default: int | None = None) -> int:
    """A checkpoint's count or offset: a whole number ≥ 0 (not true, not 1.5, not
    -1: each of those made a traceback later, at a seek or a truncate)."""
    value = raw.get(key, default) if default is not None else raw[key]
    if type(value) is not int or value < 0:
        raise ValueError(f"{key} is {value!r}, not a whole number >= 0")
    return value


def _text(raw: dict[str, Any], key: str, default: str | None = None) -> str:
    value = raw.get(key, default) if default is not None else raw[key]
    if not isinstance(value, str):
        raise ValueError(f"{key} is {type(value).__name__}, not a string")
    return value


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
        out_path = output.get("path")
        if out_path is not None and not isinstance(out_path, str):
            raise ValueError(f"output path is {type(out_path).__name__}, not a string")
        scanned = raw.get("scanned", True)
        if not isinstance(scanned, bool):
            raise ValueError(f"scanned is {scanned!r}, not true or false")
        return Checkpoint(
            out_path,
            _count(output, "length") if output.get("length") is not None else None,
            files,
            scanned,
            _count(output, "ino") if output.get("ino") is not None else None,
            _count(output, "tail_len", 0),
            _text(output, "tail_hash", ""),
        )
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(
            f"{path}: damaged checkpoint entry ({exc}); move it aside to start over (every "
            "file is then read from its start)") from exc


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
        """Raises CheckpointError naming the state file when another daemon holds it,
        or when it cannot be made (a file in the way of its folder, no right)."""
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            where = self.path.with_suffix("")
            why = ("a file is in the way of its folder" if isinstance(
                exc, FileExistsError | NotADirectoryError) else exc.strerror or str(exc))
            raise CheckpointError(
                f"{where}: cannot keep the state there ({why}); give --state a file in a "
                "folder this user may write") from None
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
