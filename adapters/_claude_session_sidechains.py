"""Inline sidechains: a subagent's records kept in its parent's file (1.0.x-2.0.x).

Apart from the adapter's dispatch because they are a protocol of their own: which
run a sidechain record belongs to (its ``parentUuid`` chain), the Task call that
spawned it (the one whose ``input.prompt`` is its prompt: the only link 1.0.x
writes), and when its run ends (the spawner's result, or the parent turn's end).
Each such run is a ``_Side`` of adapters/claude_session.py. The state is the
adapter's own (its ``_sides``, ``_open_sides``, ``_held_sides``, ``_task_prompts``:
it checkpoints them); these functions are what works on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streamv1.adapters import _claude as cc
from streamv1.adapters import _claude_session_lines as lines
from streamv1.adapters import _claude_session_turns as turns
from streamv1.translator.model import events as ev

if TYPE_CHECKING:
    from streamv1.adapters.claude_session import ClaudeSessionAdapter, _Side


def side_of(a: ClaudeSessionAdapter, rec: dict[str, Any]) -> _Side | None:
    """The inline sidechain run a record belongs to (by its parentUuid chain)."""
    parent_uuid = rec.get("parentUuid")
    side = a._sides.get(parent_uuid) if isinstance(parent_uuid, str) else None
    uuid = rec.get("uuid")
    if side is not None and isinstance(uuid, str):
        a._sides[uuid] = side
    return side


def user(
    a: ClaudeSessionAdapter,
    rec: dict[str, Any],
    message: dict[str, Any],
    content: Any,
    ts: str | None,
    out: list[ev.Event],
) -> None:
    """A sidechain user record: its run's prompt, or a line of its run."""
    side = side_of(a, rec)
    if side is None or (rec.get("parentUuid") is None and not cc.has_tool_result(content)):
        if not cc.has_tool_result(content):
            _start(a, rec, content, ts, out)
            return
        side = _start(a, rec, None, ts, out)
    if rec.get("isMeta") is True:
        emit(side, ev.Dropped("user/isMeta", a._session), out)
        return
    line = lines.user(rec, message, content, ts, a._sid, side.parent)
    turns.after_user_record(side.turn, line)
    emit(side, line, out)


def assistant(
    a: ClaudeSessionAdapter,
    rec: dict[str, Any],
    message: dict[str, Any],
    ts: str | None,
    out: list[ev.Event],
) -> None:
    """A sidechain assistant record: a line of its run (a run of its own where its
    chain starts nowhere in this file)."""
    side = side_of(a, rec) or _start(a, rec, None, ts, out)
    line = lines.assistant(rec, message, ts, a._sid, side.parent, a._task_prompts)
    emit(side, line, out)
    turns.after_reply(side.turn, rec, line)


def _start(
    a: ClaudeSessionAdapter, rec: dict[str, Any], content: Any, ts: str | None, out: list[ev.Event]
) -> _Side:
    """A sidechain's first record, its prompt: the subagent's own run begins. Its
    spawning tool_use is the parent's Task call whose ``input.prompt`` is this
    prompt (the only link 1.0.x writes); without one the link is not invented.
    ``content`` None: a sidechain record whose chain starts nowhere in this file
    (no prompt to link by): an unlinked run of its own all the same, never a
    line of the parent's run."""
    from streamv1.adapters.claude_session import _Side  # (that module imports this one)

    parent = a._task_prompts.get(cc.text_of(content) or "") if content is not None else None
    for old in [s for s in a._open_sides if s.parent == parent]:
        _end(a, old, out)
    side = _Side(parent)
    uuid = rec.get("uuid")
    if isinstance(uuid, str):
        a._sides[uuid] = side
    a._open_sides.append(side)
    start = lines.run_start(rec, content, ts, a._sid, "subagent", parent)
    if content is None:
        start.extension = {}  # not a prompt record: its keys stay on its own line
    emit(side, start, out)
    return side


def emit(side: _Side, event: ev.Event, out: list[ev.Event]) -> None:
    """Out at once where the run is linked; held (for after the parent's run) where not."""
    (out if side.parent is not None else side.events).append(event)


def end_answered(a: ClaudeSessionAdapter, content: Any, out: list[ev.Event]) -> None:
    """The parent got a subagent's answer: that subagent's run is over."""
    if not a._open_sides or not isinstance(content, list):
        return
    ids = {
        b.get("tool_use_id")
        for b in content
        if isinstance(b, dict) and isinstance(b.get("tool_use_id"), str)
    }
    for side in [s for s in a._open_sides if s.parent in ids]:
        _end(a, side, out)


def end_all(a: ClaudeSessionAdapter, out: list[ev.Event]) -> None:
    """The parent's turn ended: so did every sidechain still open in it."""
    for side in list(a._open_sides):
        _end(a, side, out)


def _end(a: ClaudeSessionAdapter, side: _Side, out: list[ev.Event]) -> None:
    """A sidechain's run ends, inferred: the file marks no end of it."""
    end = turns.result_line(side.turn, a._sid, None, inferred=True, parent=side.parent)
    emit(side, end, out)
    a._open_sides.remove(side)
    if side.parent is None:
        a._held_sides.append(side)


def release_held(a: ClaudeSessionAdapter, out: list[ev.Event]) -> None:
    """The unlinked runs that ended, after their parent's run: out now, in order."""
    for side in a._held_sides:
        out += side.events
    a._held_sides = []
