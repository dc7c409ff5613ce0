"""Builders for each stream_v1 line type; nothing source-specific.

The locked schema forbids unknown keys at every level, so every builder here keeps
the catalog's own fields (with the catalog's types) and moves anything else into
``extension``, the catalog's home for provider detail. Nothing is dropped.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from streamv1.translator.model.events import JSON, Usage

CAPABILITY_STREAM = "stream_v1"
CAPABILITY_PARTIAL = "partial_messages_v1"

_ANY = object()

#: content_block fields of the schema, with the Python type each must have.
CONTENT_BLOCK_FIELDS: dict[str, Any] = {
    "type": str,
    "text": str,
    "thinking": str,
    "id": str,
    "name": str,
    "tool_use_id": str,
    "is_error": bool,
    "input": _ANY,
    "content": _ANY,
    "_meta": _ANY,
}

#: stream_payload fields of the schema.
STREAM_PAYLOAD_FIELDS: dict[str, Any] = {
    "type": str,
    "index": int,
    "tool_use_id": str,
    "partial_json": str,
    "delta": dict,
    "_meta": _ANY,
}

#: Scalar event fields a system line may carry, by type (the schema's `event`).
SYSTEM_FIELDS: dict[str, Any] = {
    "body": str,
    "category": str,
    "command_hint": str,
    "count": int,
    "cwd": str,
    "duration_ms": int,
    "from": str,
    "id": str,
    "is_error": bool,
    "kind": str,
    "limit": int,
    "message": str,  # system/error's text (a string; on assistant/user lines the object)
    "op": str,
    "option": str,
    "percept_id": str,
    "reason": str,
    "recoverable": bool,
    "session_state": str,
    "severity": str,
    "status": str,
    "stop_reason": str,
    "subject": str,
    "task_id": str,
    "to": str,
    "tool": str,
    "value": str,
    "finished_ids": list,
    "running_ids": list,
    "warnings": list,
    "task": _ANY,
}


def _fits(value: Any, kind: Any) -> bool:
    if kind is _ANY:
        return True
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is list:
        return isinstance(value, list) and all(isinstance(v, str) for v in value)
    return isinstance(value, kind)


def split_fields(raw: JSON, fields: dict[str, Any]) -> tuple[JSON, JSON]:
    """Split ``raw`` into (catalog fields of the right type, everything else)."""
    kept: JSON = {}
    rest: JSON = {}
    for key, value in raw.items():
        kind = fields.get(key)
        if kind is not None and _fits(value, kind):
            kept[key] = value
        elif key == "extension" and isinstance(value, dict):
            rest.update(value)
        else:
            rest[key] = value
    return kept, rest


_TEXT_KEYS = frozenset({"type", "text"})
_BLOCK_KEYS = frozenset(CONTENT_BLOCK_FIELDS) - {"_meta"}


def content_block(raw: Any) -> JSON:
    """A source content block in the catalog's content_block shape.

    A block that already fits (the common text block) is used as it is: output
    lines are built fresh and never mutate their blocks, so no copy is needed.
    """
    if type(raw) is dict:
        keys = raw.keys()
        if keys == _TEXT_KEYS and type(raw["text"]) is str and type(raw["type"]) is str:
            return raw
        if keys <= _BLOCK_KEYS and "type" in keys:
            for key in keys:
                kind = CONTENT_BLOCK_FIELDS[key]
                if kind is not _ANY and type(raw[key]) is not kind:
                    break
            else:
                return raw  # tool_use / tool_result blocks as Anthropic writes them
    if not isinstance(raw, dict):
        return {"type": "unknown", "extension": {"value": raw}}
    kept, rest = split_fields(raw, CONTENT_BLOCK_FIELDS)
    if "type" not in kept:
        kept["type"] = "unknown"
    if rest:
        kept["extension"] = rest
    return kept


def stream_payload(raw: JSON) -> JSON:
    kept, rest = split_fields(raw, STREAM_PAYLOAD_FIELDS)
    delta = kept.get("delta")
    if isinstance(delta, dict):
        dk, dr = split_fields(delta, {"type": str, "text": str, "thinking": str})
        if "type" not in dk:
            dk["type"] = "unknown"
        kept["delta"] = dk
        if dr:
            rest["delta"] = dr
    if "type" not in kept:
        kept["type"] = "unknown"
    if rest:
        kept["extension"] = rest
    return kept


def usage_dict(usage: Usage) -> dict[str, int]:
    return usage.as_dict()


def model_usage_dict(model_usage: dict[str, Usage]) -> dict[str, dict[str, int]]:
    return {model: u.as_dict() for model, u in model_usage.items()}


def stated_cost(value: Any) -> float | None:
    """A result's ``total_cost_usd`` as a cost to add up: a number that is no bool
    and not below zero. The line keeps the source's value as it is; a sum of costs
    (the closing summary, ``sessions``) counts only these (a crafted -1 made a
    session cost $-1)."""
    if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0:
        return float(value)
    return None


def envelope(line_type: str, session_id: str, seq: int, ts: str, **rest: Any) -> JSON:
    """The envelope first (type, subtype, session_id, seq, ts), then the body."""
    line: JSON = {"type": line_type}
    subtype = rest.pop("subtype", None)
    if subtype is not None:
        line["subtype"] = subtype
    line["session_id"] = session_id
    line["seq"] = seq
    line["ts"] = ts
    parent = rest.pop("parent_tool_use_id", None)
    if parent is not None:
        line["parent_tool_use_id"] = parent
    for key, value in rest.items():
        if value is not None:
            line[key] = value
    return line


def capabilities(partial: bool) -> list[str]:
    return [CAPABILITY_STREAM, CAPABILITY_PARTIAL] if partial else [CAPABILITY_STREAM]


def agent_info(name: str, provider: str, model: str | None, role: str | None = None) -> JSON:
    info: JSON = {"name": name, "provider": provider}
    if model:
        info["model"] = model
    if role:
        info["role"] = role
    return info


def mcp_servers(raw: Iterable[Any]) -> tuple[list[JSON], list[Any]]:
    """Servers that fit {name, status}; the rest is returned for extension."""
    fit: list[JSON] = []
    rest: list[Any] = []
    for server in raw:
        if (
            isinstance(server, dict)
            and isinstance(server.get("name"), str)
            and isinstance(server.get("status"), str)
        ):
            fit.append({"name": server["name"], "status": server["status"]})
            extra = {k: v for k, v in server.items() if k not in ("name", "status")}
            if extra:
                rest.append(server)
        else:
            rest.append(server)
    return fit, rest


def system_fields(raw: JSON) -> tuple[JSON, JSON]:
    """Catalog fields a system line may carry; the rest goes to extension."""
    return split_fields(raw, SYSTEM_FIELDS)
