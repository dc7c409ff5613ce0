"""The view for people never fails on a line (#25 item 3): whatever a stream holds
(a fleet stream may carry another tool's lines, or lines no schema would pass),
each line is shown, as an event or as its text, and the view goes on."""

from __future__ import annotations

import io
from pathlib import Path

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamv1.translator.views.pretty import PrettyWriter

_VALUE = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**63), max_value=2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
_KEYS = st.sampled_from(
    [
        "type",
        "subtype",
        "session_id",
        "message",
        "content",
        "result",
        "usage",
        "total_cost_usd",
        "num_turns",
        "duration_ms",
        "parent_tool_use_id",
        "agent",
        "cwd",
        "extension",
        "task",
        "event",
        "is_error",
        "ts",
        "role",
        "input",
        "name",
        "text",
        "tool_use_id",
        "model_usage",
        "prompt",
    ]
)
_WORDS = st.sampled_from(
    [
        "system",
        "assistant",
        "user",
        "result",
        "stream_event",
        "init",
        "error",
        "task_started",
        "task_notification",
        "tool_use",
        "tool_result",
        "text",
        "thinking",
    ]
)


@settings(max_examples=1500, deadline=None)
@given(st.lists(st.dictionaries(_KEYS, _VALUE | _WORDS, max_size=8), min_size=1, max_size=5))
def test_any_json_object_is_shown_and_the_view_goes_on(lines: list[dict[str, object]]) -> None:
    """Before, {"type": "assistant", "message": "system"} ended the view with an
    AttributeError (a subscriber's traceback)."""
    out = io.StringIO()
    view = PrettyWriter(out)
    view.write(b"".join(orjson.dumps(line) + b"\n" for line in lines))
    view.write(b'{"type":"result","session_id":"s","num_turns":1}\n')
    view.flush()  # (what every writer's user does: lines are printed together)
    assert out.getvalue().rstrip().splitlines()[-1].startswith("s ")  # still showing


def test_each_line_is_shown_once() -> None:
    """A review found it: an init whose extension is no object printed its line,
    then failed, then printed it again as text."""
    out = io.StringIO()
    view = PrettyWriter(out)
    view.write(b'{"type":"system","subtype":"init","session_id":"s","extension":"x"}\n')
    view.flush()
    assert len(out.getvalue().splitlines()) == 1


def test_a_line_that_is_no_json_object_is_shown_as_its_text() -> None:
    out = io.StringIO()
    view = PrettyWriter(out)
    view.write(b'not json\n[1,2]\n"a string"\n\xff\xfe broken utf-8\n')
    view.flush()
    shown = out.getvalue().splitlines()
    assert shown[:3] == ["? not json", "? [1,2]", '? "a string"']
    assert shown[3].startswith("? ") and "broken utf-8" in shown[3]


def test_a_run_ended_before_its_first_file_gives_the_terminal_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A review found it: the progress display began before the inputs were
    grouped by session (seconds, for thousands of files), outside the run's
    try: a Ctrl-C then left the cursor hidden and stderr replaced by the
    display's proxy. Whatever ends the run, the display ends with it."""
    import sys

    from rich.console import Console

    from streamv1.translator.exits import Interrupted
    from streamv1.translator.translate import many_inputs

    for name in ("a.jsonl", "b.jsonl"):
        (tmp_path / name).write_text("{}\n")
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=100)
    before = sys.stderr

    def interrupted(jobs: object) -> object:
        raise Interrupted(2)

    monkeypatch.setattr(many_inputs, "sessions", interrupted)
    with pytest.raises(Interrupted):
        many_inputs.run(
            [
                many_inputs.Job(str(tmp_path / "a.jsonl")),
                many_inputs.Job(str(tmp_path / "b.jsonl")),
            ],
            io.BytesIO(),
            many_inputs.Options(),
            1,
            progress=True,
            console=console,
        )
    assert sys.stderr is before
    assert screen.getvalue().endswith("\x1b[?25h")  # the cursor shown again
