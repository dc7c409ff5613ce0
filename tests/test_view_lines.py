"""The view for people never fails on a line (#25 item 3): whatever a stream holds
(a fleet stream may carry another tool's lines, or lines no schema would pass),
each line is shown, as an event or as its text, and the view goes on."""

from __future__ import annotations

import io

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from streamv1.translator.view import PrettyWriter

_VALUE = st.recursive(
    st.none() | st.booleans() | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=20)
_KEYS = st.sampled_from([
    "type", "subtype", "session_id", "message", "content", "result", "usage",
    "total_cost_usd", "num_turns", "duration_ms", "parent_tool_use_id", "agent", "cwd",
    "extension", "task", "event", "is_error", "ts", "role", "input", "name", "text",
    "tool_use_id", "model_usage", "prompt"])
_WORDS = st.sampled_from(["system", "assistant", "user", "result", "stream_event", "init",
                          "error", "task_started", "task_notification", "tool_use",
                          "tool_result", "text", "thinking"])


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.dictionaries(_KEYS, _VALUE | _WORDS, max_size=8), min_size=1, max_size=5))
def test_any_json_object_is_shown_and_the_view_goes_on(lines: list[dict[str, object]]) -> None:
    """Before, {"type": "assistant", "message": "system"} ended the view with an
    AttributeError (a subscriber's traceback)."""
    out = io.StringIO()
    view = PrettyWriter(out)
    view.write(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    view.write(b'{"type":"result","session_id":"s","num_turns":1}\n')
    assert out.getvalue().rstrip().splitlines()[-1].startswith("s ")  # still showing


def test_a_line_that_is_no_json_object_is_shown_as_its_text() -> None:
    out = io.StringIO()
    view = PrettyWriter(out)
    view.write(b"not json\n[1,2]\n\"a string\"\n\xff\xfe broken utf-8\n")
    shown = out.getvalue().splitlines()
    assert shown[:3] == ["? not json", "? [1,2]", '? "a string"']
    assert shown[3].startswith("? ") and "broken utf-8" in shown[3]
