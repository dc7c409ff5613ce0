"""Nested actors' runs end with their parent's answer: batch conversion ends a
subagent's run at its file's end; live, a file has no end, so the run ends when
the parent's tool_result for the spawning call arrives (what is left in the
subagent's file read first).

Every transcript line passes here before the claims' gate: a subagent's init
names the spawning tool_use (so which file runs which call is known), a parent's
tool_result names the call it answered, and a source may name the actor's file
the line ends. Apart from the daemon's loop: ids kept, and the ends they make
handed to the round's last step.
"""

from __future__ import annotations

from collections.abc import Mapping

from streamv1.translator.model.events import JSON
from streamv1.translator.reading.sources import ended_by
from streamv1.translator.tail.follower import FileFollower


class ActorEnds:
    def __init__(self, followers: Mapping[str, FileFollower]) -> None:
        self.followers = followers
        # The tool_use ids and agent ids the parents answered, and which follower
        # runs which.
        self._answered: set[tuple[str, str]] = set()  # (session, tool_use id)
        self._answered_files: set[str] = set()  # nested actors' files their parents answered
        self._agent_runs: dict[tuple[str, str], str] = {}  # (session, tool_use) → agent file

    def note_line(self, path: str, line: JSON) -> None:
        """Every transcript line, before the gate: which follower runs a subagent (its
        init names the spawning tool_use), and which tool_uses a parent answered."""
        kind = line.get("type")
        parent = line.get("parent_tool_use_id")
        session = line.get("session_id")
        if not isinstance(session, str):
            return
        if kind == "system" and isinstance(parent, str) and line.get("subtype") == "init":
            follower = self.followers.get(path)
            if follower is None or follower.translation.framer.run_key == (session, parent):
                self._agent_runs[(session, parent)] = path  # its file's run, not an inline one
        elif kind == "user" and parent is None:
            # Also the actor whose run is not linked yet (its source names its file
            # from the line): ending it lets it find its spawner at last.
            self._answered_files.update(ended_by(path, line))
            content = (line.get("message") or {}).get("content")
            for block in content if isinstance(content, list) and self._agent_runs else ():
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    tool = block.get("tool_use_id")
                    if isinstance(tool, str) and (session, tool) in self._agent_runs:
                        self._answered.add((session, tool))

    def resumed(self, path: str, follower: FileFollower) -> None:
        """A file resumed from its checkpoint inside a subagent's run: the run is its."""
        run_key = follower.translation.framer.run_key
        if run_key is not None and run_key[1] is not None:
            self._agent_runs[(run_key[0], run_key[1])] = path  # a subagent's run

    def forget(self, path: str) -> None:
        for tool in [t for t, p in self._agent_runs.items() if p == path]:
            del self._agent_runs[tool]

    def take_ends(self) -> list[tuple[str, tuple[str, str] | None]]:
        """The subagent runs to end now: (the agent's file, the run it must be:
        session and spawning tool_use, if known)."""
        ends: list[tuple[str, tuple[str, str] | None]] = []
        for key in self._answered:
            spawned = self._agent_runs.pop(key, None)
            if spawned is not None:
                ends.append((spawned, key))
        for candidate in sorted(self._answered_files):
            if candidate in self.followers and all(candidate != p for p, _ in ends):
                ends.append((candidate, None))
        self._answered.clear()
        self._answered_files.clear()
        return ends
