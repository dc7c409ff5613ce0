"""Property tests of the framer: whatever events arrive, in whatever order, the
output keeps the contract (init first, seq +1, one result last, schema-valid)."""

from __future__ import annotations

from typing import Any

import orjson
from helpers import framing_violations, schema_violations
from hypothesis import given
from hypothesis import strategies as st

from streamv1.translator.encode import encode
from streamv1.translator.events import (
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
from streamv1.translator.framing import Framer

SID = "sess"
_ts = st.one_of(st.none(), st.just("2026-11-30T10:00:00.000Z"), st.just("2026-11-30T10:00:01.500Z"))
# A nested actor: its lines join the input's run, or a run of its own that opens
# beside the input's run (an inline subagent) and that a RunEnd with its id closes.
_parent = st.one_of(st.none(), st.just("toolu_1"))
_usage = st.builds(Usage, st.integers(0, 99), st.integers(0, 99), st.integers(0, 99),
                   st.integers(0, 99))
_block = st.sampled_from(
    [
        {"type": "text", "text": "hi"},
        {"type": "thinking", "thinking": "hmm", "extension": {"signature": "s"}},
        {"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {"command": "ls"}},
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "ok", "is_error": False},
    ]
)

events = st.one_of(
    st.builds(RunStart, st.just(SID), _ts, st.just("agent"), st.just("prov"),
              model=st.one_of(st.none(), st.just("m")), partial_messages=st.booleans(),
              parent_tool_use_id=_parent),
    st.builds(Message, st.sampled_from(["assistant", "user"]), st.just(SID), _ts,
              st.lists(_block, min_size=1, max_size=2),
              message_id=st.sampled_from([None, "msg_1", "msg_2"]), parent_tool_use_id=_parent,
              usage=st.one_of(st.none(), _usage), model=st.sampled_from([None, "m", "n"]),
              stop_reason=st.sampled_from([None, "end_turn", "tool_use"])),
    st.builds(Delta, st.just(SID), _ts,
              st.just({"type": "content_block_delta", "index": 0,
                       "delta": {"type": "text_delta", "text": "h"}})),
    st.builds(Note, st.sampled_from(["status", "task_started"]), st.just(SID), _ts,
              st.just({"status": "requesting", "task": {"x": 1}})),
    st.builds(Problem, st.just("bad"), st.just("f.jsonl"), st.integers(1, 9), _ts,
              fatal=st.booleans()),
    st.builds(Unrecognized, st.just("new_type"), st.just(SID), _ts, st.just({"type": "new"})),
    st.builds(Dropped, st.sampled_from(["attachment", "summary"])),
    st.builds(RunEnd, st.just(SID), _ts,
              subtype=st.sampled_from([None, "success", "error_max_turns", "interrupted"]),
              num_turns=st.one_of(st.none(), st.integers(0, 5)),
              usage=st.one_of(st.none(), _usage),
              total_cost_usd=st.one_of(st.none(), st.just(0.5)),
              parent_tool_use_id=_parent),
)


def frame(evs: list[Event]) -> bytes:
    framer = Framer(clock=lambda: "2026-01-01T00:00:00.000Z", session_hint=SID)
    out: list[dict[str, Any]] = []
    for e in evs:
        out += framer.push(e)
    out += framer.finish()
    return b"".join(encode(line) for line in out)


@given(st.lists(events, max_size=40))
def test_any_event_sequence_frames_into_a_valid_stream(evs: list[Event]) -> None:
    data = frame(evs)
    if not data:
        # Nothing at all, or only drops with nothing else: no run is invented.
        assert all(isinstance(e, Dropped) for e in evs) or not evs
        return
    assert framing_violations(data) == []
    assert schema_violations(data) == []
    lines = [orjson.loads(x) for x in data.splitlines()]
    inits = sum(1 for x in lines if x["type"] == "system" and x.get("subtype") == "init")
    results = sum(1 for x in lines if x["type"] == "result")
    assert inits == results >= 1


@given(st.lists(events, max_size=40))
def test_every_line_event_becomes_exactly_one_line(evs: list[Event]) -> None:
    data = frame(evs)
    lines = [orjson.loads(x) for x in data.splitlines()]
    kinds = (Message, Delta, Note, Problem, Unrecognized)
    produced = sum(1 for x in lines if not (x["type"] == "result" or x.get("subtype") == "init"))
    assert produced == sum(1 for e in evs if isinstance(e, kinds))


def test_usage_counts_each_api_message_once() -> None:
    u = Usage(10, 5, 100, 7)
    evs: list[Event] = [RunStart(SID, None, "a", "p")]
    for block in ({"type": "text", "text": "a"}, {"type": "tool_use", "id": "t", "name": "x",
                                                   "input": {}}):
        evs.append(Message("assistant", SID, None, [block], message_id="msg_1", usage=u,
                           model="m"))
    evs.append(RunEnd(SID, None))
    last = orjson.loads(frame(evs).splitlines()[-1])
    assert last["usage"] == {"input_tokens": 10, "output_tokens": 5, "cache_read": 100,
                             "cache_creation": 7}
    assert last["num_turns"] == 1
    assert last["model_usage"] == {"m": last["usage"]}


def test_a_run_cut_off_ends_interrupted() -> None:
    evs: list[Event] = [RunStart(SID, None, "a", "p"),
                        Message("assistant", SID, None, [{"type": "text", "text": "par"}])]
    last = orjson.loads(frame(evs).splitlines()[-1])
    assert last["subtype"] == "interrupted" and last["is_error"] is True
