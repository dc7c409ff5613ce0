"""The tail daemon: every session file under the watched folders, into one stream.

``tick()`` does one round of work and is kept apart from ``run()``, the loop that
waits for something to happen, so tests drive the daemon without sleeping. A round:

1. take the lines live streams handed over (:mod:`translator.tail.ingest`): claims
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
again, byte for byte, from the checkpointed state). For stdout, at least once.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from translator import logs
from translator.discover import walk_paths
from translator.pipeline import InputError, Totals, Translation
from translator.reader import Line, parse_line
from translator.tail import checkpoint as cp
from translator.tail.claims import Claims, Counters, TranscriptGate, mark_origin
from translator.tail.follower import FileFollower
from translator.tail.ingest import IngestServer, LiveStream
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

    def write(self, data: bytes) -> None:
        if data:
            self._fh.write(data)
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
        ingest_socket: Path | None = None,
        stats_every: float = 60.0,
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
        # The live part (ADR-0053): streams in through the socket, one source per session.
        self.counters = Counters()
        self.claims = Claims(self.counters, clock)
        self.ingest_socket = ingest_socket
        self.server: IngestServer | None = None
        self.streams: list[LiveStream] = []
        self._stream_totals = Totals()
        self._stream_out: list[bytes] = []
        self._woken = threading.Event()
        self._changes: queue.SimpleQueue[set[str]] = queue.SimpleQueue()
        self.stats_every = stats_every
        self._last_stats = now()
        self._born = now()

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
        self.listen()
        self.tick(rescan=True)

    def listen(self) -> None:
        """Open the socket (if asked for), before anything else is touched: a
        second daemon for the same job stops here (OSError), its state untouched."""
        if self.ingest_socket is not None and self.server is None:
            self.server = IngestServer(self.ingest_socket, self.wake, self.status)
            self.server.start()
            self.log.info("listening for relays and subscribers", path=str(self.ingest_socket))

    def stop(self) -> None:
        """Finish the round in hand, flush, checkpoint; open transcript runs stay
        open (a restart goes on with them). A live stream's run is closed here, as
        at the stream's end: no claim outlives the daemon."""
        for stream in list(self.streams):
            stream.closed = True
        self._drain_streams()
        if self.server is not None:
            self.server.close()
        self._commit(force=True)
        for follower in self.followers.values():
            follower.close_fd()
        self.sink.close()

    def wake(self) -> None:
        """Any thread: there is work (stream lines, file events, a stop)."""
        self._woken.set()

    # -- one round ---------------------------------------------------------------------

    def tick(self, changed: set[str] | None = None, rescan: bool = False) -> int:
        """One round of work; returns how many lines it wrote."""
        written = self._drain_streams()  # first: a claim must be in before its transcript
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
        for path in targets:
            follower = self.followers.get(path)
            if follower is not None:
                written += self._poll(follower)
        written += self._close_idle(now)
        self._commit()
        if self.stats_every > 0 and now - self._last_stats >= self.stats_every:
            self._last_stats = now
            self.log.info("counters", **_flat(self.status()))
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
        n = self._write(lines)
        lines.clear()
        return n

    def _write(self, lines: list[bytes]) -> int:
        """To the output, then to every subscriber (who may lose some; the output never)."""
        data = b"".join(lines)  # once, for the output and every subscriber
        self.sink.write(data)
        if self.server is not None:
            self.server.publish(data)
        self._uncommitted = True
        return len(lines)

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
        translation = follower.translation
        translation.decorate = TranscriptGate(self.claims, translation.extra)
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

    # -- live streams --------------------------------------------------------------------

    def _drain_streams(self) -> int:
        if self.server is not None:
            for stream in self.server.take_streams():
                self._open_stream(stream)
        for stream in list(self.streams):
            while True:
                try:
                    raw = stream.queue.get_nowait()
                except queue.Empty:
                    break
                self._feed_stream(stream, raw)
            if stream.closed and stream.queue.empty():
                if stream.tail is not None:
                    self._feed_stream(stream, stream.tail, terminated=False)
                    stream.tail = None
                self._end_stream(stream)
        if not self._stream_out:
            return 0
        n = self._write(self._stream_out)
        self._stream_out.clear()
        return n

    def _open_stream(self, stream: LiveStream) -> None:
        self.counters.streams_total += 1
        stream.translation = Translation(
            stream.id,
            self._stream_out.append,
            self._stream_totals,
            clock=self._clock,
            encoder=self._encoder() if self._encoder else None,
        )

        def decorate(line: dict[str, Any]) -> dict[str, Any]:
            session = line.get("session_id")
            if stream.session is None and isinstance(session, str):
                stream.session = session  # the first session it announces is its claim
                if not self.claims.claim(session, stream.id):
                    self.log.warning("session already claimed by a live stream; ambiguous",
                                     session_id=session, stream=stream.id)
            self.counters.items_stream += 1
            return mark_origin(line, "stream")

        stream.translation.decorate = decorate
        self.streams.append(stream)
        self.log.info("live stream connected", stream=stream.id,
                      command=" ".join(map(str, stream.hello.get("command") or [])) or "-")

    def _feed_stream(self, stream: LiveStream, raw: bytes, terminated: bool = True) -> None:
        stream.lines += 1
        if stream.broken:
            self.counters.stream_parse_errors += 1  # drained and counted, never guessed at
            return
        data = raw[:-1] if raw.endswith(b"\r") else raw
        parsed = parse_line(Line(stream.id, stream.lines, 0, data, terminated))
        if any(not d.tolerated for d in parsed.damage):
            self.counters.stream_parse_errors += 1
        try:
            stream.translation.feed(parsed)
        except InputError as exc:
            stream.broken = True
            self.counters.stream_parse_errors += 1
            self.log.error(f"live stream unreadable: {exc}", stream=stream.id)

    def _end_stream(self, stream: LiveStream) -> None:
        with contextlib.suppress(InputError):
            stream.translation.finish()  # a killed run ends as a file does at EOF
        self.streams.remove(stream)
        self.counters.stream_dropped += stream.dropped + stream.relay_dropped
        handed_back = self.claims.release(stream.id)
        self.log.info("live stream ended", stream=stream.id, lines=stream.lines,
                      session_id=stream.session or "-", dropped=stream.dropped +
                      stream.relay_dropped, handed_back=",".join(handed_back) or "-")

    def status(self) -> dict[str, Any]:
        """The counters (any thread: only copies are read)."""
        streams = list(self.streams)
        subs = self.server.subscribers_now() if self.server is not None else []
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
            uptime_s=round(self._now() - self._born, 1),
        )
        return out

    # -- the loop ---------------------------------------------------------------------------

    def run(self, stop: Any) -> None:
        """Rounds of work, each when something happened (a file event, stream lines,
        a stop) or after a quiet second, until ``stop``."""
        watch_roots = [str(r) for r in self.roots if r.is_dir()]
        if watch_roots:
            threading.Thread(
                target=self._watch, args=(watch_roots, stop), name="watch", daemon=True
            ).start()
        while not stop.is_set():
            self._woken.wait(1.0)
            self._woken.clear()
            changed: set[str] = set()
            while True:
                try:
                    changed |= self._changes.get_nowait()
                except queue.Empty:
                    break
            if stop.is_set():
                break
            self.tick(changed or None)

    def _watch(self, roots: list[str], stop: Any) -> None:
        import watchfiles

        for changes in watchfiles.watch(
            *roots,
            watch_filter=None,
            debounce=50,
            step=10,
            rust_timeout=1000,
            yield_on_timeout=False,
            stop_event=stop,
            raise_interrupt=False,
        ):
            self._changes.put({path for _, path in changes})
            self.wake()


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
