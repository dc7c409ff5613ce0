"""Gemini CLI: the chat file, ``--output-format stream-json`` and the ``json`` document.

One source, ``gemini``, for all three views: they are told apart record by record
(their keys never overlap), their fixtures sit in one folder, and ``--source
gemini`` names them all, as ``stella`` does for its three. A view is fixed by the
first record the adapter translates.

**The chat file** ``~/.gemini/tmp/<project>/chats/session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl``
(and a subagent's ``chats/<parent session id>/<agent id>.jsonl``, ``kind:
"subagent"``) is an append-only *operation log* (Gemini CLI 0.61.0):

* a metadata line ``{sessionId, projectHash, startTime, lastUpdated, kind,
  directories?}`` — one per process: a resume writes another mid-file;
* ``{"$set": {...}}`` — merged into the metadata; ``$set.messages`` is a checkpoint
  that replaces every message (the first holds the generated ``<session_context>``
  message; a resume re-sets the whole loaded history, *without* tokens; a failed
  prompt is rolled back by one that no longer holds it);
* a message ``{id, timestamp, type (user | gemini | info | error | warning),
  content, ...}``, upserted by ``id``: a ``gemini`` record that calls tools is
  written twice, first without ``toolCalls``, then with them and their results;
* ``{"$rewindTo": <id>}`` — that message and every one after it are deleted.

It is translated streaming, holding only what may still change: the last message
record (a later record with another id, a metadata line or a checkpoint makes it
final; ``$set.lastUpdated``, written between the two versions of a record, does
not), and the tool results of the last committed call (handed on with the next
record, so a subagent's lines, framed in time order, come between a call and its
result). A checkpoint's messages are never lines: they are a replay of what the
log already said (or history this file never recorded); usage is counted from the
records as they are written, once per message id, the last version winning.

Runs: a typed prompt opens one; a ``gemini`` record without tool calls ends it
(``success``); a checkpoint that drops the open run's prompt ends it as
``error_during_execution`` (the failure is not recorded: no message); a new
process (metadata line) or the end of the input with the run open ends it
``interrupted``. A file with no prompt at all (a resume's stub, written when the
resumed process starts in a later minute) gives no lines.

**stream-json**: ``init``, ``message`` (user; assistant ``delta`` chunks),
``tool_use``, ``tool_result``, ``error``, ``result`` (the run's end; its stats are
the process's: the model router's calls and every subagent's are in them).

**The json document** ``{session_id, response, stats, error?}`` (read member by
member, see :mod:`translator.reading.reader`): one run, emitted at its end.

**Older chat files** ``session-*.json``: one document ``{sessionId, projectHash,
startTime, lastUpdated, messages: [...]}`` whose messages are read one at a time
(the same records, each written once, user ``content`` a string): the rules above
give the same lines.

What each record type becomes is ``MAPPING`` below (docs/mapping.md is made from
it, with the usage and turn rules).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from streamv1.translator.model.events import (
    JSON,
    Dropped,
    Event,
    Message,
    Note,
    RunEnd,
    RunStart,
    Spawn,
    Unrecognized,
    Usage,
    whole,
)
from streamv1.translator.reading.mapping import Row
from streamv1.translator.reading.sources import (
    CERTAIN,
    DECISIVE,
    GUESS,
    LIKELY,
    NOT_MINE,
    OWN_TYPE,
    BodyError,
    Files,
    Source,
    Where,
    body_problem,
    open_regular,
    rest,
    str_field,
    time_problem,
)
from streamv1.translator.state import persisted
from streamv1.translator.timefmt import normalize_ts

AGENT_NAME = "gemini-cli"
PROVIDER = "google"

#: Metadata keys of a chat file's metadata line (and of an older file's document).
META_KEYS = frozenset(
    {"sessionId", "projectHash", "startTime", "lastUpdated", "kind", "directories", "summary"}
)
MESSAGE_TYPES = frozenset({"user", "gemini", "info", "error", "warning"})
STREAM_TYPES = frozenset({"init", "message", "tool_use", "tool_result", "result", "error"})
#: The json document's members.
DOC_KEYS = frozenset({"session_id", "response", "stats", "error"})
_CONTEXT = "<session_context>"
_UUIDISH = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_MAIN_FILE = re.compile(r"session-\d{4}-\d\d-\d\dT\d\d-\d\d-([0-9a-f]{8})\.jsonl")
_TERMINATION = re.compile(r"^Termination Reason: (\w+)$", re.M)
_WORKSPACE = re.compile(r"\*\*Workspace Directories:\*\*\n((?:  - [^\n]+\n)+)")
#: Chat message keys a line uses; the rest goes to its extension.
_GEMINI_USED = ("id", "timestamp", "type", "content", "thoughts", "tokens", "model", "toolCalls")
_CALL_USED = ("id", "name", "args", "result", "status", "timestamp", "resultDisplay")


def sniff(record: dict[str, Any]) -> int:
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


# -- the files of a session -----------------------------------------------------------


def _first_record(path: str) -> JSON | None:
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


def _main_file(chats: str, sid: str) -> str | None:
    """The first file (by its name: by the minute it was begun) of session ``sid``
    in a chats folder: ``session-<minute>-<sid[:8]>.jsonl`` whose first line names
    ``sid``. A resume begun in a later minute leaves a second one, later by name."""
    try:
        names = sorted(
            n
            for n in os.listdir(chats)
            if n.endswith(f"-{sid[:8]}.jsonl") and n.startswith("session-")
        )
    except OSError:
        return None
    for name in names:
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


def _spawner_in(path: str, agent_id: str, start: int) -> tuple[str | None, int]:
    """The id of the tool call whose ``agentId`` is ``agent_id`` in a chat file,
    looking past byte ``start`` (complete lines only); and where to look next."""
    needle = f'"agentId":"{agent_id}"'.encode()
    try:
        with open_regular(path) as fh:
            fh.seek(start)
            at = start
            for line in fh:
                if not line.endswith(b"\n"):
                    break
                at += len(line)
                if needle not in line:
                    continue
                try:
                    rec = orjson.loads(line)
                except orjson.JSONDecodeError:
                    continue
                calls = rec.get("toolCalls") if isinstance(rec, dict) else None
                for call in calls if isinstance(calls, list) else ():
                    if isinstance(call, dict) and call.get("agentId") == agent_id:
                        cid = call.get("id")
                        if isinstance(cid, str):
                            return cid, at
    except OSError:
        return None, start
    return None, at


# -- records ---------------------------------------------------------------------------


def _usage(tokens: Any) -> Usage | None:
    """A reply's ``tokens``: input − cached, cached, output + thoughts + tool."""
    if not isinstance(tokens, dict):
        return None
    counts: dict[str, int] = {}
    for key in ("input", "output", "cached", "thoughts", "tool"):
        value = tokens.get(key)
        if value is None:
            counts[key] = 0
            continue
        count = whole(value)
        if count is None or count < 0:
            raise BodyError(f"tokens.{key} is not a whole number ≥ 0")
        counts[key] = count
    cached = min(counts["cached"], counts["input"])
    return Usage(
        input_tokens=counts["input"] - cached,
        output_tokens=counts["output"] + counts["thoughts"] + counts["tool"],
        cache_read=cached,
    )


def _stats_usage(stats: Any, what: str) -> Usage:
    """stream-json's ``stats`` (or one of its ``models``): ``input`` (= input_tokens −
    cached), ``cached``, and output = total_tokens − input_tokens (thoughts and
    tool-use tokens are in the total, not in ``output_tokens``)."""
    if not isinstance(stats, dict):
        raise BodyError(f"{what} is {type(stats).__name__}, not an object")
    counts: dict[str, int] = {}
    for key in ("total_tokens", "input_tokens", "output_tokens", "cached", "input"):
        count = whole(stats.get(key, 0))
        if count is None or count < 0:
            raise BodyError(f"{what}.{key} is not a whole number ≥ 0")
        counts[key] = count
    prompt = counts["input_tokens"]
    cached = min(counts["cached"], prompt)
    output = max(counts["output_tokens"], counts["total_tokens"] - prompt)
    return Usage(input_tokens=prompt - cached, output_tokens=output, cache_read=cached)


def _doc_usage(tokens: Any, what: str) -> Usage:
    """The json document's per-model ``tokens``: prompt (includes cached), cached,
    total: input = prompt − cached, output = total − prompt."""
    if not isinstance(tokens, dict):
        raise BodyError(f"{what} is {type(tokens).__name__}, not an object")
    counts: dict[str, int] = {}
    for key in ("prompt", "cached", "total", "candidates"):
        count = whole(tokens.get(key, 0))
        if count is None or count < 0:
            raise BodyError(f"{what}.{key} is not a whole number ≥ 0")
        counts[key] = count
    prompt = counts["prompt"]
    cached = min(counts["cached"], prompt)
    output = max(counts["candidates"], counts["total"] - prompt)
    return Usage(input_tokens=prompt - cached, output_tokens=output, cache_read=cached)


def _parts(content: Any) -> list[Any]:
    if isinstance(content, str):
        return [{"text": content}]
    if isinstance(content, list):
        return content
    if content is None:
        return []
    raise BodyError(f"content is {type(content).__name__}, not a string or a list")


def _texts(content: Any) -> list[str]:
    return [
        p["text"] for p in _parts(content) if isinstance(p, dict) and isinstance(p.get("text"), str)
    ]


def _is_tool_copy(content: Any) -> bool:
    """A user record that carries function responses only (the model-facing copy of
    results its gemini record already holds)."""
    parts = _parts(content)
    return bool(parts) and all(isinstance(p, dict) and "functionResponse" in p for p in parts)


def _cwd_of(text: str) -> tuple[str | None, list[str]]:
    match = _WORKSPACE.search(text)
    if match is None:
        return None, []
    dirs = [line[4:] for line in match.group(1).splitlines()]
    return (dirs[0] if dirs else None), dirs


@persisted
class _Run:
    """The open run of a chat file."""

    def __init__(self, prompt_id: str | None, ts: str | None) -> None:
        self.prompt_id = prompt_id
        self.ts = ts
        self.last_ts = ts
        self.calls = 0
        self.last_calls_tools = False


@persisted
class GeminiAdapter:
    #: The layout of this adapter's checkpointed state (translator.state).
    STATE_VERSION = 1

    def __init__(self, path: str, session_id: str | None = None) -> None:
        self._path = path
        self._given = session_id
        self._session: str | None = None
        self._hint = session_hint(path)
        self._view: str | None = None  # "chat" | "stream" | "document"
        # chat file
        self._held: JSON | None = None  # the last message record: may be rewritten
        self._held_where: Where | None = None
        self._results: list[Event] = []  # the last call's tool results, for the next batch
        self._run: _Run | None = None
        self._start: RunStart | None = None  # the open run's init, until its model is known
        self._waiting: list[Event] = []  # the open run's lines held with its init
        self._cwd: str | None = None
        self._dirs: list[str] = []
        self._kind: str | None = None
        self._last_ts: str | None = None
        self._opened = False  # a run was opened in this file
        self._pre: list[Event] = []  # dropped records before the first run
        # a subagent's file: its spawning call, searched for in its parent's files
        name = os.path.basename(path)
        self._agent_id: str | None = name[:-6] if self._hint and name.endswith(".jsonl") else None
        self._parent: str | None = None
        self._unlinked: list[Event] | None = [] if self._agent_id else None
        self._searched: dict[str, int] = {}
        # stream-json
        self._blocks: list[JSON] = []
        self._text: list[str] = []
        self._text_ts: str | None = None
        self._stream_calls = 0
        self._in_run = False
        # json document
        self._doc: JSON = {}

    @property
    def _sid(self) -> str:
        return self._session or self._given or self._hint or "unknown"

    # -- the adapter contract -------------------------------------------------

    def feed(self, record: dict[str, Any], where: Where) -> Iterable[Event]:
        out: list[Event] = []
        if self._results:
            out += self._results
            self._results = []
        try:
            self._dispatch(record, where, out)
        except BodyError as exc:
            kind = record.get("type")
            what = kind if isinstance(kind, str) else "record"
            out.append(
                body_problem(
                    f"{what}: {exc}",
                    record,
                    where,
                    self._sid,
                    normalize_ts(record.get("timestamp")),
                )
            )
        return self._linked(out)

    def finish(self) -> Iterable[Event]:
        out: list[Event] = list(self._results)
        self._results = []
        if self._view == "chat":
            self._commit(out)
            if self._run is not None:
                self._end(out, RunEnd(self._sid, self._last_ts, subtype="interrupted"))
        elif self._view == "stream":
            self._flush_call(out)
        elif self._view == "document":
            self._document_end(out)
        if self._unlinked is not None:
            self._look_for_parent()
            if self._parent is None:
                self._agent_only(out)
        return self._linked(out, final=True)

    @property
    def holding(self) -> bool:
        return bool(
            self._held is not None
            or self._results
            or self._blocks
            or self._text
            or self._unlinked
            or self._doc
        )

    def learn_spawner(self, agent_id: str, tool_use_id: str) -> list[Event]:
        if self._unlinked is None or agent_id != self._agent_id:
            return []
        self._parent = tool_use_id
        return self._linked([])

    # -- dispatch ---------------------------------------------------------------

    def _dispatch(self, rec: dict[str, Any], where: Where, out: list[Event]) -> None:
        kind = rec.get("type")
        if kind is not None and not isinstance(kind, str):
            raise BodyError(f"type is {type(kind).__name__}, not a string")
        if "$set" in rec or "$rewindTo" in rec or (kind is None and rec.keys() <= META_KEYS):
            self._view = self._view or "chat"
            self._operation(rec, where, out)
        elif kind is None and rec.keys() <= DOC_KEYS and rec:
            self._view = self._view or "document"
            self._member(rec, where)
        elif kind in MESSAGE_TYPES and "id" in rec and self._view != "stream":
            self._view = self._view or "chat"
            self._message(rec, where, out)
        elif kind in STREAM_TYPES and self._view != "chat":
            self._view = self._view or "stream"
            self._stream(rec, where, out)
        else:
            if self._view == "chat":
                self._commit(out)  # what came before it goes first
            ts = normalize_ts(rec.get("timestamp"))
            name = kind if isinstance(kind, str) else "<no type>"
            self._emit(out, Unrecognized(name, self._sid, ts, rec))

    # -- the chat file ----------------------------------------------------------------

    def _operation(self, rec: dict[str, Any], where: Where, out: list[Event]) -> None:
        if "$rewindTo" in rec:
            target = rec["$rewindTo"]
            if not isinstance(target, str):
                raise BodyError(f"$rewindTo is {type(target).__name__}, not a string")
            self._commit(out)
            if self._run is not None and self._run.prompt_id == target:
                self._end(
                    out,
                    RunEnd(
                        self._sid, self._last_ts, subtype="interrupted", extension={"rewound": True}
                    ),
                )
            self._emit(
                out,
                Note("notification", self._sid, self._last_ts, {"kind": "rewind", "id": target}),
            )
            return
        if "$set" in rec:
            values = rec["$set"]
            if not isinstance(values, dict):
                raise BodyError(f"$set is {type(values).__name__}, not an object")
            if values.keys() <= {"lastUpdated"}:
                self._drop(out, "gemini/last_updated")
                return
            self._commit(out)
            sid = values.get("sessionId")
            if isinstance(sid, str) and sid:
                self._session = sid
            if "messages" in values:
                self._checkpoint(values["messages"], out)
            others = rest(values, ("lastUpdated", "sessionId", "messages"))
            if "summary" in others and self._kind == "subagent" and self._run is not None:
                self._end(out, RunEnd(self._sid, self._last_ts, subtype="success", is_error=False))
            if others:
                # summary (a subagent's result), memoryScratchpad, ...: no line of their
                # own; kept as a notification's extension.
                self._emit(
                    out,
                    Note(
                        "notification", self._sid, self._last_ts, {"kind": "set"}, {"$set": others}
                    ),
                )
            return
        # A metadata line: a process begins (the first, or a resume's). An older
        # document's members come one at a time ({"sessionId": ...}): merged only.
        if "sessionId" in rec and "startTime" in rec:
            self._commit(out)
            if self._run is not None:
                self._end(out, RunEnd(self._sid, self._last_ts, subtype="interrupted"))
        sid = rec.get("sessionId")
        kind = rec.get("kind")
        if isinstance(sid, str) and sid and kind != "subagent":
            self._session = sid
        if isinstance(kind, str):
            self._kind = kind
            if kind == "subagent" and self._unlinked is None and self._agent_id is None:
                self._agent_id = sid if isinstance(sid, str) else None
                self._unlinked = [] if self._agent_id else None
        dirs = rec.get("directories")
        if isinstance(dirs, list) and dirs and all(isinstance(d, str) for d in dirs):
            self._dirs = list(dirs)
            self._cwd = dirs[0]
        ts = normalize_ts(rec.get("startTime"))
        if ts is not None:
            self._last_ts = ts
        self._drop(out, "gemini/metadata")

    def _checkpoint(self, messages: Any, out: list[Event]) -> None:
        """``$set.messages``: every message replaced. Its messages are a replay (or
        history this file never recorded), never lines; the open run's prompt no
        longer among them is a rolled-back, failed prompt."""
        if not isinstance(messages, list):
            raise BodyError(f"$set.messages is {type(messages).__name__}, not a list")
        kept = False
        for msg in messages:
            if not isinstance(msg, dict):
                continue
            if self._run is not None and msg.get("id") == self._run.prompt_id:
                kept = True
            if msg.get("type") == "user":
                for text in _texts(msg.get("content")):
                    if text.startswith(_CONTEXT):
                        cwd, dirs = _cwd_of(text)
                        if cwd is not None:
                            self._cwd, self._dirs = cwd, dirs
        if self._run is not None and self._run.prompt_id is not None and not kept:
            self._end(
                out,
                RunEnd(
                    self._sid,
                    self._last_ts,
                    subtype="error_during_execution",
                    is_error=True,
                    extension={"rolled_back": True},
                ),
            )
        self._drop(out, "gemini/checkpoint")

    def _message(self, rec: dict[str, Any], where: Where, out: list[Event]) -> None:
        mid = rec.get("id")
        if not isinstance(mid, str):
            raise BodyError(f"id is {type(mid).__name__}, not a string")
        held = self._held
        if held is not None and held.get("id") != mid:
            self._commit(out)
        self._held, self._held_where = rec, where

    def _commit(self, out: list[Event]) -> None:
        """The held message can no longer change: its lines."""
        rec, where = self._held, self._held_where
        if rec is None or where is None:
            return
        self._held = self._held_where = None
        raw_ts = rec.get("timestamp")
        ts = normalize_ts(raw_ts)
        if ts is None and raw_ts is not None:
            self._emit(out, time_problem("timestamp", raw_ts, where, self._session))
        try:
            kind = rec.get("type")
            if ts is not None:
                self._last_ts = ts
            if kind == "user":
                self._user(rec, ts, out)
            elif kind == "gemini":
                self._gemini(rec, ts, out)
            else:
                fields: JSON = {"severity": str(kind)}
                texts = _texts(rec.get("content"))
                if texts:
                    fields["message"] = "\n".join(texts)
                self._emit(
                    out,
                    Note(
                        "notification",
                        self._sid,
                        ts,
                        fields,
                        rest(rec, ("type", "content", "timestamp")),
                    ),
                )
        except BodyError as exc:
            self._emit(out, body_problem(f"{rec.get('type')}: {exc}", rec, where, self._sid, ts))

    def _user(self, rec: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        content = rec.get("content")
        if _is_tool_copy(content):
            self._drop(out, "gemini/tool_response_copy")
            return
        texts = _texts(content)
        if texts and texts[0].startswith(_CONTEXT):
            cwd, dirs = _cwd_of(texts[0])
            if cwd is not None:
                self._cwd, self._dirs = cwd, dirs
            self._drop(out, "gemini/session_context")
            return
        if self._run is not None:
            # A prompt while the last was still unanswered: that run was cut off (a
            # subagent's grace-turn message is its own run's, not a new one).
            if self._kind == "subagent":
                self._say_user(rec, ts, out)
                return
            self._end(out, RunEnd(self._sid, self._last_ts, subtype="interrupted"))
        self._run = _Run(str_field(rec, "id"), ts)
        self._opened = True
        self._start = RunStart(
            self._sid,
            ts,
            AGENT_NAME,
            PROVIDER,
            cwd=self._cwd,
            extension={"directories": self._dirs} if len(self._dirs) > 1 else {},
        )
        if self._kind == "subagent":
            self._start.task = {"task_id": self._agent_id, "prompt": "\n".join(texts)}
        self._say_user(rec, ts, out)

    def _say_user(self, rec: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        blocks: list[JSON] = []
        for part in _parts(rec.get("content")):
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                blocks.append({"type": "text", "text": part["text"]})
            elif isinstance(part, dict):
                blocks.append({"type": "text", "text": "", "extension": {"part": part}})
        ext = rest(rec, ("id", "timestamp", "type", "content"))
        self._emit(
            out,
            Message("user", self._sid, ts, blocks, message_id=str_field(rec, "id"), extension=ext),
        )

    def _gemini(self, rec: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        blocks: list[JSON] = []
        thoughts = rec.get("thoughts")
        for thought in thoughts if isinstance(thoughts, list) else ():
            if isinstance(thought, dict):
                subject, desc = thought.get("subject"), thought.get("description")
                pieces: list[str] = []
                if isinstance(subject, str) and subject:
                    pieces.append(f"**{subject}**")
                if isinstance(desc, str) and desc:
                    pieces.append(desc)
                blocks.append({"type": "thinking", "thinking": "\n\n".join(pieces)})
        content = rec.get("content")
        for text in _texts(content):
            if text:
                blocks.append({"type": "text", "text": text})
        calls = rec.get("toolCalls")
        if calls is not None and not isinstance(calls, list):
            raise BodyError(f"toolCalls is {type(calls).__name__}, not a list")
        results: list[Event] = []
        for call in calls or ():
            if not isinstance(call, dict):
                raise BodyError("toolCalls item is not an object")
            cid = str_field(call, "id", required=True) or ""
            block: JSON = {
                "type": "tool_use",
                "id": cid,
                "name": str_field(call, "name", required=True),
                "input": call.get("args", {}),
            }
            ext = rest(call, _CALL_USED)
            if ext:
                block["extension"] = ext
            blocks.append(block)
            result = self._tool_result(call, cid, ts)
            agent = call.get("agentId")
            if isinstance(agent, str) and agent:
                # The subagent it ran is over (its file may still hold its lines, waiting
                # for this link: translator.translate.session's _introduce hands it on).
                ext_ = {}
                reason = _TERMINATION.search(str(result.content[0].get("content", "")))
                if reason is not None:
                    ext_["termination_reason"] = reason.group(1)
                results.append(Spawn(cid, self._sid))  # its file holds its lines
                results.append(
                    Note(
                        "task_notification",
                        self._sid,
                        result.ts,
                        {"task_id": agent, "task": {"tool_use_id": cid}},
                        ext_,
                    )
                )
            results.append(result)
        usage = _usage(rec.get("tokens"))
        model = str_field(rec, "model")
        if self._run is None:
            # A reply with no prompt before it in this file (history written elsewhere).
            self._run = _Run(None, ts)
            self._opened = True
            self._start = RunStart(self._sid, ts, AGENT_NAME, PROVIDER, cwd=self._cwd)
        if self._start is not None and self._start.model is None:
            self._start.model = model
        self._run.calls += 1
        self._run.last_calls_tools = bool(calls)
        ext = rest(rec, _GEMINI_USED)
        if isinstance(content, list):
            ext["content"] = content  # parts other than text, as written
        self._emit(
            out,
            Message(
                "assistant",
                self._sid,
                ts,
                blocks,
                message_id=str_field(rec, "id"),
                model=model,
                usage=usage,
                extension=ext,
            ),
        )
        self._release(out)
        if results:
            self._results = results
        elif not calls:
            self._end(out, RunEnd(self._sid, ts, subtype="success", is_error=False))

    def _tool_result(self, call: JSON, cid: str, ts: str | None) -> Message:
        status = call.get("status")
        parts = call.get("result")
        output: Any = None
        is_error = status in ("error", "cancelled")
        extra: list[str] = []  # text parts beside the response (read_many_files' contents)
        for part in parts if isinstance(parts, list) else ():
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                extra.append(part["text"])
                continue
            fr = part.get("functionResponse") if isinstance(part, dict) else None
            response = fr.get("response") if isinstance(fr, dict) else None
            if isinstance(response, dict):
                if "error" in response:
                    is_error = True
                    output = response["error"]
                elif "output" in response:
                    output = response["output"]
                else:
                    output = response
        block: JSON = {"type": "tool_result", "tool_use_id": cid, "is_error": is_error}
        if output is not None or extra:
            text_ = (
                output
                if isinstance(output, str) or output is None
                else orjson.dumps(output).decode()
            )
            block["content"] = "\n".join(([text_] if text_ is not None else []) + extra)
        summary: JSON = {}
        if isinstance(status, str):
            summary["status"] = status
        if "resultDisplay" in call:
            summary["resultDisplay"] = call["resultDisplay"]
        if isinstance(call.get("agentId"), str):
            summary["agentId"] = call["agentId"]
        when = normalize_ts(call.get("timestamp")) or ts
        return Message(
            "user",
            self._sid,
            when,
            [block],
            tool_use_result=summary or None,
            has_tool_use_result=bool(summary),
        )

    def _end(self, out: list[Event], end: RunEnd) -> None:
        self._release(out)
        if self._results:
            out += self._results  # the last call's results come before its run's end
            self._results = []
        if self._run is not None and end.num_turns is None:
            end.num_turns = self._run.calls
        self._run = None
        out.append(end)

    def _drop(self, out: list[Event], kind: str) -> None:
        """A record dropped on purpose, counted in its run; before the file's first
        run, held for it (a file with no run at all, a resume's stub, makes no lines)."""
        event = Dropped(kind, self._session)
        if self._start is None and self._run is None and not self._opened:
            self._pre.append(event)
            if len(self._pre) > 64:
                out += self._pre
                self._pre = []
        else:
            self._emit(out, event)

    def _emit(self, out: list[Event], event: Event) -> None:
        if self._start is not None:
            self._waiting.append(event)
        else:
            out.append(event)

    def _release(self, out: list[Event]) -> None:
        start = self._start
        if start is None:
            return
        self._start = None
        start.session_id = self._sid
        out.append(start)
        out += self._pre
        self._pre = []
        out += self._waiting
        self._waiting = []

    # -- a subagent's file ---------------------------------------------------------

    def _linked(self, events: list[Event], final: bool = False) -> list[Event]:
        """A subagent's events carry its spawning call; held until it is known."""
        if self._unlinked is None:
            if self._parent is not None:
                for event in events:
                    self._mark(event)
            return events
        self._unlinked += events
        if self._parent is None and not final:
            self._look_for_parent()
        if self._parent is None:
            return []
        out, self._unlinked = self._unlinked, None
        for event in out:
            self._mark(event)
        return out

    def _mark(self, event: Event) -> None:
        if isinstance(event, RunStart | RunEnd | Message):
            if event.parent_tool_use_id is None:
                event.parent_tool_use_id = self._parent
            event.session_id = self._hint or event.session_id
        elif isinstance(event, Note | Unrecognized):
            event.parent_tool_use_id = self._parent
            event.session_id = self._hint or event.session_id

    def _agent_only(self, out: list[Event]) -> None:
        """No parent names this subagent: its lines, as a nested actor of its own."""
        held, self._unlinked = self._unlinked or [], None
        name = f"agent-{self._agent_id}"
        for event in held:
            if isinstance(event, RunStart | RunEnd | Message):
                event.actor = name
        out[:0] = held

    def _look_for_parent(self) -> None:
        if self._parent is not None or self._agent_id is None or self._hint is None:
            return
        chats = os.path.dirname(os.path.dirname(self._path))
        try:
            names = sorted(
                n
                for n in os.listdir(chats)
                if n.startswith("session-") and n.endswith(f"-{self._hint[:8]}.jsonl")
            )
        except OSError:
            return
        for name in names:
            path = os.path.join(chats, name)
            found, at = _spawner_in(path, self._agent_id, self._searched.get(path, 0))
            self._searched[path] = at
            if found is not None:
                self._parent = found
                return

    # -- stream-json ---------------------------------------------------------------

    def _stream(self, rec: dict[str, Any], where: Where, out: list[Event]) -> None:
        kind = rec["type"]
        raw_ts = rec.get("timestamp")
        ts = normalize_ts(raw_ts)
        if ts is None and raw_ts is not None:
            out.append(time_problem("timestamp", raw_ts, where, self._session))
        fields = rest(rec, ("type", "timestamp"))
        if kind == "init":
            self._flush_call(out)
            sid = str_field(rec, "session_id")
            if sid:
                self._session = sid
            model = str_field(rec, "model")
            ext = rest(fields, ("session_id", "model"))
            if model == "auto":
                ext["model"] = model  # the router's alias: the model is not known yet
                model = None
            self._in_run = True
            self._stream_calls = 0
            out.append(RunStart(self._sid, ts, AGENT_NAME, PROVIDER, model=model, extension=ext))
            return
        if kind == "message":
            role = str_field(rec, "role", required=True)
            content = rec.get("content")
            if not isinstance(content, str):
                raise BodyError(f"content is {type(content).__name__}, not a string")
            if role == "assistant":
                if not self._text and not self._blocks:
                    self._text_ts = ts
                    self._stream_calls += 1
                self._text.append(content)
                return
            self._flush_call(out)
            ext = rest(fields, ("role", "content"))
            out.append(
                Message("user", self._sid, ts, [{"type": "text", "text": content}], extension=ext)
            )
            return
        if kind == "tool_use":
            tid = str_field(rec, "tool_id", required=True)
            name = str_field(rec, "tool_name", required=True)
            if not self._text and not self._blocks:
                self._text_ts = ts
                self._stream_calls += 1
            self._close_text()
            block: JSON = {
                "type": "tool_use",
                "id": tid,
                "name": name,
                "input": rec.get("parameters", {}),
            }
            ext = rest(fields, ("tool_id", "tool_name", "parameters"))
            if ext:
                block["extension"] = ext
            self._blocks.append(block)
            return
        if kind == "tool_result":
            self._flush_call(out)
            tid = str_field(rec, "tool_id", required=True)
            status = str_field(rec, "status")
            err = rec.get("error")
            result: JSON = {
                "type": "tool_result",
                "tool_use_id": tid,
                "is_error": status == "error",
            }
            if "output" in rec:
                output = rec["output"]
                result["content"] = (
                    output if isinstance(output, str) else orjson.dumps(output).decode()
                )
            elif isinstance(err, dict) and isinstance(err.get("message"), str):
                result["content"] = err["message"]
            summary = rest(fields, ("tool_id", "output"))
            out.append(
                Message(
                    "user",
                    self._sid,
                    ts,
                    [result],
                    tool_use_result=summary or None,
                    has_tool_use_result=bool(summary),
                )
            )
            return
        if kind == "error":
            self._flush_call(out)
            note: JSON = {}
            for key in ("severity", "message"):
                value = str_field(rec, key)
                if value is not None:
                    note[key] = value
            out.append(
                Note("notification", self._sid, ts, note, rest(fields, ("severity", "message")))
            )
            return
        # result: the run's end
        self._flush_call(out)
        status = str_field(rec, "status")
        stats = rec.get("stats")
        usage = model_usage = duration = None
        ext = rest(fields, ("status", "stats", "error"))
        if stats is not None:
            usage = _stats_usage(stats, "stats")
            duration = whole(stats.get("duration_ms")) if isinstance(stats, dict) else None
            models = stats.get("models") if isinstance(stats, dict) else None
            if isinstance(models, dict):
                model_usage = {
                    name: _stats_usage(m, f"stats.models.{name}") for name, m in models.items()
                }
            ext["stats"] = rest(
                stats,
                (
                    "total_tokens",
                    "input_tokens",
                    "output_tokens",
                    "cached",
                    "input",
                    "duration_ms",
                    "models",
                ),
            )
            if not ext["stats"]:
                del ext["stats"]
        err = rec.get("error")
        message = None
        if isinstance(err, dict):
            message = err.get("message") if isinstance(err.get("message"), str) else None
            if rest(err, ("message",)):
                ext["error"] = rest(err, ("message",))
        failed = status != "success"
        out.append(
            RunEnd(
                self._sid,
                ts,
                subtype="error_during_execution" if failed else "success",
                is_error=failed,
                result=message if failed else None,
                num_turns=self._stream_calls,
                duration_ms=duration,
                usage=usage,
                model_usage=model_usage or None,
                extension=ext,
            )
        )
        self._in_run = False

    def _close_text(self) -> None:
        if self._text:
            self._blocks.append({"type": "text", "text": "".join(self._text)})
            self._text = []

    def _flush_call(self, out: list[Event]) -> None:
        """One model call's streamed text and tool calls: one assistant line."""
        self._close_text()
        if self._blocks:
            out.append(Message("assistant", self._sid, self._text_ts, self._blocks))
            self._blocks = []

    # -- the json document -----------------------------------------------------------

    def _member(self, rec: dict[str, Any], where: Where) -> None:
        for key, value in rec.items():
            self._doc[key] = value
        self._doc.setdefault("$where", [where.path, where.line])

    def _document_end(self, out: list[Event]) -> None:
        doc, self._doc = self._doc, {}
        if not doc:
            return
        path, line = doc.pop("$where", [self._path, 0])
        sid = doc.get("session_id")
        if isinstance(sid, str) and sid:
            self._session = sid
        try:
            stats = doc.get("stats")
            model: str | None = None
            usage: Usage | None = None
            model_usage: dict[str, Usage] = {}
            turns = 0
            ext: JSON = {}
            if stats is not None:
                if not isinstance(stats, dict):
                    raise BodyError(f"stats is {type(stats).__name__}, not an object")
                models = stats.get("models", {})
                if not isinstance(models, dict):
                    raise BodyError("stats.models is not an object")
                usage = Usage()
                for name, m in models.items():
                    if not isinstance(m, dict):
                        raise BodyError(f"stats.models.{name} is not an object")
                    u = _doc_usage(m.get("tokens", {}), f"stats.models.{name}.tokens")
                    model_usage[name] = u
                    usage.add(u)
                    roles = m.get("roles")
                    main = roles.get("main") if isinstance(roles, dict) else None
                    if isinstance(main, dict):
                        model = model or name
                        turns += whole(main.get("totalRequests")) or 0
                ext["stats"] = stats
            out.append(RunStart(self._sid, None, AGENT_NAME, PROVIDER, model=model))
            response = doc.get("response")
            if response is not None and not isinstance(response, str):
                raise BodyError(f"response is {type(response).__name__}, not a string")
            if response:
                out.append(
                    Message(
                        "assistant",
                        self._sid,
                        None,
                        [{"type": "text", "text": response}],
                        model=model,
                    )
                )
            err = doc.get("error")
            message = None
            if err is not None:
                ext["error"] = err
                if isinstance(err, dict) and isinstance(err.get("message"), str):
                    message = err["message"]
            out.append(
                RunEnd(
                    self._sid,
                    None,
                    subtype="error_during_execution" if err is not None else "success",
                    is_error=err is not None,
                    result=message,
                    num_turns=turns,
                    usage=usage,
                    model_usage=model_usage or None,
                    extension=ext,
                )
            )
        except BodyError as exc:
            out.append(body_problem(f"document: {exc}", doc, Where(path, line), self._sid, None))


MAPPING = (
    Row(
        "metadata",
        "chat: metadata line `{sessionId, projectHash, startTime, lastUpdated, "
        "kind, directories?}`",
        "no line (counted as dropped `gemini/metadata`): the session id, `kind` "
        "(`subagent`: a nested actor's file), `directories[0]` as `cwd`; a second one is "
        "a new process (a resume): a run still open there ends `interrupted`",
    ),
    Row(
        "set_last_updated",
        'chat: `{"$set": {"lastUpdated"}}`',
        "dropped (`gemini/last_updated`); it does not make the held message final",
    ),
    Row(
        "set_messages",
        'chat: `{"$set": {"messages": [...]}}` (checkpoint)',
        "no lines (a replay, or history this file never recorded; dropped "
        "`gemini/checkpoint`); the `<session_context>` message's first workspace "
        "directory is the `cwd`; the open run's prompt not among its messages: the prompt "
        "was rolled back, the run's `result` is `error_during_execution`, `is_error`, "
        "`extension.rolled_back`",
    ),
    Row("set_session", 'chat: `{"$set": {"sessionId"}}`', "the session id; no line"),
    Row(
        "set_other",
        'chat: `{"$set": {summary | memoryScratchpad | …}}`',
        "`system/notification` (`kind: set`), the values in `extension.$set`",
    ),
    Row(
        "rewind",
        'chat: `{"$rewindTo": id}`',
        "`system/notification` (`kind: rewind`, `id`); a run whose prompt it removes ends "
        "`interrupted` (`extension.rewound`)",
    ),
    Row(
        "user_prompt",
        "chat: `user` record with `text` parts (or a string: older files)",
        "opens a run (`system/init`: agent `gemini-cli`/`google`, `model` = its first "
        "reply's, `cwd`), then a `user` text line (`message.id` = `id`)",
    ),
    Row(
        "user_context",
        "chat: the `<session_context>` `user` message",
        "no line (dropped `gemini/session_context`); its workspace directory is the `cwd`",
    ),
    Row(
        "user_tool_copy",
        "chat: `user` record of `functionResponse` parts only",
        "no line (dropped `gemini/tool_response_copy`): the model-facing copy of results "
        "its `gemini` record holds",
    ),
    Row(
        "gemini",
        "chat: `gemini` record (last version by `id`)",
        "one `assistant` line: `thoughts[]` → `thinking` blocks (`**subject**\\n\\n"
        'description`), `content` → `text` ("" skipped), `toolCalls[]` → `tool_use` '
        "(`id`, `name`, `input` = `args`; `displayName`, `description`, … in the block's "
        "`extension`); `message.id` = `id`, `model`, usage from `tokens` (the usage rule); "
        "without tool calls it ends the run (`success`)",
    ),
    Row(
        "tool_call_result",
        "chat: `toolCalls[].result` / `status`",
        "a `user` `tool_result` line per call (`content` = `response.output`, or "
        "`response.error`; `is_error` = `status` error/cancelled or an `error`); "
        "`tool_use_result` = `{status, resultDisplay, agentId}`",
    ),
    Row(
        "tool_call_agent",
        "chat: a `toolCalls[]` entry with `agentId` (`invoke_agent`)",
        "before its `tool_result`: `system/task_notification` (`task_id` = `agentId`, "
        "`task.tool_use_id` = the call's `id`, `extension.termination_reason` from the "
        "result's `Termination Reason:` line): the subagent's end, and the link a subagent "
        "file still waiting for its spawner learns",
    ),
    Row(
        "notice",
        "chat: `info` / `warning` / `error` message",
        "`system/notification`, `severity` = its type, `message` = its text",
    ),
    Row(
        "subagent",
        "chat: `chats/<session>/<agent id>.jsonl` (`kind: subagent`)",
        "lines of the parent's run, `parent_tool_use_id` = the parent's `toolCalls[].id` whose "
        "`agentId` names the file (a `system/task_started` first); no parent found: a "
        "nested actor named `agent-<id>`",
    ),
    Row(
        "stream_init",
        "stream-json: `init`",
        "`system/init` (`session_id`; `model` unless it is the alias `auto`, then "
        "`extension.model`)",
    ),
    Row("stream_user", "stream-json: `message` role `user`", "`user` text line"),
    Row(
        "stream_delta",
        "stream-json: `message` role `assistant`, `delta: true`",
        "joined: one `text` block per model call, in the call's one `assistant` line with "
        "its `tool_use` blocks",
    ),
    Row(
        "stream_tool_use",
        "stream-json: `tool_use`",
        "`tool_use` block (`id` = `tool_id`, `name` = `tool_name`, `input` = `parameters`)",
    ),
    Row(
        "stream_tool_result",
        "stream-json: `tool_result`",
        "`user` `tool_result` (`content` = `output` (the display text), else "
        "`error.message`; `is_error` = `status` error); `tool_use_result` = `status`, "
        "`error`",
    ),
    Row("stream_error", "stream-json: `error`", "`system/notification` with `severity`, `message`"),
    Row(
        "stream_result",
        "stream-json: `result`",
        "the run's `result`: `success`, or `error_during_execution` with `result` = "
        "`error.message`; `usage` and `model_usage` from `stats` (the usage rule; the router "
        "and subagents included), `duration_ms`, `num_turns` = model calls seen",
    ),
    Row(
        "document",
        "json: `{session_id, response, stats, error?}`",
        "one run: `system/init` (`model` = the model with a `main` role), an `assistant` "
        "text line (`response`), the `result` (`usage`/`model_usage` from "
        "`stats.models.*.tokens`, `num_turns` = the main role's `totalRequests`, `stats` "
        "whole in `extension`)",
    ),
    Row("unknown", "anything else", "`system/unrecognized`, kept whole"),
    Row(
        "bad_body",
        "a known record whose body does not fit (`tokens` not numbers, `toolCalls` not a list, …)",
        "`system/error` naming file:line, the record in `extension.record`; exit status 1",
    ),
)


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


SOURCE = Source(
    name="gemini",
    description="Gemini CLI (chat files ~/.gemini/tmp/*/chats/*.jsonl, "
    "--output-format stream-json|json)",
    sniff=sniff,
    open=GeminiAdapter,
    session_hint=session_hint,
    mapping=MAPPING,
    session_of=session_of,
    files=Files(homes=homes, reads=reads, skips=skips),
)
