"""``--to claude``: stream_v1 lines re-encoded as Claude Code print-mode stream-json,
the shape ``claude -p --verbose --output-format stream-json`` prints, so tools built
for it (the Claude Agent SDKs, CI log pipelines, dashboards) read any source.

An encoder of stream_v1 lines: whatever the source (a durable session file, a
print-mode stream, stella, stream_v1 itself), its framed lines come through here.
Every field the SDKs' parsers require is present; where the source does not know a
required value, the neutral value they tolerate is used (docs/mapping.md lists
them): model ``<synthetic>`` (what Claude Code itself writes on messages no model
made), ``duration_api_ms`` 0, a thinking ``signature`` of "", usage 0.

Only message types that consumers of every age know are written by default
(system, assistant, user, stream_event, result: SDKs up to 0.1.39 crashed on
``rate_limit_event``); ``extra_types`` lets the newer ones and unrecognized source
records through.
"""

from __future__ import annotations

import uuid as uuidlib
from typing import Any, ClassVar

from streamv1.translator.model.events import JSON
from streamv1.translator.output.encode import encode as encode_v1
from streamv1.translator.output.shapes import EncoderOptions, Shape

SYNTHETIC_MODEL = "<synthetic>"

#: system subtypes the SDKs parse into typed messages, and what they require.
_TYPED_SYSTEM = {
    "task_started": ("task_id", "description", "uuid", "session_id"),
    "task_progress": ("task_id", "description", "usage", "uuid", "session_id"),
    "task_notification": ("task_id", "status", "output_file", "summary", "uuid", "session_id"),
}


class ClaudeEncoder:
    """Stateful per input: a run's init tells the model its messages default to."""

    STATE_VERSION: ClassVar[int] = 1

    def __init__(self, extra_types: bool = False) -> None:
        self.extra_types = extra_types
        self._model: str | None = None

    def state(self) -> JSON:
        return {"model": self._model}

    def load_state(self, state: JSON) -> None:
        model = state.get("model")
        self._model = model if isinstance(model, str) else None

    def encode(self, line: JSON) -> bytes:
        out = self.convert(line)
        if out is None:
            return b""
        meta = line.get("_meta")
        if meta is not None:
            out["_meta"] = meta  # the tail daemon's origin mark rides along, in either shape
        return encode_v1(out)

    # -- one line ---------------------------------------------------------------

    def convert(self, line: JSON) -> JSON | None:
        kind = line.get("type")
        ext = _obj(line.get("extension"))
        sid = line.get("session_id")
        if kind == "system" and line.get("subtype") == "init":
            return self._init(line, ext)
        if kind == "assistant":
            return self._assistant(line, ext)
        if kind == "user":
            return self._user(line, ext)
        if kind == "stream_event":
            return self._stream_event(line)
        if kind == "result":
            return self._result(line, ext)
        if kind == "system":
            return self._system(line, ext)
        return {"type": kind, "session_id": sid} if self.extra_types else None

    def _uuid(self, line: JSON, ext: JSON) -> str:
        given = ext.get("uuid")
        if isinstance(given, str):
            return given
        # Deterministic: the same line always gets the same id.
        key = f"{line.get('session_id')}/{line.get('ts')}/{line.get('seq')}/{line.get('type')}"
        return str(uuidlib.uuid5(uuidlib.NAMESPACE_URL, key))

    def _init(self, line: JSON, ext: JSON) -> JSON:
        agent = _obj(line.get("agent"))
        model = agent.get("model") if isinstance(agent.get("model"), str) else None
        self._model = model
        out: JSON = {
            "type": "system",
            "subtype": "init",
            "cwd": line.get("cwd", ""),
            "session_id": line["session_id"],
            "tools": line.get("tools", []),
            "mcp_servers": line.get("mcp_servers", []),
            "model": model or SYNTHETIC_MODEL,
            "permissionMode": "default",
            "apiKeySource": "none",
            "uuid": self._uuid(line, {}),
        }
        for key, value in ext.items():
            if key not in out and key not in ("synthetic", "prompt"):
                out[key] = value
        for key in ("permissionMode", "apiKeySource"):
            if isinstance(ext.get(key), str):
                out[key] = ext[key]
        if "parent_tool_use_id" in line:
            out["parent_tool_use_id"] = line["parent_tool_use_id"]
        return out

    def _assistant(self, line: JSON, ext: JSON) -> JSON:
        message = line["message"]
        inner = _obj(ext.get("message"))
        model = inner.get("model") if isinstance(inner.get("model"), str) else None
        out_message: JSON = {
            "id": message.get("id") or f"msg_{self._uuid(line, {})}",
            "type": "message",
            "role": "assistant",
            "model": model or self._model or SYNTHETIC_MODEL,
            "content": [_block(b) for b in message["content"]],
            "stop_reason": inner.get("stop_reason"),
            "stop_sequence": inner.get("stop_sequence"),
            "usage": inner.get("usage")
            if isinstance(inner.get("usage"), dict)
            else {"input_tokens": 0, "output_tokens": 0},
        }
        for key, value in inner.items():
            out_message.setdefault(key, value)
        out: JSON = {
            "type": "assistant",
            "message": out_message,
            "parent_tool_use_id": line.get("parent_tool_use_id"),
            "session_id": line["session_id"],
            "uuid": self._uuid(line, ext),
        }
        _spread_extension(out, ext, ("message", "uuid"))
        return out

    def _user(self, line: JSON, ext: JSON) -> JSON:
        message = line["message"]
        out: JSON = {
            "type": "user",
            "message": {"role": "user", "content": [_block(b) for b in message["content"]]},
            "parent_tool_use_id": line.get("parent_tool_use_id"),
            "session_id": line["session_id"],
            "uuid": self._uuid(line, ext),
        }
        if "tool_use_result" in line:
            out["tool_use_result"] = line["tool_use_result"]
        _spread_extension(out, ext, ("message", "uuid"))
        return out

    def _stream_event(self, line: JSON) -> JSON:
        event = dict(line["event"])
        extra = event.pop("extension", None)
        if event.get("type") == "tool_args_delta":
            event = {
                "type": "content_block_delta",
                "index": event.get("index", 0),
                "delta": {
                    "type": "input_json_delta",
                    "partial_json": event.get("partial_json", ""),
                },
            }
        elif isinstance(extra, dict):
            delta_extra = extra.pop("delta", None)
            if isinstance(delta_extra, dict) and isinstance(event.get("delta"), dict):
                event["delta"] = {**event["delta"], **delta_extra}
            for key, value in extra.items():
                event.setdefault(key, value)
        return {
            "type": "stream_event",
            "uuid": self._uuid(line, {}),
            "session_id": line["session_id"],
            "event": event,
            "parent_tool_use_id": line.get("parent_tool_use_id"),
        }

    def _system(self, line: JSON, ext: JSON) -> JSON | None:
        subtype = line.get("subtype")
        if subtype == "unrecognized":
            record = ext.get("record")
            return record if self.extra_types and isinstance(record, dict) else None
        if subtype == "rate_limit":
            if not self.extra_types:
                return None
            return {
                "type": "rate_limit_event",
                "session_id": line["session_id"],
                "uuid": self._uuid(line, ext),
                **ext,
            }
        out: JSON = {"type": "system", "subtype": subtype}
        for key, value in line.items():
            if key not in ("type", "subtype", "seq", "ts", "extension", "task", "session_id"):
                out[key] = value
        task = line.get("task")
        if isinstance(task, dict):
            for key, value in task.items():
                out.setdefault(key, value)
        for key, value in ext.items():
            out.setdefault(key, value)
        out["session_id"] = line["session_id"]
        out.setdefault("uuid", self._uuid(line, ext))
        required = _TYPED_SYSTEM.get(str(subtype))
        if required and any(key not in out for key in required):
            return None  # the SDK would reject it: better left out than a crash
        return out

    def _result(self, line: JSON, ext: JSON) -> JSON:
        usage = line.get("usage") or {}
        out: JSON = {
            "type": "result",
            "subtype": line["subtype"],
            "is_error": line["is_error"],
            "duration_ms": line.get("duration_ms", 0),
            "duration_api_ms": ext.get("duration_api_ms", 0),
            "num_turns": line.get("num_turns", 0),
            "session_id": line["session_id"],
        }
        if "result" in line:
            out["result"] = line["result"]
        if "stop_reason" in line:
            out["stop_reason"] = line["stop_reason"]
        if "total_cost_usd" in line:
            out["total_cost_usd"] = line["total_cost_usd"]
        out["usage"] = {
            "input_tokens": usage.get("input_tokens", 0),
            "output_tokens": usage.get("output_tokens", 0),
            "cache_read_input_tokens": usage.get("cache_read", 0),
            "cache_creation_input_tokens": usage.get("cache_creation", 0),
        }
        if isinstance(ext.get("modelUsage"), dict):
            out["modelUsage"] = ext["modelUsage"]
        else:
            out["modelUsage"] = {
                model: {
                    "inputTokens": u.get("input_tokens", 0),
                    "outputTokens": u.get("output_tokens", 0),
                    "cacheReadInputTokens": u.get("cache_read", 0),
                    "cacheCreationInputTokens": u.get("cache_creation", 0),
                }
                for model, u in (line.get("model_usage") or {}).items()
            }
        out["permission_denials"] = ext.get("permission_denials", [])
        out["uuid"] = self._uuid(line, ext)
        if "ttft_ms" in line:
            out["ttft_ms"] = line["ttft_ms"]
        if "parent_tool_use_id" in line:
            out["parent_tool_use_id"] = line["parent_tool_use_id"]
        _spread_extension(out, ext, ("uuid", "dropped", "unrecognized", "modelUsage"))
        return out


def _block(block: Any) -> Any:
    """A catalog content block back in Anthropic's shape (extension merged back)."""
    if not isinstance(block, dict):
        return block
    out = {k: v for k, v in block.items() if k != "extension"}
    extra = block.get("extension")
    if isinstance(extra, dict):
        for key, value in extra.items():
            out.setdefault(key, value)
    if out.get("type") == "thinking":
        out.setdefault("signature", "")
    if out.get("type") == "tool_use":
        out.setdefault("input", {})
    return out


def _spread_extension(out: JSON, ext: JSON, skip: tuple[str, ...]) -> None:
    """The stream_v1 line's extension keys back as the Claude record's own fields
    (those it does not have already), but ``skip``."""
    for key, value in ext.items():
        if key not in skip:
            out.setdefault(key, value)


def _obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}


def _make(options: EncoderOptions) -> ClaudeEncoder:
    return ClaudeEncoder(options.extra_types)


SHAPE = Shape("claude", "print-mode stream-json for legacy tools", _make)
