"""What Claude Code's two formats share: Anthropic message shapes.

Both the print-mode stream and the durable session files carry Anthropic Messages
API objects (``message.content`` blocks, ``message.usage``) and a per-model
``modelUsage`` map in camelCase. These helpers map those to the neutral model.
"""

from __future__ import annotations

import json
import re
from collections.abc import Container
from typing import Any

import orjson

from streamv1.translator.model import catalog
from streamv1.translator.model.events import JSON, MAX_COUNT, Problem, Usage, not_negative, whole
from streamv1.translator.reading import sources
from streamv1.translator.reading.sources import BodyError, Where
from streamv1.translator.state import persisted
from streamv1.translator.timefmt import normalize_ts

AGENT_NAME = "claude-code"
PROVIDER = "anthropic"

#: The model name Claude Code gives the assistant messages it makes itself (an API
#: error's text, a cancelled request): no API call, so never any usage.
SYNTHETIC_MODEL = "<synthetic>"


__all__ = ["BodyError", "body_problem"]  # BodyError lives with the adapter contract


def body_problem(
    exc: BodyError, record: dict[str, Any], where: Where, session: str | None
) -> Problem:
    """The system/error for a Claude record that does not fit (its time: ``timestamp``)."""
    return sources.body_problem(
        str(exc), record, where, session, normalize_ts(record.get("timestamp"))
    )


def _int(value: Any, name: str = "usage") -> int:
    """A token count: 0 where the record has none (absent, null, not a number); a
    number that is no count a line can carry (``1e300``, 2**64, ``1.5``) is a body
    that does not fit; a negative one is 0, said (events.not_negative)."""
    if type(value) is int and 0 <= value <= MAX_COUNT:
        return value  # the common case first
    if isinstance(value, int | float) and not isinstance(value, bool):
        count = whole(value)
        if count is None:
            raise BodyError(f"{name} is {shown(value)}, not a token count")
        return not_negative(count, name)
    return 0


def shown(value: Any) -> str:
    """A value as an error message shows it: its repr, cut at 40 characters."""
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "…"


def usage_from_api(raw: Any) -> Usage | None:
    """Anthropic's usage object (snake_case, *_input_tokens) → catalog usage."""
    if not isinstance(raw, dict):
        return None
    i, o = raw.get("input_tokens"), raw.get("output_tokens")
    r, c = raw.get("cache_read_input_tokens"), raw.get("cache_creation_input_tokens")
    if (
        type(i) is int
        and type(o) is int
        and type(r) is int
        and type(c) is int
        and 0 <= i <= MAX_COUNT
        and 0 <= o <= MAX_COUNT
        and 0 <= r <= MAX_COUNT
        and 0 <= c <= MAX_COUNT
    ):
        return Usage(i, o, r, c)  # the common case: one positional call, no conversions
    return Usage(
        _int(i, "usage.input_tokens"),
        _int(o, "usage.output_tokens"),
        _int(r, "usage.cache_read_input_tokens"),
        _int(c, "usage.cache_creation_input_tokens"),
    )


def model_usage_from_camel(raw: Any) -> dict[str, Usage] | None:
    """``modelUsage`` ({model: {inputTokens, ...}}) → {model: Usage}."""
    if not isinstance(raw, dict) or not raw:
        return None
    out: dict[str, Usage] = {}
    for model, u in raw.items():
        if not isinstance(u, dict):
            continue
        out[str(model)] = Usage(
            input_tokens=_int(u.get("inputTokens"), "modelUsage.inputTokens"),
            output_tokens=_int(u.get("outputTokens"), "modelUsage.outputTokens"),
            cache_read=_int(u.get("cacheReadInputTokens"), "modelUsage.cacheReadInputTokens"),
            cache_creation=_int(
                u.get("cacheCreationInputTokens"), "modelUsage.cacheCreationInputTokens"
            ),
        )
    return out or None


def content_blocks(raw: Any) -> list[JSON]:
    """message.content (a list of blocks, or a bare string) → catalog blocks."""
    if isinstance(raw, str):
        return [{"type": "text", "text": raw}]
    if not isinstance(raw, list):
        raise BodyError(f"message.content is {type(raw).__name__}, not a list")
    return [catalog.content_block(block) for block in raw]


def message_of(record: dict[str, Any], kind: str) -> dict[str, Any]:
    message = record.get("message")
    if not isinstance(message, dict):
        raise BodyError(f"{kind} record without a message object")
    return message


def message_extension(
    record: dict[str, Any], line_keys: Container[str], message: dict[str, Any]
) -> JSON:
    """A message line's extension: the record's keys the line does not carry, and
    under ``message`` the message's own beyond its id, role and content (model,
    stop_reason, usage, ...)."""
    # (A filtering comprehension measured faster on these records than popping the
    # context keys from a copy, or than a cache of record layouts.)
    ext = {k: v for k, v in record.items() if k not in line_keys}
    inner = message.copy()
    inner.pop("content", None)
    inner.pop("id", None)
    inner.pop("role", None)
    if inner:
        ext["message"] = inner
    return ext


def text_of(content: Any) -> str | None:
    """The plain text of a prompt's content (string, or text blocks)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [
            b.get("text", "")
            for b in content
            if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
        ]
        return "".join(parts) if parts else None
    return None


def has_tool_result(content: Any) -> bool:
    # A loop, not any() over a generator: this runs for every user record.
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                return True
    return False


#: The marker the CLI writes as a user message when the user stops a turn (Ctrl-C,
#: Esc, SIGINT): both views end the run ``interrupted`` on it; it is not a line.
INTERRUPT = "[Request interrupted by user"


def is_interrupt(text: str | None) -> bool:
    """Is this a user message's text the interrupt marker?"""
    return text is not None and text.startswith(INTERRUPT)


#: The marker of a turn stopped while a tool ran (an SDK host's ``interrupt``, Esc
#: during a tool): the CLI ends it ``error_during_execution`` (``terminal_reason:
#: aborted_tools``), not as a cut-off answer (captures: x_sdk_interrupt_tool).
TOOL_INTERRUPT = "[Request interrupted by user for tool use]"


def is_tool_interrupt(text: str | None) -> bool:
    return text is not None and text.startswith(TOOL_INTERRUPT)


_LOCAL_STDOUT = re.compile(r"\A\s*<local-command-stdout>(.*)</local-command-stdout>\s*\Z", re.S)


def local_command_output(content: str) -> str | None:
    """A local command's output, between its ``<local-command-stdout>`` tags, as
    written: print mode's ``result``; its ``<synthetic>`` assistant message shows it
    trimmed."""
    match = _LOCAL_STDOUT.match(content)
    return match.group(1) if match else None


def message_usage(message: dict[str, Any]) -> Usage | None:
    """An assistant message's usage; none for the CLI's own ``<synthetic>`` messages
    (ccusage's rule too: they are no API call)."""
    if message.get("model") == SYNTHETIC_MODEL:
        return None
    return usage_from_api(message.get("usage"))


def is_api_error(record: dict[str, Any]) -> bool:
    """An assistant record the CLI wrote for a failed API call (both spellings)."""
    return record.get("isApiErrorMessage") is True or record.get("is_api_error_message") is True


def structured_text(data: Any) -> str:
    """The ``result`` text print mode gives a ``--json-schema`` run: the structured
    output as compact JSON (JavaScript's ``JSON.stringify``)."""
    try:
        return orjson.dumps(data).decode()
    except orjson.JSONEncodeError:  # nested deeper than orjson writes (254 levels)
        try:
            return json.dumps(data, separators=(",", ":"), ensure_ascii=False)
        except (RecursionError, ValueError):
            return "[structured output nested too deep to write]"


@persisted
class TurnCount:
    """``num_turns`` as Claude Code counts it: the prompt, plus every main-thread
    user record of the run after it (each tool result, each message the CLI injects:
    the max_tokens note, stop-hook feedback); 0 for a local command, which sends
    nothing to the model. The same rule in both adapters."""

    __slots__ = ("local_command", "user_records")

    def __init__(self) -> None:
        self.user_records = 0
        self.local_command = False

    @property
    def value(self) -> int:
        return 0 if self.local_command else 1 + self.user_records


# -- a nested actor's end, as the parent's file records it ----------------------------

_NOTIFICATION = "<task-notification>"
_TAG = re.compile(r"<([a-z][a-z_-]*)>(.*?)</\1>", re.S)
#: ``<usage>``'s tags → the CLI's task_notification ``usage`` keys.
_TASK_USAGE = {
    "subagent_tokens": "total_tokens",
    "tool_uses": "tool_uses",
    "duration_ms": "duration_ms",
}
#: An agent tool result's totals → the same keys.
_RESULT_USAGE = {
    "totalTokens": "total_tokens",
    "totalToolUseCount": "tool_uses",
    "totalDurationMs": "duration_ms",
}


def is_task_notification(text: str | None) -> bool:
    return text is not None and text.lstrip().startswith(_NOTIFICATION)


def notification_fields(text: str) -> JSON:
    """A background agent's end, from the ``<task-notification>`` prompt the CLI
    writes for it: the fields of print mode's system/task_notification (``task_id``,
    ``status``; ``task``: ``tool_use_id``, ``output_file``, ``summary`` = its
    ``<result>``, ``usage``), the other tags kept in ``task`` by their names."""
    body = _TAG.search(text)
    inner = body.group(2) if body is not None and body.group(1) == "task-notification" else text
    tags = {name.replace("-", "_"): value.strip() for name, value in _TAG.findall(inner)}
    fields: JSON = {}
    for key in ("task_id", "status"):
        if key in tags:
            fields[key] = tags.pop(key)
    task: JSON = {}
    if "tool_use_id" in tags:
        task["tool_use_id"] = tags.pop("tool_use_id")
    if "result" in tags:
        tags["title"] = tags.pop("summary", None)
        task["summary"] = tags.pop("result")
    usage = tags.pop("usage", None)
    if usage is not None:
        counts = {
            _TASK_USAGE[k]: int(v)
            for k, v in _TAG.findall(usage)
            if k in _TASK_USAGE and v.strip().isdigit()
        }
        if counts:
            task["usage"] = counts
    task.update((k, v) for k, v in tags.items() if v is not None)
    fields["task"] = task
    return fields


def agent_result_fields(result: Any, content: Any) -> JSON | None:
    """A foreground agent's end, from its tool result (``toolUseResult`` with its
    ``agentId``, or the totals 1.x Task results carry): the fields of print mode's
    system/task_notification. None for anything else, and for a background agent's
    launch (``async_launched``: it has only begun)."""
    if not isinstance(result, dict) or result.get("status") == "async_launched":
        return None
    if "agentId" not in result and "totalTokens" not in result:
        return None
    fields: JSON = {}
    if isinstance(result.get("agentId"), str):
        fields["task_id"] = result["agentId"]
    if isinstance(result.get("status"), str):
        fields["status"] = result["status"]
    task: JSON = {}
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                if isinstance(block.get("tool_use_id"), str):
                    task["tool_use_id"] = block["tool_use_id"]
                break
    texts = [
        b.get("text")
        for b in result.get("content") or []
        if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)
    ]
    if texts:
        task["summary"] = texts[-1]
    usage = {
        ours: n
        for theirs, ours in _RESULT_USAGE.items()
        if (n := whole(result.get(theirs))) is not None
    }
    if usage:
        task["usage"] = usage
    fields["task"] = task
    return fields


def launched_in_background(result: Any, content: Any) -> str | None:
    """The spawning call of an agent a tool result says was launched in the
    background (``status: async_launched``), else None."""
    if not isinstance(result, dict) or not (
        result.get("status") == "async_launched" or result.get("isAsync") is True
    ):
        return None
    if isinstance(content, list):
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                tool = block.get("tool_use_id")
                return tool if isinstance(tool, str) else None
    return None
