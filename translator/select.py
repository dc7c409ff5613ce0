"""Which runs ``convert`` keeps with ``--since/--until/--project/--agent/--session``:
a filter on the stream_v1 lines it writes, a whole run at a time (its init to its
result), so what passes is still framed as the contract says.

A run is kept when its init says so: its session id begins with ``--session``,
its agent's name is ``--agent``, its cwd holds ``--project``, and it began inside
``[--since, --until]``. A line of no run (none should be) passes. The filter parses
each line, so it costs something only when a filter is given.
"""

from __future__ import annotations

import sys
from typing import Any

import orjson

from streamv1.translator.batch import Writer
from streamv1.translator.ledger import Filter, Row
from streamv1.translator.lines import LineSplitter


class RunFilter:
    """A :class:`translator.batch.Writer` passing the lines of the runs ``keep`` keeps."""

    def __init__(self, inner: Writer, keep: Filter) -> None:
        self.inner = inner
        self.keep = keep
        self._open: dict[tuple[str, str | None], bool] = {}  # (session, its actor) → kept
        self._lines = LineSplitter("stdout", sys.maxsize, strip_cr=False)  # no limit: ours
        self.runs_dropped = 0

    def write(self, data: bytes, /) -> int:
        kept = [line.data + b"\n" for line in self._lines.feed(data)
                if line.data and self._passes(orjson.loads(line.data))]
        if kept:
            self.inner.write(b"".join(kept))
        return len(data)

    def flush(self) -> None:
        self.inner.flush()

    def fileno(self) -> int:
        return self.inner.fileno()

    def _passes(self, line: dict[str, Any]) -> bool:
        sid = str(line.get("session_id") or "")
        parent = line.get("parent_tool_use_id")
        key = (sid, parent if isinstance(parent, str) else None)
        if line.get("type") == "system" and line.get("subtype") == "init":
            kept = self._keeps(line)
            self._open[key] = kept
            self.runs_dropped += not kept
            return kept
        if key not in self._open:
            key = (sid, None)  # a nested actor's line inside its parent's run
        kept = self._open.get(key, True)
        if line.get("type") == "result" and key in self._open and (
                key[1] is None or parent == key[1]):
            del self._open[key]
        return kept

    def _keeps(self, init: dict[str, Any]) -> bool:
        """The sessions' rule (ledger.Filter) on the run as a row that begins and
        ends at its init: overlapping the window is beginning inside it."""
        agent = init.get("agent")
        ts, cwd = init.get("ts"), init.get("cwd")
        began = ts if isinstance(ts, str) else None  # (every line has one: the schema)
        return self.keep.keeps(Row(str(init.get("session_id") or ""),
                                   agent=agent.get("name") if isinstance(agent, dict) else None,
                                   project=cwd if isinstance(cwd, str) else None,
                                   started=began, ended=began))
