"""Checkpoints of the tail daemon: one SQLite database, each commit one transaction.

The state holds the output's committed length and identity, and per followed file
its identity (path, inode, a hash of its head and one of the bytes just before the
offset), the byte offset just past its last complete line, the offsets at which
the daemon itself closed runs (idle, or the subagent's end), and the translation's
state as plain JSON (:mod:`translator.state`; nothing is ever unpickled).

**Why SQLite** (#23 item 4). The checkpoint used to be one JSON document, written
whole and fsynced at every commit: with 10,000 files (23 MB of state) 100 appends
wrote 1.7 GB and an append took up to 729 ms to reach the output. A commit must cost
what changed, not what exists. Log shippers solve this two ways: Filebeat keeps an
append-only registry log plus periodic snapshots (its "memlog"), Fluent Bit keeps
its tail offsets in SQLite. We take SQLite (in the standard library): a commit is one
transaction that rewrites only the rows of the files that changed plus the output's
row, made durable by one fsync of the write-ahead log (``journal_mode=WAL``,
``synchronous=FULL``), and SQLite's own checkpointing folds the log back into the
database a few pages at a time. An append-only log of our own would need its own
torn-record rules and compaction (a pause proportional to the whole state, or a
second writer); SQLite has both, tested far beyond what we could.

A crash (SIGKILL, power loss) leaves the last committed transaction: never a mix of
two commits, never a file's mark without the output length it goes with. The file
is the user's own (0600; SQLite gives its ``-wal`` and ``-shm`` files the same mode):
it holds what the transcripts hold. File names are stored as bytes (a non-UTF-8
name is a name like any other).

JSON checkpoints are still read: version 1 (releases before versioned state: its
offsets and identities stand, its pickled translator state is never loaded; each of
its files is replayed up to its offset instead, ``state`` None), version 2 (the
document of the releases before this one) and version 3 (the same document, as
:func:`export` writes it). :meth:`Store.load` turns one into a database in place:
written beside it, then renamed over it, so a crash leaves one or the other.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import sqlite3
import stat
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from streamv1.translator.hashes import blake2b
from streamv1.translator.reading.files import NotRegular, open_regular, read_regular

#: The state's layout: 3 is the database (and the JSON document :func:`export` writes).
VERSION = 3
#: JSON documents read (and turned into a database).
READS = (1, 2, 3)
#: How every database begins (the SQLite file format's magic).
SQLITE_MAGIC = b"SQLite format 3\x00"
#: A JSON checkpoint (an older release's) is read whole: at most this much.
DOCUMENT_LIMIT = 1 << 30


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
    #: The live part's hand-backs (:meth:`translator.tail.claims.Claims.state`).
    claims: dict[str, Any] | None = None
    #: Where the output began anew after this checkpoint, each (inode, length): a
    #: file the daemon opened at the path (the old one deleted or renamed away
    #: while it wrote), or the output truncated from outside. A restart cuts such a
    #: file back to that length: everything after it came after the checkpoint.
    output_reopened: list[tuple[int, int]] = field(default_factory=list)


class CheckpointError(Exception):
    pass


def load(path: Path) -> Checkpoint | None:
    """The last committed checkpoint (a database, or a JSON document of any version
    read), or None when there is none yet. Reads only: nothing is converted."""
    kind = _kind(path)
    if kind is None:
        return None
    if kind == "database":
        db = _open(path, readonly=True)
        try:
            return _read_db(path, db)
        finally:
            db.close()
    return _read_document(path)


def _kind(path: Path) -> str | None:
    """ "database", "document" (JSON), or None when there is no file."""
    try:
        with open_regular(path) as fh:  # a FIFO there must not hang the start
            magic = fh.read(len(SQLITE_MAGIC))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise CheckpointError(f"{path}: unreadable checkpoint ({exc.strerror or exc})") from exc
    # An empty file is a database too: SQLite writes the main file only when it
    # folds its log back in, so a daemon killed before that leaves a 0-byte
    # database whose every commit is in STATE-wal (seen in the model test).
    return "database" if magic in (SQLITE_MAGIC, b"") else "document"


def _read_document(path: Path) -> Checkpoint | None:
    try:
        raw = json.loads(read_regular(path, DOCUMENT_LIMIT, follow=True))
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
    with _damaged(path):
        files_raw = raw.get("files", {})
        files = {p: FileMark.from_json(m, version) for p, m in files_raw.items()}
        head = _head(raw.get("output") or {}, raw.get("scanned", True), files)
        head.claims = raw.get("claims") if isinstance(raw.get("claims"), dict) else None
        return head


def _head(output: dict[str, Any], scanned: Any, files: dict[str, FileMark]) -> Checkpoint:
    out_path = output.get("path")
    if out_path is not None and not isinstance(out_path, str):
        raise ValueError(f"output path is {type(out_path).__name__}, not a string")
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
        output_reopened=_reopened(output.get("reopened", [])),
    )


def _reopened(raw: Any) -> list[tuple[int, int]]:
    if not isinstance(raw, list) or not all(
        isinstance(x, list) and len(x) == 2 and all(type(n) is int and n >= 0 for n in x)
        for x in raw
    ):
        raise ValueError(f"output reopened is {raw!r}, not [inode, length] pairs")
    return [(ino, length) for ino, length in raw]


@contextlib.contextmanager
def _damaged(path: Path) -> Any:
    """A value of the wrong type or range anywhere: one error naming the file."""
    try:
        yield
    except (AttributeError, KeyError, TypeError, ValueError, RecursionError) as exc:
        raise CheckpointError(
            f"{path}: damaged checkpoint entry ({exc}); move it aside to start over (every "
            "file is then read from its start)"
        ) from exc


#: One transaction: a daemon killed between two CREATEs left a database with
#: ``meta`` and no ``files`` (the model test: "no such table: files" at every
#: restart after).
_SCHEMA = """
BEGIN;
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS files (path BLOB PRIMARY KEY, mark TEXT NOT NULL);
COMMIT;
"""


def _open(path: Path, readonly: bool = False) -> sqlite3.Connection:
    try:
        # (Not mode=ro for reading: a database a killed daemon left has its log to
        # fold in, which a read-only connection may not do.)
        db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    except sqlite3.Error as exc:
        raise CheckpointError(f"{path}: unreadable checkpoint ({exc})") from exc
    if not readonly:
        _for_writing(path, db)
    return db


def _for_writing(path: Path, db: sqlite3.Connection) -> None:
    try:
        db.execute("PRAGMA journal_mode=WAL")
        db.execute("PRAGMA synchronous=FULL")  # every commit fsynced: a checkpoint is kept
        # The log is folded back every 1,000 pages (SQLite's default) and then cut
        # to this size: the first commit of 10,000 files leaves no 30 MB log behind.
        db.execute("PRAGMA journal_size_limit=4194304")
        db.executescript(_SCHEMA)
    except sqlite3.Error as exc:
        db.close()
        raise CheckpointError(f"{path}: unreadable checkpoint ({exc})") from exc


def _read_db(path: Path, db: sqlite3.Connection) -> Checkpoint | None:
    try:
        if db.execute("SELECT 1 FROM sqlite_master WHERE name = 'meta'").fetchone() is None:
            return None  # made, never committed to: no checkpoint yet
        meta = dict(db.execute("SELECT key, value FROM meta").fetchall())
        if not meta:
            # Made, never committed to (by an earlier release, perhaps without its
            # files table: it made the two one after the other).
            return None
        rows = db.execute("SELECT path, mark FROM files").fetchall()
    except sqlite3.Error as exc:
        raise CheckpointError(f"{path}: unreadable checkpoint ({exc})") from exc
    with _damaged(path):
        version = json.loads(meta["version"])
        if version != VERSION:
            raise CheckpointError(
                f"{path}: not a streamv1 checkpoint this release reads (version {version!r}; "
                f"reads {VERSION})"
            )
        files = {_name(p): FileMark.from_json(json.loads(m), VERSION) for p, m in rows}
        head = _head(
            json.loads(meta.get("output", "null")) or {},
            json.loads(meta.get("scanned", "true")),
            files,
        )
        claims = json.loads(meta.get("claims", "null"))
        head.claims = claims if isinstance(claims, dict) else None
        return head


def _name(raw: Any) -> str:
    if not isinstance(raw, bytes):
        raise ValueError(f"file name is {type(raw).__name__}, not bytes")
    return os.fsdecode(raw)


def _output_json(checkpoint: Checkpoint) -> str:
    if checkpoint.output_path is None:
        return "null"
    output: dict[str, Any] = {
        "path": checkpoint.output_path,
        "length": checkpoint.output_length,
        "ino": checkpoint.output_ino,
        "tail_len": checkpoint.output_tail_len,
        "tail_hash": checkpoint.output_tail_hash,
    }
    if checkpoint.output_reopened:
        output["reopened"] = [list(x) for x in checkpoint.output_reopened]
    return json.dumps(output)


class Store:
    """The daemon's state file, open for its life: :meth:`load` once, then one
    :meth:`commit` per checkpoint with what changed since the last one."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._db: sqlite3.Connection | None = None
        self._synced_dir = False

    def load(self) -> Checkpoint | None:
        """The last committed checkpoint, or None. A JSON checkpoint (an earlier
        release's) is turned into a database first, in place."""
        kind = _kind(self.path)
        if kind == "database":
            # Read on the connection the daemon keeps (one open, one read), and
            # only then made ready for writing: the schema made first would turn a
            # database never committed to into an empty, damaged-looking one.
            db = _open(self.path, readonly=True)
            try:
                saved = _read_db(self.path, db)
            except BaseException:
                db.close()
                raise
            _for_writing(self.path, db)
            self._db = db
            return saved
        saved = _read_document(self.path) if kind == "document" else None
        if saved is not None:
            self._convert(saved)
            self._db = self._connect(self.path)
        return saved

    def _convert(self, saved: Checkpoint) -> None:
        tmp = self.path.with_name(self.path.name + ".new")
        for stale in (tmp, *_sidecars(tmp)):
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
        db = self._connect(tmp)
        try:
            self._write(db, saved, {p: encode_mark(m) for p, m in saved.files.items()}, ())
        finally:
            db.close()  # the log folded back in: one file to rename
        for stale in _sidecars(self.path):  # (they belong to no database: it was JSON)
            with contextlib.suppress(FileNotFoundError):
                stale.unlink()
        os.replace(tmp, self.path)
        _sync_dir(self.path.parent)

    def _connect(self, path: Path) -> sqlite3.Connection:
        if not path.exists():
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))  # the user's own
        return _open(path)

    def commit(self, head: Checkpoint, changed: Mapping[str, str], gone: Iterable[str]) -> None:
        """One transaction: the output's row, the marks that changed (already
        JSON-encoded), the files no longer followed. OSError when it cannot be
        written (disk full, I/O error): nothing of it is kept, the last commit stands."""
        if self._db is None:
            try:
                self._db = self._connect(self.path)
            except CheckpointError as exc:
                raise OSError(str(exc)) from None
        self._write(self._db, head, changed, gone)
        if not self._synced_dir:
            _sync_dir(self.path.parent)  # the database's (and its log's) names, once
            self._synced_dir = True

    def _write(
        self,
        db: sqlite3.Connection,
        head: Checkpoint,
        changed: Mapping[str, str],
        gone: Iterable[str],
    ) -> None:
        with self._transaction(db):
            db.executemany(
                "DELETE FROM files WHERE path = ?",
                [(os.fsencode(p),) for p in gone if p not in changed],
            )
            db.executemany(
                "INSERT OR REPLACE INTO files (path, mark) VALUES (?, ?)",
                [(os.fsencode(p), m) for p, m in changed.items()],
            )
            db.executemany(
                "INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                [
                    ("version", str(VERSION)),
                    ("scanned", "true" if head.scanned else "false"),
                    ("output", _output_json(head)),
                    ("claims", json.dumps(head.claims)),
                ],
            )

    @contextlib.contextmanager
    def _transaction(self, db: sqlite3.Connection) -> Iterator[None]:
        """One write transaction: committed whole, or rolled back; a database error
        is an OSError naming the state file (disk full, I/O error)."""
        try:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield
                db.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    db.execute("ROLLBACK")
                raise
        except sqlite3.Error as exc:
            raise OSError(f"{self.path}: {exc}") from exc

    def note_reopened(self, ino: int, length: int) -> None:
        """The daemon opened a new file at the output's path (the old one deleted or
        renamed away) and is about to write into it before its next checkpoint: the
        last checkpoint keeps describing the old file, and now also names this one,
        so a crash before the next checkpoint cuts it back too (#23: every line after
        the checkpoint was otherwise in the output twice). OSError as for commit."""
        if self._db is None:
            return
        db = self._db
        with self._transaction(db):
            row = db.execute("SELECT value FROM meta WHERE key = 'output'").fetchone()
            output = json.loads(row[0]) if row else None
            if isinstance(output, dict):
                output["reopened"] = [*output.get("reopened", []), [ino, length]]
                db.execute("UPDATE meta SET value = ? WHERE key = 'output'", (json.dumps(output),))

    def close(self) -> None:
        """Closed, the write-ahead log is folded into the database and removed."""
        if self._db is not None:
            with contextlib.suppress(sqlite3.Error):
                self._db.close()
            self._db = None


def _sidecars(path: Path) -> tuple[Path, Path]:
    return path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")


def _sync_dir(folder: Path) -> None:
    dir_fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)


def export(path: Path) -> dict[str, Any] | None:
    """The checkpoint as one JSON document (version 3), as an operator or a test
    reads it; :func:`load` (and so the daemon) reads it back."""
    saved = load(path)
    if saved is None:
        return None
    return {
        "version": VERSION,
        "scanned": saved.scanned,
        "output": json.loads(_output_json(saved)),
        "claims": saved.claims,
        "files": {p: m.as_json() for p, m in saved.files.items()},
    }


def digest(data: bytes) -> str:
    """The identity hash of file bytes (a head, the bytes before an offset)."""
    return blake2b(data, digest_size=16).hexdigest()


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
            # Never waits, never follows a link: a FIFO or a symlink there is refused.
            flags = os.O_RDWR | os.O_CREAT | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(self.path, flags, 0o600)
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                os.close(fd)
                raise NotRegular(f"{self.path}: not a regular file")
        except OSError as exc:
            where = self.path.with_suffix("")
            why = (
                "a file is in the way of its folder"
                if isinstance(exc, FileExistsError | NotADirectoryError)
                else "its lock file is not a regular file"
                if isinstance(exc, NotRegular) or exc.errno == errno.ELOOP
                else exc.strerror or str(exc)
            )
            raise CheckpointError(
                f"{where}: cannot keep the state there ({why}); give --state a file in a "
                "folder this user may write"
            ) from None
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
        return read_regular(path, 64).decode("ascii", "replace").strip()
    except OSError:
        return ""
