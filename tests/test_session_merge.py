"""The session merge's live rule for an actor in a file of its own (translator.translate.session):
lines of a file past its call spawning such an actor (a Spawn event) wait for the
actor's start while the daemon is patient, so its task_started comes where batch
conversion's time order puts it; not patient (or in batch), nothing waits."""

from __future__ import annotations

import orjson

from streamv1.translator.model.events import Event, Message, RunStart, Spawn
from streamv1.translator.translate.session import SessionMerge
from streamv1.translator.translate.translation import Totals, Translation

SID = "s-1"
CALL = "call_spawn"


def _pair() -> tuple[Translation, Translation, list[bytes]]:
    out: list[bytes] = []
    totals = Totals()
    owner = Translation("main.jsonl", out.append, totals, session_id=SID)
    child = Translation("child.jsonl", out.append, totals, session_id=SID)
    return owner, child, out


def _spawning(owner: Translation) -> None:
    owner.push([RunStart(SID, "2026-12-01T10:00:00.000Z", "codex", "openai")])
    owner.push(
        [
            Message(
                "assistant",
                SID,
                "2026-12-01T10:00:00.100Z",
                [{"type": "tool_use", "id": CALL, "name": "spawn_agent", "input": {}}],
            ),
            Spawn(CALL, SID),
        ]
    )
    owner.push(
        [
            Message(
                "user",
                SID,
                "2026-12-01T10:00:00.300Z",
                [{"type": "tool_result", "tool_use_id": CALL, "content": "ok"}],
            )
        ]
    )


def _child_start(child: Translation) -> None:
    events: list[Event] = [
        RunStart(
            SID,
            "2026-12-01T10:00:00.200Z",
            "codex",
            "openai",
            parent_tool_use_id=CALL,
            task={"task_id": "t"},
        )
    ]
    child.push(events)


def _kinds(out: list[bytes]) -> list[str]:
    lines = [orjson.loads(x) for raw in out for x in raw.splitlines()]
    return [line.get("subtype") or line["type"] for line in lines]


def test_lines_past_a_spawn_wait_live_for_the_actor_to_begin() -> None:
    owner, child, out = _pair()
    merge = SessionMerge(owner)
    _spawning(owner)
    asked: list[str] = []

    def patient(part: object, tool: str) -> bool:
        asked.append(tool)
        return True

    merge.drain(live=True, patient=patient)
    # The spawning call itself goes (split off before the Spawn); its answer waits.
    assert _kinds(out) == ["init", "assistant"]
    assert merge.pending and set(asked) == {CALL}
    merge.join(child)
    _child_start(child)
    merge.drain(live=True, patient=patient)
    kinds = _kinds(out)
    assert kinds[:3] == ["init", "assistant", "task_started"] and kinds[-1] == "user", kinds
    assert not merge.pending


def test_an_impatient_merge_and_batch_conversion_do_not_wait() -> None:
    for drain in ({"live": True, "patient": lambda part, tool: False}, {"live": False}):
        owner, _child, out = _pair()
        merge = SessionMerge(owner)
        _spawning(owner)
        merge.drain(**drain)  # type: ignore[arg-type]
        assert _kinds(out) == ["init", "assistant", "user"], drain
        assert not merge.pending


def test_an_actor_begun_before_the_merge_was_made_is_not_waited_for() -> None:
    """An actor whose lines the owner framed itself (inline) has begun: the merge
    made at its answer's Spawn (the daemon makes it then) does not wait for it."""
    owner, _child, out = _pair()
    owner.push([RunStart(SID, "2026-12-01T10:00:00.000Z", "claude-code", "anthropic")])
    owner.push(
        [
            Message(
                "assistant",
                SID,
                "2026-12-01T10:00:00.100Z",
                [{"type": "tool_use", "id": CALL, "name": "Task", "input": {}}],
            )
        ]
    )
    owner.push(
        [
            RunStart(
                SID, "2026-12-01T10:00:00.200Z", "claude-code", "anthropic", parent_tool_use_id=CALL
            )
        ]
    )
    merge = SessionMerge(owner)
    owner.push(
        [
            Spawn(CALL, SID),
            Message(
                "user",
                SID,
                "2026-12-01T10:00:00.300Z",
                [{"type": "tool_result", "tool_use_id": CALL, "content": "ok"}],
            ),
        ]
    )
    merge.drain(live=True, patient=lambda part, tool: True)
    assert not merge.pending
    assert _kinds(out)[:3] == ["init", "assistant", "task_started"] and _kinds(out)[-1] == "user"
