"""The Codex rollout's envelope and its records other than response items.

``session_meta`` (or the bare format's header) and ``turn_context`` give the init
its session, cwd and model; ``token_usage_record`` a response's usage;
``event_msg`` begins and ends runs (``task_started``, ``task_complete``,
``turn_aborted``), carries the older prompts and usage (``user_message``,
``token_count``) and wraps the UI's ``item_completed`` items
(:mod:`streamv1.adapters._codex_ui_items`). Apart from the response items
(:mod:`streamv1.adapters._codex_response_items`) because these say where a run
begins and ends and what it is, not what the model said.

Functions of the adapter ``a`` (:class:`~streamv1.adapters.codex.CodexAdapter`),
whose state and run framing (``_begin``, ``_end``, ``_usage``) they use.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streamv1.adapters._codex_fields import dig, obj_field
from streamv1.adapters._codex_files import find_rollout, sessions_root
from streamv1.adapters._codex_response_items import response_item
from streamv1.adapters._codex_ui_items import item_completed
from streamv1.adapters._codex_usage import usage_of, usage_since
from streamv1.translator.model import events as ev
from streamv1.translator.reading.sources import BodyError, str_field

if TYPE_CHECKING:
    from streamv1.adapters.codex import CodexAdapter

#: Metadata records, consumed for the init or repeated elsewhere: dropped, counted.
_METADATA = frozenset({"world_state", "inter_agent_communication_metadata", "compacted"})
_METADATA_EVENTS = frozenset(
    {"thread_settings_applied", "agent_message", "agent_reasoning", "token_count"}
)
#: session_meta keys not carried (the system prompt's full text: kilobytes per run).
META_DROPPED = frozenset({"base_instructions", "instructions"})


def rollout_record(
    a: CodexAdapter, kind: str, record: dict[str, Any], ts: str | None, out: list[ev.Event]
) -> None:
    """A rollout record (``{timestamp, [ordinal], type, payload}``), by its type."""
    payload = record.get("payload")
    if not isinstance(payload, dict):
        raise BodyError(f"payload is {type(payload).__name__}, not an object")
    if kind == "response_item":  # (the common types first: this is the hot path)
        sub = payload.get("type")
        if not isinstance(sub, str):
            raise BodyError("payload.type is not a string")
        response_item(a, sub, payload, ts, out)
    elif kind == "event_msg":
        sub = payload.get("type")
        if not isinstance(sub, str):
            raise BodyError("payload.type is not a string")
        _event(a, sub, payload, record, ts, out)
    elif kind == "token_usage_record":
        a._records_usage = True
        a._usage(
            usage_of(payload.get("usage"), "usage"),
            ts,
            out,
            str_field(payload, "response_id", kind),
        )
    elif kind == "turn_context":
        _turn_context(a, payload)
        out.append(ev.Dropped("turn_context", a._session))
    elif kind == "session_meta":
        session_meta(a, payload, out)
    elif kind in _METADATA:
        out.append(ev.Dropped(kind, a._session))
    else:
        a._unknown(out, ev.Unrecognized(kind, a._session, ts, record))


def session_meta(a: CodexAdapter, meta: dict[str, Any], out: list[ev.Event]) -> None:
    """``session_meta`` or the bare format's header: the thread, its root session and
    cwd, the rest for the init; a child thread's file looks for its spawning call in
    the parent rollout, holding its lines until that is found."""
    thread = str_field(meta, "id", "session_meta")
    root = str_field(meta, "session_id", "session_meta")
    a._thread = thread
    if a._given is None:
        a._session = root or thread or a._session
    a._cwd = str_field(meta, "cwd", "session_meta") or a._cwd
    a._meta = {k: v for k, v in meta.items() if k not in META_DROPPED}
    parent = meta.get("parent_thread_id")
    if isinstance(parent, str) or meta.get("thread_source") == "subagent":
        a._child = True
        a._parent_thread = parent if isinstance(parent, str) else None
        path = meta.get("agent_path")
        a._actor = path if isinstance(path, str) else f"thread-{thread}"
        if a._parent_thread and a._path != "-":
            a._parent_file = find_rollout(sessions_root(a._path), a._parent_thread)
        if a._parent_file is not None and not a._look_for_spawner():
            a._unlinked = []
    out.append(ev.Dropped("session_meta", a._session))


def _turn_context(a: CodexAdapter, ctx: dict[str, Any]) -> None:
    model = str_field(ctx, "model", "turn_context")
    if model:
        a._model = model
        if a._start is not None:
            a._start.model = model
    cwd = str_field(ctx, "cwd", "turn_context")
    if cwd:
        a._cwd = cwd
        if a._start is not None:
            a._start.cwd = cwd
    a._settings = {
        k: ctx[k] for k in ("approval_policy", "sandbox_policy", "effort", "summary") if k in ctx
    }


def _event(
    a: CodexAdapter,
    sub: str,
    payload: dict[str, Any],
    record: dict[str, Any],
    ts: str | None,
    out: list[ev.Event],
) -> None:
    if sub == "task_started" and _child_turn(a, payload):
        # A child thread's turn (a review's), begun inside this thread's open turn:
        # the child's rollout has it; this file mirrors it.
        a._child_turns.add(str(payload.get("turn_id")))
        out.append(ev.Dropped("event_msg/task_started/child_turn", a._session))
    elif sub == "task_complete" and payload.get("turn_id") in a._child_turns:
        a._child_turns.discard(str(payload.get("turn_id")))
        out.append(ev.Dropped("event_msg/task_complete/child_turn", a._session))
    elif sub == "task_started":
        a._send_prompt(out)
        a._flush(out)
        run = a._begin(ts, str_field(payload, "turn_id", sub), True, out)
        run.continuation = dig(payload, "turn_attribution", "parent_turn_id") is not None
        out.append(ev.Dropped("event_msg/task_started", a._session))
    elif sub == "task_complete":
        _task_complete(a, payload, ts, out)
    elif sub == "turn_aborted" and _stillborn(a):
        # A turn the CLI began itself after the last one (a goal's continuation) and
        # stopped before anything (exec exits after its own turn): no line, no call.
        a._start, a._run = None, None
        out.append(ev.Dropped("event_msg/turn_aborted/continuation", a._session))
    elif sub == "turn_aborted":
        a._send_prompt(out)
        a._flush(out)
        a._ensure_run(ts, out)
        reason = str_field(payload, "reason", sub)
        ext = {k: v for k, v in payload.items() if k not in ("type", "duration_ms")}
        a._end(
            out,
            ev.RunEnd(
                a._sid,
                ts,
                subtype="interrupted",
                is_error=True,
                stop_reason=reason,
                duration_ms=ev.whole(payload.get("duration_ms")),
                extension=ext,
            ),
        )
    elif sub == "item_completed":
        a._ui_items = True
        item_completed(
            a,
            obj_field(payload, "item", sub, required=True),
            ts,
            out,
            str_field(payload, "thread_id", sub),
            str_field(payload, "turn_id", sub),
        )
    elif sub == "user_message":
        message = payload.get("message")
        if not isinstance(message, str):
            raise BodyError("user_message.message is not a string")
        a._event_prompts = True
        a._prompt = None
        a._user_prompt(ev.Message("user", a._sid, ts, [{"type": "text", "text": message}]), out)
    elif sub == "token_count":
        info = payload.get("info")
        last = info.get("last_token_usage") if isinstance(info, dict) else None
        total = info.get("total_token_usage") if isinstance(info, dict) else None
        if (
            a._records_usage
            or (last is None and total is None)
            or (total is not None and total == a._last_total)
        ):
            out.append(ev.Dropped("event_msg/token_count", a._session))
            return
        if last is not None:
            usage = usage_of(last, "token_count.info.last_token_usage")
        else:
            # Only the running total: this call is what it grew by.
            usage = usage_since(total, a._last_total, "token_count.info.total_token_usage")
        a._last_total = total if isinstance(total, dict) else None
        a._usage(usage, ts, out, None)
    elif sub in _METADATA_EVENTS:
        out.append(ev.Dropped(f"event_msg/{sub}", a._session))
    else:
        a._unknown(out, ev.Unrecognized(f"event_msg/{sub}", a._session, ts, record))


def _stillborn(a: CodexAdapter) -> bool:
    """Is the open run a continuation turn that made nothing: no line yet (its init
    still waits), no model call, no model response open?"""
    run = a._run
    return (
        run is not None
        and run.continuation
        and a._start is not None
        and not run.calls
        and a._response is None
        and a._prompt is None
    )


def _child_turn(a: CodexAdapter, payload: dict[str, Any]) -> bool:
    """Does this task_started begin another thread's turn inside the open one? Its
    ``turn_attribution.parent_turn_id`` names the open run's turn."""
    run = a._run
    if run is None or run.turn_id is None:
        return False
    parent = dig(payload, "turn_attribution", "parent_turn_id")
    return parent == run.turn_id and payload.get("turn_id") != run.turn_id


def _task_complete(
    a: CodexAdapter, payload: dict[str, Any], ts: str | None, out: list[ev.Event]
) -> None:
    a._send_prompt(out)
    a._flush(out)
    a._ensure_run(ts, out)
    error = payload.get("error")
    if error is not None and not isinstance(error, dict):
        raise BodyError("task_complete.error is not an object")
    answer = str_field(payload, "last_agent_message", "task_complete")
    duration = payload.get("duration_ms")
    ttft = payload.get("time_to_first_token_ms")
    ext = {
        k: v
        for k, v in payload.items()
        if k not in ("type", "last_agent_message", "duration_ms", "time_to_first_token_ms", "error")
    }
    failed = bool(error)
    if failed:
        if not isinstance(error, dict):
            raise ev.ImpossibleState("not isinstance(error, dict)")
        extra = {k: v for k, v in error.items() if k != "message"}
        if extra:
            ext["error"] = extra
    message = (
        str_field(error, "message", "task_complete.error") if isinstance(error, dict) else None
    )
    run = a._run
    if run is None:
        raise ev.ImpossibleState("run is not set")
    none = not failed and a._per_call_usage and not run.usage_seen and not run.calls
    a._end(
        out,
        ev.RunEnd(
            a._sid,
            ts,
            subtype="error_during_execution" if failed else "success",
            is_error=failed,
            result=message if failed else answer,
            duration_ms=ev.whole(duration) if ev.whole(duration) is not None else None,
            ttft_ms=ev.whole(ttft),
            extension=ext,
            # A file whose CLI records every model call (`ordinal` era) and has no
            # record in this run: it made none (a review's parent turn).
            usage=ev.Usage() if none else None,
            num_turns=0 if none else None,
        ),
    )
