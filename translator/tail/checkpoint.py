"""Checkpoints of the tail daemon: written whole, atomically, after the output.

One JSON document holds the output's committed length and, per followed file, its
identity (path, inode, a hash of its head), the byte offset just past its last
complete line, and the translation's state (pickled, base64). It is written to a
temp file, fsynced, renamed over the old one, and the folder fsynced: a crash
leaves either the old checkpoint or the new one, never a torn one.
"""

from __future__ import annotations

import base64
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

VERSION = 1


@dataclass(slots=True)
class FileMark:
    offset: int
    line_no: int
    ino: int
    head_len: int
    head_hash: str
    state: bytes

    def as_json(self) -> dict[str, Any]:
        return {
            "offset": self.offset,
            "line_no": self.line_no,
            "ino": self.ino,
            "head_len": self.head_len,
            "head_hash": self.head_hash,
            "state": base64.b64encode(self.state).decode("ascii"),
        }

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> FileMark:
        return cls(
            offset=int(raw["offset"]),
            line_no=int(raw["line_no"]),
            ino=int(raw["ino"]),
            head_len=int(raw["head_len"]),
            head_hash=str(raw["head_hash"]),
            state=base64.b64decode(raw["state"]),
        )


@dataclass(slots=True)
class Checkpoint:
    output_path: str | None = None
    output_length: int | None = None
    files: dict[str, FileMark] = field(default_factory=dict)


class CheckpointError(Exception):
    pass


def load(path: Path) -> Checkpoint | None:
    """The last committed checkpoint, or None when there is none yet."""
    try:
        raw = json.loads(path.read_bytes())
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{path}: unreadable checkpoint ({exc})") from exc
    if not isinstance(raw, dict) or raw.get("version") != VERSION:
        raise CheckpointError(f"{path}: not a version {VERSION} streamv1 checkpoint")
    try:
        files = {p: FileMark.from_json(m) for p, m in raw.get("files", {}).items()}
    except (KeyError, TypeError, ValueError) as exc:
        raise CheckpointError(f"{path}: damaged checkpoint entry ({exc})") from exc
    output = raw.get("output") or {}
    return Checkpoint(output.get("path"), output.get("length"), files)


def save(path: Path, checkpoint: Checkpoint, entries: dict[str, str]) -> None:
    """Write atomically. ``entries`` are the files' marks, already JSON-encoded
    (the daemon re-encodes only the files that changed)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    output = (
        {"path": checkpoint.output_path, "length": checkpoint.output_length}
        if checkpoint.output_path is not None
        else None
    )
    parts = [
        '{"version":',
        str(VERSION),
        ',"output":',
        json.dumps(output),
        ',"files":{',
        ",".join(f"{json.dumps(p)}:{e}" for p, e in entries.items()),
        "}}",
    ]
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w", encoding="utf-8") as fh:
        fh.write("".join(parts))
        fh.flush()
        os.fsync(fh.fileno())
    os.replace(tmp, path)
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def encode_mark(mark: FileMark) -> str:
    return json.dumps(mark.as_json(), separators=(",", ":"))
