"""The tail daemon's checkpoints, in step with its output: never one written ahead
of what the output holds whole.

At start the output is made to agree with the last checkpoint: cut back to the
length it records, or, where the checkpoint does not describe the file at the
path, that file is named in a new checkpoint before a line goes there. Then every
``commit_every`` seconds (and on shutdown): the output is fsynced, and the marks
of the files read since are written with the output's length
(:mod:`translator.tail.checkpoint` stores them atomically). Whoever reads the
output behind the daemon (``tail --publish``) is told after each checkpoint what
is never cut back, including an output file left within a round.

Apart from the daemon's loop so that the exactly-once rule has one place: the
caller only says when (and holds every checkpoint back while a write is held).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamv1.translator.tail import checkpoint as cp
from streamv1.translator.tail.claims import Claims
from streamv1.translator.tail.follower import FileFollower
from streamv1.translator.tail.output import OutputBusy, OutputFailed, OutputSink


@dataclass(eq=False)
class Commits:
    sink: OutputSink
    store: cp.Store
    state_path: Path
    claims: Claims
    commit_every: float
    now: Callable[[], float]
    log: Any

    def __post_init__(self) -> None:
        #: Told (inode, length, reader) after every checkpoint of a file output: bytes
        #: that are never cut back (``tail --publish`` reads up to there); ``reader``
        #: opens that file for reading, while the daemon still writes it (before a
        #: rotation's reopen: its last checkpoint is taken first). On this thread.
        self.on_commit: Callable[[int, int, Callable[[], int]], None] | None = None
        #: Output files left within a round (moved while written: no checkpoint could
        #: come first), with their final length and a reader: vouched for at the
        #: next checkpoint, before the file written then (CI: a whole first file
        #: never published).
        self._left: list[tuple[int, int, int]] = []
        #: Checkpointed files no longer followed (deleted, moved): their rows go at
        #: the next commit.
        self._gone: set[str] = set()
        self.last_commit = self.now()
        #: Written since the last checkpoint, or a file's row to go: one is due.
        self.uncommitted = False

    # -- start -------------------------------------------------------------------------

    def recover(self) -> cp.Checkpoint | None:
        """The last checkpoint, the output made to agree with it and the claims it
        holds restored; None when there is none. Either way, on return a
        checkpoint names the output as it is now (the first one is written here,
        before the first line: the length a crash from now on is cut back to)."""
        saved = self.store.load()
        if saved is None:
            if self.sink.length:
                self.log.warning(
                    "no checkpoint, but the output holds lines already; every file is read "
                    "from its start (lines may repeat)",
                    path=self.sink.name,
                    state=str(self.state_path),
                )
            self._save_or_stop(False, "cannot write the first checkpoint")
            return None
        if self.sink.path is not None and saved.output_path not in (None, str(self.sink.path)):
            self.log.warning(
                "checkpoint was written for another output; offsets kept",
                path=str(self.state_path),
                output=saved.output_path,
            )
        described = True
        if saved.output_path == (str(self.sink.path) if self.sink.path else None):
            if self.sink.is_as_checkpointed(saved):
                self.sink.cut_back(saved.output_length)
            else:
                described = False
                if (doubt := self.sink.cut_back_rotated(saved)) is not None:
                    self.log.warning(doubt, path=self.sink.name)
        elif self.sink.path is not None:
            described = False
        self.claims.restore(saved.claims)  # floors and cuts: runs a stream left
        if not described:
            # Never a line into an output the last checkpoint does not describe
            # (the model test: a new file at the path, written into and then
            # killed before a checkpoint named it, kept those lines and got
            # them again): this file, at its length now, is named first.
            self._save_or_stop(saved.scanned, "cannot write a checkpoint")
        return saved

    def _save_or_stop(self, scanned: bool, failure: str) -> None:
        """A checkpoint the start cannot go on without: CheckpointError if it fails."""
        try:
            self._save(scanned=scanned)
        except OSError as exc:
            raise cp.CheckpointError(
                f"{self.state_path}: {failure} ({exc.strerror or exc})"
            ) from exc

    # -- the output begins anew ----------------------------------------------------------

    def fresh_start(self, ino: int, length: int) -> None:
        """The output begins anew at (ino, length) after the last checkpoint (a new
        file at its path, or truncated from outside): the checkpoint is told before
        a line goes there, so a crash before the next one cuts it back to that."""
        try:
            self.store.note_reopened(ino, length)
        except OSError as exc:
            self.log.error(
                "checkpoint not told where the output begins anew; a crash before the "
                "next one may print lines twice",
                path=str(self.state_path),
                reason=str(exc),
            )

    def reopened(self) -> bool:
        """The output's path opened anew (a rotation, a move); False (said) when
        it could not be: the file it had is written on."""
        try:
            self.sink.reopen()
        except (OutputBusy, OSError) as exc:
            self.log.error(
                "output not reopened; writing on to the file it had",
                path=self.sink.name,
                reason=str(exc),
            )
            return False
        return True

    def output_moved(self) -> None:
        """The output deleted (or renamed away) within a round, before lines that
        come after the last checkpoint, which names the old file: a new file at
        the path, named too before they reach it; the old one, left, is vouched
        for at the next checkpoint."""
        self.log.warning(
            "output deleted or replaced while running; writing on into a new file at its path",
            path=self.sink.name,
        )
        left = self._leaving()
        if not self.reopened():
            if left is not None:
                os.close(left[2])
        else:
            if left is not None:
                self._left.append(left)
            self.fresh_start(self.sink.ino, self.sink.length or 0)
        self.uncommitted = True

    def _leaving(self) -> tuple[int, int, int] | None:
        """The output file about to be left (its inode, final length, a reader),
        where someone is told of checkpoints; None where nobody is."""
        sink = self.sink
        if self.on_commit is None or sink.path is None or sink.length is None:
            return None
        try:
            return sink.ino, sink.length, sink.reader()
        except OSError as exc:
            self.log.warning(
                "the output left is not kept open for the publisher: lines written to it "
                "since the last checkpoint may not be sent",
                path=self.sink.name,
                reason=exc.strerror or str(exc),
            )
            return None

    # -- commits -------------------------------------------------------------------------

    def row_gone(self, path: str) -> None:
        """A checkpointed file no longer followed at ``path``: its row goes at the
        next commit."""
        self._gone.add(path)
        self.uncommitted = True

    def commit(
        self, followers: Mapping[str, FileFollower], scanned: bool, force: bool = False
    ) -> None:
        """fsync the output, then the checkpoint: when ``commit_every`` is up and
        something changed, or (``force``) now. OutputFailed when the fsync fails."""
        now = self.now()
        if not force:
            if now - self.last_commit < self.commit_every:
                return
            if not self.uncommitted and not any(f.dirty for f in followers.values()):
                return
        try:
            self.sink.sync()
        except OSError as exc:
            # After a failed fsync the kernel may have dropped the pages: no later
            # fsync can vouch for them. Stop; the restart cuts back to the last good one.
            self.log.error(
                "output fsync failed; stopping without a checkpoint past it",
                path=self.sink.name,
                reason=exc.strerror or str(exc),
            )
            raise OutputFailed(str(exc)) from exc
        # Only what changed is written: the marks of the files read since the last
        # commit, the rows of files gone (a checkpointed file not followed yet keeps
        # its row as it is).
        changed = {}
        for path, follower in followers.items():
            if follower.dirty and follower.started:
                changed[path] = cp.encode_mark(follower.mark())
        try:
            self._save(scanned=scanned, changed=changed)
        except OSError as exc:
            self.log.error(
                "checkpoint not written; tried again at the next commit",
                path=str(self.state_path),
                reason=exc.strerror or str(exc),
            )
            return
        for path in changed:
            followers[path].dirty = False
        self._gone.clear()
        self.last_commit = now
        self.uncommitted = False

    def _save(self, scanned: bool, changed: dict[str, str] | None = None) -> None:
        sink = self.sink
        checkpoint = cp.Checkpoint(
            str(sink.path) if sink.path else None,
            sink.length,
            scanned=scanned,
            output_ino=sink.ino if sink.path else None,
            output_tail_len=len(sink.tail),
            output_tail_hash=cp.digest(sink.tail),
            claims=self.claims.state(),
        )
        self.store.commit(checkpoint, changed or {}, self._gone)
        if self.on_commit is not None and sink.path is not None and sink.length is not None:
            for ino, length, fd in self._left:
                self.on_commit(ino, length, functools.partial(os.dup, fd))
                os.close(fd)
            self._left.clear()
            self.on_commit(sink.ino, sink.length, sink.reader)
