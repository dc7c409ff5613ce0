"""The tail daemon's writes: every line made goes to the output, then to every
subscriber (who may lose some; the output never does).

A write that fails (disk full) is cut back by the sink and held here, with all
that is made after it, and tried again with backoff; the daemon reads nothing
more meanwhile and no checkpoint is written past it. stdout's reader gone ends
the job (at least once there: nothing more is written). An output file moved
away within a round is replaced before these lines reach it
(:meth:`translator.tail.commits.Commits.output_moved`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from streamv1.translator.tail.commits import Commits
from streamv1.translator.tail.follower import FileFollower
from streamv1.translator.tail.output import Backoff, OutputClosed, OutputSink
from streamv1.translator.tail.streams import LiveStreams


@dataclass(eq=False)
class Writes:
    sink: OutputSink
    live: LiveStreams
    commits: Commits
    now: Callable[[], float]
    log: Any
    #: Output not yet written (the write failed): held, tried again with backoff.
    blocked: bytes | None = field(default=None, init=False)
    retry: Backoff = field(default_factory=Backoff, init=False)
    #: stdout's reader went away: stop, nothing more is written.
    closed: bool = field(default=False, init=False)

    def flush_lines(self, follower: FileFollower | None) -> int:
        """The lines a follower made that are not written yet: written now."""
        if follower is None or not follower.out:
            return 0
        n = self.write(follower.out)
        follower.out.clear()
        return n

    def write(self, lines: list[bytes]) -> int:
        """To the output, then to every subscriber (who may lose some; the output never)."""
        data = b"".join(lines)  # once, for the output and every subscriber
        if self.blocked is not None:
            self.blocked += data
            return len(lines)
        if self.sink.moved():
            # Deleted (or renamed away) while running: writing on into the unlinked
            # file lost every later line (#23 item 8). A new file at the path, as a
            # rotation's reopen makes; the next checkpoint names it.
            self.commits.output_moved()
        try:
            self.sink.write(data)
        except BrokenPipeError as exc:
            if self.sink.path is None:
                self.closed = True
                raise OutputClosed(str(exc)) from exc
            raise
        except OSError as exc:
            self.blocked = data
            self.retry.begin(self.now())
            self.log.error(
                "output write failed; holding the lines, reading nothing more, and "
                "trying again with backoff",
                path=self.sink.name,
                reason=exc.strerror or str(exc),
                held_bytes=len(data),
            )
            return len(lines)
        self.live.offer(data)
        self.commits.uncommitted = True
        return len(lines)

    def unblock(self, now: float) -> bool:
        """Try the held write again (when its backoff is up): True once it went out."""
        if self.blocked is None or not self.retry.due(now):
            return self.blocked is None
        data = self.blocked
        try:
            self.sink.write(data)
        except OSError:
            self.retry.failed(now)
            return False
        self.blocked = None
        self.log.info(
            "output writable again; going on", path=self.sink.name, written_bytes=len(data)
        )
        self.live.offer(data)
        self.commits.uncommitted = True
        return True
