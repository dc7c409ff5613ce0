"""Which runs ``convert`` keeps with ``--since/--until/--project/--agent/--session``:
a filter on the stream_v1 lines it writes, a whole run at a time (its init to its
result), so what passes is still framed as the contract says.

A run is kept when its init says so: its session id begins with ``--session``,
its agent's name is ``--agent``, its cwd holds ``--project``, and it began inside
``[--since, --until]``. A line of a run whose init was not seen (a subscriber that
joined mid-run) is kept only when the session id is all that is asked, since that
is on every line; the rest needs the init. A line of no session passes. The filter
parses each line, so it costs something only when a filter is given.

The same rule, :class:`RunSelection`, is the tail daemon's last step before
encoding (its state checkpointed with the translation), and ``subscribe``'s.
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

from streamv1.translator.reading.lines import LineSplitter
from streamv1.translator.translate.sinks import Writer, settle
from streamv1.translator.views.ledger import Filter, Row

#: Where the open runs' decisions are kept in the state given (the daemon's
#: checkpointed ``extra``, beside its other keys).
STATE_KEY = "selected_runs"


class RunSelection:
    """The keep rule, one line at a time. Its state (the open runs, kept or not) is
    a JSON object the caller may checkpoint (the tail daemon keeps it in the
    translation's ``extra``).

    ``written_before`` (the tail daemon): a run whose init this rule did not see
    began before the rule did (the daemon started with no selection, or another
    one, in the middle of it), so its start is in the output: the rest of it goes
    there too, and only the runs left out are remembered. ``keep`` None: every new
    run is kept, and runs an earlier selection left out stay out to their end. A
    subscriber (the default) cannot know that, and judges such a run by its session
    id alone, or leaves it out."""

    def __init__(
        self,
        keep: Filter | None,
        state: dict[str, Any] | None = None,
        *,
        written_before: bool = False,
    ) -> None:
        self.keep = keep
        self.state: dict[str, Any] = state if state is not None else {}
        self.written_before = written_before
        self.runs_dropped = 0
        #: Without an init, only the session id can be judged (it is on every line).
        self._blind = keep is None or (
            (keep.since, keep.until, keep.project, keep.agent) == (None,) * 4
        )

    def passes(self, line: dict[str, Any]) -> bool:
        if self.keep is None and not self.state.get(STATE_KEY):
            return True  # no selection, nothing left out still open: the common case
        session = line.get("session_id")
        if not isinstance(session, str):
            return True  # a line about the stream, not of a run
        opened: dict[str, bool] = self.state.setdefault(STATE_KEY, {})
        parent = line.get("parent_tool_use_id")
        actor = parent if isinstance(parent, str) else ""
        own = f"{session} {actor}"
        if line.get("type") == "system" and line.get("subtype") == "init":
            began = self._keeps(line)
            if began and self.written_before:
                opened.pop(own, None)  # kept is what an unseen run is anyway
            else:
                opened[own] = began
            self.runs_dropped += not began
            return began
        # A nested actor's line without an init of its own is one of its parent's run.
        key = own if own in opened else f"{session} "
        kept = opened.get(key)
        if kept is None:  # its init not seen
            if self.written_before:
                return True
            return self._blind and (
                self.keep is None
                or self.keep.session is None
                or session.startswith(self.keep.session)
            )
        if line.get("type") == "result" and key == own:
            del opened[key]
        return kept

    def lines(
        self, lines: dict[str, Any] | list[dict[str, Any]] | None
    ) -> dict[str, Any] | list[dict[str, Any]] | None:
        """The daemon's last step: what the step before it gave (a line, some, or
        none), less the lines of runs not kept."""
        if lines is None:
            return None
        if isinstance(lines, dict):
            return lines if self.passes(lines) else None
        return [line for line in lines if self.passes(line)]

    def _keeps(self, init: dict[str, Any]) -> bool:
        """The sessions' rule (ledger.Filter) on the run as a row that begins and
        ends at its init: overlapping the window is beginning inside it."""
        if self.keep is None:
            return True
        agent = init.get("agent")
        ts, cwd = init.get("ts"), init.get("cwd")
        began = ts if isinstance(ts, str) else None  # (every line has one: the schema)
        try:
            return self.keep.keeps(
                Row(
                    str(init.get("session_id") or ""),
                    agent=agent.get("name") if isinstance(agent, dict) else None,
                    project=cwd if isinstance(cwd, str) else None,
                    started=began,
                    ended=began,
                )
            )
        except (ValueError, TypeError):  # a time no schema passes: not in any window
            return False


def _parsed(data: bytes) -> dict[str, Any]:
    """A line as an object; one that is none (a fleet stream may hold another tool's
    lines) is of no session, and passes, as the view shows it."""
    try:
        line = orjson.loads(data)
    except orjson.JSONDecodeError:
        return {}
    return line if isinstance(line, dict) else {}


class RunFilter:
    """A :class:`translator.translate.sinks.Writer` passing the lines of the runs
    ``keep`` keeps."""

    def __init__(self, inner: Writer, keep: Filter) -> None:
        self.inner = inner
        self.selection = RunSelection(keep)
        self._lines = LineSplitter("stdout", sys.maxsize, strip_cr=False)  # no limit: ours

    @property
    def runs_dropped(self) -> int:
        return self.selection.runs_dropped

    def write(self, data: bytes, /) -> int:
        passes = self.selection.passes
        kept = [
            line.data + b"\n"
            for line in self._lines.feed(data)
            if line.data and passes(_parsed(line.data))
        ]
        if kept:
            self.inner.write(b"".join(kept))
        return len(data)

    def flush(self) -> None:
        self.inner.flush()

    def settle(self) -> None:
        """An input is over: as the writer it passes lines to settles."""
        settle(self.inner)

    def fileno(self) -> int:
        return self.inner.fileno()
