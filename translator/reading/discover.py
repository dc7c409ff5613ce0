"""Which files a path names: files as given; directories walked for transcripts.

In a directory, every ``*.jsonl`` is an input, and every file a source says it
reads (:attr:`translator.reading.sources.Files.reads`), except what a source calls its
agent's bookkeeping (:attr:`~translator.reading.sources.Files.skips`: a folder it skips is
not entered) and folders no agent keeps transcripts in (``.git``,
``node_modules``, ``__pycache__``). Sidecars (``*.meta.json``) are read by the
adapter that needs them, never converted. Order is by path, a session's main file
before the files in the folder named like it, so output is reproducible.

The rules are the sources': this module knows none of their layouts.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence

from streamv1.translator.reading.sources import sources

SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__"})


def _skipped(parts: Sequence[str]) -> bool:
    """Does a source call this folder or file (its path below the walked folder)
    its agent's bookkeeping?"""
    return any(source.files.skips(parts) for source in sources().values())


def _read(parts: Sequence[str]) -> bool:
    """Is this file (its path below the walked folder) a transcript some source reads?"""
    return parts[-1].endswith(".jsonl") or any(
        source.files.reads(parts) for source in sources().values()
    )


def skips_dir(parts: Sequence[str]) -> bool:
    """A folder (its path below the walked folder) never holding transcripts."""
    return parts[-1] in SKIP_DIRS or _skipped(parts)


def is_transcript(path: str, root: str) -> bool:
    """The one rule, for one path below ``root``: what ``walk_paths`` would list.
    The tail daemon asks it of each file event; ``walk_paths`` applies it folder by
    folder (pruning what it skips) so the two can never disagree."""
    rel = os.path.relpath(path, root).split(os.sep)
    if rel[0] == ".." or not _read(rel) or _skipped(rel):
        return False
    return not any(skips_dir(rel[: i + 1]) for i in range(len(rel) - 1))


def stays_inside(path: str, root: str, follow_symlinks: bool = False) -> bool:
    """A file reached through a symlink counts only if it resolves inside ``root``,
    unless the user asked to follow links out (``--follow-symlinks``)."""
    if follow_symlinks or not os.path.islink(path):
        return True
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(os.path.join(base, ""))


def walk_paths(
    root: str,
    follow_symlinks: bool = False,
    unreadable: Callable[[str, OSError], None] | None = None,
    inside: str | None = None,
) -> list[str]:
    """The transcript files below ``root`` as strings, sorted (cheap: no Path objects,
    so the tail daemon can rescan thousands of files often). Only regular files (a
    FIFO named ``x.jsonl`` would hang a reader); folders reached by symlinks are not
    entered, and a symlinked file counts only if it stays inside ``root``. A folder
    that cannot be listed is told to ``unreadable`` (its path, why); one gone
    between two looks is not (nothing was missed). ``inside``: walk only that
    folder below ``root`` (a new one the daemon was told of), by the same rules."""
    found: list[str] = []
    start: tuple[str, ...] = ()
    if inside is not None:
        given = os.path.relpath(inside, root).split(os.sep)
        if given == ["."]:
            given = []
        if given and (
            given[0] == ".." or any(skips_dir(given[: i + 1]) for i in range(len(given)))
        ):
            return []
        start = tuple(given)
    stack = [(inside if inside is not None else root, start)]
    while stack:
        folder, rel = stack.pop()
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
                parts = (*rel, entry.name)
                if entry.is_dir(follow_symlinks=False):
                    if not skips_dir(parts):
                        stack.append((entry.path, parts))
                elif (
                    _read(parts)
                    and not _skipped(parts)
                    and entry.is_file()  # through a symlink: what it points at
                    # (is_symlink: known from the listing, no lstat per file)
                    and (not entry.is_symlink() or stays_inside(entry.path, root, follow_symlinks))
                ):
                    found.append(entry.path)
            except OSError:
                continue
    # "<session>" sorts before "<session>/...": compare without the suffix.
    found.sort(key=lambda p: os.path.splitext(p)[0])
    return found
