"""The tail daemon: every session file under the watched folders, into one stream.

``tick()`` does one round of work and is kept apart from ``run()``, the loop that
waits for something to happen, so tests drive the daemon without sleeping. A round:

1. take the lines live streams handed over (:mod:`translator.tail.streams`): claims
   come first, before the transcripts they silence (:mod:`translator.tail.claims`);
2. find new files (a full rescan every ``rescan_every`` seconds, since file events
   alone get missed now and then) and poll the ones that changed
   (:mod:`translator.tail.targets`; the followers' bookkeeping is
   :mod:`translator.tail.followed`, a session's files framed as one stream
   :mod:`translator.tail.sessions`);
3. write the lines they made to the output, and flush, then offer them to every
   subscriber (who may lose some; the output never does: :mod:`translator.tail.writes`);
4. end subagent runs their parent answered (:mod:`translator.tail.actor_ends`), and
   runs idle for ``idle_close`` seconds, as batch conversion does at EOF;
5. every ``commit_every`` seconds (and on shutdown): fsync the output, then write
   the checkpoint — never before the output it covers (:mod:`translator.tail.commits`).

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
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from streamv1.translator import logs
from streamv1.translator.model.events import JSON
from streamv1.translator.output.shapes import Encoder
from streamv1.translator.reading.sources import input_clock
from streamv1.translator.tail import checkpoint as cp
from streamv1.translator.tail.actor_ends import ActorEnds
from streamv1.translator.tail.catch_up import CatchUp
from streamv1.translator.tail.claims import Claims, Counters, TranscriptGate
from streamv1.translator.tail.commits import Commits
from streamv1.translator.tail.descriptors import Descriptors, fd_budget
from streamv1.translator.tail.followed import Followed
from streamv1.translator.tail.follower import FileFollower, NoDescriptors, Unfollowable
from streamv1.translator.tail.inputs import Inputs
from streamv1.translator.tail.output import OutputClosed, OutputFailed, OutputSink
from streamv1.translator.tail.sessions import Sessions
from streamv1.translator.tail.status import flat, report
from streamv1.translator.tail.streams import LiveStreams
from streamv1.translator.tail.targets import Targets
from streamv1.translator.tail.watching import FileEvents, Sweep, Unwatched
from streamv1.translator.tail.writes import Writes
from streamv1.translator.timefmt import now_ts
from streamv1.translator.translate.select import RunSelection
from streamv1.translator.translate.translation import InputError, Totals
from streamv1.translator.views.ledger import Filter

if TYPE_CHECKING:
    from streamv1.translator.progress import ProgressLine


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
        #: More counters for ``status`` (the publisher's), read on any thread.
        self.more_status: Callable[[], dict[str, Any]] | None = None
        self.sink = sink
        self.lock = cp.StateLock(state_path)
        self.store = cp.Store(state_path)
        self.idle_close = idle_close
        self.stats_every = stats_every
        #: The time for lines whose source has none: given (tests, --now), else each
        #: file's own (sources.input_clock), as convert derives it; the clock for
        #: the live streams.
        self._clock = clock
        self._now = now
        clock = clock if clock is not None else now_ts
        self._encoder = encoder  # makes each file's encoder (--to)
        self._redact = redact  # --no-redact: False
        #: --since/--until/--project/--agent/--session: the runs written (whole runs,
        #: each file's decisions checkpointed in its translation's extra).
        self.selection = selection
        self.totals = Totals()
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
        # The parts of a round, each in its module, all sharing the followers (path →
        # its follower).
        self.followers: dict[str, FileFollower] = {}
        self.inputs = Inputs(roots, follow_symlinks, sink, self.log)
        self.commits = Commits(
            sink, self.store, state_path, self.claims, commit_every, now, self.log
        )
        sink.on_fresh_start = self.commits.fresh_start
        self.writes = Writes(sink, self.live, self.commits, now, self.log)
        self.actors = ActorEnds(self.followers)
        self.sessions = Sessions(
            self.followers,
            self.writes,
            now,
            self.log,
            follow_main=lambda key: self.files.follow_main(key),
        )
        self.files = Followed(
            self.followers,
            self._follower,
            self.inputs,
            self.sessions,
            self.actors,
            self.commits,
            self.fds,
            start_at_end,
            self.log,
        )
        self.targets = Targets(
            self.followers,
            self.files,
            self.inputs,
            self.sessions,
            self.events,
            self.unwatched,
            Sweep(now()),
            rescan_every,
        )
        self.catch_up = CatchUp(catch_up_view)
        self.failed = False  # stopped with output unwritten: exit non-zero
        self._stop: Any = None  # the run loop's stop event (start): long reads heed it
        self._reopen = False  # SIGHUP: reopen the output at the next round
        self._last_stats = now()
        self._born = now()

    @property
    def closed(self) -> bool:
        """stdout's reader went away: stop, nothing more is written."""
        return self.writes.closed

    @property
    def _blocked(self) -> bytes | None:
        """Output not yet written (the write failed): held, and retried."""
        return self.writes.blocked

    def _wanted(self, path: str) -> bool:
        """Is ``path`` one of the daemon's inputs (a transcript under a watched
        folder, never its own output)?"""
        return self.inputs.wanted(path)

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
            self.events.start(stop)
        saved = self.commits.recover()
        if saved is not None:
            self.files.resume_from(saved)
        self.listen()
        self.files.starting = True
        try:
            self.catch_up.begin(self.inputs, self.files.resume, self.files.start_at_end)
            self.tick(rescan=True)
        finally:
            self.files.starting = False
            self.catch_up.end()
        if discovered := self.files.discovered:
            self.log.info(
                "files discovered",
                files=sum(discovered.values()),
                **{k.replace(" ", "_"): n for k, n in sorted(discovered.items())},
            )
        self.files.close_vanished()
        # Caught up: a file whose run is closed gives its descriptor back now, not in
        # FD_IDLE_SECONDS (a user's 10,000 finished sessions held 10,000 descriptors,
        # and every quiet round looked at each); the next change opens it again.
        for follower in list(self.fds.holding):
            if not follower.run_open:
                self.fds.give_back(follower)
        self._commit(force=True)

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
            self.writes.retry.now()
            self.writes.unblock(self._now())
        for follower in self.followers.values():
            self.sessions.flush(follower)  # nothing made may wait past the last checkpoint
        if self.failed:
            pass  # said when it failed; the last checkpoint stands
        elif self._blocked is not None:
            self.failed = True
            self.log.error(
                "output still not writable; stopping without a checkpoint past what it "
                "holds (a restart goes on from there)",
                path=self.sink.name,
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
        if not self.commits.reopened():
            return
        self._commit(force=True)
        self.log.info("output reopened", path=self.sink.name)

    # -- one round ---------------------------------------------------------------------

    def tick(self, changed: set[str] | None = None, rescan: bool = False) -> int:
        """One round of work (the module's docstring lists the steps); returns how
        many lines it wrote."""
        now = self._now()
        self.files.new_round()
        if self._blocked is not None and not self.writes.unblock(now):
            return 0  # nothing is read while the output cannot take it
        if self.sink.moved():
            # Deleted or renamed away since the last round: the old file's lines are
            # checkpointed before the first line goes to a new one (exactly once
            # across it, as for SIGHUP); Writes catches a move within the round.
            self.log.warning(
                "output deleted or replaced while running; writing on into a new file at its path",
                path=self.sink.name,
            )
            self.reopen_output()
        written = self._drain_streams()  # first: a claim must be in before its transcript
        targets = self.targets.choose(now, changed, rescan)
        written += self._read_round(targets)
        written += self._end_answered_actors()
        written += self._close_idle(now)
        self._commit()
        if self.stats_every > 0 and now - self._last_stats >= self.stats_every:
            self._last_stats = now
            self.log.info("counters", **flat(self.status()))
        return written

    def _drain_streams(self) -> int:
        lines = self.live.drain()
        if not lines:
            return 0
        n = self.writes.write(lines)
        lines.clear()
        return n

    def _read_round(self, targets: list[str]) -> int:
        """A round's reads first, then each session's records framed in time order
        across its files (what one file brought before another's earlier line)."""
        written = 0
        self.sessions.deferring = True
        try:
            for path in targets:
                if self._stop is not None and self._stop.is_set():
                    break  # a stop asked for: the rest are read after the restart
                follower = self.followers.get(path)
                if follower is not None:
                    written += self._poll(follower)
        finally:
            self.sessions.deferring = False
        return written + self.sessions.frame_due()

    def _poll(self, follower: FileFollower) -> int:
        files = self.files
        if follower.broken is not None:
            if files.left_alone(follower):
                return 0  # left alone until its permissions or kind change
            follower.broken = None
            if not follower.started:  # it never began: begin now, from its mark if any
                self.followers.pop(follower.path, None)
                fresh = files.add(follower.path, follower.new)
                return self._poll(fresh) if fresh is not None else 0
        files.join_when_told(follower)
        self.catch_up.polling(follower)
        try:
            change = follower.poll()
        except InputError as exc:
            return files.unreadable(follower, str(exc), retry=False)
        except Unfollowable as exc:
            return files.unreadable(follower, str(exc), retry=True)
        except NoDescriptors:
            try:
                if not self.fds.out_of_descriptors(self.followers, keep=follower):
                    raise
                change = follower.poll()
            except NoDescriptors:
                self.targets.repoll.add(follower.path)  # the next round tries it again
                return 0
        except (OSError, OutputFailed, OutputClosed):
            raise  # the machine's or the output's trouble, never this file's
        except Exception as exc:
            return self._failed(follower, exc)
        self.catch_up.read(follower, whole=True)
        if change.kind == "ok":
            self.fds.opened(follower)
            files.polled(follower)
            return self.sessions.flush(follower)
        if change.kind == "gone":
            moved = files.moved_from(follower)
            if moved is not None:
                return self._poll(moved)
            follower.close_runs()
            n = self.sessions.flush(follower)
            self.log.info("file gone; forgotten after its last lines", path=follower.path)
            files.forget(follower.path)
            return n
        # truncated or replaced: what was read stands; the file is followed anew
        follower.close_runs()
        n = self.sessions.flush(follower)
        follower.close_fd()
        self.log.warning(
            "file truncated or replaced; following it from its start",
            path=follower.path,
            change=change.kind,
        )
        files.forget(follower.path)
        fresh = files.add(follower.path, new=True)
        return n + self._poll(fresh) if fresh is not None else n

    def _failed(self, follower: FileFollower, exc: Exception) -> int:
        """Following a file failed where no finer net caught it (a bug, or a shape
        no rule foresaw): its run ends with the failure said (translation.fail) and
        the file is left alone, as an unreadable one is; every other file goes on.
        (A restart tries it again, and says it again if it fails again.)"""
        follower.translation.fail(exc, "following the file")
        written = self.sessions.flush(follower)
        return written + self.files.unreadable(
            follower, f"its translation failed ({type(exc).__name__})", retry=False
        )

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
        self.catch_up.read(follower, whole=False)
        key = self.sessions.key_of.get(follower.path)
        if key is not None and key in self.sessions.merges:
            self.sessions.frame(key)  # live: what each file has said by now
        self.writes.flush_lines(follower)
        if self._now() - self.commits.last_commit >= max(self.commits.commit_every, 1.0):
            self._commit(force=True)
        return self._blocked is None

    def _follower(self, path: str) -> FileFollower:
        """A new follower of ``path``: its lines noted for nested actors' ends, then
        gated by the claims and the selection."""
        clock = self._clock if self._clock is not None else input_clock(path, now_ts)
        follower = FileFollower(path, self.totals, clock, self._now, self._encoder, self._redact)
        follower.progress = self._read_progress
        translation = follower.translation
        gate = TranscriptGate(self.claims, translation.extra)
        # Always there, selection or not: runs an earlier start's selection left
        # out stay out to their end, and runs begun before a selection stay in.
        selected = RunSelection(self.selection, translation.extra, written_before=True).lines

        def decorate(line: JSON) -> JSON | list[JSON] | None:
            self.actors.note_line(path, line)
            return selected(gate(line))

        translation.decorate = decorate
        translation.on_spawn = lambda _: self.sessions.spawned_in(path)
        return follower

    def _end_answered_actors(self) -> int:
        """End each subagent run whose spawning tool_use its parent answered (what is
        left in its file read first), as batch conversion ends it at the file's end."""
        written = 0
        for path, spawner in self.actors.take_ends():
            agent_follower = self.followers.get(path)
            if agent_follower is None:
                continue
            written += self._poll(agent_follower)  # what its file still holds comes first
            follower = self.followers.get(path)
            if follower is None or spawner not in (None, follower.translation.framer.run_key):
                continue
            follower.close_runs()
            written += self.sessions.flush(follower)
            self.log.info(
                "subagent run ended by its parent's tool_result",
                path=path,
                **({"tool_use_id": spawner[1]} if spawner else {}),
            )
        return written

    def _close_idle(self, now: float) -> int:
        """Runs quiet for ``idle_close`` seconds end as at the end of a file; quiet
        files give their descriptors back (:mod:`translator.tail.descriptors`)."""
        written = self._read_before_idle(now)
        for follower in self.fds.to_watch(self.followers):
            if self.idle_close > 0 and follower.run_open:
                if now - self.sessions.last_data(follower) >= self.idle_close:
                    follower.close_runs()
                    written += self.sessions.flush(follower)
                    self.fds.parked.discard(follower.path)
                    self.log.info("run idle; closed as at the end of a file", path=follower.path)
                continue  # keep the descriptor while a run is open
            self.fds.quiet(follower, now)
        self.fds.trim()
        return written

    def _read_before_idle(self, now: float) -> int:
        """The files of every run due to be closed idle are read first: quiet by the
        clock is not quiet on disk. After a pause longer than ``idle_close`` (Ctrl-Z,
        a frozen VM) the clock has jumped, the bytes written meanwhile are there, and
        no event has said so yet (the round's sweep takes a share of the files): the
        run ended as idle before them, and went on as a second run after them. A run
        whose files brought something is not idle."""
        if self.idle_close <= 0:
            return 0
        due: dict[str, None] = {}
        for follower in self.fds.to_watch(self.followers):
            if follower.run_open and now - self.sessions.last_data(follower) >= self.idle_close:
                key = self.sessions.key_of.get(follower.path)
                members = self.sessions.members.get(key, ()) if key is not None else ()
                due.update(dict.fromkeys([follower.path, *sorted(members)]))
        return self._read_round([p for p in due if self._unread(p)]) if due else 0

    def _unread(self, path: str) -> bool:
        """Does the file at ``path`` hold what its follower has not read (grown,
        shrunk or replaced: a poll tells which)?"""
        follower = self.followers.get(path)
        if follower is None:
            return False
        try:
            st = os.stat(path)
        except OSError:
            return True  # gone: the poll says so
        return st.st_size != follower.offset or st.st_ino != follower.ino

    def _commit(self, force: bool = False) -> None:
        """A checkpoint when one is due (``force``: now), never ahead of what the
        output holds; a failed fsync stops the daemon (``failed``)."""
        if self._blocked is not None:
            return
        try:
            self.commits.commit(self.followers, not self.files.first_scan, force)
        except OutputFailed:
            self.failed = True
            raise

    def status(self) -> dict[str, Any]:
        """The counters (any thread: only copies are read)."""
        out = report(
            self.live,
            self.followers,
            self.fds,
            self.events,
            self.unwatched,
            held=self._blocked,
            output=self.sink.name,
            uptime=round(self._now() - self._born, 1),
        )
        if self.more_status is not None:
            out.update(self.more_status())
        return out

    # -- the loop ---------------------------------------------------------------------------

    def run(self, stop: Any) -> None:
        """Rounds of work, each when something happened (a file event, stream lines,
        a stop) or after a quiet second, until ``stop``."""
        self.events.start(stop)
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
                self.writes.closed = True  # stdout's reader went away while all was quiet
                return

    def _quiet_wait(self) -> float:
        """How long a quiet round may wait: a second, or less when written lines wait
        for their checkpoint (what ``tail --publish`` sends, and what a crash keeps)."""
        if self.sessions.holding and self._blocked is None:
            return 0.25  # a session's lines wait for a file to begin, or for a while
        if not self.commits.uncommitted or self._blocked is not None:
            return 1.0
        due = self.commits.last_commit + self.commits.commit_every - self._now()
        # Past due means the last try failed (said then): retry at the old pace.
        return min(1.0, due + 0.001) if due > 0 else 1.0
