"""One source per session (ADR-0053): a live stream claims its session, and the
transcript reader stays silent for it.

* The first session_id a stream's lines carry is claimed by that stream. A second
  live stream announcing the same session is counted ambiguous; the first keeps
  the claim, and the second takes it over if it is still live when the first ends.
* While a session is claimed, transcript runs of it are suppressed whole (counted).
* When the last claimant ends, the session is handed back with a floor at that
  instant: a transcript run that began at or before the floor was the stream's
  (or backlog read while the claim held) and stays suppressed; a run that begins
  after it (a resumed turn) is read from the file.
* A stream that ends with its run unfinished (its relay killed, or the daemon
  stopping: #23 item 7) leaves its session *cut*: the ids (``extension.uuid``)
  of the messages it delivered in that run. The transcript run it suppressed is
  then finished from the transcript: the messages the stream never delivered
  (held back while the claim stood, or read after) come out as a run of their
  own (the suppressed run's init, seq from 0, the transcript's real result), so
  nothing is lost and nothing comes twice. Print mode and the durable file give
  a message the same uuid (every capture), which is what makes this exact.
* Floors and cuts are checkpointed (:meth:`Claims.state`); a claim is not: a
  restarted daemon has no stream until its relay comes again.

The decision is made per run, at its system/init line, and holds to its result:
a run is never cut in two, so the unified stream keeps its framing. A transcript
run that had already begun when the claim came is finished from the transcript.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from streamv1.translator.model.events import JSON
from streamv1.translator.timefmt import now_ts


@dataclass(slots=True)
class Counters:
    """What the daemon's live part has done (``streamv1 status``, periodic logs)."""

    #: Lines written from live streams, and from transcripts.
    items_stream: int = 0
    items_transcript: int = 0
    #: Transcript lines left out: their run's session was claimed by a live stream,
    #: or the run began at or before the session's floor (docs/live.md).
    suppressed: int = 0
    #: Stream lines dropped on a full queue (relay → socket → translator), and
    #: stream lines that were not JSON (each one a system/error line too).
    stream_dropped: int = 0
    stream_parse_errors: int = 0
    #: A second live stream announcing a session another stream had claimed.
    ambiguous: int = 0
    #: Writes dropped for a subscriber that fell behind (that subscriber only).
    subscriber_dropped: int = 0
    #: Live streams taken since the daemon started.
    streams_total: int = 0

    def as_json(self) -> JSON:
        return {
            "items": {"stream": self.items_stream, "transcript": self.items_transcript},
            "suppressed": self.suppressed,
            "stream_dropped": self.stream_dropped,
            "stream_parse_errors": self.stream_parse_errors,
            "ambiguous": self.ambiguous,
            "subscriber_dropped": self.subscriber_dropped,
            "streams_total": self.streams_total,
        }


@dataclass(slots=True)
class Claims:
    counters: Counters
    clock: Callable[[], str] = now_ts
    holder: dict[str, str] = field(default_factory=dict)  # session -> stream id
    waiting: dict[str, list[str]] = field(default_factory=dict)  # later claimants
    floors: dict[str, str] = field(default_factory=dict)  # session -> handback instant
    #: session -> uuids of the messages its holder delivered in its current run
    delivered: dict[str, set[str]] = field(default_factory=dict)
    #: session -> uuids delivered by a stream that left its run unfinished
    cut: dict[str, list[str]] = field(default_factory=dict)

    def claim(self, session: str, stream: str) -> bool:
        """``stream`` announces ``session``: True if it holds the claim now."""
        held = self.holder.get(session)
        if held is None:
            self.holder[session] = stream
            return True
        if held != stream:
            self.counters.ambiguous += 1
            self.waiting.setdefault(session, []).append(stream)
        return held == stream

    def stream_line(self, session: str, stream: str, line: JSON) -> None:
        """A line the holder of ``session`` delivered: which messages its run has."""
        if self.holder.get(session) != stream:
            return
        kind = line.get("type")
        if kind == "system" and line.get("subtype") == "init":
            self.delivered[session] = set()
            return
        if kind == "result":
            self.delivered.pop(session, None)  # its run is whole: nothing to finish
            return
        uid = message_id(line)
        if uid is not None:
            self.delivered.setdefault(session, set()).add(uid)

    def release(self, stream: str, left: set[str] | None = None) -> list[str]:
        """``stream`` ended: hand its sessions on, or back with a floor (and, when
        it ``left`` a run unfinished, having delivered those messages of it, a cut
        for the transcript to finish the run from)."""
        handed_back = []
        for session in [s for s, held in self.holder.items() if held == stream]:
            self.delivered.pop(session, None)
            if left is not None:
                self.cut[session] = sorted(left)
            others = self.waiting.pop(session, [])
            if others:
                self.holder[session] = others[0]
                if others[1:]:
                    self.waiting[session] = others[1:]
            else:
                del self.holder[session]
                self.floors[session] = self.clock()
                handed_back.append(session)
        for session, others in list(self.waiting.items()):
            if stream in others:
                others.remove(stream)
            if not others:
                del self.waiting[session]
        return handed_back

    def silences(self, session: str, ts: str | None) -> bool:
        """Is a transcript run of ``session`` beginning at ``ts`` the stream's?"""
        if session in self.holder:
            return True
        floor = self.floors.get(session)
        return floor is not None and (ts is None or ts <= floor)

    def state(self) -> dict[str, Any]:
        """What a checkpoint keeps: floors and cuts."""
        return {"floors": dict(self.floors), "cut": {k: list(v) for k, v in self.cut.items()}}

    def restore(self, state: Any) -> None:
        if not isinstance(state, dict):
            return
        floors, cut = state.get("floors"), state.get("cut")
        if isinstance(floors, dict):
            self.floors.update({k: v for k, v in floors.items() if isinstance(v, str)})
        if isinstance(cut, dict):
            self.cut.update(
                {
                    k: [x for x in v if isinstance(x, str)]
                    for k, v in cut.items()
                    if isinstance(v, list)
                }
            )


def message_id(line: JSON) -> str | None:
    """The source's id of a message line (``extension.uuid``: the same in print
    mode's stream and the durable file)."""
    ext = line.get("extension")
    uid = ext.get("uuid") if isinstance(ext, dict) else None
    return uid if isinstance(uid, str) else None


def mark_origin(line: JSON, origin: str) -> JSON:
    """``_meta.origin`` on a line (``_meta`` is the catalog's home for host metadata)."""
    meta = line.get("_meta")
    line["_meta"] = {**meta, "origin": origin} if isinstance(meta, dict) else {"origin": origin}
    return line


class TranscriptGate:
    """A transcript translation's last step before encoding: suppress the runs a
    stream carries, finish from the transcript a run a stream left unfinished,
    mark the rest ``transcript``. Its state (the current run suppressed? its init,
    the messages held back, the seq of a finishing run) is kept in the
    translation's checkpointed ``extra``."""

    def __init__(self, claims: Claims, state: dict[str, Any]) -> None:
        self.claims = claims
        self.state = state

    def __call__(self, line: JSON) -> JSON | list[JSON] | None:
        kind = line.get("type")
        state = self.state
        session = line.get("session_id")
        if kind == "system" and line.get("subtype") == "init":
            ts = line.get("ts")
            state["suppressing"] = isinstance(session, str) and self.claims.silences(
                session, ts if isinstance(ts, str) else None
            )
            state.pop("finishing", None)
            if state["suppressing"]:
                state["init"], state["held"] = dict(line), []
        if state.get("finishing") is not None:
            return self._finishing(line, kind)
        suppressing = state.get("suppressing", False)
        if suppressing and isinstance(session, str):
            out = self._suppressed(line, kind, session)
            if out is not None:
                return out
        if kind == "result":
            state["suppressing"] = False
            for key in ("init", "held"):
                state.pop(key, None)
        if suppressing:
            self.claims.counters.suppressed += 1
            return None
        self.claims.counters.items_transcript += 1
        return mark_origin(line, "transcript")

    def _suppressed(self, line: JSON, kind: Any, session: str) -> list[JSON] | None:
        """A line of a suppressed run: held back while the stream may still deliver
        it; once the stream has left the run unfinished (a cut), what it never
        delivered starts the run's finish."""
        state = self.state
        held: list[JSON] = state.setdefault("held", [])
        # Messages only: the stream has its own init, results and system lines.
        uid = message_id(line) if kind in ("assistant", "user") else None
        if session in self.claims.holder:
            delivered = self.claims.delivered.get(session, set())
            held[:] = [x for x in held if message_id(x) not in delivered]
            if uid is not None and uid not in delivered:
                held.append(dict(line))
            return None
        cut = self.claims.cut.get(session)
        if cut is None:
            return None
        done = set(cut)
        rest = [x for x in held if message_id(x) not in done]
        if uid is None and kind == "system" and line.get("subtype") == "init":
            return None
        if uid is not None and uid in done:
            held[:] = rest
            return None  # the stream had it
        if not rest and uid is None and kind != "result":
            return None  # (no message of its own: the stream's run had its like)
        init = state.get("init")
        if not isinstance(init, dict):
            return None
        state["finishing"] = 0
        for key in ("held", "init"):
            state.pop(key, None)
        state["suppressing"] = False
        return [self._finishing(x, x.get("type")) for x in [init, *rest, line]]

    def _finishing(self, line: JSON, kind: Any) -> JSON:
        """A line of a run finished from the transcript: numbered from 0."""
        n = self.state["finishing"]
        line = dict(line)
        line["seq"] = n
        self.state["finishing"] = n + 1
        if kind == "result":
            self.state.pop("finishing", None)
            session = line.get("session_id")
            if isinstance(session, str):
                self.claims.cut.pop(session, None)
        self.claims.counters.items_transcript += 1
        return mark_origin(line, "transcript")
