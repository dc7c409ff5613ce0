"""The tail daemon's counters: what ``streamv1 status`` shows (asked on the socket,
on any thread) and what the ``counters`` log line says every ``stats_every``.

Apart from the daemon's loop: a report reads copies of what each part counts and
changes nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from streamv1.translator import logs
from streamv1.translator.tail.descriptors import Descriptors
from streamv1.translator.tail.follower import FileFollower
from streamv1.translator.tail.streams import LiveStreams
from streamv1.translator.tail.watching import FileEvents, Unwatched


def report(
    live: LiveStreams,
    followers: Mapping[str, FileFollower],
    fds: Descriptors,
    events: FileEvents,
    unwatched: Unwatched,
    held: bytes | None,
    output: str,
    uptime: float,
) -> dict[str, Any]:
    """The counters (any thread: only copies are read); ``held``: the output not
    yet written, ``output``: its name."""
    streams = list(live.streams)
    subs = live.subscribers()
    out = live.counters.as_json()
    out["stream_dropped"] += sum(s.dropped + s.relay_dropped for s in streams)
    out["subscriber_dropped"] += sum(s.dropped for s in subs)
    out.update(
        streams_active=len(streams),
        subscribers=len(subs),
        subscriber_drops={str(s.number): s.dropped for s in subs},
        claims=dict(live.claims.holder),
        floors=len(live.claims.floors),
        files=len(followers),
        socket_refused=live.refused,
        fd_exhausted=fds.exhausted,
        watch_errors=events.errors,
        unwatched_folders=len(unwatched.folders),
        output_held_bytes=len(held or b""),
        # What the files hold past what was read, as of each one's last look.
        behind_bytes=sum(max(0, f.seen_size - f.offset) for f in list(followers.values())),
        output=output,
        last_error=logs.last_error,
        uptime_s=uptime,
    )
    return out


def flat(status: dict[str, Any]) -> dict[str, Any]:
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
