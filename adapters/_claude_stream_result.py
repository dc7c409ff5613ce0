"""A print-mode ``result`` record as its run's end line.

Apart from the adapter because it is a mapping of its own, with the CLI's quirks
in it: whole numbers printed as floats, all-zero usage printed for a run it stopped
early, and per-model usage that is its process's running total, not the run's.
"""

from __future__ import annotations

from typing import Any

from streamv1.adapters import _claude as cc
from streamv1.translator.model import events as ev
from streamv1.translator.reading.sources import Spec, number, take
from streamv1.translator.timefmt import normalize_ts


def _count(value: Any, name: str) -> int:
    """A whole number, which print mode may write as a float (``3.0``)."""
    if isinstance(value, int | float) and not isinstance(value, bool):
        count = ev.whole(value)
        if count is None:
            raise cc.BodyError(f"{name} is {cc.shown(value)}, not a whole number")
        return count
    raise cc.BodyError(f"{name} is {type(value).__name__}, not int")


#: A result's fields, in the order they are checked (the rest goes into the run
#: end's extension).
_RESULT: Spec = {
    "subtype": str,
    "is_error": bool,
    "result": str,
    "num_turns": _count,
    "duration_ms": _count,
    "stop_reason": str,
    "ttft_ms": _count,
    "type": object,
    "session_id": object,
    "usage": object,
    "total_cost_usd": object,
    "model_usage_since_last_result": object,
}


def run_end(rec: dict[str, Any], session: str, api_call: bool = False) -> ev.RunEnd:
    """The run's end line (``api_call``: the run made a real API call, so an
    all-zero usage is the CLI's early stop, not the run's)."""
    model_usage = cc.model_usage_from_camel(rec.get("model_usage_since_last_result"))
    this_invocation = model_usage is not None
    if model_usage is None:
        model_usage = cc.model_usage_from_camel(rec.get("modelUsage"))
    usage = cc.usage_from_api(rec.get("usage"))
    line, ext = take(rec, _RESULT, "result")
    if this_invocation:
        ext["model_usage_since_last_result"] = rec["model_usage_since_last_result"]
    if usage is not None and api_call and usage == ev.Usage() and model_usage:
        # The CLI prints all-zero usage when it stops a run early (--max-budget-usd)
        # although the run's API calls used tokens: this invocation's per-model
        # figures hold them (the durable records agree).
        ext["usage"] = rec["usage"]
        usage = ev.Usage()
        for per_model in model_usage.values():
            usage.add(per_model)
    cost = line["total_cost_usd"]
    if cost is None:
        cost = rec.get("total_cost")  # print-mode 1.0.x named it total_cost
    ts = normalize_ts(rec.get("timestamp"))
    return ev.run_end_of(line, session, ts, usage, model_usage, number(cost), ext)


def run_share(end: ev.RunEnd, last: dict[str, ev.Usage] | None) -> dict[str, ev.Usage]:
    """``modelUsage`` is the process's running total (every run of a streaming-
    input process so far): the run's own is the difference to the last
    result's (``last``). A total below the last is a new process (a resumed stream
    after another): taken whole. The total is kept in ``extension.process_model_usage``."""
    total = end.model_usage or {}
    if last is None:
        return total
    fields = ("input_tokens", "output_tokens", "cache_read", "cache_creation")
    if any(
        model not in total or any(getattr(total[model], f) < getattr(used, f) for f in fields)
        for model, used in last.items()
    ):
        return total  # smaller than before: another process's count
    share: dict[str, ev.Usage] = {}
    for model, now in total.items():
        before = last.get(model, ev.Usage())
        diff = ev.Usage(*(getattr(now, f) - getattr(before, f) for f in fields))
        if diff != ev.Usage():
            share[model] = diff
    end.extension["process_model_usage"] = {m: u.as_dict() for m, u in total.items()}
    return share
