"""What the agreement test compares: the stream_v1 made from print-mode stdout and
from the durable file of the very same run (helpers shared by tests and tools)."""

from __future__ import annotations

from typing import Any

RESULT_KEYS = ("result", "num_turns", "is_error", "subtype", "usage", "total_cost_usd")


def block_key(block: dict[str, Any]) -> tuple[Any, ...]:
    kind = block.get("type")
    if kind == "text":
        return ("text", block.get("text"))
    if kind == "thinking":
        return ("thinking", block.get("thinking"))
    if kind == "tool_use":
        return ("tool_use", block.get("id"), block.get("name"), block.get("input"))
    if kind == "tool_result":
        return (
            "tool_result",
            block.get("tool_use_id"),
            bool(block.get("is_error")),
            block.get("content"),
        )
    return (kind,)


def actor_blocks(lines: list[dict[str, Any]]) -> dict[str, list[tuple[Any, ...]]]:
    """Per nested actor (its parent_tool_use_id): the tool calls and tool results its
    lines carry, in order (what both views show of a subagent)."""
    out: dict[str, list[tuple[Any, ...]]] = {}
    for line in lines:
        parent = line.get("parent_tool_use_id")
        if parent is None or line["type"] not in ("assistant", "user"):
            continue
        for block in line["message"]["content"]:
            if block.get("type") in ("tool_use", "tool_result"):
                out.setdefault(parent, []).append(block_key(block))
    return out


def runs(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per main-thread run, in the order the runs began: session_id, the main-thread
    block sequence, the result and the init's time. Runs are keyed as the validator
    keys them (by session_id); the lines of nested actors inside a run are not the
    main thread's."""
    out: list[dict[str, Any]] = []
    open_runs: dict[Any, dict[str, Any]] = {}
    for line in lines:
        key = line["session_id"]
        if line["type"] == "system" and line.get("subtype") == "init":
            run = {
                "session_id": line["session_id"],
                "blocks": [],
                "result": None,
                "ts": line.get("ts"),
                "nested": "parent_tool_use_id" in line
                or line.get("agent", {}).get("role") is not None,
            }
            open_runs[key] = run
            out.append(run)
            continue
        current = open_runs.get(key)
        assert current is not None, line
        if line["type"] in ("assistant", "user") and "parent_tool_use_id" not in line:
            current["blocks"] += [block_key(b) for b in line["message"]["content"]]
        if line["type"] == "result":
            current["result"] = {k: line.get(k) for k in RESULT_KEYS}
            del open_runs[key]
    return [r for r in out if not r["nested"]]
