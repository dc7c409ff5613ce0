"""The tail daemon: every session file under the watched folders, into one stream.

``tick()`` does one round of work and is kept apart from ``run()``, the loop that
waits for file events, so tests drive the daemon without sleeping. A round:

1. find new files (a full rescan every ``rescan_every`` seconds, since file events
   alone get missed now and then) and poll the ones that changed;
2. write the lines they made to the output, and flush;
3. end runs idle for ``idle_close`` seconds, as batch conversion does at EOF;
4. every ``commit_every`` seconds (and on shutdown): fsync the output, then write
   the checkpoint — never before the output it covers.

Exactly once for ``--output FILE``: the checkpoint records the output's length, and
a restart cuts the file back to it before going on (the lines after it are made
again, byte for byte, from the checkpointed state). For stdout, at least once.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from translator import logs
from translator.discover import walk_paths
from translator.pipeline import Totals
from translator.tail import checkpoint as cp
from translator.tail.follower import FileFollower
from translator.timefmt import now_ts

#: Followers idle this long give their file descriptor back.
FD_IDLE_SECONDS = 120.0


class OutputSink:
    """Where lines go: a file (appended, fsynced at commits) or stdout."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._fh: IO[bytes]
        if path is None:
            import sys

            self._fh = sys.stdout.buffer
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._fh = open(path, "ab")

    def cut_back(self, length: int | None) -> None:
        """Drop what a crash wrote after the last checkpoint (file output only)."""
        if self.path is None or length is None:
            return
        size = os.fstat(self._fh.fileno()).st_size
        if size > length:
            os.truncate(self.path, length)
            logs.get().info(
                "output cut back to the last checkpoint",
                path=str(self.path),
                dropped_bytes=size - length,
            )
        elif size < length:
            logs.get().warning(
                "output is shorter than the checkpoint says; appending",
                path=str(self.path),
                expected=length,
                found=size,
            )

    def write(self, lines: list[bytes]) -> None:
        if lines:
            self._fh.write(b"".join(lines))
            self._fh.flush()

    def sync(self) -> None:
        if self.path is not None:
            os.fsync(self._fh.fileno())

    @property
    def length(self) -> int | None:
        if self.path is None:
            return None
        return os.fstat(self._fh.fileno()).st_size

    def close(self) -> None:
        if self.path is not None:
            self._fh.close()


class TailDaemon:
    def __init__(
        self,
        roots: list[Path],
        sink: OutputSink,
        state_path: Path,
        start_at_end: bool = False,
        idle_close: float = 600.0,
        rescan_every: float = 30.0,
        commit_every: float = 0.5,
        clock: Callable[[], str] = now_ts,
        now: Callable[[], float] = time.monotonic,
        encoder: Callable[[], Any] | None = None,
    ) -> None:
        self.roots = roots
        self._encoder = encoder  # makes each file's encoder (--to)
        self.sink = sink
        self.state_path = state_path
        self.start_at_end = start_at_end
        self.idle_close = idle_close
        self.rescan_every = rescan_every
        self.commit_every = commit_every
        self._clock = clock
        self._now = now
        self.totals = Totals()
        self.followers: dict[str, FileFollower] = {}
        self._entries: dict[str, str] = {}  # encoded checkpoint marks
        self._last_rescan = -1e18
        self._last_commit = now()
        self._uncommitted = False
        self._first_scan = True
        self._resume: dict[str, cp.FileMark] = {}
        self.log = logs.get()

    # -- start and stop ------------------------------------------------------------

    def start(self) -> None:
        saved = cp.load(self.state_path)
        if saved is not None:
            if self.sink.path is not None and saved.output_path not in (None, str(self.sink.path)):
                self.log.warning(
                    "checkpoint was written for another output; offsets kept",
                    path=str(self.state_path),
                    output=saved.output_path,
                )
            if saved.output_path == (str(self.sink.path) if self.sink.path else None):
                self.sink.cut_back(saved.output_length)
            self._resume = dict(saved.files)
            self._first_scan = False
        self.tick(rescan=True)

    def stop(self) -> None:
        """Finish the round in hand, flush, checkpoint; open runs stay open."""
        self._commit(force=True)
        for follower in self.followers.values():
            follower.close_fd()
        self.sink.close()

    # -- one round ---------------------------------------------------------------------

    def tick(self, changed: set[str] | None = None, rescan: bool = False) -> int:
        """One round of work; returns how many lines it wrote."""
        now = self._now()
        if changed and any(p not in self.followers and os.path.isdir(p) for p in changed):
            rescan = True  # a new folder (a new project, a subagents/ dir): look inside
        if rescan or now - self._last_rescan >= self.rescan_every:
            self._rescan()
            self._last_rescan = now
            targets = list(self.followers)
        elif changed:
            targets = [p for p in changed if p in self.followers]
            for path in changed:
                if path not in self.followers and self._wanted(path):
                    self._add(path, new=True)
                    targets.append(path)
        else:
            targets = []  # a quiet round: idle checks only; rescans catch missed events
        written = 0
        for path in targets:
            follower = self.followers.get(path)
            if follower is not None:
                written += self._poll(follower)
        written += self._close_idle(now)
        self._commit()
        return written

    def _poll(self, follower: FileFollower) -> int:
        change = follower.poll()
        if change.kind == "ok":
            return self._flush(follower)
        if change.kind == "gone":
            follower.close_runs()
            n = self._flush(follower)
            self.log.info("file gone; forgotten after its last lines", path=follower.path)
            self._forget(follower.path)
            return n
        # truncated or replaced: what was read stands; the file is followed anew
        follower.close_runs()
        n = self._flush(follower)
        follower.close_fd()
        self.log.warning(f"file {change.kind}; following it from its start", path=follower.path)
        self._forget(follower.path)
        fresh = self._add(follower.path, new=True)
        return n + self._poll(fresh) if fresh is not None else n

    def _flush(self, follower: FileFollower) -> int:
        lines = follower.out
        if not lines:
            return 0
        self.sink.write(lines)
        n = len(lines)
        lines.clear()
        self._uncommitted = True
        return n

    def _close_idle(self, now: float) -> int:
        written = 0
        for follower in [f for f in self.followers.values() if f.fd is not None]:
            # Only followers that read lately hold a descriptor: few, whatever the total.
            if self.idle_close > 0 and follower.run_open:
                if now - follower.last_data >= self.idle_close:
                    follower.close_runs()
                    written += self._flush(follower)
                    self.log.info("run idle; closed as at the end of a file", path=follower.path)
                continue  # keep the descriptor while a run is open
            if now - follower.last_data >= FD_IDLE_SECONDS:
                follower.close_fd()
        return written

    # -- files -----------------------------------------------------------------------------

    def _wanted(self, path: str) -> bool:
        p = Path(path)
        return p.suffix == ".jsonl" and p.name != "journal.jsonl" and "tool-results" not in p.parts

    def _rescan(self) -> None:
        seen: set[str] = set()
        for root in self.roots:
            seen.update(walk_paths(str(root)))
        for path in sorted(seen - set(self.followers)):
            self._add(path, new=not self._first_scan)
        self._first_scan = False

    def _add(self, path: str, new: bool) -> FileFollower | None:
        follower = FileFollower(path, self.totals, self._clock, self._now, self._encoder)
        mark = self._resume.pop(path, None)
        if mark is not None and follower.resume(mark):
            state = "resumed"
        elif mark is not None:
            state = "changed since the checkpoint; from its start"
        elif self.start_at_end and not new:
            follower.skip_to_end()
            state = "from its end"
        else:
            state = "from its start"
        self.followers[path] = follower
        self.log.info(f"file discovered ({state})", path=path)
        return follower

    def _forget(self, path: str) -> None:
        follower = self.followers.pop(path, None)
        if follower is not None:
            follower.close_fd()
        self._entries.pop(path, None)
        self._uncommitted = True

    # -- checkpoints ---------------------------------------------------------------------

    def _commit(self, force: bool = False) -> None:
        now = self._now()
        if not force:
            if now - self._last_commit < self.commit_every:
                return
            if not self._uncommitted and not any(f.dirty for f in self.followers.values()):
                return
        self.sink.sync()
        for path, follower in self.followers.items():
            if follower.dirty or path not in self._entries:
                self._entries[path] = cp.encode_mark(follower.mark())
                follower.dirty = False
        checkpoint = cp.Checkpoint(
            str(self.sink.path) if self.sink.path else None, self.sink.length
        )
        cp.save(self.state_path, checkpoint, self._entries)
        self._last_commit = now
        self._uncommitted = False

    # -- the loop ---------------------------------------------------------------------------

    def run(self, stop: Any) -> None:
        """Wait for file events (or a quiet second) and do a round, until ``stop``."""
        import watchfiles

        watch_roots = [str(r) for r in self.roots if r.is_dir()]
        if not watch_roots:
            while not stop.is_set():
                stop.wait(1.0)
                self.tick()
            return
        for changes in watchfiles.watch(
            *watch_roots,
            watch_filter=None,
            debounce=50,
            step=10,
            rust_timeout=1000,
            yield_on_timeout=True,
            stop_event=stop,
            raise_interrupt=False,
        ):
            if stop.is_set():
                break
            changed = {path for _, path in changes}
            self.tick(changed or None)
