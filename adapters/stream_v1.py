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

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from streamv1.adapters._claude import usage_from_api
from streamv1.translator.model import catalog
from streamv1.translator.model import events as ev
from streamv1.translator.reading import sources as src
from streamv1.translator.reading.mapping import Row
from streamv1.translator.state import persisted
from streamv1.translator.timefmt import normalize_ts

_TYPES = frozenset({"system", "stream_event", "assistant", "user", "result"})
_NAMING_KEYS = ("type", "session_id")


def sniff(record: dict[str, Any]) -> int:
    kind = record.get("type")
    if isinstance(kind, str) and kind in _TYPES and "seq" in record and "session_id" in record:
        return src.CERTAIN
    return src.NOT_MINE


_USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read", "cache_creation")


def _usage(raw: Any, name: str = "usage") -> ev.Usage | None:
    """The catalog's usage object: four whole numbers (the schema's), else a body
    that does not fit; a negative one is 0, said."""
    if not isinstance(raw, dict):
        return None
    counts = []
    for key in _USAGE_KEYS:
        if key not in raw:
            raise src.BodyError(f"usage does not fit (no {key})")
        count = ev.whole(raw[key])
        if count is None:
            raise src.BodyError(f"usage does not fit ({key} is not a whole number)")
        counts.append(ev.not_negative(count, f"{name}.{key}"))
    return ev.Usage(*counts)


@persisted
class StreamV1Adapter:
    #: The layout of this adapter's checkpointed state (translator.state): a new
    #: number whenever its fields change, so an old checkpoint is replayed, not misread.
    STATE_VERSION = 1

    def __init__(self, path: str, session_id: str | None = None) -> None:
        self._path = path
        self._fallback = session_id

    def feed(self, record: dict[str, Any], where: src.Where) -> Iterable[ev.Event]:
        raw_ts = record.get("ts")
        if raw_ts is not None and normalize_ts(raw_ts) is None:
            bad = src.time_problem("ts", raw_ts, where, self._sid(record))
            return [bad, *self.feed({k: v for k, v in record.items() if k != "ts"}, where)]
        try:
            return [self._event(record)]
        except src.BodyError as exc:
            ts = normalize_ts(record.get("ts"))
            return [src.body_problem(str(exc), record, where, self._sid(record), ts)]

    def finish(self) -> Iterable[ev.Event]:
        return []

    def _sid(self, rec: dict[str, Any]) -> str:
        sid = rec.get("session_id")
        return sid if isinstance(sid, str) else (self._fallback or "unknown")

    def _event(self, rec: dict[str, Any]) -> ev.Event:
        kind = rec.get("type")
        if type(kind) not in src.STR_OR_NONE or type(rec.get("session_id")) not in src.STR_OR_NONE:
            src.expect_strings(rec, _NAMING_KEYS)  # (raises: inline first, it is hot)
        # Only an RFC 3339 time passes (the pipeline reports any other); the framer
        # gives the line the time of the line before.
        at = _Envelope(
            self._sid(rec),
            normalize_ts(rec.get("ts")),
            src.string(rec.get("parent_tool_use_id")),
            _obj(rec.get("extension")),
        )
        line = _LINES.get(kind) if isinstance(kind, str) else None
        if line is None:
            name = kind if isinstance(kind, str) else "<no type>"
            return ev.Unrecognized(name, at.session_id, at.ts, rec, at.parent)
        return line(rec, at)


class _Envelope(NamedTuple):
    """What every line carries, whatever its type: read once, for its handler."""

    session_id: str
    ts: str | None
    parent: str | None
    extension: ev.JSON


#: The keys every line may carry beside its own fields.
_ENVELOPE: src.Spec = {
    "type": object,
    "session_id": object,
    "seq": object,
    "ts": object,
    "parent_tool_use_id": object,
    "extension": object,
}
_NOTE_KEYS = frozenset({*_ENVELOPE, "subtype"})

#: An init line's fields (the rest goes into the run start's extension).
_INIT: src.Spec = {
    **_ENVELOPE,
    "subtype": object,
    "cwd": src.string,
    "tools": src.array,
    "mcp_servers": src.array,
    "agent": object,
    "capabilities": src.array,
}
_AGENT: src.Spec = {
    "name": src.string,
    "provider": src.string,
    "model": src.string,
    "role": src.string,
}


def _model_usage(raw: Any, name: str = "model_usage") -> dict[str, ev.Usage] | None:
    if not isinstance(raw, dict):
        return None
    found = {
        str(m): u
        for m, u in ((m, _usage(u, f"{name}.{m}")) for m, u in raw.items())
        if u is not None
    }
    return found or None


#: A result line's fields, in the order they are checked (the rest goes into the
#: run end's extension).
_RESULT: src.Spec = {
    "model_usage": _model_usage,
    "subtype": str,
    "is_error": bool,
    "result": str,
    "num_turns": int,
    "duration_ms": int,
    "stop_reason": str,
    "usage": _usage,
    "total_cost_usd": src.number,
    "ttft_ms": int,
    **_ENVELOPE,
}


def _system(rec: dict[str, Any], at: _Envelope) -> ev.Event:
    subtype = rec.get("subtype")
    if subtype == "init":
        return _init(rec, at)
    if not isinstance(subtype, str):
        raise src.BodyError("system line without a subtype")
    fields = src.rest(rec, _NOTE_KEYS)
    return ev.Note(subtype, at.session_id, at.ts, fields, dict(at.extension), at.parent)


def _init(rec: dict[str, Any], at: _Envelope) -> ev.RunStart:
    line, extra = src.take(rec, _INIT)
    agent, _ = src.take(_obj(line["agent"]), _AGENT)
    name, provider = agent["name"], agent["provider"]
    return ev.RunStart(
        session_id=at.session_id,
        ts=at.ts,
        agent_name="unknown" if name is None else name,
        provider="unknown" if provider is None else provider,
        model=agent["model"],
        agent_role=agent["role"],
        cwd=line["cwd"],
        tools=line["tools"],
        mcp_servers=line["mcp_servers"],
        partial_messages="partial_messages_v1" in (line["capabilities"] or ()),
        parent_tool_use_id=at.parent,
        extension={**at.extension, **extra},
    )


def _message(rec: dict[str, Any], at: _Envelope) -> ev.Message:
    kind = rec["type"]
    message = rec.get("message")
    if not isinstance(message, dict) or not isinstance(message.get("content"), list):
        raise src.BodyError(f"{kind} line without a message whose content is a list")
    inner = _obj(at.extension.get("message"))
    usage = usage_from_api(inner.get("usage")) if kind == "assistant" else None
    return ev.Message(
        role=kind,
        session_id=at.session_id,
        ts=at.ts,
        # Blocks in the catalog's shape: what does not fit (an unknown key, a
        # number for a block) is kept in the block's extension, not dropped.
        content=[catalog.content_block(b) for b in message["content"]],
        message_id=src.string(message.get("id")),
        parent_tool_use_id=at.parent,
        tool_use_result=rec.get("tool_use_result"),
        has_tool_use_result="tool_use_result" in rec,
        model=src.string(inner.get("model")),
        stop_reason=src.string(inner.get("stop_reason")),
        usage=usage,
        extension=dict(at.extension),
    )


def _delta(rec: dict[str, Any], at: _Envelope) -> ev.Delta:
    event = rec.get("event")
    if not isinstance(event, dict):
        raise src.BodyError("stream_event line without an event object")
    return ev.Delta(at.session_id, at.ts, event, at.parent)


def _end(rec: dict[str, Any], at: _Envelope) -> ev.RunEnd:
    line, extra = src.take(rec, _RESULT, "result")
    # The input's counts of what was dropped are not carried: the framer counts anew.
    ext = src.rest(at.extension, ("dropped", "unrecognized"))
    figures = line["usage"], line["model_usage"], line["total_cost_usd"]
    return ev.run_end_of(line, at.session_id, at.ts, *figures, {**ext, **extra})


#: Each line type's handler (any other type is kept whole: system/unrecognized).
_LINES: dict[str, Callable[[dict[str, Any], _Envelope], ev.Event]] = {
    "system": _system,
    "assistant": _message,
    "user": _message,
    "stream_event": _delta,
    "result": _end,
}


MAPPING = (
    Row(
        "init",
        "`system/init`",
        "a run start: `cwd`, `tools`, `mcp_servers`, `agent`, "
        "`partial_messages_v1`; the rest in `extension`",
    ),
    Row(
        "assistant",
        "`assistant`",
        "the same message (the source's model, stop_reason and "
        "usage come back from `extension.message`)",
    ),
    Row("user", "`user`", "the same message and `tool_use_result`"),
    Row("stream_event", "`stream_event`", "the same partial delta"),
    Row("error", "`system/error`", "a `system/error` again (not a new problem of this input)"),
    Row("system_other", "`system/<other>`", "the same system line (fields and extension kept)"),
    Row(
        "result",
        "`result`",
        "the run's end with every figure it carries (`seq` and the "
        "`extension.dropped`/`unrecognized` counts are made anew)",
    ),
    Row("unknown", "any other line type", "`system/unrecognized`, the line whole"),
)


SOURCE = src.Source(
    name="stream_v1",
    description="stream_v1 itself (milk --output-format stream-json, streamv1's own output)",
    sniff=sniff,
    open=StreamV1Adapter,
    mapping=MAPPING,
)


def _obj(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one."""
    return value if isinstance(value, dict) else {}
