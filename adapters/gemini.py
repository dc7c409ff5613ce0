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

What each record type becomes is ``MAPPING`` (docs/mapping.md is made from it,
with the usage and turn rules). This module holds the state and the order; each
``adapters/_gemini_<job>.py`` does one job for it: what a record becomes (``chat``,
``stream``, ``document``), ``kinds`` (which view: sniff), ``usage``, ``files``
(where, which make a session), ``subagent`` (its spawning call), ``mapping``.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import Any

from streamv1.adapters import _gemini_chat as chat
from streamv1.adapters import _gemini_document as document
from streamv1.adapters import _gemini_files as files
from streamv1.adapters import _gemini_stream as stream
from streamv1.adapters import _gemini_subagent as subagent
from streamv1.adapters._gemini_kinds import DOC_KEYS, MESSAGE_TYPES, META_KEYS, STREAM_TYPES, sniff
from streamv1.adapters._gemini_mapping import MAPPING
from streamv1.translator.model import events as ev
from streamv1.translator.reading import sources as src
from streamv1.translator.reading.sources import BodyError, Where
from streamv1.translator.state import persisted
from streamv1.translator.timefmt import normalize_ts

AGENT_NAME = "gemini-cli"
PROVIDER = "google"


@persisted
class _Run:
    """The open run of a chat file."""

    def __init__(self, prompt_id: str | None, ts: str | None, before: str | None = None) -> None:
        self.prompt_id = prompt_id
        #: the history's last message before the prompt: a rollback returns to it
        self.before = before
        self.ts = ts
        self.last_ts = ts
        self.calls = 0
        self.last_calls_tools = False


@persisted
class GeminiAdapter:
    #: The layout of this adapter's checkpointed state (translator.state).
    STATE_VERSION = 2

    def __init__(self, path: str, session_id: str | None = None) -> None:
        self._path = path
        self._given = session_id
        self._session: str | None = None
        self._hint = files.session_hint(path)
        self._view: str | None = None  # "chat" | "stream" | "document"
        # chat file
        self._held: ev.JSON | None = None  # the last message record: may be rewritten
        self._held_where: Where | None = None
        self._results: list[ev.Event] = []  # the last call's tool results, for the next batch
        self._run: _Run | None = None
        self._start: ev.RunStart | None = None  # the open run's init, until its model is known
        self._waiting: list[ev.Event] = []  # the open run's lines held with its init
        self._cwd: str | None = None
        self._dirs: list[str] = []
        self._kind: str | None = None
        self._last_ts: str | None = None
        self._last_id: str | None = None  # the history's last message, as the file last told
        self._opened = False  # a run was opened in this file
        self._pre: list[ev.Event] = []  # dropped records before the first run
        # a subagent's file: its spawning call, searched for in its parent's files
        name = os.path.basename(path)
        self._agent_id: str | None = name[:-6] if self._hint and name.endswith(".jsonl") else None
        self._parent: str | None = None
        self._unlinked: list[ev.Event] | None = [] if self._agent_id else None
        self._searched: dict[str, int] = {}
        # stream-json
        self._blocks: list[ev.JSON] = []
        self._text: list[str] = []
        self._text_ts: str | None = None
        self._stream_calls = 0
        self._in_run = False
        # json document
        self._doc: ev.JSON = {}

    @property
    def _sid(self) -> str:
        return self._session or self._given or self._hint or "unknown"

    # -- the adapter contract -------------------------------------------------

    def feed(self, record: dict[str, Any], where: Where) -> Iterable[ev.Event]:
        out: list[ev.Event] = []
        if self._results:
            out += self._results
            self._results = []
        try:
            self._dispatch(record, where, out)
        except BodyError as exc:
            kind = record.get("type")
            what = kind if isinstance(kind, str) else "record"
            ts = normalize_ts(record.get("timestamp"))
            out.append(src.body_problem(f"{what}: {exc}", record, where, self._sid, ts))
        return self._linked(out)

    def finish(self) -> Iterable[ev.Event]:
        out: list[ev.Event] = list(self._results)
        self._results = []
        if self._view == "chat":
            self._commit(out)
            if self._run is not None:
                self._stop(out, "interrupted")
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

    def learn_spawner(self, agent_id: str, tool_use_id: str) -> list[ev.Event]:
        if self._unlinked is None or agent_id != self._agent_id:
            return []
        self._parent = tool_use_id
        return self._linked([])

    # -- dispatch ---------------------------------------------------------------

    def _dispatch(self, rec: dict[str, Any], where: Where, out: list[ev.Event]) -> None:
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
            self._emit(out, ev.Unrecognized(name, self._sid, ts, rec))

    # -- the chat file ----------------------------------------------------------------

    def _operation(self, rec: dict[str, Any], where: Where, out: list[ev.Event]) -> None:
        if "$rewindTo" in rec:
            target = rec["$rewindTo"]
            if not isinstance(target, str):
                raise BodyError(f"$rewindTo is {type(target).__name__}, not a string")
            self._commit(out)
            if self._run is not None and self._run.prompt_id == target:
                self._stop(out, "interrupted", extension={"rewound": True})
            self._notify(out, {"kind": "rewind", "id": target})
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
            others = src.rest(values, ("lastUpdated", "sessionId", "messages"))
            if "summary" in others and self._kind == "subagent" and self._run is not None:
                self._stop(out, "success", is_error=False)
            if others:
                # summary (a subagent's result), memoryScratchpad, ...: no line of their
                # own; kept as a notification's extension.
                self._notify(out, {"kind": "set"}, {"$set": others})
            return
        # A metadata line: a process begins (the first, or a resume's). An older
        # document's members come one at a time ({"sessionId": ...}): merged only.
        if "sessionId" in rec and "startTime" in rec:
            self._commit(out)
            if self._run is not None:
                self._stop(out, "interrupted")
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

    def _checkpoint(self, messages: Any, out: list[ev.Event]) -> None:
        """``$set.messages``: every message replaced. Its messages are a replay (or
        history this file never recorded), never lines; the open run's prompt no
        longer among them is a rolled-back, failed prompt."""
        if not isinstance(messages, list):
            raise BodyError(f"$set.messages is {type(messages).__name__}, not a list")
        kept = False
        last: str | None = None
        for msg in messages:
            if not isinstance(msg, dict):
                continue
            mid = msg.get("id")
            last = mid if isinstance(mid, str) else None
            if self._run is not None and mid == self._run.prompt_id:
                kept = True
            if msg.get("type") == "user":
                for text in chat.texts(msg.get("content")):
                    if text.startswith(chat.CONTEXT):
                        cwd, dirs = chat.cwd_of(text)
                        if cwd is not None:
                            self._cwd, self._dirs = cwd, dirs
        run = self._run
        # The CLI rolls a failed prompt back by cutting the history to its length before
        # the prompt (ids kept): the new history ends where it ended then. A history
        # rebuilt with new ids (compression) no longer names the prompt either, but
        # goes on past it: the run goes on.
        if run is not None and run.prompt_id is not None and not kept and last == run.before:
            self._stop(
                out, "error_during_execution", is_error=True, extension={"rolled_back": True}
            )
        self._last_id = last
        self._drop(out, "gemini/checkpoint")

    def _message(self, rec: dict[str, Any], where: Where, out: list[ev.Event]) -> None:
        mid = rec.get("id")
        if not isinstance(mid, str):
            raise BodyError(f"id is {type(mid).__name__}, not a string")
        held = self._held
        if held is not None and held.get("id") != mid:
            self._commit(out)
        self._held, self._held_where = rec, where

    def _commit(self, out: list[ev.Event]) -> None:
        """The held message can no longer change: its lines."""
        rec, where = self._held, self._held_where
        if rec is None or where is None:
            return
        self._held = self._held_where = None
        raw_ts = rec.get("timestamp")
        ts = normalize_ts(raw_ts)
        if ts is None and raw_ts is not None:
            self._emit(out, src.time_problem("timestamp", raw_ts, where, self._session))
        try:
            kind = rec.get("type")
            if ts is not None:
                self._last_ts = ts
            if kind == "user":
                self._user(rec, ts, out)
            elif kind == "gemini":
                self._gemini(rec, ts, out)
            else:
                self._emit(out, chat.notice(rec, ts, self._sid))
            if kind in ("user", "gemini"):  # the kinds the history holds (no notices)
                self._last_id = src.str_field(rec, "id")
        except BodyError as exc:
            problem = src.body_problem(f"{rec.get('type')}: {exc}", rec, where, self._sid, ts)
            self._emit(out, problem)

    def _user(self, rec: dict[str, Any], ts: str | None, out: list[ev.Event]) -> None:
        content = rec.get("content")
        if chat.is_tool_copy(content):
            self._drop(out, "gemini/tool_response_copy")
            return
        texts = chat.texts(content)
        if texts and texts[0].startswith(chat.CONTEXT):
            cwd, dirs = chat.cwd_of(texts[0])
            if cwd is not None:
                self._cwd, self._dirs = cwd, dirs
            self._drop(out, "gemini/session_context")
            return
        if self._run is not None:
            # A prompt while the last was still unanswered: that run was cut off (a
            # subagent's grace-turn message is its own run's, not a new one).
            if self._kind == "subagent":
                self._emit(out, chat.user_message(rec, ts, self._sid))
                return
            self._stop(out, "interrupted")
        self._run = _Run(src.str_field(rec, "id"), ts, self._last_id)
        self._opened = True
        self._start = ev.RunStart(
            self._sid,
            ts,
            AGENT_NAME,
            PROVIDER,
            cwd=self._cwd,
            extension={"directories": self._dirs} if len(self._dirs) > 1 else {},
        )
        if self._kind == "subagent":
            self._start.task = {"task_id": self._agent_id, "prompt": "\n".join(texts)}
        self._emit(out, chat.user_message(rec, ts, self._sid))

    def _gemini(self, rec: dict[str, Any], ts: str | None, out: list[ev.Event]) -> None:
        if chat.is_history_copy(rec):
            self._drop(out, "gemini/history_copy")
            return
        if self._run is None and chat.is_command_call(rec):
            self._emit(out, chat.command_calls(rec, ts, self._sid))
            return
        message, results = chat.reply(rec, ts, self._sid)
        if self._run is None:
            # A reply with no prompt before it in this file (history written elsewhere).
            self._run = _Run(None, ts)
            self._opened = True
            self._start = ev.RunStart(self._sid, ts, AGENT_NAME, PROVIDER, cwd=self._cwd)
        if self._start is not None and self._start.model is None:
            self._start.model = message.model
        self._run.calls += 1
        self._run.last_calls_tools = bool(results)  # a result per tool call
        self._emit(out, message)
        self._release(out)
        if results:
            self._results = results
        else:
            self._end(out, ev.RunEnd(self._sid, ts, subtype="success", is_error=False))

    def _stop(
        self,
        out: list[ev.Event],
        subtype: str,
        is_error: bool | None = None,
        extension: ev.JSON | None = None,
    ) -> None:
        """The open run ends where the file last told the time (a record that is no
        reply ends it: a new process, a rewind, a rolled-back prompt, ...)."""
        end = ev.RunEnd(
            self._sid, self._last_ts, subtype=subtype, is_error=is_error, extension=extension or {}
        )
        self._end(out, end)

    def _notify(
        self, out: list[ev.Event], fields: ev.JSON, extension: ev.JSON | None = None
    ) -> None:
        """A notification, at the last time the file told."""
        self._emit(out, ev.Note("notification", self._sid, self._last_ts, fields, extension or {}))

    def _end(self, out: list[ev.Event], end: ev.RunEnd) -> None:
        self._release(out)
        if self._results:
            out += self._results  # the last call's results come before its run's end
            self._results = []
        if self._run is not None and end.num_turns is None:
            end.num_turns = self._run.calls
        self._run = None
        out.append(end)

    def _drop(self, out: list[ev.Event], kind: str) -> None:
        """A record dropped on purpose, counted in its run; before the file's first
        run, held for it (a file with no run at all, a resume's stub, makes no lines)."""
        event = ev.Dropped(kind, self._session)
        if self._start is None and self._run is None and not self._opened:
            self._pre.append(event)
            if len(self._pre) > 64:
                out += self._pre
                self._pre = []
        else:
            self._emit(out, event)

    def _emit(self, out: list[ev.Event], event: ev.Event) -> None:
        if self._start is not None:
            self._waiting.append(event)
        else:
            out.append(event)

    def _release(self, out: list[ev.Event]) -> None:
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

    def _linked(self, events: list[ev.Event], final: bool = False) -> list[ev.Event]:
        """A subagent's events carry its spawning call; held until it is known."""
        if self._unlinked is None:
            if self._parent is not None:
                subagent.mark(events, self._parent, self._hint)
            return events
        self._unlinked += events
        if self._parent is None and not final:
            self._look_for_parent()
        if self._parent is None:
            return []
        out, self._unlinked = self._unlinked, None
        subagent.mark(out, self._parent, self._hint)
        return out

    def _agent_only(self, out: list[ev.Event]) -> None:
        """No parent names this subagent: its lines, as a nested actor of its own."""
        held, self._unlinked = self._unlinked or [], None
        subagent.own_actor(held, self._agent_id)
        out[:0] = held

    def _look_for_parent(self) -> None:
        if self._parent is not None or self._agent_id is None or self._hint is None:
            return
        self._parent = subagent.spawner_of(self._path, self._agent_id, self._hint, self._searched)

    # -- stream-json ---------------------------------------------------------------

    def _stream(self, rec: dict[str, Any], where: Where, out: list[ev.Event]) -> None:
        kind = rec["type"]
        raw_ts = rec.get("timestamp")
        ts = normalize_ts(raw_ts)
        if ts is None and raw_ts is not None:
            out.append(src.time_problem("timestamp", raw_ts, where, self._session))
        fields = src.rest(rec, ("type", "timestamp"))
        if kind == "init":
            self._flush_call(out)
            sid = src.str_field(rec, "session_id")
            if sid:
                self._session = sid
            model, ext = stream.model_of(rec, fields)
            self._in_run = True
            self._stream_calls = 0
            start = ev.RunStart(self._sid, ts, AGENT_NAME, PROVIDER, model=model, extension=ext)
            out.append(start)
        elif kind == "message":
            role = src.str_field(rec, "role", required=True)
            content = rec.get("content")
            if not isinstance(content, str):
                raise BodyError(f"content is {type(content).__name__}, not a string")
            if role == "assistant":
                self._call_part(ts)
                self._text.append(content)
                return
            self._flush_call(out)
            out.append(stream.user_text(content, fields, ts, self._sid))
        elif kind == "tool_use":
            block = stream.tool_use(rec, fields)
            self._call_part(ts)
            self._close_text()
            self._blocks.append(block)
        elif kind == "tool_result":
            self._flush_call(out)
            out.append(stream.tool_result(rec, fields, ts, self._sid))
        elif kind == "error":
            self._flush_call(out)
            out.append(stream.error(rec, fields, ts, self._sid))
        else:  # result: the run's end
            self._flush_call(out)
            out.append(stream.run_end(rec, fields, ts, self._sid, self._stream_calls))
            self._in_run = False

    def _call_part(self, ts: str | None) -> None:
        """A text delta or a tool_use: the first of a model call begins it."""
        if not self._text and not self._blocks:
            self._text_ts = ts
            self._stream_calls += 1

    def _close_text(self) -> None:
        if self._text:
            self._blocks.append({"type": "text", "text": "".join(self._text)})
            self._text = []

    def _flush_call(self, out: list[ev.Event]) -> None:
        """One model call's streamed text and tool calls: one assistant line."""
        self._close_text()
        if self._blocks:
            out.append(ev.Message("assistant", self._sid, self._text_ts, self._blocks))
            self._blocks = []

    # -- the json document -----------------------------------------------------------

    def _member(self, rec: dict[str, Any], where: Where) -> None:
        for key, value in rec.items():
            self._doc[key] = value
        self._doc.setdefault("$where", [where.path, where.line])

    def _document_end(self, out: list[ev.Event]) -> None:
        doc, self._doc = self._doc, {}
        if not doc:
            return
        path, line = doc.pop("$where", [self._path, 0])
        sid = doc.get("session_id")
        if isinstance(sid, str) and sid:
            self._session = sid
        try:
            stats = document.stats_of(doc)
            out.append(ev.RunStart(self._sid, None, AGENT_NAME, PROVIDER, model=stats.model))
            out += document.reply_and_end(doc, stats, self._sid)
        except BodyError as exc:
            out.append(
                src.body_problem(f"document: {exc}", doc, Where(path, line), self._sid, None)
            )


SOURCE = src.Source(
    name="gemini",
    description="Gemini CLI (chat files ~/.gemini/tmp/*/chats/*.jsonl, "
    "--output-format stream-json|json)",
    sniff=sniff,
    open=GeminiAdapter,
    session_hint=files.session_hint,
    mapping=MAPPING,
    session_of=files.session_of,
    files=src.Files(homes=files.homes, reads=files.reads, skips=files.skips),
)
