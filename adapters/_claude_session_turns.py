"""How a turn of a durable session file ends, and the result line it ends with.

The files have no result record: the end is inferred. Apart from the adapter's
dispatch because these are the rules, not the records: what each record tells of
the open turn (:class:`adapters.claude_session._Turn`, which the adapter keeps and
checkpoints), the end marks that wait (for background agents, for an interrupt
marker after a cost-state), and the result's subtype, ``num_turns``, ``result`` and
usage, made the same way for a main run and for an inline sidechain's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from streamv1.adapters import _claude as cc
from streamv1.translator.model import events as ev

if TYPE_CHECKING:
    from streamv1.adapters.claude_session import _Turn

#: The model's own words: a turn the CLI ends on one of these as the last block of its
#: last message is ``success``; on any other (a server tool call or its result, a tool
#: call) ``error_during_execution``, whatever the stop_reason (the CLI's own test, read
#: in 2.1.332's bundled code: its ``[ede_diagnostic]`` error names the last block;
#: captures x_pause_turn_thinking_only, x_pause_turn_server_result,
#: x_server_result_end_turn, x_pause_turn_after_tools).
_OWN_WORD_BLOCKS = frozenset({"text", "thinking", "redacted_thinking"})

#: Content blocks that, as the model's last word, leave its turn to another call
#: (a tool_use is an unanswered call until its result comes): with no end mark, the
#: turn was cut off.
_UNFINISHED_BLOCKS = frozenset({"server_tool_use"})


#: 1.0.x versions whose print mode counts ``num_turns`` as its conversation's messages
#: less one (``num_turns:<messages>.length-1``, the messages array holding the loaded
#: conversation, the prompt, and each user and assistant message [from 1.0.113, also
#: compact_boundary] of the run, which is also what it writes to the file): read in
#: the cli.js of 1.0.17, .35, .51, .72, .88, .100, .113, .127, .128; 1.0.128's in
#: capture x_old_1_0_128_resume (7). 1.0.0's pushes every message it gets (progress,
#: attachments too, which the file does not hold): left to the 2.x count.
_COUNTS_CONVERSATION = range(17, 129)


def counts_conversation(rec: dict[str, Any]) -> bool:
    """Was this record (a run's prompt) written by a CLI that counts ``num_turns``
    as its whole conversation's messages less one?"""
    version = rec.get("version")
    if not isinstance(version, str) or not version.startswith("1.0."):
        return False
    patch = version.removeprefix("1.0.")
    return patch.isdigit() and int(patch) in _COUNTS_CONVERSATION


def in_conversation(rec: dict[str, Any]) -> bool:
    """Is the record one of the main thread's conversation messages (what 1.0.x's
    count is made of): a user or assistant record not of a sidechain, or a
    compact_boundary."""
    kind = rec.get("type")
    if rec.get("isSidechain") is True:
        return False
    return kind in ("user", "assistant") or (
        kind == "system" and rec.get("subtype") == "compact_boundary"
    )


# -- what records tell of the turn ------------------------------------------------------


def after_reply(turn: _Turn, rec: dict[str, Any], line: ev.Message) -> None:
    """The model spoke (an assistant line, or a local command's own reply)."""
    for block in line.content:
        if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
            turn.unanswered.add(block["id"])
    turn.replied = True
    turn.api_call = turn.api_call or line.usage is not None
    turn.last_is_model = True
    if line.content:
        last = line.content[-1].get("type")
        turn.unfinished = last in _UNFINISHED_BLOCKS
        turn.last_block = last if isinstance(last, str) else "?"
    turn.api_error = cc.is_api_error(rec)
    # The record's own stop_reason, null too: before 2.1.x the records of a finished
    # reply carry null (x_old_2_0_77_resume), and a tool_use stop of an earlier
    # message must not stay the turn's last.
    turn.last_stop = line.stop_reason


def after_user_record(turn: _Turn, line: ev.Message) -> None:
    """A user record of the turn (a tool result): its answers, and one more turn."""
    for block in line.content:
        if block.get("type") == "tool_result":
            turn.unanswered.discard(str(block.get("tool_use_id")))
    turn.last_is_model = False
    if line.content and all(b.get("type") == "tool_result" for b in line.content):
        # Tool results as the last word: the CLI counts the turn finished (its test).
        turn.last_block = None
    turn.count.user_records += 1


def may_be_interrupted(turn: _Turn) -> bool:
    """A cost-state while the CLI was waiting for the model (its last record the
    prompt or a tool result): the CLI stopped by SIGINT writes it just before its
    interrupt marker (capture x_interrupt), so the end waits for the next record.
    Any other cost-state ends the turn at once, live too: a finished turn, the
    turn limit, the budget, structured output, an unanswered tool call (s6)."""
    if turn.interrupted is not None or _complete(turn):
        return False
    if turn.max_turns is not None or turn.budget is not None or turn.has_structured:
        return False
    return not turn.last_is_model and not turn.unanswered


# -- the end ------------------------------------------------------------------------------


def end(
    turn: _Turn,
    session_id: str,
    ts: str | None,
    inferred: bool,
    duration_ms: int | None,
    total_cost_usd: float | None,
    extension: ev.JSON | None,
    spent: float | None,
) -> ev.RunEnd | None:
    """The main run's result line, from the end mark (``inferred``: none, the next
    prompt or the input's end came); None while background agents the turn launched
    still run: the mark is kept in ``turn.held_end`` for the last one's notice."""
    if turn.held_end is not None:
        # The end the CLI marked while background agents ran: now (the last one
        # notified, or the next prompt, or the input's end came first).
        held, turn.held_end = turn.held_end, None
        ts, duration_ms = ts if ts is not None else held["ts"], held["duration_ms"]
        total_cost_usd, extension, spent = held["cost"], held["extension"], held["spent"]
        inferred = False
    elif not inferred and turn.background and turn.interrupted is None:
        turn.held_end = {
            "ts": ts,
            "duration_ms": duration_ms,
            "cost": total_cost_usd,
            "extension": extension,
            "spent": spent,
        }
        return None
    if turn.cost_end is not None and total_cost_usd is None:
        total_cost_usd, spent, cost_ext = turn.cost_end
        extension = {**cost_ext, **(extension or {})}
        inferred = False  # the cost-state proved the CLI ended the turn
    return result_line(
        turn, session_id, ts, inferred, duration_ms, total_cost_usd, extension, spent
    )


def result_line(
    turn: _Turn,
    session_id: str,
    ts: str | None,
    inferred: bool,
    duration_ms: int | None = None,
    total_cost_usd: float | None = None,
    extension: ev.JSON | None = None,
    spent: float | None = None,
    parent: str | None = None,
) -> ev.RunEnd:
    """A run's result as print mode would have printed it. An inline sidechain's
    (``parent``: its spawner) always ends inferred, with none of the CLI's marks."""
    ext: ev.JSON = dict(extension or {})
    subtype, is_error = _subtype(turn, inferred, spent)
    if turn.interrupted is not None and subtype in ("interrupted", "error_during_execution"):
        ext["interrupt"] = turn.interrupted
    elif subtype == "interrupted":
        ext["cut_off"] = True
    local = not turn.api_call and not turn.expects_reply
    turn.count.local_command = local
    num_turns = turn.count.value
    if turn.conversation is not None and subtype == "success" and not local:
        # 1.0.x prints its conversation's messages less one (_COUNTS_CONVERSATION;
        # a local command's path adds its output twice: not followed, unseen).
        num_turns = turn.conversation - 1
    if subtype == "error_max_turns" and turn.max_turns is not None and turn.max_turns >= 0:
        num_turns = turn.max_turns
    result: str | None = None
    if turn.has_structured:
        result = cc.structured_text(turn.structured)
        ext["structured_output"] = turn.structured
    elif local:
        # Print mode's result for a local command: its stdout as written (the
        # message shows it trimmed); for /compact, whose output is a user line, "".
        result = turn.command_output if turn.command_output is not None else ""
    elif not inferred and subtype == "success" and turn.replied and turn.last_block != "text":
        # The CLI (2.1.x: a turn it marked ended) prints the last block's text as the
        # result: "" when that block is no text (x_pause_turn_thinking_only).
        result = ""
    # No API call in a run whose end is proven (or a local command): it used none.
    # Not where the model's reply was never written (x_pause_turn_end: a reply
    # with no content has no record): what it cost is not known.
    usage = None
    if (
        not turn.api_call
        and (turn.replied or not turn.expects_reply)
        and (not inferred or not turn.expects_reply)
    ):
        usage = ev.Usage()
    return ev.RunEnd(
        session_id=session_id,
        ts=ts,
        subtype=subtype,
        is_error=is_error,
        result=result,
        num_turns=num_turns,
        duration_ms=duration_ms,
        usage=usage,
        total_cost_usd=total_cost_usd,
        extension=ext,
        parent_tool_use_id=parent,
    )


def _subtype(turn: _Turn, inferred: bool, spent: float | None) -> tuple[str, bool | None]:
    """The result's subtype, and is_error where the subtype alone does not say it.

    In order: the CLI's own marks (max turns, an interrupt), then what the records
    prove: over ``--max-budget-usd`` with the turn unfinished; a turn ended by the CLI
    (a cost-state or turn_duration) with a tool call never answered (the CLI stopped
    mid-turn: never ``success``); a turn with no end mark that was cut off."""
    complete = _complete(turn)
    if turn.max_turns is not None:
        return "error_max_turns", None
    if cc.is_tool_interrupt(turn.interrupted):
        return "error_during_execution", None  # the CLI's aborted_tools
    if turn.interrupted is not None:
        return "interrupted", None
    if turn.budget is not None and spent is not None and not complete:
        total, used = turn.budget
        if used + spent >= total:
            return "error_max_budget_usd", None
    if inferred and not complete:
        return "interrupted", None
    if not inferred and (
        turn.unanswered
        or turn.unfinished
        or (turn.last_block is not None and turn.last_block not in _OWN_WORD_BLOCKS)
        or not (turn.replied or not turn.expects_reply)
    ):
        # The CLI ended a turn the model had not finished: a tool call never
        # answered, a last block that is not the model's own word (a server tool
        # call or its result, whether the stop_reason is pause_turn or end_turn), no
        # reply at all (captures: x_pause_turn_end, x_pause_turn_server_tool,
        # x_pause_turn_server_result, x_server_result_end_turn; text or thinking
        # last is success: x_pause_turn, x_pause_turn_thinking_only).
        return "error_during_execution", None
    # An API error the CLI gave up on: print mode says success with is_error true.
    return "success", True if turn.api_error else None


def _complete(turn: _Turn) -> bool:
    if not turn.replied:
        return not turn.expects_reply
    return (
        turn.last_is_model
        and not turn.unanswered
        and not turn.unfinished
        and turn.last_stop != "tool_use"
    )
