"""How this source is found: whose records these are, where its files are, and
which files make one session.

Apart from the adapter because none of it reads a record in order: a sniff of one
record (:func:`sniff`), the default home and what is skipped there, the session a
path implies (``<session>.jsonl``, ``<session>/subagents/**``, an older flat
``agent-<id>.jsonl``), and the files a finished subagent leaves.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from streamv1.translator.reading.files import open_regular
from streamv1.translator.reading.sources import CERTAIN, NOT_MINE, OWN_TYPE

#: Record types that are not conversation lines: the dispatch drops them on purpose
#: (counted); a sniff knows them as this source's own.
METADATA_TYPES = frozenset(
    {
        "attachment",
        "file-history-snapshot",
        "api-request",
        "api-request-blob",
        "api-request-shape",
        "queue-operation",
        "last-prompt",
        "tools-used",
        "atis-latch",
        "mode",
        "permission-mode",
        "summary",
        "custom-title",
        "ai-title",
        "agent-name",
        "agent-setting",
        "pr-link",
        "progress",
        "cost-state",
    }
)

_UUIDISH = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def sniff(record: dict[str, Any]) -> int:
    if "session_id" in record:
        # Never in a durable record (none in the public corpus of 41 versions): a
        # print-mode line, or streamv1's own --to claude output, which keeps a
        # durable record's keys (sessionId, parentUuid) beside it.
        return NOT_MINE
    if "projectHash" in record or record.keys() == {"sessionId"}:
        # Gemini CLI's chat metadata line, or an older Gemini chat document's member:
        # no Claude Code record has a projectHash, or a sessionId and nothing else.
        return NOT_MINE
    if "sessionId" in record or "parentUuid" in record or "leafUuid" in record:
        return CERTAIN
    kind = record.get("type")
    if isinstance(kind, str) and kind in METADATA_TYPES:
        return OWN_TYPE
    return NOT_MINE


def homes(env: Mapping[str, str], home: str) -> list[str]:
    """``${CLAUDE_CONFIG_DIR:-~/.claude}/projects``: Claude Code's own override first."""
    base = env.get("CLAUDE_CONFIG_DIR") or os.path.join(home, ".claude")
    return [os.path.join(base, "projects")]


def skips(parts: Sequence[str]) -> bool:
    """Claude Code's bookkeeping: ``journal.jsonl``, ``tool-results/`` (large tool
    outputs kept aside), and ``workflows/`` outside ``subagents/`` (workflow state,
    not transcripts; a subagent's own ``workflows/`` folder holds its agents)."""
    name = parts[-1]
    if name == "journal.jsonl" or name == "tool-results":
        return True
    return name == "workflows" and "subagents" not in parts[:-1]


def session_hint(path: str) -> str | None:
    """``<session>.jsonl``, or a file under ``<session>/subagents/``: the session id.

    On strings, not Path objects (one call per input; pathlib's parents cost
    ~30 us a file in a many-file archive)."""
    parts = [part for part in path.split(os.sep) if part not in ("", ".")]
    if not parts:
        return None
    stem = os.path.splitext(parts[-1])[0]
    match = _UUIDISH.search(stem)
    if match and match.end() == len(stem):
        return match.group(0)
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "subagents" and _UUIDISH.fullmatch(parts[i - 1]):
            return parts[i - 1]
    return None


def session_of(path: str) -> str | None:
    """The session a file is one file of: ``<dir>/<session>.jsonl`` and every file
    under ``<dir>/<session>/subagents/`` share ``<dir>/<session>``; an older flat
    ``<dir>/agent-<id>.jsonl`` is its records' ``sessionId``'s, in its folder."""
    parts = path.split(os.sep)
    name = parts[-1]
    stem = os.path.splitext(name)[0]
    if _UUIDISH.fullmatch(stem):
        if len(parts) > 1 and _UUIDISH.fullmatch(parts[-2]):
            return None  # <session>/<agent>.jsonl: Gemini CLI's subagent layout, not ours
        return os.path.join(os.sep.join(parts[:-1]), stem)
    for i in range(len(parts) - 2, 0, -1):
        if parts[i] == "subagents" and _UUIDISH.fullmatch(parts[i - 1]):
            return os.sep.join(parts[:i])
    if name.startswith("agent-") and name.endswith(".jsonl"):
        session = _session_in(path)
        if session is not None:
            return os.path.join(os.sep.join(parts[:-1]), session)
    return None


def _session_in(path: str) -> str | None:
    """The first ``sessionId`` among a file's first lines."""
    try:
        with open_regular(path) as fh:
            head = fh.read(65536)
    except OSError:
        return None
    for raw in head.split(b"\n")[:50]:
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        sid = record.get("sessionId") if isinstance(record, dict) else None
        if isinstance(sid, str) and _UUIDISH.fullmatch(sid):
            return sid
    return None


def ended_by(path: str, line: dict[str, Any]) -> list[str]:
    """A main-thread tool result whose ``tool_use_result`` names an ``agentId``:
    that subagent is done. Its file is named for it, under the session's
    ``subagents/`` folder (or, in older layouts, beside the main file)."""
    result = line.get("tool_use_result")
    agent = result.get("agentId") if isinstance(result, dict) else None
    if not isinstance(agent, str) or not path.endswith(".jsonl"):
        return []
    name = f"agent-{agent}.jsonl"
    return [
        os.path.join(path.removesuffix(".jsonl"), "subagents", name),
        os.path.join(os.path.dirname(path), name),
    ]
