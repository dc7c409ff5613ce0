"""Codex rollout ``response_item`` records (and the bare format's items): the
model-facing history.

The items of one model response (assistant ``message``, ``reasoning``, the calls)
gather in the adapter's open response, one assistant line sent with its usage;
call outputs are tool_result lines by ``call_id``; user history messages are
context, or the prompt in a file that has no prompt events. Apart from the
rollout's other records because this is where a call and its output are read:
arguments, older shell outputs, what an output's text says of its exit.

Functions of the adapter ``a`` (:class:`~streamv1.adapters.codex.CodexAdapter`),
whose state and line-making (``_line``, ``_flush``, ``_ensure_run``) they use.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import orjson

from streamv1.adapters._codex_fields import dig, item_failed, texts_of
from streamv1.translator.model import events as ev
from streamv1.translator.reading.sources import BodyError, str_field

if TYPE_CHECKING:
    from streamv1.adapters.codex import CodexAdapter, _Run

#: Items of a model response: one assistant line.
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call", "tool_search_call"})
_OUTPUTS = frozenset(
    {
        "function_call_output",
        "custom_tool_call_output",
        "local_shell_call_output",
        "tool_search_output",
    }
)
#: Bare-format items (no envelope): read as response items once the source is chosen.
BARE = frozenset({"message", "reasoning"}) | _CALLS | _OUTPUTS
#: Direct tools whose every run has an execution item (FileChange) in a file that
#: writes the UI's items: an output with none there was refused before the tool ran
#: (``apply_patch verification failed: …``; older files write no items at all).
_EXECUTED = frozenset({"apply_patch"})
#: The start of a user history message that is context, never a prompt.
_CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md",
    "<INSTRUCTIONS>",
    "<permissions instructions>",
    "<skill>",
    "<user_action>",  # what the CLI tells the model a UI action (a review) did
)
_EXIT = re.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)$", re.M)


def response_item(
    a: CodexAdapter, sub: str, item: dict[str, Any], ts: str | None, out: list[ev.Event]
) -> None:
    """A response item (a ``response_item``'s payload, or a bare item), by its type."""
    if sub == "message":
        role = str_field(item, "role", "message")
        if role == "assistant":
            _assistant_text(a, item, ts, out)
        elif role == "user":
            _history_user(a, item, ts, out)
        else:
            out.append(ev.Dropped(f"response_item/message/{role}", a._session))
    elif sub == "reasoning":
        _reasoning(a, item, ts, out)
    elif sub in _CALLS:
        _call(a, sub, item, ts, out)
    elif sub in _OUTPUTS:
        _output(a, sub, item, ts, out)
    elif sub == "web_search_call":
        _web_search(a, item, ts, out)
    elif sub == "additional_tools":
        _tools_of(a, item)
        out.append(ev.Dropped("response_item/additional_tools", a._session))
    elif sub == "agent_message":
        _agent_mail(a, item, ts, out)
    elif sub == "configuration_update":
        a._flush(out)
        a._ensure_run(ts, out)
        fields = {k: v for k, v in item.items() if k != "type"}
        a._line(
            out,
            ev.Note(
                "warning",
                a._sid,
                ts,
                {
                    "kind": "configuration_update",
                    "message": "the model's configuration was updated",
                },
                fields,
            ),
        )
    else:
        a._unknown(
            out,
            ev.Unrecognized(
                f"response_item/{sub}",
                a._session,
                ts,
                {"type": "response_item", "payload": item},
            ),
        )


def _tools_of(a: CodexAdapter, payload: dict[str, Any]) -> None:
    names: list[str] = []
    tools = payload.get("tools")
    for tool in tools if isinstance(tools, list) else []:
        if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
            continue
        inner = tool.get("tools")
        if tool.get("type") == "namespace" and isinstance(inner, list):
            names += [
                f"{tool['name']}.{t['name']}"
                for t in inner
                if isinstance(t, dict) and isinstance(t.get("name"), str)
            ]
        else:
            names.append(tool["name"])
    a._tools = names
    if a._start is not None:
        a._start.tools = names


def _assistant_text(
    a: CodexAdapter, item: dict[str, Any], ts: str | None, out: list[ev.Event]
) -> None:
    texts = texts_of(item.get("content"), "message.content")
    response = a._response_part(ts, out)
    for text in texts:
        response.blocks.append({"type": "text", "text": text})
    if texts:
        if a._run is None:
            raise ev.ImpossibleState("a._run is not set")
        a._run.answer = texts[-1]
    phase = str_field(item, "phase", "message")
    if phase is not None:
        response.extension["phase"] = phase


def _reasoning(a: CodexAdapter, item: dict[str, Any], ts: str | None, out: list[ev.Event]) -> None:
    summary = item.get("summary")
    texts = texts_of(summary, "reasoning.summary")
    response = a._response_part(ts, out)
    block: ev.JSON = {"type": "thinking", "thinking": "\n\n".join(texts)}
    ext = {k: item[k] for k in ("encrypted_content", "content") if item.get(k) is not None}
    if ext:
        block["extension"] = ext
    response.blocks.append(block)
    if a._run is None:
        raise ev.ImpossibleState("a._run is not set")
    a._run.replied = True


def _call(
    a: CodexAdapter, sub: str, item: dict[str, Any], ts: str | None, out: list[ev.Event]
) -> None:
    call_id = _call_id(item, sub)
    name = str_field(item, "name", sub) or _UNNAMED.get(sub)
    if name is None:
        raise BodyError("no name")
    namespace = str_field(item, "namespace", sub)
    if sub in ("function_call", "tool_search_call"):
        tool_input = _arguments(item.get("arguments"))
    elif sub == "custom_tool_call":
        tool_input = {"input": item.get("input")}
    else:
        tool_input = item.get("action") if isinstance(item.get("action"), dict) else {}
    full = f"{namespace}.{name}" if namespace else name
    response = a._response_part(ts, out)
    response.blocks.append(ev.tool_use(call_id, full, tool_input))
    if a._run is None:
        raise ev.ImpossibleState("a._run is not set")
    a._run.replied = False
    a._run.unanswered.add(call_id)
    a._calls.add(call_id)
    a._call_names[call_id] = name
    if sub == "custom_tool_call" and name == "exec":
        a._exec_open.append(call_id)
    if sub == "tool_search_call":
        a._searches.append(call_id)


def _output(
    a: CodexAdapter, sub: str, item: dict[str, Any], ts: str | None, out: list[ev.Event]
) -> None:
    call_id = _output_call(a, sub, item)
    if call_id is None:
        # No call_id: no call's answer but context the CLI adds for the model (the
        # goal's objective, `name` goal_objective): dropped like the other context.
        out.append(ev.Dropped(f"response_item/{sub}/no_call_id", a._session))
        return
    a._flush(out)
    run = a._ensure_run(ts, out)
    if sub == "tool_search_output":
        _search_output(a, run, call_id, item, ts, out)
        return
    raw = item.get("output")
    if isinstance(raw, dict):
        text = raw.get("output") if isinstance(raw.get("output"), str) else None
        content: Any = text if text is not None else raw
        is_error = (raw.get("exit_code") not in (None, 0)) if "exit_code" in raw else None
    else:
        content = "".join(texts_of(raw, f"{sub}.output"))
        is_error = _exit_error(content)
    done = a._executions.pop(call_id, None)
    shell = _shell_output(content) if isinstance(content, str) else None
    if shell is not None and done is None:
        content, done = shell[0], shell[1] or None
    if done is not None:
        failed = item_failed(done)
        if failed is not None:
            is_error = failed if is_error is None else (is_error or failed)
    elif is_error is None and a._ui_items and a._call_names.get(call_id) in _EXECUTED:
        is_error = True  # refused before it ran: no execution, no exit code
    _answered(a, run, call_id)
    a._tool_result(out, ts, call_id, content, is_error, detail=done, has_detail=done is not None)


def _search_output(
    a: CodexAdapter,
    run: _Run,
    call_id: str,
    item: dict[str, Any],
    ts: str | None,
    out: list[ev.Event],
) -> None:
    """What a tool search found (the deferred tools it exposes to the next call):
    the ``tools`` as JSON text, they and the status in ``tool_use_result``."""
    tools = item.get("tools")
    content = orjson.dumps(tools).decode() if tools is not None else ""
    detail = {k: v for k, v in item.items() if k in ("status", "execution", "tools")}
    _answered(a, run, call_id)
    a._tool_result(out, ts, call_id, content, item_failed(item), detail=detail, has_detail=True)


def _answered(a: CodexAdapter, run: _Run, call_id: str) -> None:
    run.unanswered.discard(call_id)
    run.replied = False
    a._calls.discard(call_id)  # (answered: no execution item of its can follow)
    a._call_names.pop(call_id, None)
    if call_id in a._exec_open:
        a._exec_open.remove(call_id)
    if call_id in a._searches:
        a._searches.remove(call_id)


def _web_search(a: CodexAdapter, item: dict[str, Any], ts: str | None, out: list[ev.Event]) -> None:
    """A web search the model's server ran: a ``web_search`` tool_use in the
    response's line, its result after it (no output item answers it). The input is
    what the UI's ``WebSearch`` item with its id, read before, says (``query``,
    ``action``: what exec --json's ``web_search`` item says), else the ``action``."""
    call_id = str_field(item, "id", "web_search_call") or str_field(
        item, "call_id", "web_search_call"
    )
    if call_id is None:
        raise BodyError("no id")
    action = item.get("action")
    tool_input = a._executions.pop(call_id, None) or (
        {"action": action} if isinstance(action, dict) else {}
    )
    detail = {"status": item["status"]} if "status" in item else {}
    response = a._response_part(ts, out)
    response.blocks.append(ev.tool_use(call_id, "web_search", tool_input))
    response.served.append({"id": call_id, "is_error": item_failed(item), "detail": detail})


def _history_user(
    a: CodexAdapter, item: dict[str, Any], ts: str | None, out: list[ev.Event]
) -> None:
    texts = texts_of(item.get("content"), "message.content")
    if a._event_prompts or not texts or all(_is_context(t) for t in texts):
        out.append(ev.Dropped("response_item/message/user", a._session))
        return
    a._send_prompt(out)
    a._prompt = ev.Message("user", a._sid, ts, [{"type": "text", "text": t} for t in texts])


def _agent_mail(a: CodexAdapter, item: dict[str, Any], ts: str | None, out: list[ev.Event]) -> None:
    """Mail between agents (a task to a subagent, its final answer back): a user
    line, as the model reads it."""
    content = item.get("content")
    texts = texts_of(content, "agent_message.content")
    a._flush(out)
    run = a._ensure_run(ts, out)
    run.replied = False
    ext: ev.JSON = {k: item[k] for k in ("id", "author", "recipient") if k in item}
    hidden = (
        [p for p in content if isinstance(p, dict) and p.get("type") != "input_text"]
        if isinstance(content, list)
        else []
    )
    if hidden:
        ext["content"] = hidden
    a._line(
        out,
        ev.Message("user", a._sid, ts, [{"type": "text", "text": "".join(texts)}], extension=ext),
    )


# -- what a call's arguments and output say ---------------------------------------------


#: Call items whose tool has no ``name`` field.
_UNNAMED = {"local_shell_call": "local_shell", "tool_search_call": "tool_search"}


def _call_id(item: dict[str, Any], sub: str) -> str:
    """The id that pairs a call with its output (``call_id``; older items: ``id``)."""
    call_id = str_field(item, "call_id", sub) or str_field(item, "id", sub)
    if call_id is None:
        raise BodyError("no call_id")
    return call_id


def _output_call(a: CodexAdapter, sub: str, item: dict[str, Any]) -> str | None:
    """The call an output answers: its ``call_id``; without one, its ``id`` where
    that names a call held, and a tool search's output the oldest search open
    (a server-run search gives neither its call nor its output a call_id)."""
    call_id = str_field(item, "call_id", sub)
    if call_id is not None:
        return call_id
    own = str_field(item, "id", sub)
    if own is not None and own in a._calls:
        return own
    if sub == "tool_search_output" and a._searches:
        return a._searches[0]
    return None


def _is_context(text: str) -> bool:
    return text.lstrip().startswith(_CONTEXT_PREFIXES)


def _arguments(raw: Any) -> Any:
    """A function call's input: its JSON ``arguments`` parsed where they are an
    object, else kept as given."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"arguments": raw}
        return parsed if isinstance(parsed, dict) else {"arguments": raw}
    return {} if raw is None else {"arguments": raw}


def _exit_error(output: str) -> bool | None:
    """is_error an output's own text proves: code mode's ``Script failed``, an older
    shell output's JSON ``metadata.exit_code``, ``Exit code: N`` / ``Process exited
    with code N``; None where it says nothing."""
    if output.startswith("Script failed"):
        return True
    if output.startswith("Script completed"):
        return False
    if output.startswith("{"):
        try:
            parsed = orjson.loads(output)
        except orjson.JSONDecodeError:
            parsed = None
        code = dig(parsed, "metadata", "exit_code")
        if isinstance(code, int) and not isinstance(code, bool):
            return code != 0
        return None
    match = _EXIT.search(output[:400])
    return int(match.group(1)) != 0 if match else None


def _shell_output(output: str) -> tuple[str, ev.JSON] | None:
    """An older ``shell`` call's output, JSON ``{output, metadata{exit_code,
    duration_seconds}}``: its text, and the rest for ``tool_use_result``."""
    if not output.startswith('{"output"'):
        return None
    try:
        parsed = orjson.loads(output)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("output"), str):
        return None
    return parsed["output"], {k: v for k, v in parsed.items() if k != "output"}
