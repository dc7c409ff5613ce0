"""A chat file's message records as events: what one final record becomes.

The adapter (adapters/gemini.py) decides when a record is final and what run it
belongs to; these functions only read a record that will not change any more and
build its lines: a prompt's ``user`` line, a reply's ``assistant`` line with its
tool calls' results (and, for a call that ran a subagent, that subagent's end),
a notice. Apart: they hold no state, so what a record becomes reads apart from
the order the log's operations are replayed in. A body that does not fit raises
BodyError before anything is built.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from streamv1.adapters._gemini_usage import reply_usage
from streamv1.translator.model import events as ev
from streamv1.translator.reading.sources import BodyError, rest, str_field
from streamv1.translator.timefmt import normalize_ts

#: How the generated first message of a session begins (its workspace, not a prompt).
CONTEXT = "<session_context>"
_TERMINATION = re.compile(r"^Termination Reason: (\w+)$", re.M)
_WORKSPACE = re.compile(r"\*\*Workspace Directories:\*\*\n((?:  - [^\n]+\n)+)")
#: Chat message keys a line uses; the rest goes to its extension.
_GEMINI_USED = ("id", "timestamp", "type", "content", "thoughts", "tokens", "model", "toolCalls")
_CALL_USED = ("id", "name", "args", "result", "status", "timestamp", "resultDisplay")


# -- content ---------------------------------------------------------------------------


def parts(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, list):
        return content
    if content is None:
        return []
    raise BodyError(f"content is {type(content).__name__}, not a string or a list")


def texts(content: Any) -> list[str]:
    return [
        p["text"] for p in parts(content) if isinstance(p, dict) and isinstance(p.get("text"), str)
    ]


def is_tool_copy(content: Any) -> bool:
    """A user record that carries function responses (the model-facing copy of results
    its gemini record already holds). The CLI's own test (its compression's split
    point): a user content with any ``functionResponse`` part is no prompt; the parts
    beside one are the tool's (an MCP image's ``inlineData``, read_many_files' text)."""
    return any(isinstance(p, dict) and "functionResponse" in p for p in parts(content))


def is_history_copy(rec: dict[str, Any]) -> bool:
    """A ``gemini`` record no model call wrote: a copy of a history entry
    (``setHistory`` records each entry it gets without an id, e.g. /restore's
    checkpoint history). The CLI writes such copies with ``recordSyntheticMessage``:
    the entry's raw parts as ``content``, no ``model``, ``tokens`` null; a reply's
    record always has its ``model`` (an empty reply's synthetic record has its
    ``tokens``)."""
    return (
        isinstance(rec.get("content"), list)
        and "model" not in rec
        and rec.get("tokens") is None
        and not rec.get("toolCalls")
    )


def is_command_call(rec: dict[str, Any]) -> bool:
    """A ``gemini`` record of tool calls that no model turn made: the CLI records a
    reply's usage on it before its calls (``recordMessageTokens`` first), so a record
    of calls without ``tokens`` holds calls a command ran itself (/restore runs its
    checkpoint's call again; the model is not asked about the result)."""
    return bool(rec.get("toolCalls")) and "tokens" not in rec


def cwd_of(text: str) -> tuple[str | None, list[str]]:
    """The session context's workspace directories: the first is the ``cwd``."""
    match = _WORKSPACE.search(text)
    if match is None:
        return None, []
    dirs = [line[4:] for line in match.group(1).splitlines()]
    return (dirs[0] if dirs else None), dirs


# -- records ---------------------------------------------------------------------------


def notice(rec: dict[str, Any], ts: str | None, sid: str) -> ev.Note:
    """An ``info`` / ``warning`` / ``error`` message."""
    fields: ev.JSON = {"severity": str(rec.get("type"))}
    found = texts(rec.get("content"))
    if found:
        fields["message"] = "\n".join(found)
    return ev.Note("notification", sid, ts, fields, rest(rec, ("type", "content", "timestamp")))


def user_message(rec: dict[str, Any], ts: str | None, sid: str) -> ev.Message:
    """A prompt's ``user`` line: its text parts, any other part kept in an empty one."""
    blocks: list[ev.JSON] = []
    for part in parts(rec.get("content")):
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            blocks.append({"type": "text", "text": part["text"]})
        elif isinstance(part, dict):
            blocks.append({"type": "text", "text": "", "extension": {"part": part}})
    ext = rest(rec, ("id", "timestamp", "type", "content"))
    return ev.Message("user", sid, ts, blocks, message_id=str_field(rec, "id"), extension=ext)


def command_calls(rec: dict[str, Any], ts: str | None, sid: str) -> ev.Note:
    """Tool calls a command ran outside any model turn (:func:`is_command_call`): one
    notification naming them, the calls (with their results) in its extension."""
    calls = [c for c in rec.get("toolCalls") or () if isinstance(c, dict)]
    names = [str(c.get("name")) for c in calls]
    return ev.Note(
        "notification",
        sid,
        ts,
        {"kind": "command_tool_calls", "tools": names},
        {"toolCalls": calls, **rest(rec, ("type", "timestamp", "toolCalls"))},
    )


def reply(rec: dict[str, Any], ts: str | None, sid: str) -> tuple[ev.Message, list[ev.Event]]:
    """A ``gemini`` record's ``assistant`` line, and the lines its tool calls' results
    make (a result per call: none when it called no tool)."""
    blocks = _thinking(rec.get("thoughts"))
    content = rec.get("content")
    for text in texts(content):
        if text:
            blocks.append({"type": "text", "text": text})
    calls = rec.get("toolCalls")
    if calls is not None and not isinstance(calls, list):
        raise BodyError(f"toolCalls is {type(calls).__name__}, not a list")
    results: list[ev.Event] = []
    for call in calls or ():
        if not isinstance(call, dict):
            raise BodyError("toolCalls item is not an object")
        blocks.append(_tool_use(call, ts, sid, results))
    usage = reply_usage(rec.get("tokens"))
    model = str_field(rec, "model")
    ext = rest(rec, _GEMINI_USED)
    if isinstance(content, list):
        ext["content"] = content  # parts other than text, as written
    message = ev.Message(
        "assistant",
        sid,
        ts,
        blocks,
        message_id=str_field(rec, "id"),
        model=model,
        usage=usage,
        extension=ext,
    )
    return message, results


def _thinking(thoughts: Any) -> list[ev.JSON]:
    """``thoughts[]`` as thinking blocks: ``**subject**``, a blank line, its description."""
    blocks: list[ev.JSON] = []
    for thought in thoughts if isinstance(thoughts, list) else ():
        if isinstance(thought, dict):
            subject, desc = thought.get("subject"), thought.get("description")
            pieces: list[str] = []
            if isinstance(subject, str) and subject:
                pieces.append(f"**{subject}**")
            if isinstance(desc, str) and desc:
                pieces.append(desc)
            blocks.append({"type": "thinking", "thinking": "\n\n".join(pieces)})
    return blocks


def _tool_use(call: ev.JSON, ts: str | None, sid: str, results: list[ev.Event]) -> ev.JSON:
    """One ``toolCalls[]`` entry: its tool_use block; its result (after, for a call
    that ran a subagent, the lines that end that subagent) appended to ``results``."""
    cid = str_field(call, "id", required=True) or ""
    block = ev.tool_use(cid, str_field(call, "name", required=True), call.get("args", {}))
    ext = rest(call, _CALL_USED)
    if ext:
        block["extension"] = ext
    result = tool_result(call, cid, ts, sid)
    agent = call.get("agentId")
    if isinstance(agent, str) and agent:
        # The subagent it ran is over (its file may still hold its lines, waiting
        # for this link: translator.translate.session's _introduce hands it on).
        ext_ = {}
        reason = _TERMINATION.search(str(result.content[0].get("content", "")))
        if reason is not None:
            ext_["termination_reason"] = reason.group(1)
        results.append(ev.Spawn(cid, sid))  # its file holds its lines
        results.append(
            ev.Note(
                "task_notification",
                sid,
                result.ts,
                {"task_id": agent, "task": {"tool_use_id": cid}},
                ext_,
            )
        )
    results.append(result)
    return block


def tool_result(call: ev.JSON, cid: str, ts: str | None, sid: str) -> ev.Message:
    """A call's ``result`` parts and ``status`` as its ``user`` tool_result line."""
    status = call.get("status")
    found = call.get("result")
    output: Any = None
    is_error = status in ("error", "cancelled")
    extra: list[str] = []  # text parts beside the response (read_many_files' contents)
    media: list[Any] = []  # other parts beside it (an MCP image's inlineData), as written
    for part in found if isinstance(found, list) else ():
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            extra.append(part["text"])
            continue
        if isinstance(part, dict) and "functionResponse" not in part:
            media.append(part)
            continue
        fr = part.get("functionResponse") if isinstance(part, dict) else None
        response = fr.get("response") if isinstance(fr, dict) else None
        if isinstance(response, dict):
            if "error" in response:
                is_error = True
                output = response["error"]
            elif "output" in response:
                output = response["output"]
            else:
                output = response
    block: ev.JSON = {"type": "tool_result", "tool_use_id": cid, "is_error": is_error}
    if output is not None or extra:
        text_ = (
            output if isinstance(output, str) or output is None else orjson.dumps(output).decode()
        )
        block["content"] = "\n".join(([text_] if text_ is not None else []) + extra)
    if media:
        block["extension"] = {"parts": media}
    summary: ev.JSON = {}
    if isinstance(status, str):
        summary["status"] = status
    if "resultDisplay" in call:
        summary["resultDisplay"] = call["resultDisplay"]
    if isinstance(call.get("agentId"), str):
        summary["agentId"] = call["agentId"]
    when = normalize_ts(call.get("timestamp")) or ts
    return ev.Message(
        "user",
        sid,
        when,
        [block],
        tool_use_result=summary or None,
        has_tool_use_result=bool(summary),
    )
