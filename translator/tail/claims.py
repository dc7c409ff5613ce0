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
* Claims and floors live in memory: a restarted daemon keeps none.

The decision is made per run, at its system/init line, and holds to its result:
a run is never cut in two, so the unified stream keeps its framing. A transcript
run that had already begun when the claim came is finished from the transcript.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from streamv1.translator.events import JSON
from streamv1.translator.timefmt import now_ts


@dataclass(slots=True)
class Counters:
    """What the daemon's live part has done (``streamv1 status``, periodic logs)."""

    items_stream: int = 0
    items_transcript: int = 0
    suppressed: int = 0
    stream_dropped: int = 0
    stream_parse_errors: int = 0
    ambiguous: int = 0
    subscriber_dropped: int = 0
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

    def release(self, stream: str) -> list[str]:
        """``stream`` ended: hand its sessions on, or back with a floor."""
        handed_back = []
        for session in [s for s, held in self.holder.items() if held == stream]:
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


def mark_origin(line: JSON, origin: str) -> JSON:
    """``_meta.origin`` on a line (``_meta`` is the catalog's home for host metadata)."""
    meta = line.get("_meta")
    line["_meta"] = {**meta, "origin": origin} if isinstance(meta, dict) else {"origin": origin}
    return line


class TranscriptGate:
    """A transcript translation's last step before encoding: suppress the runs a
    stream carries, mark the rest ``transcript``. Its one piece of state (is the
    current run suppressed?) is kept in the translation's checkpointed ``extra``."""

    def __init__(self, claims: Claims, state: dict[str, Any]) -> None:
        self.claims = claims
        self.state = state

    def __call__(self, line: JSON) -> JSON | None:
        kind = line.get("type")
        if kind == "system" and line.get("subtype") == "init":
            session = line.get("session_id")
            ts = line.get("ts")
            self.state["suppressing"] = isinstance(session, str) and self.claims.silences(
                session, ts if isinstance(ts, str) else None
            )
        suppressing = self.state.get("suppressing", False)
        if kind == "result":
            self.state["suppressing"] = False
        if suppressing:
            self.claims.counters.suppressed += 1
            return None
        self.claims.counters.items_transcript += 1
        return mark_origin(line, "transcript")
