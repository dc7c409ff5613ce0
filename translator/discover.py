"""Which files a path names: files as given; directories walked for transcripts.

In a directory, every ``*.jsonl`` is an input (session files, and subagent files
``<session>/subagents/**/agent-*.jsonl``), except Claude Code's own bookkeeping:
``journal.jsonl``, anything under ``tool-results/``, and ``workflows/`` folders
outside ``subagents/`` (workflow state, not transcripts). ``*.meta.json`` sidecars
are read by the adapter that needs them, never converted. Order is by path, a
session file before its own ``<session>/subagents/...`` files, so output is
reproducible.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

SKIP_FILES = frozenset({"journal.jsonl"})
SKIP_DIRS = frozenset({"tool-results", ".git", "node_modules", "__pycache__"})


def claude_projects() -> str:
    """Claude Code's transcripts: ``${CLAUDE_CONFIG_DIR:-~/.claude}/projects`` (what
    ``convert`` with no path and ``tail`` with no folder read)."""
    base = os.environ.get("CLAUDE_CONFIG_DIR") or str(Path.home() / ".claude")
    return str(Path(base) / "projects")


def skips_dir(name: str, in_subagents: bool) -> bool:
    """A folder never holding transcripts (``workflows/`` is one outside ``subagents/``)."""
    return name in SKIP_DIRS or (name == "workflows" and not in_subagents)


def is_transcript_name(name: str) -> bool:
    return name.endswith(".jsonl") and name not in SKIP_FILES


def is_transcript(path: str, root: str) -> bool:
    """The one rule, for one path below ``root``: what ``walk_paths`` would list.
    The tail daemon asks it of each file event; ``walk_paths`` applies it folder by
    folder (pruning what it skips) so the two can never disagree."""
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[0] == ".." or not is_transcript_name(rel[-1]):
        return False
    in_subagents = False
    for part in rel[:-1]:
        if skips_dir(part, in_subagents):
            return False
        in_subagents = in_subagents or part == "subagents"
    return True


def stays_inside(path: str, root: str, follow_symlinks: bool = False) -> bool:
    """A file reached through a symlink counts only if it resolves inside ``root``,
    unless the user asked to follow links out (``--follow-symlinks``)."""
    if follow_symlinks or not os.path.islink(path):
        return True
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(os.path.join(base, ""))


def walk_paths(root: str, follow_symlinks: bool = False,
               unreadable: Callable[[str, OSError], None] | None = None,
               inside: str | None = None) -> list[str]:
    """The transcript files below ``root`` as strings, sorted (cheap: no Path objects,
    so the tail daemon can rescan thousands of files often). Only regular files (a
    FIFO named ``x.jsonl`` would hang a reader); folders reached by symlinks are not
    entered, and a symlinked file counts only if it stays inside ``root``. A folder
    that cannot be listed is told to ``unreadable`` (its path, why); one gone
    between two looks is not (nothing was missed). ``inside``: walk only that
    folder below ``root`` (a new one the daemon was told of), by the same rules."""
    found: list[str] = []
    if inside is None:
        stack = [(root, False)]
    else:
        parts = os.path.relpath(inside, root).split(os.sep)
        if parts[0] == ".." or any(skips_dir(x, "subagents" in parts[:i])
                                   for i, x in enumerate(parts) if x != "."):
            return []
        stack = [(inside, "subagents" in parts)]
    while stack:
        folder, in_subagents = stack.pop()
        try:
            with os.scandir(folder) as it:
                entries = list(it)
        except FileNotFoundError:
            continue
        except OSError as exc:
            if unreadable is not None:
                unreadable(folder, exc)
            continue  # the daemon's next rescan looks again
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if not skips_dir(entry.name, in_subagents):
                        stack.append((entry.path, in_subagents or entry.name == "subagents"))
                elif (
                    is_transcript_name(entry.name)
                    and entry.is_file()  # through a symlink: what it points at
                    # (is_symlink: known from the listing, no lstat per file)
                    and (not entry.is_symlink() or stays_inside(entry.path, root,
                                                                follow_symlinks))
                ):
                    found.append(entry.path)
            except OSError:
                continue
    # "<session>" sorts before "<session>/subagents/...": compare without ".jsonl".
    found.sort(key=lambda p: p[: -len(".jsonl")])
    return found
