"""A run's result: what the run counts toward it, the line, the summary's totals.

As the framer (:mod:`translator.model.framing`) frames an assistant message, the
message is counted in its run (usage once per API message, the turns, the last
text, the stop reason); when the run ends, its result line takes what the source's
:class:`~translator.model.events.RunEnd` says and fills the rest from those counts
where the run knows it (left out otherwise), and the closing summary adds up each
result's tokens and the costs the sources stated.

Apart from the framer because it is the accounting, not the framing: the framer
decides where a run begins and ends and which seq a line takes; this module, what
a result says. The framer's per-line path calls only :func:`count_message`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streamv1.translator.model import catalog
from streamv1.translator.model import events as ev
from streamv1.translator.timefmt import ts_millis

if TYPE_CHECKING:  # (framing imports this module: its types are named for mypy only)
    from streamv1.translator.model.framing import FramerStats, _Run

ERROR_SUBTYPES_OK = {"success", "refused"}


def count_message(run: _Run, msg: ev.Message, key: str) -> None:
    """An assistant message of ``run`` (``key``: its API message id, or a made-up
    one), counted toward the result; the tool calls it makes, owned by its actor."""
    actor = msg.parent_tool_use_id or msg.actor
    own = actor == run.actor or (actor is None and run.actor is None)
    if msg.usage is not None and msg.model:
        # Every actor's: the run's model_usage (the latest record of a message
        # carries its final usage). Keyed by actor too: ids are per API call.
        actor_key = key if own else f"{actor}/{key}"
        run.all_usage[actor_key] = msg.usage
        run.all_model[actor_key] = msg.model
    for block in msg.content:
        if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            run.tool_owner[block["id"]] = msg.parent_tool_use_id or ""
    if not own:
        return
    run.turn_ids.add(key)
    if msg.usage is not None:
        run.usage[key] = msg.usage  # the latest record of a message carries its final usage
        if msg.model:
            run.usage_model[key] = msg.model
    if msg.stop_reason:
        run.last_stop_reason = msg.stop_reason
    texts = [b["text"] for b in msg.content if b.get("type") == "text" and "text" in b]
    if key != run.last_message_id:
        run.last_message_id = key
        run.last_texts = []
    run.last_texts += texts


def count_side_call(run: _Run, call: ev.SideCall, key: str) -> None:
    """A side call's tokens, counted in ``run``'s model_usage only (no actor's: not
    the run's ``usage``, no turn)."""
    if call.usage is not None and call.model:
        run.all_usage[f"side/{key}"] = call.usage
        run.all_model[f"side/{key}"] = call.model


def result_line(run: _Run, end: ev.RunEnd, ts: str, stats: FramerStats) -> ev.JSON:
    """``run``'s result line at ``ts`` (in the run's seq; the framer emits it), its
    tokens added to the summary's (``stats``)."""
    subtype = end.subtype or "success"
    is_error = end.is_error if end.is_error is not None else subtype not in ERROR_SUBTYPES_OK
    usage = end.usage
    if usage is None and run.usage:
        usage = ev.Usage()
        for u in run.usage.values():
            usage.add(u)
    model_usage = end.model_usage
    if model_usage is None and run.all_model:
        model_usage = {}
        for msg_id, model in run.all_model.items():
            model_usage.setdefault(model, ev.Usage()).add(run.all_usage[msg_id])
    result = end.result
    if result is None and subtype in ("success", "interrupted", "refused") and run.last_texts:
        # The last text block of the last message, as Claude Code prints it (a
        # message with text, a server tool call and more text: only the last).
        result = run.last_texts[-1]
    num_turns = end.num_turns if end.num_turns is not None else len(run.turn_ids)
    duration = end.duration_ms
    if duration is None and run.first_ts and run.last_ts:
        first, last = ts_millis(run.first_ts), ts_millis(run.last_ts)
        if first is not None and last is not None:
            duration = max(0, last - first)
    if model_usage:
        for u in model_usage.values():
            stats.usage.add(u)
    elif usage:
        stats.usage.add(usage)
    ext: ev.JSON = dict(end.extension)
    if run.dropped:
        ext["dropped"] = dict(sorted(run.dropped.items()))
    if run.unrecognized:
        ext["unrecognized"] = dict(sorted(run.unrecognized.items()))
    return catalog.envelope(
        "result",
        run.session_id,
        run.seq,
        ts,
        subtype=subtype,
        parent_tool_use_id=run.parent_tool_use_id,
        is_error=is_error,
        num_turns=num_turns,
        duration_ms=duration,
        result=result,
        stop_reason=end.stop_reason or run.last_stop_reason,
        usage=catalog.usage_dict(usage) if usage else None,
        model_usage=catalog.model_usage_dict(model_usage) if model_usage else None,
        total_cost_usd=end.total_cost_usd,
        ttft_ms=end.ttft_ms,
        extension=ext or None,
    )


def add_stated_cost(
    stats: FramerStats, total_cost_usd: float | None, before: float | None
) -> float | None:
    """A result's stated cost (``total_cost_usd``), added to the summary's; the
    latest figure framed, which the next result's is measured against (``before``
    the one until now). The CLI's figure is its process's running total, so what
    it grew by is added; a smaller one is a new process's, added whole."""
    stated = catalog.stated_cost(total_cost_usd)
    if stated is None:
        return before
    grew = before is not None and stated >= before
    stats.stated_cost_usd += stated - (before or 0.0) if grew else stated
    stats.costed_runs += 1
    return stated
