"""The Codex UI's ``item_completed`` items in a rollout: the prompt, tool
executions and subagents.

``UserMessage`` is the typed prompt. An execution item (``CommandExecution``,
``FileChange``, ``McpToolCall``) whose id is a call's is that call's own
execution: kept for the call's tool_result. One completed while a code-mode
``exec`` call is open is one of the script's nested calls: a tool_use/tool_result
pair of its own, under the exec call. ``SubAgentActivity`` names the call that
spawned a child thread, and says when the child is done. Apart because these
items are the UI's view of what the response items said: most repeat them, and
what they add is tied to calls the adapter already holds.

Functions of the adapter ``a`` (:class:`~streamv1.adapters.codex.CodexAdapter`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streamv1.adapters._codex_fields import item_failed, texts_of
from streamv1.translator.model import events as ev
from streamv1.translator.reading.sources import str_field

if TYPE_CHECKING:
    from streamv1.adapters.codex import CodexAdapter

#: UI items that are the execution of a tool (nested in code mode, a call's own otherwise).
_EXECUTIONS = {
    "CommandExecution": "command_execution",
    "FileChange": "file_change",
    "McpToolCall": "mcp_tool_call",
}
#: A nested execution item's fields its tool_use / tool_result lines carry already.
_SAID = frozenset({"id", "type", "command", "cwd", "changes", "aggregated_output", "result"})
#: UI items that repeat a response item (dropped on purpose).
_REPEATS = frozenset({"AgentMessage", "Reasoning"})


def item_completed(
    a: CodexAdapter,
    item: dict[str, Any],
    ts: str | None,
    out: list[ev.Event],
    thread: str | None = None,
    turn: str | None = None,
) -> None:
    """An ``event_msg/item_completed`` item (of the thread ``thread``, in its turn
    ``turn``), by its type."""
    kind = str_field(item, "type", "item", required=True)
    if kind is None:
        raise ev.ImpossibleState("kind is not set")
    if thread is not None and a._thread is not None and thread != a._thread:
        # Another thread's item: a review child's, which the parent's file mirrors
        # while the review runs; the child's own rollout has it.
        out.append(ev.Dropped(f"item_completed/{kind}/other_thread", a._session))
        return
    if kind == "UserMessage":
        a._event_prompts = True
        a._prompt = None
        a._user_prompt(
            ev.Message(
                "user",
                a._sid,
                ts,
                _prompt_blocks(item.get("content")),
                extension={"id": item["id"]} if "id" in item else {},
            ),
            out,
        )
    elif kind in _REPEATS:
        out.append(ev.Dropped(f"item_completed/{kind}", a._session))
    elif kind in _EXECUTIONS:
        _execution(a, kind, item, ts, out)
    elif kind == "CollabAgentToolCall":
        call = item.get("id")
        if isinstance(call, str) and call in a._calls:
            a._executions[call] = {k: v for k, v in item.items() if k != "id"}
            out.append(ev.Dropped("item_completed/CollabAgentToolCall", a._session))
        else:
            a._unknown(
                out, ev.Unrecognized("item_completed/CollabAgentToolCall", a._session, ts, item)
            )
    elif kind == "SubAgentActivity":
        _subagent_activity(a, item, ts, out)
    elif kind == "WebSearch" and isinstance(item.get("id"), str):
        # The UI's view of a web_search_call (written just before it, same id): what
        # that call's tool_use says it searched.
        a._executions[item["id"]] = {k: v for k, v in item.items() if k not in ("id", "type")}
        out.append(ev.Dropped("item_completed/WebSearch", a._session))
    elif kind == "EnteredReviewMode":
        _review_entered(a, item, ts, out, turn)
    elif kind == "ExitedReviewMode" and a._review is not None:
        _review_exited(a, item, ts, out)
    else:
        a._unknown(out, ev.Unrecognized(f"item_completed/{kind}", a._session, ts, item))


def _execution(
    a: CodexAdapter, kind: str, item: dict[str, Any], ts: str | None, out: list[ev.Event]
) -> None:
    item_id = str_field(item, "id", kind, required=True)
    if item_id is None:
        raise ev.ImpossibleState("item_id is not set")
    if item_id in a._calls:
        # A direct tool's own execution: its detail goes with the call's result.
        a._executions[item_id] = {k: v for k, v in item.items() if k != "id"}
        out.append(ev.Dropped(f"item_completed/{kind}", a._session))
        return
    a._flush(out)
    a._ensure_run(ts, out)
    parent = a._exec_open[-1] if a._exec_open else None
    name = _EXECUTIONS[kind]
    tool_input, result, failed = _execution_parts(kind, item)
    a._line(
        out,
        ev.Message(
            "assistant",
            a._sid,
            ts,
            [ev.tool_use(item_id, name, tool_input)],
            parent_tool_use_id=parent,
        ),
    )
    # The item's other fields (what the tool_use and tool_result do not say already).
    rest = {k: v for k, v in item.items() if k not in _SAID}
    a._tool_result(out, ts, item_id, result, failed, detail=rest, has_detail=True, parent=parent)


def _subagent_activity(
    a: CodexAdapter, item: dict[str, Any], ts: str | None, out: list[ev.Event]
) -> None:
    child = item.get("agent_thread_id")
    kind = item.get("kind")
    call = item.get("id")
    if kind == "started" and isinstance(child, str) and isinstance(call, str):
        a._spawned[child] = call
        out.append(ev.Dropped("item_completed/SubAgentActivity/started", a._session))
        # The child's rollout holds its lines: said after the spawning call (its
        # response may still be waiting for its usage).
        if a._response is not None and any(b.get("id") == call for b in a._response.blocks):
            a._spawn_pending.add(call)
        else:
            out.append(ev.Spawn(call, a._session))
    elif kind == "completed" and isinstance(child, str) and child in a._spawned:
        a._flush(out)
        a._ensure_run(ts, out)
        fields: ev.JSON = {
            "task_id": child,
            "status": "completed",
            "task": {"tool_use_id": a._spawned[child]},
        }
        ext = {k: v for k, v in item.items() if k not in ("type", "agent_thread_id", "kind")}
        a._line(out, ev.Note("task_notification", a._sid, ts, fields, ext))
    else:
        a._unknown(out, ev.Unrecognized("item_completed/SubAgentActivity", a._session, ts, item))


def _prompt_blocks(content: Any) -> list[ev.JSON]:
    """A typed prompt's parts: its texts, and any other part (``local_image``, an
    ``image`` URL) kept as a block of its own type."""
    if not isinstance(content, list):
        return [{"type": "text", "text": t} for t in texts_of(content, "UserMessage.content")]
    blocks: list[ev.JSON] = []
    for part in content:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
        elif isinstance(part, dict) and isinstance(part.get("type"), str):
            rest = {k: v for k, v in part.items() if k != "type"}
            blocks.append(
                {"type": part["type"], "extension": rest} if rest else {"type": part["type"]}
            )
    return blocks


def _review_entered(
    a: CodexAdapter, item: dict[str, Any], ts: str | None, out: list[ev.Event], turn: str | None
) -> None:
    """A review begins (``codex exec review``, ``/review``): it runs in a child
    thread no call spawns. The item is that call: a ``review`` tool_use (id = the
    item's id, input = its target), the child's lines nested under it."""
    call = str_field(item, "id", "EnteredReviewMode", required=True)
    if call is None:
        raise ev.ImpossibleState("call is not set")
    a._flush(out)
    run = a._run if a._run is not None else a._begin(ts, turn, True, out)
    tool_input = {k: v for k, v in item.items() if k not in ("id", "type")}
    a._line(out, ev.Message("assistant", a._sid, ts, [ev.tool_use(call, "review", tool_input)]))
    run.unanswered.add(call)
    a._review = call
    out.append(ev.Spawn(call, a._session))  # the child's rollout holds its lines


def _review_exited(
    a: CodexAdapter, item: dict[str, Any], ts: str | None, out: list[ev.Event]
) -> None:
    """The review is over: the review call's result, its ``overall_explanation``
    as content, the findings in ``tool_use_result`` (the CLI's formatted review
    follows as the assistant's text)."""
    call, a._review = a._review, None
    if call is None:
        raise ev.ImpossibleState("call is not set")
    a._flush(out)
    run = a._ensure_run(ts, out)
    run.unanswered.discard(call)
    output = item.get("review_output")
    explanation = output.get("overall_explanation") if isinstance(output, dict) else None
    detail = {k: v for k, v in item.items() if k != "type"}
    a._tool_result(
        out,
        ts,
        call,
        explanation if isinstance(explanation, str) else "",
        output is None,
        detail=detail,
        has_detail=True,
    )


def _execution_parts(kind: str, item: dict[str, Any]) -> tuple[ev.JSON, Any, bool | None]:
    """A nested execution's tool input, result content and is_error."""
    if kind == "CommandExecution":
        tool_input: ev.JSON = {"command": item.get("command")}
        if "cwd" in item:
            tool_input["cwd"] = item["cwd"]
        result: Any = item.get("aggregated_output")
    elif kind == "FileChange":
        tool_input = {"changes": item.get("changes")}
        parts = [p for p in (item.get("stdout"), item.get("stderr")) if isinstance(p, str) and p]
        result = "".join(parts)
    else:
        tool_input = {
            k: v for k, v in item.items() if k not in ("id", "type", "status", "result", "error")
        }
        result = item.get("result")
    return tool_input, "" if result is None else result, item_failed(item)
