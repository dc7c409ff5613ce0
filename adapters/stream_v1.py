"""stream_v1 itself as a source: milk's ``--output-format stream-json`` and this
tool's own output, so that any stream_v1 stream can be re-framed or re-encoded
(``--to claude`` feeds it to legacy tools).

What each line type becomes is ``MAPPING`` below (docs/mapping.md is made from
it): the inverse of the framer.

``seq`` is recomputed by the framer (it is checked, not trusted: a gap is a
warning in the output's validation, not here). Unknown line types follow rule 1:
kept whole as system/unrecognized.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from streamv1.adapters._claude import usage_from_api
from streamv1.translator import catalog
from streamv1.translator.events import (
    JSON,
    Delta,
    Event,
    Message,
    Note,
    RunEnd,
    RunStart,
    Unrecognized,
    Usage,
    whole,
)
from streamv1.translator.mapping import Row
from streamv1.translator.sources import (
    CERTAIN,
    NOT_MINE,
    BodyError,
    Source,
    Where,
    body_problem,
    expect_strings,
    time_problem,
)
from streamv1.translator.state import persisted
from streamv1.translator.timefmt import normalize_ts

_TYPES = frozenset({"system", "stream_event", "assistant", "user", "result"})
_INIT_KEYS = frozenset(
    {
        "type",
        "subtype",
        "session_id",
        "seq",
        "ts",
        "cwd",
        "tools",
        "mcp_servers",
        "agent",
        "capabilities",
        "parent_tool_use_id",
        "extension",
    }
)
_NAMING_KEYS = ("type", "session_id")
_STR_OR_NONE = (str, type(None))
_ENVELOPE = frozenset({"type", "subtype", "session_id", "seq", "ts", "parent_tool_use_id"})


def sniff(record: dict[str, Any]) -> int:
    kind = record.get("type")
    if isinstance(kind, str) and kind in _TYPES and "seq" in record and "session_id" in record:
        return CERTAIN
    return NOT_MINE


_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read", "cache_creation")


def _usage(raw: Any) -> Usage | None:
    """The catalog's usage object: four whole numbers (the schema's), else a body
    that does not fit."""
    if not isinstance(raw, dict):
        return None
    counts = []
    for key in _USAGE_KEYS:
        if key not in raw:
            raise BodyError(f"usage does not fit (no {key})")
        count = whole(raw[key])
        if count is None:
            raise BodyError(f"usage does not fit ({key} is not a whole number)")
        counts.append(count)
    return Usage(*counts)


@persisted
class StreamV1Adapter:
    #: The layout of this adapter's checkpointed state (translator.state): a new
    #: number whenever its fields change, so an old checkpoint is replayed, not misread.
    STATE_VERSION = 1

    def __init__(self, path: str, session_id: str | None = None) -> None:
        self._path = path
        self._fallback = session_id

    def feed(self, record: dict[str, Any], where: Where) -> Iterable[Event]:
        raw_ts = record.get("ts")
        if raw_ts is not None and normalize_ts(raw_ts) is None:
            bad = time_problem("ts", raw_ts, where, self._sid(record))
            return [bad, *self.feed({k: v for k, v in record.items() if k != "ts"}, where)]
        try:
            return [self._event(record)]
        except BodyError as exc:
            ts = normalize_ts(record.get("ts"))
            return [body_problem(str(exc), record, where, self._sid(record), ts)]

    def finish(self) -> Iterable[Event]:
        return []

    def _sid(self, rec: dict[str, Any]) -> str:
        sid = rec.get("session_id")
        return sid if isinstance(sid, str) else (self._fallback or "unknown")

    def _event(self, rec: dict[str, Any]) -> Event:
        kind = rec.get("type")
        if type(kind) not in _STR_OR_NONE or type(rec.get("session_id")) not in _STR_OR_NONE:
            expect_strings(rec, _NAMING_KEYS)  # (raises: inline first, it is hot)
        sid = self._sid(rec)
        # Only an RFC 3339 time passes (the pipeline reports any other); the framer
        # gives the line the time of the line before.
        ts = normalize_ts(rec.get("ts"))
        parent = rec.get("parent_tool_use_id")
        parent = parent if isinstance(parent, str) else None
        ext = _obj(rec.get("extension"))
        if kind == "system" and rec.get("subtype") == "init":
            agent = _obj(rec.get("agent"))
            extra = {k: v for k, v in rec.items() if k not in _INIT_KEYS}
            capabilities = rec.get("capabilities")
            name, provider = agent.get("name"), agent.get("provider")
            return RunStart(
                session_id=sid,
                ts=ts,
                agent_name=name if isinstance(name, str) else "unknown",
                provider=provider if isinstance(provider, str) else "unknown",
                model=agent.get("model") if isinstance(agent.get("model"), str) else None,
                agent_role=agent.get("role") if isinstance(agent.get("role"), str) else None,
                cwd=rec.get("cwd") if isinstance(rec.get("cwd"), str) else None,
                tools=rec.get("tools") if isinstance(rec.get("tools"), list) else None,
                mcp_servers=rec.get("mcp_servers")
                if isinstance(rec.get("mcp_servers"), list)
                else None,
                partial_messages=isinstance(capabilities, list)
                and "partial_messages_v1" in capabilities,
                parent_tool_use_id=parent,
                extension={**ext, **extra},
            )
        if kind in ("assistant", "user"):
            message = rec.get("message")
            if not isinstance(message, dict) or not isinstance(message.get("content"), list):
                raise BodyError(f"{kind} line without a message whose content is a list")
            inner = _obj(ext.get("message"))
            model = inner.get("model")
            stop = inner.get("stop_reason")
            usage = None
            raw_usage = inner.get("usage")
            if kind == "assistant" and isinstance(raw_usage, dict):
                usage = usage_from_api(raw_usage)
            return Message(
                role=str(kind),
                session_id=sid,
                ts=ts,
                # Blocks in the catalog's shape: what does not fit (an unknown key, a
                # number for a block) is kept in the block's extension, not dropped.
                content=[catalog.content_block(b) for b in message["content"]],
                message_id=message.get("id") if isinstance(message.get("id"), str) else None,
                parent_tool_use_id=parent,
                tool_use_result=rec.get("tool_use_result"),
                has_tool_use_result="tool_use_result" in rec,
                model=model if isinstance(model, str) else None,
                stop_reason=stop if isinstance(stop, str) else None,
                usage=usage,
                extension=dict(ext),
            )
        if kind == "stream_event":
            event = rec.get("event")
            if not isinstance(event, dict):
                raise BodyError("stream_event line without an event object")
            return Delta(sid, ts, event, parent)
        if kind == "system":
            subtype = rec.get("subtype")
            if not isinstance(subtype, str):
                raise BodyError("system line without a subtype")
            fields = {k: v for k, v in rec.items() if k not in _ENVELOPE and k != "extension"}
            return Note(subtype, sid, ts, fields, dict(ext), parent)
        if kind == "result":
            return self._end(rec, sid, ts, ext)
        name = kind if isinstance(kind, str) else "<no type>"
        return Unrecognized(name, sid, ts, rec, parent)

    @staticmethod
    def _end(rec: dict[str, Any], sid: str, ts: str | None, ext: JSON) -> RunEnd:
        def typed(key: str, kind: type) -> Any:
            value = rec.get(key)
            if value is None:
                return None
            if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
                raise BodyError(f"result.{key} is {type(value).__name__}, not {kind.__name__}")
            return value

        model_usage = None
        raw_mu = rec.get("model_usage")
        if isinstance(raw_mu, dict):
            model_usage = {
                str(m): u for m, u in ((m, _usage(u)) for m, u in raw_mu.items()) if u is not None
            }
        cost = rec.get("total_cost_usd")
        extra = {k: v for k, v in rec.items() if k not in _RESULT_KEYS}
        ext = {k: v for k, v in ext.items() if k not in ("dropped", "unrecognized")}
        return RunEnd(
            session_id=sid,
            ts=ts,
            subtype=typed("subtype", str),
            is_error=typed("is_error", bool),
            result=typed("result", str),
            num_turns=typed("num_turns", int),
            duration_ms=typed("duration_ms", int),
            stop_reason=typed("stop_reason", str),
            usage=_usage(rec.get("usage")),
            model_usage=model_usage or None,
            total_cost_usd=cost
            if isinstance(cost, int | float) and not isinstance(cost, bool)
            else None,
            ttft_ms=typed("ttft_ms", int),
            extension={**ext, **extra},
        )


#: The result line's own keys (the rest goes into the run end's extension).
_RESULT_KEYS = frozenset(
    {
        "type",
        "subtype",
        "session_id",
        "seq",
        "ts",
        "is_error",
        "result",
        "num_turns",
        "duration_ms",
        "stop_reason",
        "usage",
        "model_usage",
        "total_cost_usd",
        "ttft_ms",
        "extension",
        "parent_tool_use_id",
    }
)


MAPPING = (
    Row("init", "`system/init`", "a run start: `cwd`, `tools`, `mcp_servers`, `agent`, "
        "`partial_messages_v1`; the rest in `extension`"),
    Row("assistant", "`assistant`", "the same message (the source's model, stop_reason and "
        "usage come back from `extension.message`)"),
    Row("user", "`user`", "the same message and `tool_use_result`"),
    Row("stream_event", "`stream_event`", "the same partial delta"),
    Row("error", "`system/error`", "a `system/error` again (not a new problem of this input)"),
    Row("system_other", "`system/<other>`", "the same system line (fields and extension kept)"),
    Row("result", "`result`", "the run's end with every figure it carries (`seq` and the "
        "`extension.dropped`/`unrecognized` counts are made anew)"),
    Row("unknown", "any other line type", "`system/unrecognized`, the line whole"),
)


SOURCE = Source(
    name="stream_v1",
    description="stream_v1 itself (milk --output-format stream-json, streamv1's own output)",
    sniff=sniff,
    open=StreamV1Adapter,
    mapping=MAPPING,
)


def _obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}
