"""The daemon's live half: relays' streams in, the output offered to subscribers.

Each stream the ingest socket takes (:mod:`translator.tail.ingest`) gets a
translation of its own. The first session a stream announces is its claim
(:mod:`translator.tail.claims`): the transcript of that session is silenced while
the stream lasts. When the relay goes away the stream's open run ends as a file's
does at its end, and the claim is handed back. Everything here runs on the
daemon's main thread; the socket's threads only hand lines over.
"""

from __future__ import annotations

import contextlib
import queue
from collections.abc import Callable
from pathlib import Path
from typing import Any

from streamv1.translator import logs
from streamv1.translator.model.events import Problem
from streamv1.translator.output.shapes import Encoder
from streamv1.translator.reading.reader import Line, parse_line
from streamv1.translator.tail.claims import Claims, Counters, mark_origin
from streamv1.translator.tail.ingest import IngestServer, LiveStream, SocketTaken, Subscriber
from streamv1.translator.translate.select import RunSelection
from streamv1.translator.translate.translation import InputError, Totals, Translation
from streamv1.translator.views.ledger import Filter


class LiveStreams:
    """The socket (once ``listen`` opened it), the streams it took, and their lines
    made since the last ``drain``."""

    def __init__(
        self,
        socket: Path | None,
        counters: Counters,
        claims: Claims,
        clock: Callable[[], str],
        encoder: Callable[[], Encoder] | None,
        redact: bool = True,
        selection: Filter | None = None,
    ) -> None:
        self.socket = socket
        self.counters = counters
        self.claims = claims
        self._clock = clock
        self._encoder = encoder  # makes each stream's encoder (--to)
        self._redact = redact  # --no-redact: False
        self._selection = selection  # tail's --since/--project/...: the runs written
        self.server: IngestServer | None = None
        self.streams: list[LiveStream] = []
        self.totals = Totals()
        self._out: list[bytes] = []
        self.log = logs.get()

    # -- the socket ------------------------------------------------------------------

    def listen(self, wake: Callable[[], None], status: Callable[[], dict[str, Any]]) -> None:
        """Open the socket (if there is one to open): SocketTaken when another daemon
        listens on it. A folder this daemon cannot use (another user's, open to
        others, a file, a symlink: under /tmp anyone may make /tmp/streamv1-<uid>
        first) is a warning, once: the transcripts are still followed, only relays
        and subscribers are off."""
        if self.socket is not None and self.server is None:
            server = IngestServer(self.socket, wake, status)
            try:
                server.start()
            except SocketTaken:
                raise
            except OSError as exc:
                self.log.warning(
                    "cannot listen; relays and subscribers are off",
                    path=str(self.socket),
                    reason=exc.strerror or str(exc),
                    hint="give --ingest-socket a path in a folder of yours (mode 700)",
                )
                self.socket = None  # not tried again at start()
                return
            self.server = server
            self.log.info("listening for relays and subscribers", path=str(self.socket))

    def end_all(self) -> None:
        """Every stream ends at the next ``drain``, as at its relay's end: no claim
        outlives the daemon."""
        for stream in list(self.streams):
            stream.closed = True

    def close(self) -> None:
        if self.server is not None:
            self.server.close()

    def offer(self, data: bytes) -> None:
        """Lines written to the output, for every subscriber (who may lose some)."""
        if self.server is not None:
            self.server.publish(data)

    def subscribers(self) -> list[Subscriber]:
        return self.server.subscribers_now() if self.server is not None else []

    @property
    def refused(self) -> int:
        return self.server.refused if self.server is not None else 0

    # -- lines -----------------------------------------------------------------------

    def drain(self) -> list[bytes]:
        """Take new streams, translate the lines every stream handed over, end the
        streams whose relay went away; the lines made (the caller writes them and
        clears the list)."""
        if self.server is not None:
            for stream in self.server.take_streams():
                self._open(stream)
        for stream in list(self.streams):
            while True:
                try:
                    data = stream.queue.get_nowait()
                except queue.Empty:
                    break
                self._feed(stream, data)
            if stream.closed and stream.queue.empty():
                if stream.tail is not None:
                    # A stream's cut-off last line: a CR at its end is no part of it.
                    tail = stream.tail[:-1] if stream.tail.endswith(b"\r") else stream.tail
                    self._feed(stream, tail, terminated=False)
                    stream.tail = None
                self._end(stream)
        return self._out

    def _open(self, stream: LiveStream) -> None:
        self.counters.streams_total += 1
        stream.translation = Translation(
            stream.id,
            self._out.append,
            self.totals,
            clock=self._clock,
            encoder=self._encoder() if self._encoder else None,
            redact=self._redact,
        )

        def decorate(line: dict[str, Any]) -> dict[str, Any]:
            session = line.get("session_id")
            if stream.session is None and isinstance(session, str):
                stream.session = session  # the first session it announces is its claim
                if not self.claims.claim(session, stream.id):
                    self.log.warning(
                        "session already claimed by a live stream; ambiguous",
                        session_id=session,
                        stream=stream.id,
                    )
            if stream.session is not None:
                self.claims.stream_line(stream.session, stream.id, line)
            self.counters.items_stream += 1
            return mark_origin(line, "stream")

        stream.translation.decorate = decorate
        if self._selection is not None:
            passes = RunSelection(
                self._selection, stream.translation.extra, written_before=True
            ).passes

            def selected(line: dict[str, Any]) -> dict[str, Any] | None:
                marked = decorate(line)
                return marked if passes(marked) else None

            stream.translation.decorate = selected
        self.streams.append(stream)
        self.log.info(
            "live stream connected",
            stream=stream.id,
            command=" ".join(map(str, stream.hello.get("command") or [])) or "-",
        )

    def _feed(self, stream: LiveStream, data: bytes, terminated: bool = True) -> None:
        """One line of a stream (cut by its reader: no newline, no CR before it)."""
        stream.lines += 1
        if stream.broken:
            self.counters.stream_parse_errors += 1  # drained and counted, never guessed at
            return
        parsed = parse_line(Line(stream.id, stream.lines, 0, data, terminated))
        if any(not d.tolerated for d in parsed.damage):
            self.counters.stream_parse_errors += 1
        try:
            stream.translation.feed(parsed)
        except InputError as exc:
            stream.broken = True
            self.counters.stream_parse_errors += 1
            self.log.error("live stream unreadable", stream=stream.id, reason=str(exc))
        except Exception as exc:  # a line the translator fails on: said, not fatal
            self.counters.stream_parse_errors += 1
            stream.translation.problem(
                Problem(
                    f"line could not be translated ({type(exc).__name__}: {exc})",
                    stream.id,
                    stream.lines,
                    kind="untranslatable",
                )
            )

    def _end(self, stream: LiveStream) -> None:
        # What the stream delivered of a run it leaves unfinished, taken before its
        # run is closed here (that close is a result line, which makes a run whole).
        left = (
            self.claims.delivered.get(stream.session)
            if stream.translation.run_open and stream.session is not None
            else None
        )
        with contextlib.suppress(InputError):
            stream.translation.finish()  # a killed run ends as a file does at EOF
        self.streams.remove(stream)
        self.counters.stream_dropped += stream.dropped + stream.relay_dropped
        # A run the stream left unfinished is finished from the transcript (claims).
        handed_back = self.claims.release(stream.id, left)
        cut = [x for x in handed_back if x in self.claims.cut]
        self.log.info(
            "live stream ended",
            stream=stream.id,
            lines=stream.lines,
            session_id=stream.session or "-",
            dropped=stream.dropped + stream.relay_dropped,
            handed_back=",".join(handed_back) or "-",
            unfinished=",".join(cut) or "-",
        )
