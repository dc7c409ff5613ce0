"""``codex exec --json`` events: the lossy live view of a Codex thread.

``thread.started`` names the session; ``turn.started`` begins a run and
``turn.completed`` / ``turn.failed`` end it; ``item.*`` events carry the model's
text and reasoning and the tool items, a tool_use at ``item.started`` and its
tool_result at ``item.completed``. Apart from the rollout's records because the
two views share no record type: what they share is the adapter's run framing and
the usage rule. ``turn.completed.usage`` is the thread's running total, so a run's
usage is what it grew by since the previous one in the stream.

Functions of the adapter ``a`` (:class:`~streamv1.adapters.codex.CodexAdapter`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streamv1.adapters._codex_fields import item_failed, obj_field
from streamv1.adapters._codex_usage import usage_since
from streamv1.translator.model import events as ev
from streamv1.translator.reading.sources import BodyError, str_field

if TYPE_CHECKING:
    from streamv1.adapters.codex import CodexAdapter

#: exec items that are tool calls.
_EXEC_TOOLS = frozenset(
    {"command_execution", "file_change", "mcp_tool_call", "collab_tool_call", "web_search"}
)
#: exec tool item fields that are the call's result, not its input.
_EXEC_RESULT_KEYS = ("id", "type", "status", "aggregated_output", "exit_code", "result", "error")


def exec_event(a: CodexAdapter, kind: str, record: dict[str, Any], out: list[ev.Event]) -> None:
    """An exec --json event, by its type."""
    if kind == "thread.started":
        thread = str_field(record, "thread_id", kind, required=True)
        if a._run is not None:
            a._end_inferred(out, None, cut=True)
        if thread != a._exec_thread:
            a._exec_total = None
        a._exec_thread = thread
        if a._given is None:
            a._session = thread
        a._exec_started.clear()
        out.append(ev.Dropped("thread.started", a._session))
    elif kind == "turn.started":
        a._begin(None, None, True, out)
        out.append(ev.Dropped("turn.started", a._session))
    elif kind == "turn.completed":
        _turn_completed(a, record, out)
    elif kind == "turn.failed":
        error = obj_field(record, "error", kind)
        message = str_field(error, "message", "turn.failed.error")
        a._ensure_run(None, out)
        ext = {k: v for k, v in record.items() if k not in ("type", "error")}
        extra = {k: v for k, v in error.items() if k != "message"}
        if extra:
            ext["error"] = extra
        a._end(
            out,
            ev.RunEnd(
                a._sid,
                None,
                subtype="error_during_execution",
                is_error=True,
                result=message,
                extension=ext,
            ),
        )
    elif kind == "error":
        message = str_field(record, "message", kind)
        a._ensure_run(None, out)
        fields = {k: v for k, v in record.items() if k not in ("type", "message")}
        a._line(
            out,
            ev.Note("warning", a._sid, None, {"kind": "error", "message": message or ""}, fields),
        )
    elif kind == "item.updated":
        out.append(ev.Dropped("item.updated", a._session))
    else:
        _exec_item(a, kind, obj_field(record, "item", kind, required=True), record, out)


def _turn_completed(a: CodexAdapter, record: dict[str, Any], out: list[ev.Event]) -> None:
    raw = record.get("usage")
    usage = None
    if raw is not None:
        usage = usage_since(raw, a._exec_total, "usage")
        a._exec_total = raw
    a._ensure_run(None, out)
    ext: ev.JSON = {k: v for k, v in record.items() if k not in ("type", "usage")}
    if raw is not None:
        ext["thread_usage"] = raw
    a._end(
        out,
        ev.RunEnd(a._sid, None, subtype="success", is_error=False, usage=usage, extension=ext),
    )


def _exec_item(
    a: CodexAdapter, kind: str, item: dict[str, Any], record: dict[str, Any], out: list[ev.Event]
) -> None:
    item_type = str_field(item, "type", "item", required=True)
    item_id = str_field(item, "id", "item", required=True)
    if item_type is None or item_id is None:
        raise ev.ImpossibleState("item_type or item_id is not set")
    a._ensure_run(None, out)
    if item_type in _EXEC_TOOLS:
        if item_id not in a._exec_started:
            a._exec_started.add(item_id)
            tool_input = {k: v for k, v in item.items() if k not in _EXEC_RESULT_KEYS}
            a._line(
                out,
                ev.Message(
                    "assistant",
                    a._sid,
                    None,
                    [ev.tool_use(item_id, item_type, tool_input)],
                ),
            )
        if kind == "item.completed":
            a._exec_started.discard(item_id)
            _exec_tool_done(a, item_type, item_id, item, out)
        return
    if kind == "item.started":
        out.append(ev.Dropped(f"item.started/{item_type}", a._session))
        return
    text = item.get("text")
    if item_type == "agent_message":
        if not isinstance(text, str):
            raise BodyError("agent_message.text is not a string")
        if a._run is None:
            raise ev.ImpossibleState("a._run is not set")
        a._run.answer = text
        a._line(out, ev.Message("assistant", a._sid, None, [{"type": "text", "text": text}]))
    elif item_type == "reasoning":
        if not isinstance(text, str):
            raise BodyError("reasoning.text is not a string")
        a._line(
            out, ev.Message("assistant", a._sid, None, [{"type": "thinking", "thinking": text}])
        )
    elif item_type == "error":
        message = str_field(item, "message", "error")
        a._line(
            out,
            ev.Note(
                "warning",
                a._sid,
                None,
                {"kind": "error_item", "message": message or "", "id": item_id},
            ),
        )
    else:
        a._line(out, ev.Unrecognized(f"item.completed/{item_type}", a._session, None, record))


def _exec_tool_done(
    a: CodexAdapter, item_type: str, item_id: str, item: dict[str, Any], out: list[ev.Event]
) -> None:
    result: Any = item.get("aggregated_output")
    if result is None:
        result = item.get("result")
    if result is None:
        result = ""
    detail = {k: item[k] for k in ("status", "exit_code", "error", "changes") if k in item}
    a._tool_result(
        out, None, item_id, result, item_failed(item), detail=detail, has_detail=bool(detail)
    )
