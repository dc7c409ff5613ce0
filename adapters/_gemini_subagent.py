"""A subagent's file and the call that spawned it: found, then carried on its lines.

A subagent's ``chats/<parent session id>/<agent id>.jsonl`` is written before (or
while) its parent's file names it: the adapter holds its lines until the parent's
``toolCalls[]`` entry whose ``agentId`` is the file's is found (here, by reading
the parent's files as they grow) or handed on, and then marks them as that call's
(:func:`mark`); a subagent no parent names is a nested actor of its own
(:func:`own_actor`). Apart from the adapter: the adapter decides when to look and
what to hold; this knows how to look and what a link changes on a line.
"""

from __future__ import annotations

import os

import orjson

from streamv1.adapters._gemini_files import session_files
from streamv1.translator.model import events as ev
from streamv1.translator.reading.files import lines_of, open_regular


def _spawner_in(path: str, agent_id: str, start: int) -> tuple[str | None, int]:
    """The id of the tool call whose ``agentId`` is ``agent_id`` in a chat file,
    looking past byte ``start`` (complete lines only); and where to look next."""
    needle = f'"agentId":"{agent_id}"'.encode()
    try:
        with open_regular(path) as fh:
            fh.seek(start)
            at = start
            for line, n, whole in lines_of(fh):
                if not whole:
                    break
                at += n
                if needle not in line:
                    continue
                try:
                    rec = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                calls = rec.get("toolCalls") if isinstance(rec, dict) else None
                for call in calls if isinstance(calls, list) else ():
                    if isinstance(call, dict) and call.get("agentId") == agent_id:
                        cid = call.get("id")
                        if isinstance(cid, str):
                            return cid, at
    except OSError:
        return None, start
    return None, at


def spawner_of(path: str, agent_id: str, parent: str, searched: dict[str, int]) -> str | None:
    """The id of the call that spawned subagent ``agent_id`` (its file ``path``, in
    the folder of its parent session ``parent``), looked for in the parent's files:
    each only past where the last look at it ended (``searched``, updated here)."""
    chats = os.path.dirname(os.path.dirname(path))
    for name in session_files(chats, parent):
        file = os.path.join(chats, name)
        found, at = _spawner_in(file, agent_id, searched.get(file, 0))
        searched[file] = at
        if found is not None:
            return found
    return None


def mark(events: list[ev.Event], parent: str, session: str | None) -> None:
    """Lines of the subagent whose spawning call is ``parent``, filed under its
    parent's session (its folder's name)."""
    for event in events:
        if isinstance(event, ev.RunStart | ev.RunEnd | ev.Message):
            if event.parent_tool_use_id is None:
                event.parent_tool_use_id = parent
            event.session_id = session or event.session_id
        elif isinstance(event, ev.Note | ev.Unrecognized):
            event.parent_tool_use_id = parent
            event.session_id = session or event.session_id


def own_actor(events: list[ev.Event], agent_id: str | None) -> None:
    """Lines of a subagent no parent names: a nested actor, ``agent-<id>``."""
    name = f"agent-{agent_id}"
    for event in events:
        if isinstance(event, ev.RunStart | ev.RunEnd | ev.Message):
            event.actor = name
