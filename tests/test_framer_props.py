"""Property tests of the framer: whatever events arrive, in whatever order, the
output keeps the contract (init first, seq +1, one result last, schema-valid)."""

from __future__ import annotations

from typing import Any

import orjson
from helpers import framing_violations, schema_violations
from hypothesis import given
from hypothesis import strategies as st

from streamv1.translator.model.events import (
    Delta,
    Dropped,
    Event,
    Message,
    Note,
    Problem,
    RunEnd,
    RunStart,
    Unrecognized,
    Usage,
)
from streamv1.translator.model.framing import Framer
from streamv1.translator.output.encode import encode

SID = "sess"
_ts = st.one_of(st.none(), st.just("2026-11-30T10:00:00.000Z"), st.just("2026-11-30T10:00:01.500Z"))
# A nested actor: its start, lines and end join the open run (a task_started line,
# lines with its id, no line for its end); with no run open it is a run of its own.
_parent = st.one_of(st.none(), st.just("toolu_1"))
_usage = st.builds(
    Usage, st.integers(0, 99), st.integers(0, 99), st.integers(0, 99), st.integers(0, 99)
)
_block = st.sampled_from(
    [
        {"type": "text", "text": "hi"},
        {"type": "thinking", "thinking": "hmm", "extension": {"signature": "s"}},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok", "is_error": False},
    ]
)

events = st.one_of(
    st.builds(
        RunStart,
        st.just(SID),
        _ts,
        st.just("agent"),
        st.just("prov"),
        model=st.one_of(st.none(), st.just("m")),
        partial_messages=st.booleans(),
        parent_tool_use_id=_parent,
    ),
    st.builds(
        Message,
        st.sampled_from(["assistant", "user"]),
        st.just(SID),
        _ts,
        st.lists(_block, min_size=1, max_size=2),
        message_id=st.sampled_from([None, "msg_1", "msg_2"]),
        parent_tool_use_id=_parent,
        usage=st.one_of(st.none(), _usage),
        model=st.sampled_from([None, "m", "n"]),
        stop_reason=st.sampled_from([None, "end_turn", "tool_use"]),
    ),
    st.builds(
        Delta,
        st.just(SID),
        _ts,
        st.just(
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "text_delta", "text": "h"},
            }
        ),
    ),
    st.builds(
        Note,
        st.sampled_from(["status", "task_progress"]),
        st.just(SID),
        _ts,
        st.just({"status": "requesting", "task": {"x": 1}}),
    ),
    st.builds(
        Problem, st.just("bad"), st.just("f.jsonl"), st.integers(1, 9), _ts, fatal=st.booleans()
    ),
    st.builds(Unrecognized, st.just("new_type"), st.just(SID), _ts, st.just({"type": "new"})),
    st.builds(Dropped, st.sampled_from(["attachment", "summary"])),
    st.builds(
        RunEnd,
        st.just(SID),
        _ts,
        subtype=st.sampled_from([None, "success", "error_max_turns", "interrupted"]),
        num_turns=st.one_of(st.none(), st.integers(0, 5)),
        usage=st.one_of(st.none(), _usage),
        total_cost_usd=st.one_of(st.none(), st.just(0.5)),
        parent_tool_use_id=_parent,
    ),
)


def frame(evs: list[Event]) -> bytes:
    return frame_counted(evs)[0]


def frame_counted(evs: list[Event]) -> tuple[bytes, Framer]:
    framer = Framer(clock=lambda: "2026-01-01T00:00:00.000Z", session_hint=SID)
    out: list[dict[str, Any]] = []
    for e in evs:
        out += framer.push(e)
    out += framer.finish()
    return b"".join(encode(line) for line in out), framer


@given(st.lists(events, max_size=40))
def test_any_event_sequence_frames_into_a_valid_stream(evs: list[Event]) -> None:
    data = frame(evs)
    if not data:
        # Nothing at all, or only drops and ends of nested actors whose run is not
        # open (nothing to end): no run is invented.
        assert all(
            isinstance(e, Dropped) or (isinstance(e, RunEnd) and e.parent_tool_use_id) for e in evs
        )
        return
    assert framing_violations(data) == []
    assert schema_violations(data) == []
    lines = [orjson.loads(x) for x in data.splitlines()]
    inits = sum(1 for x in lines if x["type"] == "system" and x.get("subtype") == "init")
    results = sum(1 for x in lines if x["type"] == "result")
    assert inits == results >= 1


def _made_by_framer(line: dict[str, Any]) -> bool:
    return line["type"] == "result" or line.get("subtype") in (
        "init",
        "task_started",
        "task_notification",
    )


@given(st.lists(events, max_size=40))
def test_every_line_event_becomes_exactly_one_line(evs: list[Event]) -> None:
    """...or, for a system note after the input's last run, is counted (no run is
    made for it)."""
    data, framer = frame_counted(evs)
    lines = [orjson.loads(x) for x in data.splitlines()]
    kinds = (Message, Delta, Note, Problem, Unrecognized)
    produced = sum(1 for x in lines if not _made_by_framer(x))
    between = sum(n for k, n in framer.stats.dropped.items() if k.startswith("between_runs/"))
    assert produced + between == sum(1 for e in evs if isinstance(e, kinds))


@given(st.lists(events, max_size=40))
def test_every_run_start_is_an_init_or_a_task_started(evs: list[Event]) -> None:
    """A nested actor's start inside an open run is that run's task_started line;
    any other start opens a run. Never both, never neither."""
    lines = [orjson.loads(x) for x in frame(evs).splitlines()]
    inits = sum(
        1
        for x in lines
        if x.get("subtype") == "init" and not x.get("extension", {}).get("synthetic")
    )
    started = sum(1 for x in lines if x.get("subtype") == "task_started")
    assert inits + started == sum(1 for e in evs if isinstance(e, RunStart))


def test_a_nested_actor_is_lines_of_the_open_run() -> None:
    """A subagent's start, lines and end inside its parent's run: one init, one
    result, seq of the one run; the result's usage is the run's own actor's, its
    model_usage every actor's."""
    own, theirs = Usage(10, 5, 0, 0), Usage(1, 2, 3, 4)
    evs: list[Event] = [
        RunStart(SID, "2026-11-30T10:00:00.000Z", "a", "p"),
        Message(
            "assistant",
            SID,
            None,
            [{"type": "tool_use", "id": "toolu_1", "name": "Agent", "input": {}}],
            message_id="m1",
            usage=own,
            model="m",
        ),
        RunStart(
            SID,
            None,
            "a",
            "p",
            agent_role="general-purpose",
            parent_tool_use_id="toolu_1",
            task={"task_id": "a1", "description": "count"},
            extension={"prompt": "count them"},
        ),
        Message(
            "assistant",
            SID,
            None,
            [{"type": "text", "text": "2"}],
            message_id="m1",
            usage=theirs,
            model="n",
            parent_tool_use_id="toolu_1",
        ),
        RunEnd(SID, None, parent_tool_use_id="toolu_1"),
        Message(
            "user", SID, None, [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "2"}]
        ),
        RunEnd(SID, None),
    ]
    lines = [orjson.loads(x) for x in frame(evs).splitlines()]
    assert [x["seq"] for x in lines] == list(range(len(lines)))
    assert [x.get("subtype", x["type"]) for x in lines] == [
        "init",
        "assistant",
        "task_started",
        "assistant",
        "task_notification",
        "user",
        "success",
    ]
    # The tool result answers the actor's spawner, and no task_notification said its
    # end: the framer says it, with what is known.
    assert lines[4]["task"] == {"tool_use_id": "toolu_1"} and lines[4]["task_id"] == "a1"
    started = lines[2]
    assert started["subtype"] == "task_started" and "parent_tool_use_id" not in started
    assert started["task_id"] == "a1"
    assert started["task"] == {
        "description": "count",
        "tool_use_id": "toolu_1",
        "prompt": "count them",
        "subagent_type": "general-purpose",
    }
    assert lines[3]["parent_tool_use_id"] == "toolu_1"
    result = lines[-1]
    assert result["usage"] == own.as_dict() | {"cache_read": 0, "cache_creation": 0}
    assert result["model_usage"] == {"m": own.as_dict(), "n": theirs.as_dict()}
    assert result["num_turns"] == 1


def test_usage_counts_each_api_message_once() -> None:
    u = Usage(10, 5, 100, 7)
    evs: list[Event] = [RunStart(SID, None, "a", "p")]
    for block in (
        {"type": "text", "text": "a"},
        {"type": "tool_use", "id": "t", "name": "x", "input": {}},
    ):
        evs.append(Message("assistant", SID, None, [block], message_id="msg_1", usage=u, model="m"))
    evs.append(RunEnd(SID, None))
    last = orjson.loads(frame(evs).splitlines()[-1])
    assert last["usage"] == {
        "input_tokens": 10,
        "output_tokens": 5,
        "cache_read": 100,
        "cache_creation": 7,
    }
    assert last["num_turns"] == 1
    assert last["model_usage"] == {"m": last["usage"]}


def test_a_run_cut_off_ends_interrupted() -> None:
    evs: list[Event] = [
        RunStart(SID, None, "a", "p"),
        Message("assistant", SID, None, [{"type": "text", "text": "par"}]),
    ]
    last = orjson.loads(frame(evs).splitlines()[-1])
    assert last["subtype"] == "interrupted" and last["is_error"] is True
