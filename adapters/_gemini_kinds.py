"""Which of Gemini CLI's views a record is, told by its keys.

The chat file's records, stream-json's events and the json document's members
never share keys: the key sets here are what the adapter dispatches a record on,
and :func:`sniff` (what auto-detection asks) scores a record by the same keys
without parsing anything else. Apart from the adapter: it reads no state.
"""

from __future__ import annotations

from typing import Any

from streamv1.translator.reading.sources import CERTAIN, DECISIVE, GUESS, LIKELY, NOT_MINE, OWN_TYPE

#: Metadata keys of a chat file's metadata line (and of an older file's document).
META_KEYS = frozenset(
    {"sessionId", "projectHash", "startTime", "lastUpdated", "kind", "directories", "summary"}
)
#: A chat message's types.
MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
#: stream-json's event types.
STREAM_TYPES = frozenset({"init", "message", "tool_use", "tool_result", "result", "error"})
#: The json document's members.
DOC_KEYS = frozenset({"session_id", "response", "stats", "error"})


def sniff(record: dict[str, Any]) -> int:
    """How sure the source is that ``record`` is its own (a score of translator.reading.sources)."""
    if "seq" in record:
        return NOT_MINE
    if "$set" in record or "$rewindTo" in record:
        return CERTAIN
    if "projectHash" in record:
        return CERTAIN
    kind = record.get("type")
    if kind is None:
        keys = record.keys()
        if keys and keys <= META_KEYS:
            return DECISIVE  # an older chat document's member ({"sessionId": ...})
        if keys and keys <= DOC_KEYS:
            if "stats" in record or "response" in record:
                return OWN_TYPE  # the json document's members
            return GUESS
        return NOT_MINE
    if not isinstance(kind, str) or "uuid" in record or "sessionId" in record:
        return NOT_MINE
    if kind in MESSAGE_TYPES and "id" in record and "content" in record:
        if kind == "gemini" or "toolCalls" in record or "tokens" in record:
            return OWN_TYPE
        return LIKELY if "timestamp" in record else NOT_MINE
    if "timestamp" not in record:
        return NOT_MINE
    if kind == "init" and "session_id" in record and "model" in record:
        return OWN_TYPE
    if kind in ("tool_use", "tool_result") and "tool_id" in record:
        return OWN_TYPE
    if kind == "result" and "status" in record and "session_id" not in record:
        return OWN_TYPE
    if kind == "message" and "role" in record and "session_id" not in record:
        return DECISIVE
    return NOT_MINE
