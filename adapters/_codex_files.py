"""Where Codex CLI keeps its rollouts, and which of them make one session.

Apart from the adapter because none of it reads a record's meaning: discovery and
the session merge ask it about paths (a rollout's thread from its name, its root
thread from its first line), and the adapter asks it only for a parent rollout and
the call that spawned a child in it.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

from streamv1.adapters._codex_fields import dig
from streamv1.translator.reading.files import lines_of, open_regular

_UUID_TAIL = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")
_HEAD = 1 << 20
#: Codex's own files beside its rollouts: typed prompts and the TUI's thread index.
_BOOKKEEPING = frozenset({"history.jsonl", "session_index.jsonl"})


# -- where Codex CLI keeps its files -----------------------------------------------------


def homes(env: Mapping[str, str], home: str) -> list[str]:
    """``${CODEX_HOME:-~/.codex}``'s ``sessions`` (one folder a day) and
    ``archived_sessions`` (what ``codex`` archives; ccusage reads both)."""
    base = env.get("CODEX_HOME") or os.path.join(home, ".codex")
    return [os.path.join(base, "sessions"), os.path.join(base, "archived_sessions")]


def skips(parts: Sequence[str]) -> bool:
    """Codex's typed-prompt history and thread index (``~/.codex/history.jsonl``,
    ``session_index.jsonl``: JSONL, not transcripts), where a walk of its home or
    of a folder holding ``.codex`` meets them."""
    return parts[-1] in _BOOKKEEPING and (len(parts) == 1 or parts[-2] == ".codex")


# -- which files make one session -------------------------------------------------------


def _first_line(path: str) -> bytes:
    try:
        with open_regular(path) as fh:
            return fh.readline(_HEAD)
    except OSError:
        return b""


def _first_record(path: str, line: bytes | None = None) -> dict[str, Any] | None:
    line = _first_line(path) if line is None else line
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


def _meta_of(record: dict[str, Any] | None) -> dict[str, Any]:
    if record is None or record.get("type") != "session_meta":
        return {}
    payload = record.get("payload")
    return payload if isinstance(payload, dict) else {}


def sessions_root(path: str) -> str:
    """The folder a rollout's session tree starts at: above ``YYYY/MM/DD`` when the
    file is in one, else its own folder."""
    folder = os.path.dirname(path)
    parts = folder.split(os.sep)
    if (
        len(parts) > 3
        and [len(p) for p in parts[-3:]] == [4, 2, 2]
        and all(p.isdigit() for p in parts[-3:])
    ):
        return os.sep.join(parts[:-3])
    return folder


def find_rollout(root: str, thread: str) -> str | None:
    """The rollout of ``thread`` in the session tree at ``root`` (any date folder)."""
    for pattern in ("*/*/*/rollout-*-%s.jsonl", "rollout-*-%s.jsonl"):
        found = sorted(glob.glob(os.path.join(glob.escape(root) if root else "", pattern % thread)))
        if found:
            return found[0]
    return None


def thread_of(path: str) -> str | None:
    name = os.path.basename(path)
    if not (name.startswith("rollout-") and name.endswith(".jsonl")):
        return None
    match = _UUID_TAIL.search(name[: -len(".jsonl")])
    return match.group(1) if match else None


def session_of(path: str) -> str | None:
    """A rollout and its subagents' rollouts share a key: the root thread's rollout
    path without ``.jsonl`` (its sessions folder included, so a copy elsewhere is
    another session). A child whose root rollout is not there: its sessions folder
    and the root thread id (a key no file has: the child stands as the first)."""
    thread = thread_of(path)
    if thread is None:
        return None
    line = _first_line(path)
    if not line.endswith(b"\n") and len(line) < _HEAD:
        return None  # its first record not whole yet (a live file): not known yet
    if b'"parent_thread_id"' not in line and b'"subagent"' not in line:
        return os.path.splitext(path)[0]  # a root thread's rollout (no parse needed)
    meta = _meta_of(_first_record(path, line))
    root_id = meta.get("session_id")
    if not isinstance(root_id, str) or root_id == thread or not _UUID_TAIL.fullmatch(root_id):
        return os.path.splitext(path)[0]
    root = sessions_root(path)
    main = find_rollout(root, root_id)
    if main is not None:
        return os.path.splitext(main)[0]
    return os.path.join(root, root_id)


def session_hint(path: str) -> str | None:
    return thread_of(path)


def find_spawner(parent_file: str, child: str, offset: int) -> tuple[str | None, int]:
    """The call that spawned ``child`` in the parent rollout, past ``offset``
    (complete lines only), and where the search stopped: the ``SubAgentActivity``
    ``started`` naming it, or the ``EnteredReviewMode`` of the review whose items
    of the child's thread the parent mirrors (a review's child has no spawning
    call). A search that stops inside an open review stops at its start."""
    needle = child.encode()
    review: str | None = None
    review_at = offset
    try:
        with open_regular(parent_file) as fh:
            fh.seek(offset)
            for raw, n, whole in lines_of(fh):
                if not whole:
                    break
                start, offset = offset, offset + n
                if b"ReviewMode" in raw:
                    item = _item_of(raw)
                    kind = item.get("type") if item else None
                    if kind == "EnteredReviewMode" and isinstance(item.get("id"), str):
                        review, review_at = item["id"], start
                    elif kind == "ExitedReviewMode":
                        review = None
                    continue
                if needle not in raw:
                    continue
                if b"SubAgentActivity" in raw:
                    item = _item_of(raw)
                    if (
                        item.get("type") == "SubAgentActivity"
                        and item.get("agent_thread_id") == child
                        and item.get("kind") == "started"
                        and isinstance(item.get("id"), str)
                    ):
                        return item["id"], offset
                elif review is not None:
                    try:
                        rec = orjson.loads(raw)
                    except orjson.JSONDecodeError:
                        continue
                    if dig(rec, "payload", "thread_id") == child:
                        return review, offset
    except OSError:
        pass
    return None, review_at if review is not None else offset


def _item_of(raw: bytes) -> dict[str, Any]:
    """The ``payload.item`` of an item_completed line (empty where there is none)."""
    try:
        rec = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    item = dig(rec, "payload", "item")
    return item if isinstance(item, dict) else {}
