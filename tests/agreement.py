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


def runs(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per run: session_id, the main-thread block sequence, and the result."""
    out: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    for line in lines:
        if line["type"] == "system" and line.get("subtype") == "init":
            current = {
                "session_id": line["session_id"],
                "blocks": [],
                "result": None,
                "nested": "parent_tool_use_id" in line,
            }
            out.append(current)
            continue
        assert current is not None
        if line["type"] in ("assistant", "user") and "parent_tool_use_id" not in line:
            current["blocks"] += [block_key(b) for b in line["message"]["content"]]
        if line["type"] == "result":
            current["result"] = {k: line.get(k) for k in RESULT_KEYS}
    return [r for r in out if not r["nested"]]
