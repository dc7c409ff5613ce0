"""One session in two places: which file leads.

A session's main file can be found at two paths: a hard link, or a project folder
copied (``cp -r``, a backup restored beside the original, a synced folder), both
carrying the session under the same file name. Framed from both, the session's
runs came twice, and live they interleaved (two streams of one session id).

The rule, the same for ``convert`` and the daemon (docs/live.md): files of one
session name in two places are **one session when one file's bytes are the other's
or begin with them** (a hard link, a copy, a copy the session went on writing).
The file holding the most bytes leads (ties: the path that sorts first); the other
place's files are left out, said once. Two files of one name whose bytes differ
(neither begins with the other) are two sessions: each is framed, with a warning.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from streamv1.translator.reading.files import open_regular

#: Bytes compared at a time.
_CHUNK = 1 << 20

SAME = "same"  # one file's bytes are the other's, or begin them: one session
DIFFERENT = "different"  # neither begins with the other: two sessions


def relation(a: str, b: str) -> str | None:
    """SAME when the bytes of the shorter of ``a`` and ``b`` begin the longer (one
    inode under two names included), DIFFERENT otherwise; None when either cannot
    be read as a regular file."""
    try:
        with open_regular(a) as fa, open_regular(b) as fb:
            sa, sb = os.fstat(fa.fileno()), os.fstat(fb.fileno())
            if (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino):
                return SAME
            n = min(sa.st_size, sb.st_size)
            at = 0
            while at < n:
                k = min(_CHUNK, n - at)
                if os.pread(fa.fileno(), k, at) != os.pread(fb.fileno(), k, at):
                    return DIFFERENT
                at += k
            return SAME
    except OSError:
        return None


def size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1


def leader(paths: Iterable[str]) -> str:
    """Of files that are one session (:func:`relation` SAME), the one that leads:
    the most bytes, ties the path that sorts first."""
    return min(paths, key=lambda p: (-size(p), p))


def session_name(path: str) -> str:
    """What two places of one session share: its main file's name without its
    suffix (Claude Code's session id, a Codex rollout's name); a session key (the
    main file's path without its suffix) gives the same."""
    name = os.path.basename(path)
    for suffix in (".jsonl", ".json"):
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name
