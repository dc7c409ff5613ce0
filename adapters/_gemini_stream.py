"""stream-json's events as lines: what one ``init``, ``message``, ``tool_use``,
``tool_result``, ``error`` or ``result`` event becomes.

The adapter (adapters/gemini.py) keeps what spans events: the model call being
streamed (its text deltas joined, its tool_use blocks) and the count of calls a
run's ``result`` carries. These functions only read one event. Apart: no state,
so each event's mapping reads on its own. A body that does not fit raises
BodyError before anything is built.
"""

from __future__ import annotations

from typing import Any

import orjson

from streamv1.adapters._gemini_usage import stats_usage
from streamv1.translator.model import events as ev
from streamv1.translator.reading.sources import rest, str_field

#: The keys of ``stats`` the run's end reads; the rest goes to its extension.
_STATS_USED = (
    "total_tokens",
    "input_tokens",
    "output_tokens",
    "cached",
    "input",
    "duration_ms",
    "models",
)


def model_of(rec: dict[str, Any], fields: ev.JSON) -> tuple[str | None, ev.JSON]:
    """An ``init`` event's model, and its run start's extension: the router's alias
    ``auto`` is no model (it is not known yet), kept in the extension."""
    model = str_field(rec, "model")
    ext = rest(fields, ("session_id", "model"))
    if model == "auto":
        ext["model"] = model
        model = None
    return model, ext


def user_text(content: str, fields: ev.JSON, ts: str | None, sid: str) -> ev.Message:
    """A ``message`` event of role ``user``: its text line."""
    ext = rest(fields, ("role", "content"))
    return ev.Message("user", sid, ts, [{"type": "text", "text": content}], extension=ext)


def tool_use(rec: dict[str, Any], fields: ev.JSON) -> ev.JSON:
    """A ``tool_use`` event's block (``fields``: the event less its type and time)."""
    tid = str_field(rec, "tool_id", required=True)
    name = str_field(rec, "tool_name", required=True)
    block = ev.tool_use(tid, name, rec.get("parameters", {}))
    ext = rest(fields, ("tool_id", "tool_name", "parameters"))
    if ext:
        block["extension"] = ext
    return block


def tool_result(rec: dict[str, Any], fields: ev.JSON, ts: str | None, sid: str) -> ev.Message:
    """A ``tool_result`` event: its ``user`` tool_result line."""
    tid = str_field(rec, "tool_id", required=True)
    status = str_field(rec, "status")
    err = rec.get("error")
    result: ev.JSON = {
        "type": "tool_result",
        "tool_use_id": tid,
        "is_error": status == "error",
    }
    if "output" in rec:
        output = rec["output"]
        result["content"] = output if isinstance(output, str) else orjson.dumps(output).decode()
    elif isinstance(err, dict) and isinstance(err.get("message"), str):
        result["content"] = err["message"]
    summary = rest(fields, ("tool_id", "output"))
    return ev.Message(
        "user",
        sid,
        ts,
        [result],
        tool_use_result=summary or None,
        has_tool_use_result=bool(summary),
    )


def error(rec: dict[str, Any], fields: ev.JSON, ts: str | None, sid: str) -> ev.Note:
    """An ``error`` event: a notification with its severity and message."""
    note: ev.JSON = {}
    for key in ("severity", "message"):
        value = str_field(rec, key)
        if value is not None:
            note[key] = value
    return ev.Note("notification", sid, ts, note, rest(fields, ("severity", "message")))


def run_end(
    rec: dict[str, Any], fields: ev.JSON, ts: str | None, sid: str, turns: int
) -> ev.RunEnd:
    """A ``result`` event: the run's end, ``turns`` the model calls it streamed."""
    status = str_field(rec, "status")
    stats = rec.get("stats")
    usage = model_usage = duration = None
    ext = rest(fields, ("status", "stats", "error"))
    if stats is not None:
        usage = stats_usage(stats, "stats")
        duration = ev.whole(stats.get("duration_ms")) if isinstance(stats, dict) else None
        models = stats.get("models") if isinstance(stats, dict) else None
        if isinstance(models, dict):
            model_usage = {
                name: stats_usage(m, f"stats.models.{name}") for name, m in models.items()
            }
        ext["stats"] = rest(stats, _STATS_USED)
        if not ext["stats"]:
            del ext["stats"]
    err = rec.get("error")
    message = None
    if isinstance(err, dict):
        message = err.get("message") if isinstance(err.get("message"), str) else None
        if rest(err, ("message",)):
            ext["error"] = rest(err, ("message",))
    failed = status != "success"
    return ev.RunEnd(
        sid,
        ts,
        subtype="error_during_execution" if failed else "success",
        is_error=failed,
        result=message if failed else None,
        num_turns=turns,
        duration_ms=duration,
        usage=usage,
        model_usage=model_usage or None,
        extension=ext,
    )
