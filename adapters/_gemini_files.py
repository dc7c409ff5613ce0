"""Where Gemini CLI keeps its files, and which of them make one session.

Discovery's questions (the homes, what is read and skipped under them) and the
grouping of a session's files (``session_of``, ``session_hint``). Apart from the
adapter: it reads names and first lines of files on disk, never a whole input.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence

import orjson

from streamv1.translator.model import events as ev
from streamv1.translator.reading.files import open_regular

_UUIDISH = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_MAIN_FILE = re.compile(r"session-\d{4}-\d\d-\d\dT\d\d-\d\d-([0-9a-f]{8})\.jsonl")


# -- the files of a session -----------------------------------------------------------


def _first_record(path: str) -> ev.JSON | None:
    try:
        with open_regular(path) as fh:
            line = fh.readline(1 << 20)
    except OSError:
        return None
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def session_files(chats: str, sid: str) -> list[str]:
    """The names in a chats folder that may be session ``sid``'s own files,
    ``session-<minute>-<sid[:8]>.jsonl``, in the order they were begun (none where
    the folder cannot be listed)."""
    try:
        return sorted(
            n
            for n in os.listdir(chats)
            if n.endswith(f"-{sid[:8]}.jsonl") and n.startswith("session-")
        )
    except OSError:
        return []


def _main_file(chats: str, sid: str) -> str | None:
    """The first file (by its name: by the minute it was begun) of session ``sid``
    in a chats folder: ``session-<minute>-<sid[:8]>.jsonl`` whose first line names
    ``sid``. A resume begun in a later minute leaves a second one, later by name."""
    for name in session_files(chats, sid):
        first = _first_record(os.path.join(chats, name))
        if first is not None and first.get("sessionId") == sid:
            return os.path.join(chats, name)
    return None


def session_of(path: str) -> str | None:
    """The session a chat file is one file of: its main file's path without its
    suffix (the first ``session-*-<id8>.jsonl`` of its session id in its chats
    folder). A subagent's ``chats/<session id>/<agent id>.jsonl`` and a resume's
    later file share it; other files stand alone."""
    parent, name = os.path.split(path)
    if _MAIN_FILE.fullmatch(name):
        first = _first_record(path)
        sid = first.get("sessionId") if first is not None else None
        if not isinstance(sid, str):
            return None
        main = _main_file(parent, sid) or path
        return os.path.splitext(main)[0]
    folder = os.path.basename(parent)
    if name.endswith(".jsonl") and _UUIDISH.fullmatch(folder):
        first = _first_record(path)
        if first is None or first.get("kind") != "subagent":
            return None
        spawner = _main_file(os.path.dirname(parent), folder)
        return os.path.splitext(spawner)[0] if spawner is not None else None
    return None


def session_hint(path: str) -> str | None:
    """A subagent file's session is its folder's name (its parent session)."""
    parent, name = os.path.split(path)
    folder = os.path.basename(parent)
    if name.endswith(".jsonl") and _UUIDISH.fullmatch(folder):
        return folder
    return None


# -- where Gemini CLI keeps its files ---------------------------------------------------


def homes(env: Mapping[str, str], home: str) -> list[str]:
    """``~/.gemini/tmp``, its project folders holding ``chats/``; Gemini CLI's
    ``GEMINI_CLI_HOME`` stands for the user's home (its state is under
    ``$GEMINI_CLI_HOME/.gemini``)."""
    return [os.path.join(env.get("GEMINI_CLI_HOME") or home, ".gemini", "tmp")]


def reads(parts: Sequence[str]) -> bool:
    """An older chat file: one JSON document, ``chats/session-*.json``."""
    return (
        len(parts) >= 2
        and parts[-2] == "chats"
        and parts[-1].startswith("session-")
        and parts[-1].endswith(".json")
    )


def skips(parts: Sequence[str]) -> bool:
    """Gemini CLI's bookkeeping beside ``chats/``: edit checkpoints (UI history and
    API contents, not the conversation; their ``*.json`` is never a chat file)."""
    return parts[-1] == "checkpoints" and len(parts) >= 2 and parts[-2] != "chats"
