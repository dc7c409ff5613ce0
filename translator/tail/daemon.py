"""The tail daemon: every session file under the watched folders, into one stream.

``tick()`` does one round of work and is kept apart from ``run()``, the loop that
waits for something to happen, so tests drive the daemon without sleeping. A round:

1. take the lines live streams handed over (:mod:`translator.tail.streams`): claims
   come first, before the transcripts they silence (:mod:`translator.tail.claims`);
2. find new files (a full rescan every ``rescan_every`` seconds, since file events
   alone get missed now and then) and poll the ones that changed;
3. write the lines they made to the output, and flush, then offer them to every
   subscriber (who may lose some; the output never does);
4. end runs idle for ``idle_close`` seconds, as batch conversion does at EOF;
5. every ``commit_every`` seconds (and on shutdown): fsync the output, then write
   the checkpoint — never before the output it covers.

Everything here runs on one thread; the watcher and the socket threads only hand
over data and call ``wake()``.

Exactly once for ``--output FILE``: the checkpoint records the output's length, and
a restart cuts the file back to it before going on (the lines after it are made
again, byte for byte, from the checkpointed state). A checkpoint exists before the
first line is written (it records the output's length at start), and none is ever
written ahead of what the output holds whole: a write that fails (disk full) is cut
back, held and retried with backoff, and nothing more is read meanwhile. For
stdout, at least once. docs/live.md states the guarantees case by case.
"""

from __future__ import annotations

import contextlib
import functools
import os
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamv1.translator import logs
from streamv1.translator.model.events import JSON
from streamv1.translator.output.shapes import Encoder
from streamv1.translator.progress import ONE_FILE_SHOWN
from streamv1.translator.reading.discover import is_transcript, stays_inside, walk_paths
from streamv1.translator.reading.sources import (
    ended_by,
    input_clock,
    is_main_file,
    open_regular,
    session_of,
    session_place,
)
from streamv1.translator.state import StateError, load
from streamv1.translator.tail import checkpoint as cp
from streamv1.translator.tail.claims import Claims, Counters, TranscriptGate
from streamv1.translator.tail.descriptors import Descriptors, fd_budget
from streamv1.translator.tail.follower import FileFollower, NoDescriptors, Unfollowable
from streamv1.translator.tail.output import (
    Backoff,
    OutputBusy,
    OutputClosed,
    OutputFailed,
    OutputSink,
)
from streamv1.translator.tail.streams import LiveStreams
from streamv1.translator.tail.watching import FileEvents, Sweep, Unwatched
from streamv1.translator.timefmt import now_ts
from streamv1.translator.translate.select import RunSelection
from streamv1.translator.translate.session import Part, SessionMerge
from streamv1.translator.translate.translation import InputError, Totals
from streamv1.translator.views.ledger import Filter

if TYPE_CHECKING:
    from streamv1.translator.progress import ProgressLine


#: How long, live, a file's lines past its call spawning a nested actor wait for
#: the actor's own file to begin (translator.translate.session: the actor's task_started
#: belongs before them, where batch conversion puts it by time). The agents write
#: that file as the actor begins, so it is seldom waited for at all.
ACTOR_WAIT = 5.0


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
        clock: Callable[[], str] | None = None,
        now: Callable[[], float] = time.monotonic,
        encoder: Callable[[], Encoder] | None = None,
        redact: bool = True,
        ingest_socket: Path | None = None,
        stats_every: float = 60.0,
        max_fds: int | None = None,
        follow_symlinks: bool = False,
        selection: Filter | None = None,
        catch_up_view: Callable[[int, int], ProgressLine] | None = None,
    ) -> None:
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
        #: More counters for ``status`` (the publisher's), read on any thread.
        self.more_status: Callable[[], dict[str, Any]] | None = None
        self.roots = roots
        self.follow_symlinks = follow_symlinks
        self._encoder = encoder  # makes each file's encoder (--to)
        self._redact = redact  # --no-redact: False
        #: --since/--until/--project/--agent/--session: the runs written (whole runs,
        #: each file's decisions checkpointed in its translation's extra).
        self.selection = selection
        #: For a person at a terminal: makes the start-up catch-up's progress line
        #: (files, bytes behind), shown while ``start`` reads what the files hold.
        self.catch_up_view = catch_up_view
        self._catch_up: ProgressLine | None = None
        self._caught = [0, 0]  # files, bytes read in the catch-up
        self._read_from = self._poll_from = 0  # the follower in hand: counted to, began at
        self.sink = sink
        self.state_path = state_path
        self.lock = cp.StateLock(state_path)
        self.store = cp.Store(state_path)
        sink.on_fresh_start = self._fresh_start
        self.start_at_end = start_at_end
        self.idle_close = idle_close
        self.rescan_every = rescan_every
        self.commit_every = commit_every
        #: The time for lines whose source has none: given (tests, --now), else each
        #: file's own (sources.input_clock), as convert derives it; the clock for
        #: the live streams.
        self._clock = clock
        self._now = now
        clock = clock if clock is not None else now_ts
        self.totals = Totals()
        self.followers: dict[str, FileFollower] = {}
        #: Checkpointed files no longer followed (deleted, moved): their rows go at
        #: the next commit.
        self._gone: set[str] = set()
        self._last_rescan = -1e18
        self._sweep = Sweep(now())
        self._last_commit = now()
        self._uncommitted = False
        self._first_scan = True
        self._resume: dict[str, cp.FileMark] = {}
        self._deferred: dict[str, bool] = {}  # path → new: to add when descriptors free up
        self._repoll: set[str] = set()  # polls that found no descriptor: next round
        self._blocked: bytes | None = None  # output not yet written (the write failed)
        self._retry = Backoff()
        self.failed = False  # stopped with output unwritten: exit non-zero
        self.closed = False  # stdout's reader went away: stop, nothing more is written
        self._said_output_inside = False
        self._stop: Any = None  # the run loop's stop event (start): long reads heed it
        self._by_inode: dict[int, str] = {}  # inode → followed path (a move keeps it)
        #: This round's walk for files gone from their paths (inode → a path not
        #: followed), made when the first such file has no descriptor to ask.
        self._unfollowed: dict[int, str] | None = None
        #: Files no source could tell the session of before their first line was
        #: complete: asked again when it is, before that line is read.
        self._unjoined: set[str] = set()
        self._resume_by_inode: dict[int, str] | None = None  # made when first asked
        self._starting = False  # the first scan: discoveries summed up, not one line each
        self._discovered: Counter[str] = Counter()
        self._out_name = str(sink.path) if sink.path is not None else "stdout"
        self._out_base = os.sep + sink.path.name if sink.path is not None else ""
        self._output_dev = os.stat(sink.path).st_dev if sink.path is not None else -1
        # A subagent's run ends when its parent's tool_result arrives: the tool_use
        # ids and agent ids the parents answered, and which follower runs which.
        self._answered: set[tuple[str, str]] = set()  # (session, tool_use id)
        self._answered_files: set[str] = set()  # nested actors' files their parents answered
        self._agent_runs: dict[tuple[str, str], str] = {}  # (session, tool_use) → agent file
        # One session, one stream: the files of a session (a main file and its
        # nested actors') are framed by the main file's translation, their records merged
        # in time order (translator.translate.session). Made when a second file of a session is
        # followed; key → (the merge, the main file's path). path → its session key.
        self._sessions: dict[str, tuple[SessionMerge, str]] = {}
        self._session_key: dict[str, str] = {}
        self._members: dict[str, set[str]] = {}  # key → its files followed
        self._mains: dict[str, str] = {}  # key → its main file, when followed
        self._deferring = False  # inside a round's reads: sessions framed at its end
        self._due: set[str] = set()
        # Sessions whose merge holds batches (waiting for a spawner, or past a call
        # spawning an actor whose file has not begun): drained again each round. Per
        # session, the spawning calls waited for, and since when.
        self._holding: set[str] = set()
        self._awaited: dict[str, dict[str, float]] = {}
        self._replays: set[str] = set()  # sessions whose files are to be replayed together
        self._resumed_sessions: Counter[str] = Counter()  # checkpointed files a session
        self.log = logs.get()
        self.fds = Descriptors(max_fds if max_fds is not None else fd_budget(), self.log)
        # The live part (ADR-0053): streams in through the socket, one source per session.
        self.counters = Counters()
        self.claims = Claims(self.counters, clock)
        self.ingest_socket = ingest_socket
        self.live = LiveStreams(
            ingest_socket, self.counters, self.claims, clock, encoder, redact, selection
        )
        self._woken = threading.Event()
        self.events = FileEvents([str(r) for r in roots], self.log, self.wake)
        self.unwatched = Unwatched(self.log)
        self._reopen = False  # SIGHUP: reopen the output at the next round
        self.stats_every = stats_every
        self._last_stats = now()
        self._born = now()

    # -- start and stop ------------------------------------------------------------

    def start(self, stop: Any = None) -> None:
        """Take the state file, start watching (when ``stop`` is given: the loop of
        ``run`` will follow), make the output agree with the checkpoint, then scan.

        Watching starts before the first scan, so a write during the scan is an
        event, not something the next rescan finds 30 s later."""
        if not self.lock.held:
            self.lock.acquire()
        self._stop = stop
        if stop is not None:
            self._start_watching(stop)
        saved = self.store.load()
        if saved is None:
            if self.sink.length:
                self.log.warning(
                    "no checkpoint, but the output holds lines already; every file is read "
                    "from its start (lines may repeat)",
                    path=self._out_name,
                    state=str(self.state_path),
                )
            # Before the first line: the length a crash from now on is cut back to.
            try:
                self._save(scanned=False)
            except OSError as exc:
                raise cp.CheckpointError(
                    f"{self.state_path}: cannot write the first checkpoint ({exc.strerror or exc})"
                ) from exc
        else:
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
                        self.log.warning(doubt, path=self._out_name)
            elif self.sink.path is not None:
                described = False
            self.claims.restore(saved.claims)  # floors and cuts: runs a stream left
            if not described:
                # Never a line into an output the last checkpoint does not describe
                # (the model test: a new file at the path, written into and then
                # killed before a checkpoint named it, kept those lines and got
                # them again): this file, at its length now, is named first.
                try:
                    self._save(scanned=saved.scanned)
                except OSError as exc:
                    raise cp.CheckpointError(
                        f"{self.state_path}: cannot write a checkpoint ({exc.strerror or exc})"
                    ) from exc
            self._resume = dict(saved.files)
            self._resumed_sessions = Counter(
                k for p in self._resume if (k := session_of(p)) is not None
            )
            self._first_scan = not saved.scanned
        self.listen()
        self._starting = True
        try:
            self._catch_up = self._catch_up_line()
            self.tick(rescan=True)
        finally:
            self._starting = False
            if self._catch_up is not None:
                self._catch_up.close(*self._caught)
                self._catch_up = None
        if self._discovered:
            self.log.info(
                "files discovered",
                files=sum(self._discovered.values()),
                **{k.replace(" ", "_"): n for k, n in sorted(self._discovered.items())},
            )
        self._close_vanished()
        # Caught up: a file whose run is closed gives its descriptor back now, not in
        # FD_IDLE_SECONDS (a user's 10,000 finished sessions held 10,000 descriptors,
        # and every quiet round looked at each); the next change opens it again.
        for follower in list(self.fds.holding):
            if not follower.run_open:
                self.fds.give_back(follower)
        self._commit(force=True)

    def _catch_up_line(self) -> ProgressLine | None:
        """The catch-up's progress line, when one is wanted and there is more to
        read than a glance (more than one file, or a large one): what the files
        hold past their checkpoints (``--from end``: nothing, for a new file)."""
        if self.catch_up_view is None:
            return None
        files = behind = 0
        for root in self.roots:
            for path in walk_paths(str(root), self.follow_symlinks) if root.is_dir() else ():
                try:
                    size = os.stat(path).st_size
                except OSError:
                    continue
                mark = self._resume.get(path)
                done = mark.offset if mark is not None else size if self.start_at_end else 0
                if size > done:
                    files, behind = files + 1, behind + size - done
        if files <= 1 and behind <= ONE_FILE_SHOWN:
            return None
        self._caught = [0, 0]
        return self.catch_up_view(files, behind)

    def _caught_up(self, follower: FileFollower, whole: bool) -> None:
        """The catch-up's progress: what was read of the follower in hand."""
        assert self._catch_up is not None
        read = max(0, follower.offset - self._read_from)
        self._read_from = follower.offset
        self._caught[0] += whole and follower.offset > self._poll_from
        self._caught[1] += read
        self._catch_up.update(*self._caught)

    def listen(self) -> None:
        """Open the socket (if asked for), before anything else is touched: a
        second daemon for the same job stops here (OSError), its state untouched."""
        self.live.listen(self.wake, self.status)

    def stop(self) -> None:
        """Finish the round in hand, flush, checkpoint; open transcript runs stay
        open (a restart goes on with them). A live stream's run is closed here, as
        at the stream's end: no claim outlives the daemon. Output that cannot be
        written is not checkpointed past: ``failed`` is set, the exit is non-zero,
        and a restart (systemd's) goes on from the last good checkpoint."""
        self.live.end_all()
        self._drain_streams()
        self.live.close()
        if self.closed:
            # stdout is at least once: no checkpoint past what its reader took.
            for follower in self.followers.values():
                follower.close_fd()
            self.store.close()
            self.lock.release()
            return
        if self._blocked is not None:
            self._retry.now()
            self._unblock(self._now())
        for follower in self.followers.values():
            self._flush(follower)  # nothing made may wait past the last checkpoint
        if self.failed:
            pass  # said when it failed; the last checkpoint stands
        elif self._blocked is not None:
            self.failed = True
            self.log.error(
                "output still not writable; stopping without a checkpoint past what it "
                "holds (a restart goes on from there)",
                path=self._out_name,
                held_bytes=len(self._blocked),
            )
        else:
            with contextlib.suppress(OutputFailed):  # said where it happened
                self._commit(force=True)
        for follower in self.followers.values():
            follower.close_fd()
        self.sink.close()
        self.store.close()
        self.lock.release()

    def wake(self) -> None:
        """Any thread: there is work (stream lines, file events, a stop)."""
        self._woken.set()

    def request_reopen(self) -> None:
        """Any thread (SIGHUP): reopen the output at the next round."""
        self._reopen = True
        self.wake()

    def reopen_output(self) -> None:
        """Log rotation: checkpoint what the old file holds, open the path anew
        (logrotate renamed the old one away), checkpoint the new file's identity.
        Exactly once holds across it: a crash in between finds the checkpoint of
        one file or the other, each describing the file it names."""
        self._reopen = False
        if self.sink.path is None or self._blocked is not None:
            return
        self._commit(force=True)
        try:
            self.sink.reopen()
        except (OutputBusy, OSError) as exc:
            self.log.error(
                "output not reopened; writing on to the file it had",
                path=self._out_name,
                reason=str(exc),
            )
            return
        self._commit(force=True)
        self.log.info("output reopened", path=self._out_name)

    # -- one round ---------------------------------------------------------------------

    def tick(self, changed: set[str] | None = None, rescan: bool = False) -> int:
        """One round of work (the module's docstring lists the steps); returns how
        many lines it wrote."""
        now = self._now()
        self._unfollowed = None
        if self._blocked is not None and not self._unblock(now):
            return 0  # nothing is read while the output cannot take it
        if self.sink.moved():
            # Deleted or renamed away since the last round: the old file's lines are
            # checkpointed before the first line goes to a new one (exactly once
            # across it, as for SIGHUP); _write catches a move within the round.
            self.log.warning(
                "output deleted or replaced while running; writing on into a new file at its path",
                path=self._out_name,
            )
            self.reopen_output()
        written = self._drain_streams()  # first: a claim must be in before its transcript
        targets = self._targets(now, changed, rescan)
        written += self._read_round(targets)
        written += self._end_answered_actors()
        written += self._close_idle(now)
        self._commit()
        if self.stats_every > 0 and now - self._last_stats >= self.stats_every:
            self._last_stats = now
            self.log.info("counters", **_flat(self.status()))
        return written

    def _targets(self, now: float, changed: set[str] | None, rescan: bool) -> list[str]:
        """The files to read this round, in order: new files first (one of a session
        followed already joins it before that session's lines of this round are
        framed: a subagent's file, appearing with its parent's lines that follow
        it), then the changed ones, what a rescan found, a share of every file
        (the sweep), the unwatched folders' files, the polls that found no
        descriptor last round, and every other file of the sessions among them."""
        # A new folder (a new project, a folder of nested actors) is looked into at once: its
        # files may have been written before its watch was in place.
        new_dirs = (
            sorted(p for p in changed if p not in self.followers and os.path.isdir(p))
            if changed
            else []
        )
        for path, new in list(self._deferred.items()):
            self._deferred.pop(path)
            if path not in self.followers:
                self._add(path, new)
        found: list[str] = []  # files a rescan of this round began to follow
        if rescan or now - self._last_rescan >= self.rescan_every:
            found = self._rescan()
            self._last_rescan = now
        elif new_dirs:
            found = self._rescan(new_dirs)
        chosen: dict[str, None]
        if rescan:
            chosen = dict.fromkeys(self.followers)
            self._sweep.restart(now)
        else:
            added = [
                path
                for path in sorted(changed or ())
                if path not in self.followers
                and self._wanted(path)
                and self._add(path, new=True) is not None
            ]
            chosen = dict.fromkeys(
                [p for p in changed or () if p in self.followers and p not in added] + added
            )
            chosen.update(dict.fromkeys(found))
            chosen.update(dict.fromkeys(self._sweep.take(now, self.followers, self.rescan_every)))
        if self._replays:
            self._replay_sessions()  # before any of their files reads on
        chosen.update(dict.fromkeys(self._poll_unwatched(now)))
        chosen.update(dict.fromkeys(self._repoll))
        self._repoll.clear()
        if self._sessions and chosen:
            # Every file of a session whose file changed is read in the same round:
            # its records are then merged with all that is on disk by now (a
            # subagent's last lines, written before its parent's answer to it).
            chosen.update(
                dict.fromkeys(
                    [
                        m
                        for t in list(chosen)
                        if (k := self._session_key.get(t)) in self._sessions
                        for m in sorted(self._members.get(k, ()))
                    ]
                )
            )
        return list(chosen)

    def _read_round(self, targets: list[str]) -> int:
        """A round's reads first, then each session's records framed in time order
        across its files (what one file brought before another's earlier line)."""
        written = 0
        self._deferring = True
        try:
            for path in targets:
                if self._stop is not None and self._stop.is_set():
                    break  # a stop asked for: the rest are read after the restart
                follower = self.followers.get(path)
                if follower is not None:
                    written += self._poll(follower)
        finally:
            self._deferring = False
        for key in sorted(self._due | self._holding):
            written += self._frame_session(key)
        self._due.clear()
        return written

    def _poll(self, follower: FileFollower) -> int:
        if follower.broken is not None:
            if follower.retry_sig is None or _sig(follower.path) == follower.retry_sig:
                return 0  # left alone until its permissions or kind change
            follower.broken = None
            if not follower.started:  # it never began: begin now, from its mark if any
                self.followers.pop(follower.path, None)
                fresh = self._add(follower.path, follower.new)
                return self._poll(fresh) if fresh is not None else 0
        if follower.path in self._unjoined and _has_a_line(follower.path):
            self._unjoined.discard(follower.path)  # before its first line is read
            self._join_session(follower.path, follower)
        self._read_from = self._poll_from = follower.offset
        try:
            change = follower.poll()
        except InputError as exc:
            return self._unreadable(follower, str(exc), retry=False)
        except Unfollowable as exc:
            return self._unreadable(follower, str(exc), retry=True)
        except NoDescriptors:
            try:
                if not self.fds.out_of_descriptors(self.followers, keep=follower):
                    raise
                change = follower.poll()
            except NoDescriptors:
                self._repoll.add(follower.path)  # the next round tries it again
                return 0
        if self._catch_up is not None:
            self._caught_up(follower, whole=True)
        if change.kind == "ok":
            self.fds.opened(follower)
            if follower.ino and self._by_inode.get(follower.ino) != follower.path:
                self._by_inode[follower.ino] = follower.path
            return self._flush(follower)
        if change.kind == "gone":
            moved = self._moved_from(follower)
            if moved is not None:
                return self._poll(moved)
            follower.close_runs()
            n = self._flush(follower)
            self.log.info("file gone; forgotten after its last lines", path=follower.path)
            self._forget(follower.path)
            return n
        # truncated or replaced: what was read stands; the file is followed anew
        follower.close_runs()
        n = self._flush(follower)
        follower.close_fd()
        self.log.warning(
            "file truncated or replaced; following it from its start",
            path=follower.path,
            change=change.kind,
        )
        self._forget(follower.path)
        fresh = self._add(follower.path, new=True)
        return n + self._poll(fresh) if fresh is not None else n

    def _unreadable(self, follower: FileFollower, reason: str, retry: bool) -> int:
        """A file no source reads (as ``convert`` would refuse it), or one we may not
        read (permissions, a FIFO): said once, then left alone; what it made before
        stands. The second kind is tried again when its mode, owner or kind change."""
        follower.broken = reason
        follower.retry_sig = _sig(follower.path) if retry else None
        follower.close_fd()
        follower.out.clear()
        self.log.error("this file is not followed", path=follower.path, reason=reason)
        return 0

    def _flush(self, follower: FileFollower) -> int:
        n = self._flush_lines(follower)
        key = self._session_key.get(follower.path)
        if key is not None and key in self._sessions:
            if self._deferring:
                self._due.add(key)
            else:
                n += self._frame_session(key)
        return n

    def _read_progress(self, follower: FileFollower) -> bool:
        """A chunk of a long read is in (a catch-up of a big file): its lines go
        out now, not when the file is read to its end (#23 item 2: 735 MiB RSS for a
        72 MB file), a checkpoint is written when one is due (a restart goes on
        from inside the file), and a stop asked for ends the read here (#23 item 3:
        SIGTERM waited 7-10 s for a 60-72 MB file). False: stop reading."""
        if self._stop is not None and self._stop.is_set():
            return False
        if self._blocked is not None:
            return False  # the output cannot take more: read no further
        if self._catch_up is not None:
            self._caught_up(follower, whole=False)
        key = self._session_key.get(follower.path)
        if key is not None and key in self._sessions:
            self._frame_session(key)  # live: what each file has said by now
        self._flush_lines(follower)
        if self._now() - self._last_commit >= max(self.commit_every, 1.0):
            self._commit(force=True)
        return self._blocked is None

    def _flush_lines(self, follower: FileFollower | None) -> int:
        """The lines a follower made that are not written yet: written now."""
        if follower is None or not follower.out:
            return 0
        n = self._write(follower.out)
        follower.out.clear()
        return n

    def _frame_session(self, key: str) -> int:
        """What a session's files handed in, framed by its main file's translation
        (time order across them), written."""
        found = self._sessions.get(key)
        if found is None:
            return 0
        merge, main = found
        if not merge.pending:
            self._holding.discard(key)
            self._awaited.pop(key, None)
            return 0
        merge.drain(live=True, patient=functools.partial(self._patient, key, self._now()))
        if merge.pending:
            self._holding.add(key)
        else:
            self._holding.discard(key)
            self._awaited.pop(key, None)  # nothing waits: a later spawn's wait starts anew
        # Every file of the session has a new mark too, not only the one read: a
        # drain frames batches other files handed in and teaches a file that holds
        # its actor's lines its spawner (learn_spawner). Checkpointed as they were
        # before, those lines came again after a restart (the three-agent tail
        # test: a Gemini subagent's six lines twice).
        for part in merge.parts:
            follower = self.followers.get(part.translation.path)
            if follower is not None:
                follower.dirty = True
        owner = self.followers.get(main)
        if owner is None:
            return 0
        owner.dirty = True  # its framer's state moved (lines, or counts only)
        return self._flush_lines(owner)

    def _merge_of(self, key: str, main: str) -> tuple[SessionMerge, str]:
        found = self._sessions.get(key)
        if found is None:
            owner = self.followers[main].translation
            found = (SessionMerge(owner), main)
            self._sessions[key] = found
            owner.extra["session"] = "owner"  # checkpointed: a restart knows it
            self.followers[main].dirty = True
        return found

    def _patient(self, key: str, now: float, part: Part, tool: str) -> bool:
        """Do the lines of ``part`` past its call ``tool``, which spawned an actor
        whose file has not begun, still wait for it? For ``ACTOR_WAIT`` seconds from
        when they were first held, if the file was written lately; a file older
        than that is an archive, whose actors' files would be here by now."""
        awaited = self._awaited.setdefault(key, {})
        since = awaited.get(tool)
        if since is None:
            since = now if _written_lately(part.translation.path, ACTOR_WAIT) else -ACTOR_WAIT
            awaited[tool] = since
            if since == now:
                self.log.debug(
                    "lines wait for a nested actor's file to begin",
                    path=part.translation.path,
                    tool_use_id=tool,
                )
        return now - since < ACTOR_WAIT

    def _join_session(self, path: str, follower: FileFollower) -> None:
        """A file of a session whose main file is followed: its lines are lines of
        that session's runs (a subagent's, inside its parent's)."""
        place = session_place(path)
        if place is None:
            return
        key, is_main = place
        self._session_key[path] = key
        self._members.setdefault(key, set()).add(path)
        if is_main:
            self._mains[key] = path
            if follower.translation.batches is not None:
                self._merge_of(key, path)  # it held batches at its checkpoint: they wait on
            return  # the owner: a merge is made when a second file joins (or a spawn)
        main = self._mains.get(key)
        if main is None:
            # Its main file may just not be followed yet (a walk lists Gemini's
            # chats/<session>/<agent>.jsonl before chats/session-….jsonl): that one
            # first, so this file joins its session, as convert groups them.
            main = self._follow_main(key)
        if main is None or main not in self.followers:
            return  # its main file is not followed: it stands alone, as convert frames it
        found = self._merge_of(key, main)
        found[0].join(follower.translation)
        follower.translation.extra["session"] = "part"
        follower.dirty = True

    def _follow_main(self, key: str) -> str | None:
        """Begin to follow the main file of session ``key`` now, if it is there and
        not followed (by the contract's default, the key is its path without its
        suffix; a source keying otherwise frames its files in the order found)."""
        for suffix in (".jsonl", ".json"):
            path = key + suffix
            if (
                path not in self.followers
                and os.path.isfile(path)
                and self._wanted(path)
                and is_main_file(path, key)
            ):
                self._add(path, new=not self._first_scan)
                return self._mains.get(key)
        return None

    def _replay_sessions(self) -> None:
        """Sessions whose main file's state could not be read: every file of the
        session is read again from its start to its checkpoint, merged into the
        main file's framer, every line framed dropped (the output has them): the
        framer's run (its seq, usage, counts) is rebuilt from all of them. (Two
        actors' lines may have been framed in another order live: the state is the
        same, since it counts lines, sums usage and knows the last message.)"""
        for key in sorted(self._replays):
            main = self._mains.get(key)
            owner = self.followers.get(main) if main is not None else None
            if owner is None:
                continue
            found = self._sessions.get(key)
            if found is None:
                found = (SessionMerge(owner.translation), owner.path)
                self._sessions[key] = found
            merge = found[0]
            owner.translation.extra["session"] = "owner"
            parts = [
                self.followers[p]
                for p in sorted(self._members.get(key, ()))
                if p != owner.path and p in self.followers
            ]
            for part in parts:
                mark = part.pending_replay or part.mark()
                merge.leave(part.translation)
                part.translation = part.fresh_translation()
                part.translation.extra["session"] = "part"
                joined = merge.join(part.translation)
                joined.skip = _skip(mark)
                part.replay_in_session(mark)
            target = owner.pending_replay or owner.mark()
            own = merge.part_of(owner.translation)
            if own is not None:
                own.skip = _skip(target)
            # Each file's first lines, as many as its mark counts, are in the output
            # and dropped; what waited for its spawner then waits again.
            owner.replay_in_session(target, functools.partial(merge.drain, live=True))
            for p in merge.parts:
                p.skip = 0
            self.log.info(
                "session replayed to the checkpoint with its files",
                path=owner.path,
                files=len(parts) + 1,
            )
        self._replays.clear()

    def _leave_session(self, path: str, follower: FileFollower | None) -> None:
        key = self._session_key.pop(path, None)
        if key is None:
            return
        members = self._members.get(key, set())
        members.discard(path)
        if not members:
            self._members.pop(key, None)
        if self._mains.get(key) == path:
            del self._mains[key]
        found = self._sessions.get(key)
        if found is None or follower is None:
            return
        merge, main = found
        if path == main:
            merge.dissolve()
            del self._sessions[key]
            self._holding.discard(key)
            self._awaited.pop(key, None)
        else:
            merge.leave(follower.translation)
        self._flush_lines(self.followers.get(main))

    def _fresh_start(self, ino: int, length: int) -> None:
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

    def _write(self, lines: list[bytes]) -> int:
        """To the output, then to every subscriber (who may lose some; the output never)."""
        data = b"".join(lines)  # once, for the output and every subscriber
        if self._blocked is not None:
            self._blocked += data
            return len(lines)
        if self.sink.moved():
            # Deleted (or renamed away) while running: writing on into the unlinked
            # file lost every later line (#23 item 8). A new file at the path, as a
            # rotation's reopen makes; the next checkpoint names it.
            self.log.warning(
                "output deleted or replaced while running; writing on into a new file at its path",
                path=self._out_name,
            )
            left = self._leaving()
            try:
                self.sink.reopen()
            except (OutputBusy, OSError) as exc:
                if left is not None:
                    os.close(left[2])
                self.log.error(
                    "output not reopened; writing on to the file it had",
                    path=self._out_name,
                    reason=str(exc),
                )
            else:
                if left is not None:
                    self._left.append(left)
                # These lines come after the last checkpoint, which names the old
                # file: the new one is named too before they reach it.
                self._fresh_start(self.sink.ino, self.sink.length or 0)
            self._uncommitted = True
        try:
            self.sink.write(data)
        except BrokenPipeError as exc:
            if self.sink.path is None:
                self.closed = True
                raise OutputClosed(str(exc)) from exc
            raise
        except OSError as exc:
            self._blocked = data
            self._retry.begin(self._now())
            self.log.error(
                "output write failed; holding the lines, reading nothing more, and "
                "trying again with backoff",
                path=self._out_name,
                reason=exc.strerror or str(exc),
                held_bytes=len(data),
            )
            return len(lines)
        self.live.offer(data)
        self._uncommitted = True
        return len(lines)

    def _unblock(self, now: float) -> bool:
        """Try the held write again (when its backoff is up): True once it went out."""
        if self._blocked is None or not self._retry.due(now):
            return self._blocked is None
        data = self._blocked
        try:
            self.sink.write(data)
        except OSError:
            self._retry.failed(now)
            return False
        self._blocked = None
        self.log.info(
            "output writable again; going on", path=self._out_name, written_bytes=len(data)
        )
        self.live.offer(data)
        self._uncommitted = True
        return True

    def _close_idle(self, now: float) -> int:
        """Runs quiet for ``idle_close`` seconds end as at the end of a file; quiet
        files give their descriptors back (:mod:`translator.tail.descriptors`)."""
        written = 0
        for follower in self.fds.to_watch(self.followers):
            if self.idle_close > 0 and follower.run_open:
                if now - self._last_data(follower) >= self.idle_close:
                    follower.close_runs()
                    written += self._flush(follower)
                    self.fds.parked.discard(follower.path)
                    self.log.info("run idle; closed as at the end of a file", path=follower.path)
                continue  # keep the descriptor while a run is open
            self.fds.quiet(follower, now)
        self.fds.trim()
        return written

    def _last_data(self, follower: FileFollower) -> float:
        """When the follower's run last heard of anything: for a session's main
        file, the latest of its files (a subagent working keeps its parent's run
        open)."""
        key = self._session_key.get(follower.path, "")
        found = self._sessions.get(key)
        if found is None or found[1] != follower.path:
            return follower.last_data
        return max(
            [follower.last_data]
            + [f.last_data for p in self._members.get(key, ()) if (f := self.followers.get(p))]
        )

    # -- files -----------------------------------------------------------------------------

    def _wanted(self, path: str) -> bool:
        return not self._is_output(path) and any(
            is_transcript(path, str(root)) and stays_inside(path, str(root), self.follow_symlinks)
            for root in self.roots
        )

    def _is_output(self, path: str) -> bool:
        """The daemon's own output (inside a watched folder: ``tail DIR -o
        DIR/stream.jsonl``) is never an input: read back, it was appended again
        and again until the disk was full (#23 item 9)."""
        own = self._out_name if self.sink.path is not None else None
        if own is None:
            return False
        if path == own:
            return True
        if not path.endswith(self._out_base):
            return False  # (the same file under another folder spelling: same name)
        try:
            st = os.stat(path)
        except OSError:
            return False
        return st.st_ino == self.sink.ino and st.st_dev == self._output_dev

    def _check_watches(self) -> None:
        if self.events.watcher is not None:
            self.unwatched.check(
                [os.path.dirname(p) for p in self.followers] + [str(r) for r in self.roots]
            )

    def _poll_unwatched(self, now: float) -> list[str]:
        """The files of unwatched folders, and new ones there, every FAST_POLL."""
        due = self.unwatched.due(now)
        if not due:
            return []
        folders = set(due)
        targets = [p for p in self.followers if os.path.dirname(p) in folders]
        for folder in due:
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            for name in names:
                path = os.path.join(folder, name)
                if (
                    path not in self.followers
                    and self._wanted(path)
                    and os.path.isfile(path)
                    and self._add(path, new=True) is not None
                ):
                    targets.append(path)
        return targets

    def _rescan(self, folders: list[str] | None = None) -> list[str]:
        """Look for new files: under every root, or (``folders``) only in those.
        Returns the files it began to follow."""
        seen: set[str] = set()
        for root in self.roots:
            if folders is None:
                seen.update(walk_paths(str(root), self.follow_symlinks))
                continue
            for folder in folders:
                seen.update(
                    p
                    for p in walk_paths(str(root), self.follow_symlinks, inside=folder)
                    if self._wanted(p)
                )
        mine = {p for p in seen if self._is_output(p)}
        if mine and not self._said_output_inside:
            self._said_output_inside = True
            self.log.warning(
                "the output is inside a watched folder; it is never read as an input",
                path=self._out_name,
            )
        found = [
            path
            for path in sorted(seen - mine - set(self.followers))
            if self._add(path, new=not self._first_scan) is not None
        ]
        if folders is None:
            self._first_scan = False
            self._check_watches()
        return found

    def _add(self, path: str, new: bool) -> FileFollower | None:
        """Follow ``path``: from its checkpoint, its start, or (``--from end`` at the
        first scan) its end. None when no descriptor could be had (tried again next
        round; nothing about the file is decided until then)."""
        if path in self.followers:
            return self.followers[path]  # (a session's main file, begun for a file of it)
        try:
            return self._follow(path, new)
        except _GoneMeanwhile:
            return None
        except Unfollowable as exc:
            placeholder = self._follower(path)  # its mark, if any, stays for later
            placeholder.started, placeholder.new = False, new
            self.followers[path] = placeholder
            self._unreadable(placeholder, str(exc), retry=True)
            return None
        except NoDescriptors:
            if self.fds.out_of_descriptors(self.followers):
                try:
                    return self._follow(path, new)
                except NoDescriptors:
                    pass
            self._deferred[path] = new
            return None

    def _moved_here(self, path: str) -> FileFollower | None:
        """A file that is one already followed, moved (its folder renamed, or the
        file): the same inode and device, no longer at its old path. Its follower
        goes on at the new path, from where it was (#23 item 6: a renamed project
        folder read every file again from byte 0, every turn twice)."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        old = self._by_inode.get(st.st_ino)
        if old is None or old == path or os.path.exists(old):
            return None
        follower = self.followers.get(old)
        if follower is None or follower.ino != st.st_ino or not follower.is_same_head(path):
            return None
        return self._take_over(follower, path)

    def _moved_from(self, follower: FileFollower) -> FileFollower | None:
        """A followed file found gone may have moved before its new path was seen
        (the model test: a file moved again while the daemon started; it was read
        again from byte 0 at its new path, its lines twice). Where it is now: the
        path its open descriptor has (the kernel follows a rename), else a walk of
        the watched folders for its inode; taken over when the head is the same."""
        found: str | None = None
        if follower.fd is not None:
            with contextlib.suppress(OSError):
                found = os.readlink(f"/proc/self/fd/{follower.fd}")
                if found.endswith(" (deleted)"):
                    return None  # unlinked: gone indeed
        if found is None and follower.ino:
            if self._unfollowed is None:  # one walk a round, however many are gone
                self._unfollowed = {}
                for root in self.roots:
                    for p in walk_paths(str(root), self.follow_symlinks):
                        if p not in self.followers and (ino := _ino(p)):
                            self._unfollowed[ino] = p
            found = self._unfollowed.get(follower.ino)
        if (
            found is None
            or found == follower.path
            or found in self.followers
            or not self._wanted(found)
            or _ino(found) != follower.ino
            or not follower.is_same_head(found)
        ):
            return None
        return self._take_over(follower, found)

    def _take_over(self, follower: FileFollower, path: str) -> FileFollower:
        """``follower``'s file is at ``path`` now: it goes on there, from where it was."""
        old = follower.path
        self.followers.pop(old)
        self._gone.add(old)
        self._rekey_session(old, path)
        follower.path = follower.translation.path = path
        follower.dirty = True
        self._uncommitted = True
        self.followers[path] = follower
        self._by_inode[follower.ino] = path
        self.log.info("file moved; followed on from where it was", path=path, was=old)
        return follower

    def _moved_mark(self, path: str) -> cp.FileMark | None:
        """At start: a checkpointed file moved while the daemon was down (its folder
        renamed): the mark of the same inode whose path is gone."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        if self._resume_by_inode is None:
            self._resume_by_inode = {m.ino: p for p, m in self._resume.items()}
        old = self._resume_by_inode.get(st.st_ino)
        mark = self._resume.get(old) if old is not None else None
        if old is None or mark is None or old == path or os.path.exists(old):
            return None
        self._resume.pop(old)
        self._gone.add(old)
        self._uncommitted = True
        self.log.info(
            "file moved while the daemon was down; followed on from its checkpoint",
            path=path,
            was=old,
        )
        return mark

    def _rekey_session(self, old: str, path: str) -> None:
        """A moved file's place in its session (its folder, and so its key, moved)."""
        key = self._session_key.pop(old, None)
        if key is None:
            return
        new_key = session_of(path) or key
        self._session_key[path] = new_key
        members = self._members.pop(key, set())
        members.discard(old)
        self._members.setdefault(new_key, set()).update({*members, path})
        if self._mains.get(key) == old:
            del self._mains[key]
            self._mains[new_key] = path
        elif key in self._mains and new_key not in self._mains:
            self._mains[new_key] = self._mains.pop(key)
        found = self._sessions.pop(key, None)
        if found is not None:
            merge, main = found
            self._sessions[new_key] = (merge, path if main == old else main)

    def _follow(self, path: str, new: bool) -> FileFollower:
        moved = self._moved_here(path)
        if moved is not None:
            return moved
        follower = self._follower(path)
        mark = self._resume.get(path)
        moved_mark = False
        if mark is None and self._resume:
            mark = self._moved_mark(path)
            moved_mark = mark is not None
        if mark is not None and follower.is_file_of(mark):
            key = session_of(path)
            # A file of a session framed together at the checkpoint (its main file
            # framed the others' lines): if its state cannot be read, the session's
            # files are replayed together (_replay_sessions), so the main file's
            # framer is rebuilt from all of them.
            was = _session_role(mark)
            together = was == "owner" or (key is not None and key in self._replays)
            try:
                state = follower.resume(mark, replay=not together)
            except FileNotFoundError:  # gone between the two looks
                if not moved_mark:
                    # Moved away (its folder renamed while the daemon starts) or
                    # deleted: its mark stays, for its new path to find by inode; the
                    # first scan's end closes it if no path does (_close_vanished).
                    self._resume_by_inode = None
                    raise _GoneMeanwhile(path) from None
                follower = self._follower(path)
                self._close_lost(path, mark)
                state = "gone since the checkpoint"
            except InputError as exc:
                self._unreadable(follower, str(exc), retry=False)
                state = "unreadable"
            if moved_mark:
                follower.dirty = True  # its mark, under its new name
            if follower.pending_replay is not None and key is not None:
                self._replays.add(key)
            elif (
                state.startswith("replayed")
                and was is None
                and key is not None
                and self._resumed_sessions.get(key, 0) > 1
                and _older_release(mark)
            ):
                # Framed by an older release, each file of its session alone: its
                # open runs end at the checkpoint as they were framed; from here on
                # it is one stream with its session's other files.
                follower.close_runs()
            run_key = follower.translation.framer.run_key
            if run_key is not None and run_key[1] is not None:
                self._agent_runs[(run_key[0], run_key[1])] = path  # a subagent's run
            if follower.run_open:
                self.fds.park(follower)  # no descriptor yet: watched for idleness by name
        elif mark is not None and not moved_mark and not os.path.lexists(path):
            self._resume_by_inode = None
            raise _GoneMeanwhile(path)  # as above: moved away since the scan's look
        elif mark is not None:
            self._close_lost(path, mark)
            state = "changed since the checkpoint; its open run closed, from its start"
        elif self.start_at_end and not new:
            follower.skip_to_end()
            state = "from its end"
        else:
            state = "from its start"
        self._resume.pop(path, None)
        self.followers[path] = follower
        if follower.ino:
            self._by_inode[follower.ino] = path
        self._join_session(path, follower)
        if path not in self._session_key and not _has_a_line(path):
            # A source may need the file's first record to tell its session (a
            # nested actor's file naming its parent): asked again once it is there.
            self._unjoined.add(path)
        waiting = follower.translation.batches
        found = self._sessions.get(self._session_key.get(path, ""))
        if waiting is not None and (
            found is None or not any(follower.translation is p.translation for p in found[0].parts)
        ):
            # Checkpointed waiting for a session that is not followed now: framed alone.
            follower.translation.batches = None
            for batch in waiting:
                follower.translation.frame(batch)
        if self._starting:
            # Thousands at a real user's start: one summary line (start), each at debug.
            self._discovered[state.split(";")[0].split(" (")[0]] += 1
            self.log.debug("file discovered", path=path, how=state)
        else:
            self.log.info("file discovered", path=path, how=state)
        self._flush(follower)  # what a replay released (a run held back before)
        return follower

    def _follower(self, path: str) -> FileFollower:
        clock = self._clock if self._clock is not None else input_clock(path, now_ts)
        follower = FileFollower(path, self.totals, clock, self._now, self._encoder, self._redact)
        follower.progress = self._read_progress
        translation = follower.translation
        gate = TranscriptGate(self.claims, translation.extra)
        # Always there, selection or not: runs an earlier start's selection left
        # out stay out to their end, and runs begun before a selection stay in.
        selected = RunSelection(self.selection, translation.extra, written_before=True).lines

        def decorate(line: JSON) -> JSON | list[JSON] | None:
            self._note_line(path, line)
            return selected(gate(line))

        translation.decorate = decorate
        translation.on_spawn = lambda _: self._spawned_in(path)
        return follower

    def _spawned_in(self, path: str) -> None:
        """A main file says it spawned a nested actor whose own file is not followed
        yet: its session's merge is made now, so what follows the spawn waits for
        that file to begin (translator.translate.session)."""
        key = self._session_key.get(path)
        if key is not None and self._mains.get(key) == path:
            self._merge_of(key, path)

    def _close_lost(self, path: str, mark: cp.FileMark) -> None:
        """A file deleted or rewritten while the daemon was down: its checkpointed run
        is closed as a live deletion closes it (from the state; the file is not read)."""
        self._resume.pop(path, None)
        self._gone.add(path)
        self._uncommitted = True
        if mark.state is None:
            self.log.warning(
                "file gone or changed since a checkpoint of an older release; its open run "
                "cannot be closed (no state this release reads)",
                path=path,
            )
            return
        lost = self._follower(path)
        try:
            lost.translation.restore(mark.state)
        except ValueError as exc:
            self.log.warning(
                "file gone or changed since the checkpoint; its open run cannot be closed",
                path=path,
                reason=str(exc),
            )
            return
        lost.close_runs()
        if self._flush(lost):
            self.log.info(
                "file gone or changed since the checkpoint; its open run closed", path=path
            )

    def _close_vanished(self) -> None:
        """After the first scan: checkpointed files no scan found are gone, if the
        folder they were under is there (a folder not there yet, or not mounted, keeps
        its files' marks until it is)."""
        left = {
            p: m
            for p, m in self._resume.items()
            if p not in self.followers and p not in self._deferred
        }
        lost = {m.ino: p for p, m in left.items() if m.ino and not os.path.lexists(p)}
        if lost:
            # Moved while the daemon started (after the scan listed its folder): at
            # its new path, it goes on from its mark (_moved_mark), not from byte 0.
            for root in self.roots:
                for p in walk_paths(str(root), self.follow_symlinks):
                    if p not in self.followers and _ino(p) in lost and self._wanted(p):
                        self._add(p, new=False)
            left = {
                p: m
                for p, m in self._resume.items()
                if p not in self.followers and p not in self._deferred
            }
        for root in self.roots:
            mine = [p for p in self._resume if p.startswith(os.path.join(root, ""))]
            if mine and not any(os.path.lexists(p) for p in mine) and _empty(root):
                # Not one of its checkpointed files is there, and nothing else: the
                # folder is missing, or an empty mount point (not mounted yet).
                self.log.warning(
                    "none of the checkpointed files under this folder is "
                    "there; keeping their marks until they are",
                    path=str(root),
                    files=len(mine),
                )
                for p in mine:
                    left.pop(p, None)
        for path, mark in left.items():
            if not os.path.lexists(path) or not self._wanted(path):
                self._close_lost(path, mark)

    def _forget(self, path: str) -> None:
        self._unjoined.discard(path)
        self._leave_session(path, self.followers.get(path))
        follower = self.followers.pop(path, None)
        if follower is not None:
            follower.close_fd()
            if self._by_inode.get(follower.ino) == path:
                del self._by_inode[follower.ino]
        for tool in [t for t, p in self._agent_runs.items() if p == path]:
            del self._agent_runs[tool]
        self._gone.add(path)
        self._uncommitted = True

    # -- nested actors end with their parent's answer ----------------------------------------

    def _note_line(self, path: str, line: JSON) -> None:
        """Every transcript line, before the gate: which follower runs a subagent (its
        init names the spawning tool_use), and which tool_uses a parent answered."""
        kind = line.get("type")
        parent = line.get("parent_tool_use_id")
        session = line.get("session_id")
        if not isinstance(session, str):
            return
        if kind == "system" and isinstance(parent, str) and line.get("subtype") == "init":
            follower = self.followers.get(path)
            if follower is None or follower.translation.framer.run_key == (session, parent):
                self._agent_runs[(session, parent)] = path  # its file's run, not an inline one
        elif kind == "user" and parent is None:
            # Also the actor whose run is not linked yet (its source names its file
            # from the line): ending it lets it find its spawner at last.
            self._answered_files.update(ended_by(path, line))
            content = (line.get("message") or {}).get("content")
            for block in content if isinstance(content, list) and self._agent_runs else ():
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    tool = block.get("tool_use_id")
                    if isinstance(tool, str) and (session, tool) in self._agent_runs:
                        self._answered.add((session, tool))

    def _end_answered_actors(self) -> int:
        """End each subagent run whose spawning tool_use its parent answered (what is
        left in its file read first), as batch conversion ends it at the file's end."""
        # (agent file, the run it must be: session and spawning tool_use, if known)
        ends: list[tuple[str, tuple[str, str] | None]] = []
        for key in self._answered:
            spawned = self._agent_runs.pop(key, None)
            if spawned is not None:
                ends.append((spawned, key))
        for candidate in sorted(self._answered_files):
            if candidate in self.followers and all(candidate != p for p, _ in ends):
                ends.append((candidate, None))
        self._answered.clear()
        self._answered_files.clear()
        written = 0
        for path, spawner in ends:
            agent_follower = self.followers.get(path)
            if agent_follower is None:
                continue
            written += self._poll(agent_follower)  # what its file still holds comes first
            follower = self.followers.get(path)
            if follower is None or spawner not in (None, follower.translation.framer.run_key):
                continue
            follower.close_runs()
            written += self._flush(follower)
            self.log.info(
                "subagent run ended by its parent's tool_result",
                path=path,
                **({"tool_use_id": spawner[1]} if spawner else {}),
            )
        return written

    # -- checkpoints ---------------------------------------------------------------------

    def _commit(self, force: bool = False) -> None:
        now = self._now()
        if self._blocked is not None:
            return  # never a checkpoint ahead of what the output holds
        if not force:
            if now - self._last_commit < self.commit_every:
                return
            if not self._uncommitted and not any(f.dirty for f in self.followers.values()):
                return
        try:
            self.sink.sync()
        except OSError as exc:
            # After a failed fsync the kernel may have dropped the pages: no later
            # fsync can vouch for them. Stop; the restart cuts back to the last good one.
            self.failed = True
            self.log.error(
                "output fsync failed; stopping without a checkpoint past it",
                path=self._out_name,
                reason=exc.strerror or str(exc),
            )
            raise OutputFailed(str(exc)) from exc
        # Only what changed is written: the marks of the files read since the last
        # commit, the rows of files gone (a checkpointed file not followed yet keeps
        # its row as it is).
        changed = {}
        for path, follower in self.followers.items():
            if follower.dirty and follower.started:
                changed[path] = cp.encode_mark(follower.mark())
        try:
            self._save(scanned=not self._first_scan, changed=changed)
        except OSError as exc:
            self.log.error(
                "checkpoint not written; tried again at the next commit",
                path=str(self.state_path),
                reason=exc.strerror or str(exc),
            )
            return
        for path in changed:
            self.followers[path].dirty = False
        self._gone.clear()
        self._last_commit = now
        self._uncommitted = False

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
                path=self._out_name,
                reason=exc.strerror or str(exc),
            )
            return None

    # -- live streams --------------------------------------------------------------------

    def _drain_streams(self) -> int:
        lines = self.live.drain()
        if not lines:
            return 0
        n = self._write(lines)
        lines.clear()
        return n

    def status(self) -> dict[str, Any]:
        """The counters (any thread: only copies are read)."""
        streams = list(self.live.streams)
        subs = self.live.subscribers()
        out = self.counters.as_json()
        out["stream_dropped"] += sum(s.dropped + s.relay_dropped for s in streams)
        out["subscriber_dropped"] += sum(s.dropped for s in subs)
        out.update(
            streams_active=len(streams),
            subscribers=len(subs),
            subscriber_drops={str(s.number): s.dropped for s in subs},
            claims=dict(self.claims.holder),
            floors=len(self.claims.floors),
            files=len(self.followers),
            socket_refused=self.live.refused,
            fd_exhausted=self.fds.exhausted,
            watch_errors=self.events.errors,
            unwatched_folders=len(self.unwatched.folders),
            output_held_bytes=len(self._blocked or b""),
            # What the files hold past what was read, as of each one's last look.
            behind_bytes=sum(max(0, f.seen_size - f.offset) for f in list(self.followers.values())),
            output=self._out_name,
            last_error=logs.last_error,
            uptime_s=round(self._now() - self._born, 1),
        )
        if self.more_status is not None:
            out.update(self.more_status())
        return out

    # -- the loop ---------------------------------------------------------------------------

    def _start_watching(self, stop: Any) -> None:
        self.events.start(stop)

    def run(self, stop: Any) -> None:
        """Rounds of work, each when something happened (a file event, stream lines,
        a stop) or after a quiet second, until ``stop``."""
        self._start_watching(stop)
        while not stop.is_set():
            self._woken.wait(self._quiet_wait())
            self._woken.clear()
            changed = self.events.changed()
            if stop.is_set():
                break
            if self._reopen:
                self.reopen_output()
            try:
                self.tick(changed or None)
            except (OutputFailed, OutputClosed):
                return
            if self.sink.reader_gone():
                self.closed = True  # stdout's reader went away while all was quiet
                return

    def _quiet_wait(self) -> float:
        """How long a quiet round may wait: a second, or less when written lines wait
        for their checkpoint (what ``tail --publish`` sends, and what a crash keeps)."""
        if self._holding and self._blocked is None:
            return 0.25  # a session's lines wait for a file to begin, or for a while
        if not self._uncommitted or self._blocked is not None:
            return 1.0
        due = self._last_commit + self.commit_every - self._now()
        # Past due means the last try failed (said then): retry at the old pace.
        return min(1.0, due + 0.001) if due > 0 else 1.0


class _GoneMeanwhile(Exception):
    """A checkpointed file gone between the scan's look and its resume."""


def _written_lately(path: str, within: float) -> bool:
    try:
        return time.time() - os.stat(path).st_mtime < within
    except OSError:
        return False


def _skip(mark: cp.FileMark) -> int:
    """How many lines of a file a session's replay drops: those its mark counts as
    written; all it makes, for a mark that does not count them (v1)."""
    return mark.framed if mark.framed is not None else 1 << 62


def _older_release(mark: cp.FileMark) -> bool:
    """Was this mark's translation written by a release that framed each file of
    a session alone (before one stream a session)?"""
    from streamv1.translator.translate.translation import STATE_VERSION

    return not isinstance(mark.state, dict) or mark.state.get("version", 0) < STATE_VERSION


def _session_role(mark: cp.FileMark) -> str | None:
    """The part a file played in its session's one stream at the checkpoint
    ("owner": its framer framed the session; "part"), None for an older release's
    checkpoint or a file that stood alone."""
    extra = mark.state.get("extra") if isinstance(mark.state, dict) else None
    if not isinstance(extra, dict):
        return None
    try:
        role = load(extra).get("session")
    except (StateError, AttributeError):
        return None
    return role if role in ("owner", "part") else None


def _sig(path: str) -> tuple[int, ...] | None:
    """What must change for a file we may not read to be tried again."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mode, st.st_uid, st.st_gid, st.st_ino, st.st_ctime_ns)


def _empty(folder: Path) -> bool:
    """A folder that is not there, or holds nothing at all."""
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is None
    except OSError:
        return True


def _flat(status: dict[str, Any]) -> dict[str, Any]:
    """The counters as one level of keys, for a log event."""
    out: dict[str, Any] = {}
    for key, value in status.items():
        if key in ("claims", "subscriber_drops"):
            out[key] = len(value)
        elif isinstance(value, dict):
            out.update({f"{key}_{k}": v for k, v in value.items()})
        else:
            out[key] = value
    return out


def _ino(path: str) -> int:
    """The inode at ``path`` (0 when there is none)."""
    try:
        return os.stat(path).st_ino
    except OSError:
        return 0


def _has_a_line(path: str) -> bool:
    """Does the file hold a complete first line (what a source may read to tell
    which session the file is one of)?"""
    try:
        with open_regular(path) as fh:
            return fh.readline(1 << 20).endswith(b"\n")
    except OSError:
        return False
