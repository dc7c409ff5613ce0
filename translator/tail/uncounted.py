"""A mark an older release wrote without counting the lines its file framed: what
its replay must still write (the output lacks them), told by the state it kept.

The replay of a counted mark drops exactly the lines counted
(:meth:`translator.tail.follower.FileFollower._replay`); an uncounted one drops
all it makes up to the offset, save what these functions find missing.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from streamv1.translator.timefmt import ts_millis


@dataclass(frozen=True, slots=True)
class Written:
    """What the output holds of a file's open run, by the JSON state of the release
    that wrote the file's mark: its lines (``seq``), its init's ``ts`` and its last
    line's; ``lines`` 0 when no run was open."""

    lines: int
    first_ts: str | None = None
    last_ts: str | None = None


def open_run_written(state: Any) -> Written | None:
    """:class:`Written`, from a mark's state; None when the state does not say (a
    pickle-era mark holds none).

    Every release with JSON state keeps its framer's open run as ``_run``: ``seq``
    counts its lines (0 on the init, +1 a line), ``first_ts``/``last_ts`` the
    times of its first and last. The first of them (checkpoint v2 before marks
    counted their lines) could hold a run's init back (the prompt record alone)
    where later ones frame it at once: dropping every line the replay makes up to
    the offset dropped an init that never reached the output."""
    try:
        run = state["framer"]["state"]["_run"]
        if run is None:
            return Written(0)
        fields = run["f"]
        seq, first, last = fields["seq"], fields.get("first_ts"), fields.get("last_ts")
    except (KeyError, TypeError):
        return None
    if type(seq) is not int or seq < 0:
        return None
    return Written(
        seq, first if isinstance(first, str) else None, last if isinstance(last, str) else None
    )


def unwritten(made: list[dict[str, Any]], written: Written) -> list[dict[str, Any]]:
    """Of the lines a replay made up to a mark with no count, those the output
    lacks. With no run open at the mark: a run the replay left open (its init and
    all after it); the runs it closed are in the output. With one open: that run
    (known by its init's ``ts``; else the last begun) after what the output holds
    of it, and every line after it. What it holds is told by time where the lines
    say it (those up to the last line's ``ts`` the state kept: a release may frame
    a line more or fewer into a run, e.g. a task_started, so a count can fall
    between two lines), else by the count."""
    inits = [
        i
        for i, line in enumerate(made)
        if line.get("type") == "system" and line.get("subtype") == "init"
    ]
    if not inits:
        return []
    if not written.lines:
        last = made[inits[-1] :]
        return [] if any(line.get("type") == "result" for line in last) else last
    same = [i for i in inits if made[i].get("ts") == written.first_ts]
    start = (same or inits)[-1]
    upto = ts_millis(written.last_ts) if written.last_ts is not None else None
    held = written.lines
    if upto is not None:
        held = 0
        for line in made[start:]:
            at = line.get("ts")
            moment = ts_millis(at) if isinstance(at, str) else None
            if moment is None or moment > upto:
                break
            held += 1
    return made[start + held :]
