"""Which files a path names: files as given; directories walked for transcripts.

In a directory, every ``*.jsonl`` is an input (session files, and subagent files
``<session>/subagents/**/agent-*.jsonl``), except Claude Code's own bookkeeping:
``journal.jsonl``, anything under ``tool-results/``, and ``workflows/`` folders
outside ``subagents/`` (workflow state, not transcripts). ``*.meta.json`` sidecars
are read by the adapter that needs them, never converted. Order is by path, so
output is reproducible.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

SKIP_FILES = frozenset({"journal.jsonl"})
SKIP_DIRS = frozenset({"tool-results", ".git", "node_modules", "__pycache__"})


def walk(root: Path) -> Iterator[Path]:
    """The transcript files below ``root``, sorted."""
    found: list[Path] = []
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        rel = here.relative_to(root).parts
        in_subagents = "subagents" in rel
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIP_DIRS and not (d == "workflows" and not in_subagents)
        )
        for name in filenames:
            if name.endswith(".jsonl") and name not in SKIP_FILES:
                found.append(here / name)
    # A session file sorts before its own <session>/subagents/... files.
    yield from sorted(found, key=lambda p: str(p.with_suffix("")))
