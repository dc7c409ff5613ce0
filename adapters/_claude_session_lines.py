"""The lines a durable record becomes: messages, a run's start, system notes.

Apart from the dispatch, which decides what a record is, because the main thread
and inline sidechains build the same lines, each with its own parent link.
"""

from __future__ import annotations

from typing import Any

from streamv1.adapters import _claude as cc
from streamv1.translator.model import events as ev
from streamv1.translator.reading.sources import rest, string

#: Per-record context Claude repeats on every record: carried once, on the init.
CONTEXT_KEYS = frozenset(
    {
        "type",
        "message",
        "sessionId",
        "session_id",
        "timestamp",
        "cwd",
        "version",
        "gitBranch",
        "userType",
        "entrypoint",
        "isSidechain",
        "agentId",
        "slug",
    }
)

#: A message record's keys that are not its line's extension.
_LINE_KEYS = CONTEXT_KEYS | {"toolUseResult"}
#: A system record's keys that are not its line's fields: its context, its subtype.
SYSTEM_KEYS = CONTEXT_KEYS | {"subtype"}


def user(
    rec: dict[str, Any],
    message: dict[str, Any],
    content: Any,
    ts: str | None,
    session_id: str,
    parent: str | None,
) -> ev.Message:
    """A user line (a tool result, a replayed or injected text); ``parent``: the
    spawning tool_use of the nested actor it is a line of."""
    return ev.Message(
        role="user",
        session_id=session_id,
        ts=ts,
        content=cc.content_blocks(content),
        parent_tool_use_id=parent,
        tool_use_result=rec.get("toolUseResult"),
        has_tool_use_result="toolUseResult" in rec,
        extension=cc.message_extension(rec, _LINE_KEYS, message),
    )


def assistant(
    rec: dict[str, Any],
    message: dict[str, Any],
    ts: str | None,
    session_id: str,
    parent: str | None,
    task_prompts: dict[str, str],
) -> ev.Message:
    """The assistant line, noting in ``task_prompts`` each tool call's prompt (the
    link by which an inline sidechain finds the Task call that spawned it)."""
    content = cc.content_blocks(message.get("content"))
    for block in content:
        if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            tool_input = block.get("input")
            prompt = tool_input.get("prompt") if isinstance(tool_input, dict) else None
            if isinstance(prompt, str):
                task_prompts[prompt] = block["id"]
    return ev.Message(
        role="assistant",
        session_id=session_id,
        ts=ts,
        content=content,
        message_id=string(message.get("id")),
        parent_tool_use_id=parent,
        model=string(message.get("model")),
        stop_reason=string(message.get("stop_reason")),
        usage=cc.message_usage(message),
        extension=cc.message_extension(rec, _LINE_KEYS, message),
    )


def run_start(
    rec: dict[str, Any],
    content: Any,
    ts: str | None,
    session_id: str,
    role: str | None,
    parent: str | None,
) -> ev.RunStart:
    """A run's synthetic init from its prompt record: the prompt in
    ``extension.prompt``, the record's other keys beside it."""
    ext: ev.JSON = {"prompt": content}
    ext.update({k: v for k, v in rec.items() if k not in ("type", "message", "cwd")})
    return ev.RunStart(
        session_id=session_id,
        ts=ts,
        agent_name=cc.AGENT_NAME,
        provider=cc.PROVIDER,
        agent_role=role,
        cwd=string(rec.get("cwd")),
        parent_tool_use_id=parent,
        extension=ext,
    )


def command_reply(rec: dict[str, Any], shown: str, ts: str | None, session_id: str) -> ev.Message:
    """A local command's output as its reply: print mode shows it as an assistant
    message of the CLI's own (model ``<synthetic>``), trimmed."""
    return ev.Message(
        role="assistant",
        session_id=session_id,
        ts=ts,
        content=[{"type": "text", "text": shown.strip()}],
        model=cc.SYNTHETIC_MODEL,
        extension={"record": rest(rec, SYSTEM_KEYS)},
    )


def system_note(
    rec: dict[str, Any],
    subtype: Any,
    content: Any,
    ts: str | None,
    session_id: str,
    parent: str | None,
) -> ev.Note:
    """Any other system record: a line of the same subtype (no subtype: 1.0.x's
    hook output, a notification)."""
    body = rest(rec, SYSTEM_KEYS)
    if not isinstance(subtype, str):
        fields: ev.JSON = {}
        if isinstance(content, str):
            fields["body"] = body.pop("content")
        if isinstance(rec.get("level"), str):
            fields["severity"] = body.pop("level")
        return ev.Note("notification", session_id, ts, fields, body, parent)
    return ev.Note(subtype, session_id, ts, {}, body, parent)
