"""Claude Code durable session files: ``~/.claude/projects/<project>/<session>.jsonl``.

Also subagent files, ``<session>/subagents/**/agent-<id>.jsonl``, whose
``agent-<id>.meta.json`` sidecar names the spawning tool_use (``toolUseId``); the
older flat ``<project>/agent-<id>.jsonl``; and 1.0.x files that keep subagent
(sidechain) records inline in the main file.

Records are camelCase, one per content block (the blocks of one API message share
``message.id`` and its usage). There is no ``system/init`` and no result.

What each record type becomes is ``MAPPING`` below (docs/mapping.md is made from
it). Where no marker ends a turn (most files before 2.1.x), the next prompt or the
end of the file does: the turn is complete when its last word was the model's and
no tool call is left unanswered; otherwise it was cut off (``interrupted``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import orjson

from streamv1.adapters import _claude as cc
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
    NOT_MINE,
    OWN_TYPE,
    STR_OR_NONE,
    Files,
    Source,
    Where,
    expect_strings,
    number,
    open_regular,
    rest,
    string,
    time_problem,
)
from streamv1.translator.state import persisted
from streamv1.translator.timefmt import normalize_ts

#: Record types that are not conversation lines: dropped on purpose, counted.
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
        "pr-link",
        "progress",
        "cost-state",
    }
)

#: Per-record context Claude repeats on every record: carried once, on the init.
CONTEXT_KEYS = frozenset(
    {
        "type",
        "message",
        "sessionId",
        "session_id",
        "timestamp",
        "cwd",
        "version",
        "gitBranch",
        "userType",
        "entrypoint",
        "isSidechain",
        "agentId",
        "slug",
    }
)

#: A system record's keys that are not its line's fields: its context, its subtype.
_SYSTEM_KEYS = CONTEXT_KEYS | {"subtype"}
_TURN_DURATION_KEYS = _SYSTEM_KEYS | {"durationMs"}
_NAMING_KEYS = ("type", "sessionId")
_LOCAL_OUTPUT = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-stdout>",
    "<bash-stderr>",
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


@persisted
class _Turn:
    """What the adapter knows of an open run, to end it the way its source did."""

    def __init__(self) -> None:
        self.expects_reply = True
        self.replied = False
        self.api_call = False  # an assistant message that a real API call made
        self.last_is_model = False
        self.unanswered: set[str] = set()
        self.last_stop: str | None = None
        self.max_turns: int | None = None
        self.interrupted: str | None = None
        self.count = cc.TurnCount()
        self.api_error = False  # the model's last word is the CLI's API-error message
        self.unfinished = False  # the model's last block calls a tool (no answer is its)
        self.structured: Any = None  # --json-schema output, as the CLI recorded it
        self.has_structured = False
        self.budget: tuple[float, float] | None = None  # (total, used) of --max-budget-usd
        self.held: list[Message] = []  # injected messages waiting for the model's reply
        # A cost-state written while the turn was unfinished (the CLI exiting on
        # SIGINT writes it before the interrupt marker): the end it proves, kept for
        # the record that says how the turn ended.
        self.cost_end: tuple[float | None, float | None, JSON] | None = None
        self.command_output: str | None = None  # a local command's stdout, as written
        # Background agents the turn launched that have not notified their end: the
        # CLI's end of the turn waits for them (print mode prints its result after
        # they finish), and so does the run's, its end mark kept meanwhile.
        self.background: set[str] = set()
        self.held_end: JSON | None = None


@persisted
class _Side:
    """An inline subagent's own run (a sidechain kept in its parent's file, 1.0.x-2.0.x).

    Linked (its spawning tool_use found): its events go out at once, as a nested run.
    Unlinked: held, and emitted as a run of its own after the parent's run ends, so
    it never interleaves with a run of the same key."""

    def __init__(self, parent: str | None) -> None:
        self.parent = parent
        self.turn = _Turn()
        self.events: list[Event] = []  # held while unlinked


@persisted
class ClaudeSessionAdapter:
    #: The layout of this adapter's checkpointed state (translator.state): a new
    #: number whenever its fields change, so an old checkpoint is replayed, not misread.
    STATE_VERSION = 2

    def __init__(self, path: str, session_id: str | None = None) -> None:
        self._path = path
        p = Path(path)
        named_agent = p.name.startswith("agent-")
        self._agent_id: str | None = p.stem[6:] if named_agent else None
        # A subagent file by its name, or (decided at the first conversation record)
        # by its records: an agent file whose name says nothing still holds only
        # sidechain records.
        self._subagent: bool | None = True if named_agent else None
        self._meta = _read_meta(p) if named_agent else {}
        self._parent = string(self._meta.get("toolUseId"))
        self._parent_looked = self._parent is not None
        # A subagent with no sidecar whose parent does not name it yet (live: the
        # parent writes the link later): its events wait here until it does, or the
        # input ends. Parent files are searched only past what was searched before.
        self._unlinked: list[Event] | None = None
        self._searched: dict[str, int] = {}
        self._session: str | None = session_id or session_hint(path)
        self._pending: RunStart | None = None
        self._turn: _Turn | None = None
        self._waiting: list[Event] = []  # lines between turns that open the next run
        self._task_prompts: dict[str, str] = {}  # Task prompt text → tool_use id
        self._sides: dict[str, _Side] = {}  # inline sidechain record uuid → its run
        self._open_sides: list[_Side] = []
        self._held_sides: list[_Side] = []  # unlinked, ended, waiting for the parent's end
        self._dequeued: str | None = None  # time the CLI took its current prompt
        self._inherited = False  # in a fork's copy of its parent's turns
        # A fork subagent's file begins with its parent's spawning message, copied,
        # then the tool result that is the fork's prompt: that copy is not activity.
        self._fork_context = self._meta.get("isFork") is True
        self._cost_total = 0.0  # the last cost-state's cumulative cost

    # -- the adapter contract -------------------------------------------------

    def feed(self, record: dict[str, Any], where: Where) -> Iterable[Event]:
        out: list[Event] = []
        sid = record.get("sessionId")
        if isinstance(sid, str) and (self._session is None or self._turn is None):
            self._session = sid
        try:
            if type(record.get("type")) not in STR_OR_NONE or type(sid) not in STR_OR_NONE:
                expect_strings(record, _NAMING_KEYS)  # (raises: inline first, it is hot)
            self._translate(record, where, out)
        except cc.BodyError as exc:
            out.append(cc.body_problem(exc, record, where, self._session))
        if self._subagent:
            self._mark_actor(out)
        if self._unlinked is not None:
            self._unlinked += out
            return self._release() if self._look_for_parent() else []
        return out

    def finish(self) -> Iterable[Event]:
        out: list[Event] = []
        if self._unlinked is not None:
            self._look_for_parent()
            out += self._release()
        if self._turn is not None:
            self._end(out, None, inferred=True)
        else:
            self._end_sides(out)
            self._flush_held_sides(out)
        out += self._waiting
        self._waiting = []
        if self._subagent:
            self._mark_actor(out)
        return out

    def _mark_actor(self, events: list[Event]) -> None:
        """A subagent file's runs are one nested actor's: its starts, ends and
        messages say so, with its spawning tool_use where known, else its name."""
        name = f"agent-{self._agent_id}" if self._agent_id else os.path.basename(self._path)
        for event in events:
            if isinstance(event, RunStart | RunEnd | Message):
                if event.parent_tool_use_id is None:
                    event.parent_tool_use_id = self._parent
                event.actor = name

    # -- records ----------------------------------------------------------------

    @property
    def _sid(self) -> str:
        return self._session or "unknown"

    def _translate(self, rec: dict[str, Any], where: Where, out: list[Event]) -> None:
        kind = rec.get("type")
        raw_ts = rec.get("timestamp")
        ts = normalize_ts(raw_ts)
        if ts is None and raw_ts is not None:
            out.append(time_problem("timestamp", raw_ts, where, self._session))
        if self._subagent is None and kind in ("user", "assistant"):
            self._subagent = rec.get("isSidechain") is True
            agent = rec.get("agentId")
            if self._subagent and isinstance(agent, str):
                self._agent_id = agent
        if (
            self._inherited
            and kind in ("user", "assistant", "system")
            and not (kind == "user" and self._is_prompt(rec) and not self._copied(ts))
        ):
            out.append(Dropped(f"inherited/{kind}", self._session))
            return
        if self._fork_context and kind in ("user", "assistant"):
            if kind == "assistant":
                out.append(Dropped("inherited/assistant", self._session))
                return
            self._fork_context = False
            message = cc.message_of(rec, "user")
            self._prompt(rec, message.get("content"), ts, out)  # the fork's directive
            return
        if kind == "user":
            self._user(rec, ts, out)
        elif kind == "assistant":
            self._assistant(rec, ts, out)
        elif kind == "system":
            self._system(rec, ts, out)
        elif kind == "cost-state":
            self._cost_state(rec, out)
        elif kind == "fork-context-ref":
            # A fork subagent's file: it shares its parent's context by reference.
            self._fork_context = self._turn is None and bool(self._subagent)
            out.append(Dropped(kind, self._session))
        elif isinstance(kind, str) and kind in METADATA_TYPES:
            if kind == "attachment":
                kind = self._attachment(rec)
            elif kind == "progress":
                data = rec.get("data")
                sub = data.get("type") if isinstance(data, dict) else None
                kind = f"progress/{sub}" if isinstance(sub, str) else "progress"
            elif kind == "queue-operation" and rec.get("operation") == "dequeue":
                self._dequeued = ts or self._dequeued
            out.append(Dropped(str(kind), self._session))
        else:
            name = kind if isinstance(kind, str) else "<no type>"
            out.append(Unrecognized(name, self._session, ts, rec, self._nested_parent(rec)))

    def _attachment(self, rec: dict[str, Any]) -> str:
        """An attachment is metadata, but three kinds decide how the turn ends."""
        att = rec.get("attachment")
        sub = att.get("type") if isinstance(att, dict) else None
        turn = self._turn
        if turn is not None and isinstance(att, dict) and self._is_own(rec):
            if sub == "max_turns_reached":
                count = att.get("turnCount")
                limit = whole(count)
                turn.max_turns = limit if limit is not None else -1
            elif sub == "structured_output" and "data" in att:
                turn.structured = att["data"]
                turn.has_structured = True
            elif sub == "budget_usd":
                total, used = att.get("total"), att.get("used")
                if isinstance(total, int | float) and isinstance(used, int | float):
                    turn.budget = (float(total), float(used))
        return f"attachment/{sub}" if isinstance(sub, str) else "attachment"

    def _copied(self, ts: str | None) -> bool:
        """A prompt stamped before the CLI took the prompt it is working on was not
        typed now: a fork (``--fork-session``) copies its parent's turns, with their
        old times, into the new session's file after its own dequeue."""
        return ts is not None and self._dequeued is not None and ts < self._dequeued

    @staticmethod
    def _is_prompt(rec: dict[str, Any]) -> bool:
        message = rec.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        return (
            rec.get("isMeta") is not True
            and rec.get("isCompactSummary") is not True
            and rec.get("isSidechain") is not True
            and isinstance(content, str | list)
            and not cc.has_tool_result(content)
        )

    def _user(self, rec: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        message = cc.message_of(rec, "user")
        content = message.get("content")
        if content is None:
            raise cc.BodyError("user record whose message has no content")
        if rec.get("isSidechain") is True and not self._subagent:
            self._side_user(rec, message, content, ts, out)
            return
        turn = self._turn
        if rec.get("isMeta") is True:
            # Injected after the model spoke (the max_tokens note, stop-hook feedback):
            # a line of the turn once the model answers it, as print mode shows it.
            # Before a prompt (caveats, reminders, command expansions): not shown.
            if turn is not None and turn.replied:
                turn.held.append(self._user_line(rec, message, content, ts))
            else:
                out.append(Dropped("user/isMeta", self._session))
            return
        if rec.get("isCompactSummary") is True:
            line = self._user_line(rec, message, content, ts)
            if turn is None:
                self._waiting.append(line)  # the summary opens the /compact run
            else:
                self._ensure_started(out, None)
                turn.count.user_records += 1
                out.append(line)
            return
        if cc.has_tool_result(content) or not isinstance(content, str | list):
            if turn is not None:
                self._end_side_of_results(content, out)
            self._ensure_started(out, None)
            line = self._user_line(rec, message, content, ts)
            if turn is not None:
                _after_user_record(turn, line)
            launched = cc.launched_in_background(rec.get("toolUseResult"), content)
            if turn is not None and launched is not None:
                turn.background.add(launched)
            ended = cc.agent_result_fields(rec.get("toolUseResult"), content)
            if ended is not None:
                # A foreground agent answered its spawner: print mode's
                # task_notification, just before the tool result it came with.
                # (Its lines are in a file of their own where it is not inline.)
                spawner = ended.get("task", {}).get("tool_use_id")
                if isinstance(spawner, str) and "task_id" in ended and not self._subagent:
                    out.append(Spawn(spawner, self._sid))
                out.append(
                    Note(
                        "task_notification",
                        self._sid,
                        ts,
                        ended,
                        parent_tool_use_id=line.parent_tool_use_id,
                    )
                )
            out.append(line)
            return
        text = cc.text_of(content) or ""
        if cc.is_task_notification(text) and not self._subagent:
            # A background agent is over: said in the run it ran in (before the
            # prompt this record also is ends that run), as print mode says it.
            fields = cc.notification_fields(text)
            out.append(Note("task_notification", self._sid, ts, fields))
            if turn is not None:
                turn.background.discard(fields["task"].get("tool_use_id"))
                if turn.held_end is not None and not turn.background:
                    self._end(out, ts)  # the last one: the run ends now, as its mark said
        if cc.is_interrupt(text):
            if turn is not None:
                turn.interrupted = text
                if cc.is_tool_interrupt(text):
                    turn.count.user_records += 1  # the CLI counts this one (3 in the capture)
                self._end(out, ts)
            else:
                out.append(Note("interrupted", self._sid, ts, {"body": text}))
            return
        if text.lstrip().startswith(_LOCAL_OUTPUT):
            # A local command's output: print mode replays it as a user line.
            if turn is not None:
                turn.expects_reply = False
            self._ensure_started(out, None)
            out.append(self._user_line(rec, message, content, ts))
            return
        self._prompt(rec, content, ts, out)

    def _user_line(
        self,
        rec: dict[str, Any],
        message: dict[str, Any],
        content: Any,
        ts: str | None,
        parent: str | None = None,
    ) -> Message:
        own_parent = self._subagent_parent(rec) if self._subagent else parent
        return Message(
            role="user",
            session_id=self._sid,
            ts=ts,
            content=cc.content_blocks(content),
            parent_tool_use_id=own_parent,
            tool_use_result=rec.get("toolUseResult"),
            has_tool_use_result="toolUseResult" in rec,
            extension=cc.message_extension(rec, _LINE_KEYS, message),
        )

    def _prompt(self, rec: dict[str, Any], content: Any, ts: str | None, out: list[Event]) -> None:
        if self._turn is not None:
            self._end(out, None, inferred=True)
        else:
            self._end_sides(out)
            self._flush_held_sides(out)
        if self._copied(ts):
            self._inherited = True
            out.append(Dropped("inherited/user", self._session))
            return
        self._inherited = False
        role = None
        if self._subagent:
            agent_type = self._meta.get("agentType")
            role = agent_type if isinstance(agent_type, str) else "subagent"
        self._pending = self._run_start(rec, content, ts, role, self._subagent_parent(rec))
        if self._subagent:
            self._pending.task = self._task()
            if self._meta:
                self._pending.extension["subagent"] = self._meta
        self._turn = _Turn()
        # The run begins when its prompt is written, not when the model first answers
        # (live, a consumer sees the prompt at once): the model is on the init only
        # where the source has said it by then (a subagent's sidecar).
        model = self._meta.get("model") if self._subagent else None
        self._ensure_started(out, model if isinstance(model, str) else None)

    def _task(self) -> JSON:
        """What a subagent file says of its task, for the task_started line it
        becomes inside its parent's run: its agent id, the sidecar's description."""
        task: JSON = {}
        if self._agent_id:
            task["task_id"] = self._agent_id
        description = self._meta.get("description")
        if isinstance(description, str):
            task["description"] = description
        return task

    def _run_start(
        self,
        rec: dict[str, Any],
        content: Any,
        ts: str | None,
        role: str | None,
        parent: str | None,
    ) -> RunStart:
        """A run's synthetic init from its prompt record: the prompt in
        ``extension.prompt``, the record's other keys beside it."""
        ext: JSON = {"prompt": content}
        ext.update({k: v for k, v in rec.items() if k not in ("type", "message", "cwd")})
        return RunStart(
            session_id=self._sid,
            ts=ts,
            agent_name=cc.AGENT_NAME,
            provider=cc.PROVIDER,
            agent_role=role,
            cwd=string(rec.get("cwd")),
            parent_tool_use_id=parent,
            extension=ext,
        )

    def _assistant(self, rec: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        message = cc.message_of(rec, "assistant")
        if rec.get("isSidechain") is True and not self._subagent:
            side = self._side_of(rec) or self._side_start(rec, None, ts, out)
            line = self._assistant_line(rec, message, ts, side.parent)
            self._side_emit(side, line, out)
            self._after_reply(side.turn, rec, line)
            return
        turn = self._turn
        if self._pending is not None:
            self._ensure_started(out, string(message.get("model")))
        if turn is not None and turn.held:
            turn.count.user_records += len(turn.held)
            out += turn.held
            turn.held = []
        line = self._assistant_line(rec, message, ts, self._subagent_parent(rec))
        out.append(line)
        if turn is not None:
            self._after_reply(turn, rec, line)

    def _assistant_line(
        self, rec: dict[str, Any], message: dict[str, Any], ts: str | None, parent: str | None
    ) -> Message:
        content = cc.content_blocks(message.get("content"))
        for block in content:
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                tool_input = block.get("input")
                prompt = tool_input.get("prompt") if isinstance(tool_input, dict) else None
                if isinstance(prompt, str):
                    self._task_prompts[prompt] = block["id"]
        return Message(
            role="assistant",
            session_id=self._sid,
            ts=ts,
            content=content,
            message_id=string(message.get("id")),
            parent_tool_use_id=parent,
            model=string(message.get("model")),
            stop_reason=string(message.get("stop_reason")),
            usage=cc.message_usage(message),
            extension=cc.message_extension(rec, _LINE_KEYS, message),
        )

    @staticmethod
    def _after_reply(turn: _Turn, rec: dict[str, Any], line: Message) -> None:
        for block in line.content:
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                turn.unanswered.add(block["id"])
        turn.replied = True
        turn.api_call = turn.api_call or line.usage is not None
        turn.last_is_model = True
        if line.content:
            turn.unfinished = line.content[-1].get("type") in _UNFINISHED_BLOCKS
        turn.api_error = cc.is_api_error(rec)
        if line.stop_reason is not None:
            turn.last_stop = line.stop_reason

    def _system(self, rec: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        subtype = rec.get("subtype")
        content = rec.get("content")
        if subtype == "init":
            # Print mode's run start, not a durable record: a line of its own would
            # be a second system/init inside the run. Kept whole, as unknown types are.
            out.append(
                Unrecognized("system/init", self._session, ts, rec, self._nested_parent(rec))
            )
        elif subtype == "turn_duration" and self._is_own(rec):
            self._turn_duration(rec, ts, out)
        elif subtype == "local_command" and isinstance(content, str):
            self._local_command(rec, content, ts, out)
        else:
            self._system_note(rec, subtype, content, ts, out)

    def _turn_duration(self, rec: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        """The CLI's mark that a turn of an interactive session ended."""
        if self._turn is None:
            out.append(Dropped("system/turn_duration", self._session))
            return
        duration = rec.get("durationMs")
        self._end(
            out,
            ts,
            duration_ms=whole(duration),
            extension=rest(rec, _TURN_DURATION_KEYS),
        )

    def _local_command(
        self, rec: dict[str, Any], content: str, ts: str | None, out: list[Event]
    ) -> None:
        """A local command (``/cost``, ``/status``) is a prompt; its output, the reply."""
        shown = cc.local_command_output(content)
        turn = self._turn
        if not content.lstrip().startswith(_LOCAL_OUTPUT):
            self._prompt(rec, content, ts, out)  # the command itself
        elif shown is not None and turn is not None and not turn.replied:
            # Its output is the command's reply: print mode shows it as an
            # assistant message of the CLI's own (model <synthetic>).
            turn.expects_reply = False
            self._ensure_started(out, None)
            line = Message(
                role="assistant",
                session_id=self._sid,
                ts=ts,
                content=[{"type": "text", "text": shown.strip()}],
                model=cc.SYNTHETIC_MODEL,
                extension={"record": rest(rec, _SYSTEM_KEYS)},
            )
            out.append(line)
            self._after_reply(turn, rec, line)
            turn.command_output = shown
        else:
            if turn is not None:
                turn.expects_reply = False
                self._ensure_started(out, None)
            out.append(Note("local_command_output", self._sid, ts, {"body": content}))

    def _system_note(
        self, rec: dict[str, Any], subtype: Any, content: Any, ts: str | None, out: list[Event]
    ) -> None:
        """Any other system record: a line of the same subtype (no subtype: 1.0.x's
        hook output, a notification)."""
        body = rest(rec, _SYSTEM_KEYS)
        side = self._side_of(rec) if rec.get("isSidechain") is True and not self._subagent else None
        parent = side.parent if side is not None else self._nested_parent(rec)
        if not isinstance(subtype, str):
            fields: JSON = {}
            if isinstance(content, str):
                fields["body"] = body.pop("content")
            if isinstance(rec.get("level"), str):
                fields["severity"] = body.pop("level")
            note = Note("notification", self._sid, ts, fields, body, parent)
        else:
            note = Note(subtype, self._sid, ts, {}, body, parent)
        if side is not None:
            self._side_emit(side, note, out)
        else:
            out.append(note)

    def _cost_state(self, rec: dict[str, Any], out: list[Event]) -> None:
        raw = number(rec.get("totalCostUSD"))
        cost = float(raw) if raw is not None else None
        spent: float | None = None
        if cost is not None:
            spent, self._cost_total = cost - self._cost_total, cost
        if self._turn is None:
            out.append(Dropped("cost-state", self._session))
            return
        ext: JSON = {"cost_state": rest(rec, CONTEXT_KEYS)}
        if _may_be_interrupted(self._turn):
            self._turn.cost_end = (cost, spent, ext)
            return
        self._end(out, None, total_cost_usd=cost, spent=spent, extension=ext)

    # -- runs ---------------------------------------------------------------------

    def _ensure_started(self, out: list[Event], model: str | None) -> None:
        if self._pending is not None:
            if model and not self._pending.model:
                self._pending.model = model
            out.append(self._pending)
            self._pending = None
            out += self._waiting
            self._waiting = []

    def _end(
        self,
        out: list[Event],
        ts: str | None,
        inferred: bool = False,
        duration_ms: int | None = None,
        total_cost_usd: float | None = None,
        extension: JSON | None = None,
        spent: float | None = None,
    ) -> None:
        turn = self._turn
        assert turn is not None
        if turn.held_end is not None:
            # The end the CLI marked while background agents ran: now (the last one
            # notified, or the next prompt, or the input's end came first).
            held, turn.held_end = turn.held_end, None
            ts, duration_ms = ts if ts is not None else held["ts"], held["duration_ms"]
            total_cost_usd, extension, spent = held["cost"], held["extension"], held["spent"]
            inferred = False
        elif not inferred and turn.background and turn.interrupted is None:
            turn.held_end = {
                "ts": ts,
                "duration_ms": duration_ms,
                "cost": total_cost_usd,
                "extension": extension,
                "spent": spent,
            }
            return
        if turn.cost_end is not None and total_cost_usd is None:
            total_cost_usd, spent, cost_ext = turn.cost_end
            extension = {**cost_ext, **(extension or {})}
            inferred = False  # the cost-state proved the CLI ended the turn
        self._ensure_started(out, None)
        self._end_sides(out)
        for _ in turn.held:
            out.append(Dropped("user/isMeta", self._session))
        ext: JSON = dict(extension or {})
        subtype, is_error = _subtype(turn, inferred, spent)
        if turn.interrupted is not None and subtype in ("interrupted", "error_during_execution"):
            ext["interrupt"] = turn.interrupted
        elif subtype == "interrupted":
            ext["cut_off"] = True
        local = not turn.api_call and not turn.expects_reply
        turn.count.local_command = local
        num_turns = turn.count.value
        if subtype == "error_max_turns" and turn.max_turns is not None and turn.max_turns >= 0:
            num_turns = turn.max_turns
        result: str | None = None
        if turn.has_structured:
            result = cc.structured_text(turn.structured)
            ext["structured_output"] = turn.structured
        elif local:
            # Print mode's result for a local command: its stdout as written (the
            # message shows it trimmed); for /compact, whose output is a user line, "".
            result = turn.command_output if turn.command_output is not None else ""
        # No API call in a run whose end is proven (or a local command): it used none.
        # Not where the model's reply was never written (x_pause_turn_end: a reply
        # with no content has no record): what it cost is not known.
        usage = None
        if (
            not turn.api_call
            and (turn.replied or not turn.expects_reply)
            and (not inferred or not turn.expects_reply)
        ):
            usage = Usage()
        out.append(
            RunEnd(
                session_id=self._sid,
                ts=ts,
                subtype=subtype,
                is_error=is_error,
                result=result,
                num_turns=num_turns,
                duration_ms=duration_ms,
                usage=usage,
                total_cost_usd=total_cost_usd,
                extension=ext,
            )
        )
        self._turn = None
        self._flush_held_sides(out)

    # -- nested actors ----------------------------------------------------------------

    def _is_own(self, rec: dict[str, Any]) -> bool:
        """Is the record the run's own actor's (not an inline subagent's)?"""
        return bool(self._subagent) or rec.get("isSidechain") is not True

    def _nested_parent(self, rec: dict[str, Any]) -> str | None:
        """parent_tool_use_id for a record: set exactly when its actor is nested."""
        if self._subagent:
            return self._subagent_parent(rec)
        if rec.get("isSidechain") is not True:
            return None
        side = self._side_of(rec)
        return side.parent if side is not None else None

    def _side_of(self, rec: dict[str, Any]) -> _Side | None:
        """The inline sidechain run a record belongs to (by its parentUuid chain)."""
        parent_uuid = rec.get("parentUuid")
        side = self._sides.get(parent_uuid) if isinstance(parent_uuid, str) else None
        uuid = rec.get("uuid")
        if side is not None and isinstance(uuid, str):
            self._sides[uuid] = side
        return side

    def _side_user(
        self,
        rec: dict[str, Any],
        message: dict[str, Any],
        content: Any,
        ts: str | None,
        out: list[Event],
    ) -> None:
        side = self._side_of(rec)
        if side is None or (rec.get("parentUuid") is None and not cc.has_tool_result(content)):
            if not cc.has_tool_result(content):
                self._side_start(rec, content, ts, out)
                return
            side = self._side_start(rec, None, ts, out)
        if rec.get("isMeta") is True:
            self._side_emit(side, Dropped("user/isMeta", self._session), out)
            return
        line = self._user_line(rec, message, content, ts, side.parent)
        _after_user_record(side.turn, line)
        self._side_emit(side, line, out)

    def _side_start(
        self, rec: dict[str, Any], content: Any, ts: str | None, out: list[Event]
    ) -> _Side:
        """A sidechain's first record, its prompt: the subagent's own run begins. Its
        spawning tool_use is the parent's Task call whose ``input.prompt`` is this
        prompt (the only link 1.0.x writes); without one the link is not invented.
        ``content`` None: a sidechain record whose chain starts nowhere in this file
        (no prompt to link by): an unlinked run of its own all the same, never a
        line of the parent's run."""
        parent = self._task_prompts.get(cc.text_of(content) or "") if content is not None else None
        for old in [s for s in self._open_sides if s.parent == parent]:
            self._end_side(old, out)
        side = _Side(parent)
        uuid = rec.get("uuid")
        if isinstance(uuid, str):
            self._sides[uuid] = side
        self._open_sides.append(side)
        start = self._run_start(rec, content, ts, "subagent", parent)
        if content is None:
            start.extension = {}  # not a prompt record: its keys stay on its own line
        self._side_emit(side, start, out)
        return side

    def _side_emit(self, side: _Side, event: Event, out: list[Event]) -> None:
        (out if side.parent is not None else side.events).append(event)

    def _end_side(self, side: _Side, out: list[Event]) -> None:
        turn = side.turn
        subtype, is_error = _subtype(turn, True, None)
        end = RunEnd(
            session_id=self._sid,
            ts=None,
            subtype=subtype,
            is_error=is_error,
            num_turns=turn.count.value,
            parent_tool_use_id=side.parent,
            extension={"cut_off": True} if subtype == "interrupted" else {},
        )
        self._side_emit(side, end, out)
        self._open_sides.remove(side)
        if side.parent is None:
            self._held_sides.append(side)

    def _end_side_of_results(self, content: Any, out: list[Event]) -> None:
        """The parent got a subagent's answer: that subagent's run is over."""
        if not self._open_sides or not isinstance(content, list):
            return
        ids = {
            b.get("tool_use_id")
            for b in content
            if isinstance(b, dict) and isinstance(b.get("tool_use_id"), str)
        }
        for side in [s for s in self._open_sides if s.parent in ids]:
            self._end_side(side, out)

    def _end_sides(self, out: list[Event]) -> None:
        for side in list(self._open_sides):
            self._end_side(side, out)

    def _flush_held_sides(self, out: list[Event]) -> None:
        for side in self._held_sides:
            out += side.events
        self._held_sides = []

    def _subagent_parent(self, rec: dict[str, Any]) -> str | None:
        if not self._subagent:
            return None
        if not self._parent_looked:
            self._parent_looked = True
            agent = rec.get("agentId")
            if isinstance(agent, str):
                self._agent_id = agent
            if not self._look_for_parent() and self._agent_id:
                self._unlinked = []  # this record's events are the first held
        return self._parent

    @property
    def holding(self) -> bool:
        """A run held back: a prompt not yet answered (its init waits for the
        model's first record), or a sidecar-less subagent's run waiting for its
        parent to name it. (Notes between turns are not a run: they wait for one.)"""
        return self._unlinked is not None or self._pending is not None

    def learn_spawner(self, agent_id: str, tool_use_id: str) -> list[Event]:
        """Told by the session that the agent ``agent_id`` was spawned by
        ``tool_use_id`` (its parent's file says so): if that is this file's agent
        and its lines wait for it, they go out now, linked."""
        if self._unlinked is None or self._parent is not None or agent_id != self._agent_id:
            return []
        self._parent = tool_use_id
        return self._release()

    def _look_for_parent(self) -> bool:
        if self._parent is None and self._agent_id:
            self._parent = _search_spawner(
                Path(self._path), self._agent_id, self._session, self._searched
            )
        return self._parent is not None

    def _release(self) -> list[Event]:
        """The held events, with the parent link where it was found."""
        held, self._unlinked = self._unlinked or [], None
        if self._parent is not None:
            for event in held:
                if getattr(event, "parent_tool_use_id", "") is None:
                    event.parent_tool_use_id = self._parent  # type: ignore[union-attr]
        return held


def _after_user_record(turn: _Turn, line: Message) -> None:
    """A user record of the turn (a tool result): its answers, and one more turn."""
    for block in line.content:
        if block.get("type") == "tool_result":
            turn.unanswered.discard(str(block.get("tool_use_id")))
    turn.last_is_model = False
    turn.count.user_records += 1


def _subtype(turn: _Turn, inferred: bool, spent: float | None) -> tuple[str, bool | None]:
    """The result's subtype, and is_error where the subtype alone does not say it.

    In order: the CLI's own marks (max turns, an interrupt), then what the records
    prove: over ``--max-budget-usd`` with the turn unfinished; a turn ended by the CLI
    (a cost-state or turn_duration) with a tool call never answered (the CLI stopped
    mid-turn: never ``success``); a turn with no end mark that was cut off."""
    complete = _complete(turn)
    if turn.max_turns is not None:
        return "error_max_turns", None
    if cc.is_tool_interrupt(turn.interrupted):
        return "error_during_execution", None  # the CLI's aborted_tools
    if turn.interrupted is not None:
        return "interrupted", None
    if turn.budget is not None and spent is not None and not complete:
        total, used = turn.budget
        if used + spent >= total:
            return "error_max_budget_usd", None
    if inferred and not complete:
        return "interrupted", None
    if not inferred and (
        turn.unanswered or turn.unfinished or not (turn.replied or not turn.expects_reply)
    ):
        # The CLI ended a turn the model had not finished: a tool call never
        # answered, a last word that is a server tool call (a pause_turn it did not
        # continue), no reply at all (captures: x_pause_turn_end,
        # x_pause_turn_server_tool; a pause_turn ending on text is success: x_pause_turn).
        return "error_during_execution", None
    # An API error the CLI gave up on: print mode says success with is_error true.
    return "success", True if turn.api_error else None


def _may_be_interrupted(turn: _Turn) -> bool:
    """A cost-state while the CLI was waiting for the model (its last record the
    prompt or a tool result): the CLI stopped by SIGINT writes it just before its
    interrupt marker (capture x_interrupt), so the end waits for the next record.
    Any other cost-state ends the turn at once, live too: a finished turn, the
    turn limit, the budget, structured output, an unanswered tool call (s6)."""
    if turn.interrupted is not None or _complete(turn):
        return False
    if turn.max_turns is not None or turn.budget is not None or turn.has_structured:
        return False
    return not turn.last_is_model and not turn.unanswered


#: Content blocks that, as the model's last word, leave its turn to another call
#: (a tool_use is an unanswered call until its result comes).
_UNFINISHED_BLOCKS = frozenset({"server_tool_use"})


def _complete(turn: _Turn) -> bool:
    if not turn.replied:
        return not turn.expects_reply
    return (
        turn.last_is_model
        and not turn.unanswered
        and not turn.unfinished
        and turn.last_stop != "tool_use"
    )


#: A message record's keys that are not its line's extension.
_LINE_KEYS = CONTEXT_KEYS | {"toolUseResult"}


def _read_meta(path: Path) -> JSON:
    sidecar = path.with_name(path.name[: -len(".jsonl")] + ".meta.json")
    try:
        value = orjson.loads(sidecar.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def _search_spawner(
    path: Path, agent_id: str, session: str | None, searched: dict[str, int]
) -> str | None:
    """Without a sidecar: the parent session file names the tool_use that spawned an
    agent (a tool_result whose toolUseResult.agentId is it, or a progress record).
    Only whole lines past ``searched[candidate]`` are read, and the mark moves on:
    looking again as the parent grows costs a stat when it has not."""
    candidates = []
    for parent in path.parents:
        if parent.name == "subagents":
            candidates.append(parent.parent.with_suffix(".jsonl"))
            break
    if session:
        candidates.append(path.parent / f"{session}.jsonl")
    needle = agent_id.encode()
    for candidate in candidates:
        key = str(candidate)
        start = searched.get(key, 0)
        if candidate == path:
            continue
        try:
            with candidate.open("rb") as fh:
                if os.fstat(fh.fileno()).st_size <= start:
                    continue
                fh.seek(start)
                for raw in fh:
                    if not raw.endswith(b"\n"):
                        break  # a line still being written: searched when whole
                    start += len(raw)
                    if needle in raw:
                        found = _spawner_in(raw, agent_id)
                        if found:
                            return found
        except OSError:
            continue
        finally:
            searched[key] = start
    return None


def _spawner_in(raw: bytes, agent_id: str) -> str | None:
    try:
        rec = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(rec, dict):
        return None
    data = rec.get("data")
    if isinstance(data, dict) and data.get("agentId") == agent_id:
        return string(rec.get("parentToolUseID") or rec.get("toolUseID"))
    result = rec.get("toolUseResult")
    if isinstance(result, dict) and result.get("agentId") == agent_id:
        message = rec.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    return string(block.get("tool_use_id"))
    return None


MAPPING = (
    Row(
        "prompt",
        "`user`, a prompt (string or text/image content; not `isMeta`, no tool_result)",
        "starts a run at once (live, the prompt is seen when written): synthetic "
        "`system/init` with `cwd`, the prompt in `extension.prompt` and the record's other "
        "keys in `extension`; `agent.model` only where known by then (a subagent's sidecar "
        "`model`): each API call's model is on its assistant line and in the result's "
        "`model_usage`. Not echoed as a user line (print mode does not echo it either)",
    ),
    Row(
        "command",
        "`user` `<command-name>…` (and `system/local_command` with one)",
        "a prompt: a slash command starts a run",
    ),
    Row(
        "tool_result",
        "`user` with tool_result blocks",
        "`user`: blocks as written; `toolUseResult` → `tool_use_result` (object, string or "
        "list, as written); `permissionDecision`, `uuid`, … in `extension`. Counts toward "
        "`num_turns`",
    ),
    Row(
        "interrupt",
        "`user` `[Request interrupted by user]` (Esc, SIGINT)",
        "ends the run: `result/interrupted`, `is_error: true`, the marker in `extension.interrupt`",
    ),
    Row(
        "tool_interrupt",
        "`user` `[Request interrupted by user for tool use]` (an SDK "
        "host's `interrupt`, Esc while a tool runs)",
        "ends the run as the CLI does (`terminal_reason: aborted_tools`): "
        "`result/error_during_execution`, `is_error: true`, no `result` text, the marker in "
        "`extension.interrupt`; the marker counts toward `num_turns`",
    ),
    Row(
        "unfinished",
        "`cost-state` or `system/turn_duration` after a `pause_turn` whose last "
        "block is a server tool call, or after no reply at all",
        "`result/error_during_execution` (the CLI did not call again; a `pause_turn` ending "
        "on text is `success`). No reply record: `usage` left out (not known)",
    ),
    Row(
        "local_output",
        "`user` `<local-command-stdout>`, `<local-command-stderr>`, "
        "`<bash-stdout>`, `<bash-stderr>`",
        "`user` text line, as print mode replays it. A run with no model reply is a local "
        "command's: `num_turns: 0`, zero `usage`",
    ),
    Row(
        "compact_summary",
        "`user` `isCompactSummary`",
        "`user` text line (print mode replays the summary). Between turns it opens the next "
        "run (the `/compact` one), after that run's `system/compact_boundary`",
    ),
    Row(
        "meta_injected",
        "`user` `isMeta` after the model spoke (the max_tokens continuation "
        "note, stop-hook feedback)",
        "`user` text line once the model answers it (print mode shows these as `isSynthetic` "
        "user lines); counts toward `num_turns`",
    ),
    Row(
        "meta_context",
        "`user` `isMeta` before a prompt, or not answered (caveats, system "
        "reminders, skill bodies, command expansions)",
        "dropped on purpose (`user/isMeta`): print mode does not show them",
    ),
    Row(
        "assistant",
        "`assistant`",
        "`assistant` (one block per record, as written, any block type: `server_tool_use`, "
        "`web_search_tool_result`, `redacted_thinking`, text `citations` …); `model`, "
        "`stop_reason`, `usage` in `extension.message`; `requestId`, `uuid`, … in "
        "`extension`. A `<synthetic>` message (no API call) adds no usage",
    ),
    Row(
        "api_error",
        "`assistant` `isApiErrorMessage` (model `<synthetic>`, `error`) as the turn's last word",
        "the result has `is_error: true` and subtype `success`, as print mode prints it",
    ),
    Row(
        "turn_duration",
        "`system/turn_duration`",
        "ends the run: `result` with `duration_ms` = `durationMs` (interactive sessions)",
    ),
    Row(
        "cost_state",
        "`cost-state`",
        "ends the run of a print-mode invocation: `total_cost_usd` = `totalCostUSD`, the "
        "record in `extension.cost_state`. Outside a run: dropped on purpose",
    ),
    Row(
        "unanswered",
        "`cost-state` or `system/turn_duration` with a tool call never answered",
        "`result/error_during_execution` (the CLI stopped mid-turn: never `success`)",
    ),
    Row(
        "max_turns",
        "`attachment` `max_turns_reached`",
        "the run's result is `error_max_turns` (`is_error: true`), `num_turns` = "
        "`turnCount`; counted as dropped",
    ),
    Row(
        "budget",
        "`attachment` `budget_usd` (`--max-budget-usd`)",
        "when the invocation's cost (its `cost-state` less the one before) reached "
        "`total - used` with the turn unfinished: `result/error_max_budget_usd`; counted as "
        "dropped",
    ),
    Row(
        "structured",
        "`attachment` `structured_output` (`--json-schema`)",
        "the result's `result` is `data` as compact JSON, `extension.structured_output` = "
        "`data` (print mode's `structured_output`); counted as dropped",
    ),
    Row(
        "sidechain",
        "`user`/`assistant`/`system` with `isSidechain: true` in a main file "
        "(1.0.x–2.0.x: subagents inline)",
        "lines of the parent's run: `system/task_started` (`task.tool_use_id`, "
        "`task.prompt`, `task.subagent_type: subagent`), then its lines with "
        "`parent_tool_use_id` = the Task tool_use whose `input.prompt` is its prompt; its "
        "API calls count in the run's `model_usage`, not its `usage`. It ends when the "
        "parent gets that tool's result, or its parent's turn ends. No such tool_use: a run "
        "of its own with no id (never invented), written after its parent's run",
    ),
    Row(
        "agent_file",
        "a subagent file: `agent-<id>.jsonl`, or any file whose first "
        "conversation record has `isSidechain: true`",
        "one stream with its session's main file: its prompt is a `system/task_started` "
        "line of the parent's run (`task_id` = the agent id, `task.tool_use_id`, "
        "`task.description`, `task.subagent_type` = the sidecar's `agentType`, else "
        "`subagent`, `task.prompt`), its lines are lines of that run, in time order after "
        "the spawning tool call, with `parent_tool_use_id` (from `agent-<id>.meta.json`, "
        "else found in the parent session file). Converted alone: a run of its own whose "
        "init carries that id and `agent.role`",
    ),
    Row(
        "agent_done",
        "`user` tool_result whose `toolUseResult` is an agent's (`agentId` "
        "or Task totals; not `async_launched`)",
        "`system/task_notification` just before the tool_result line: `task_id` = "
        "`agentId`, `status`, `task.tool_use_id`, `task.summary` = its last text, "
        "`task.usage` = `totalTokens`/`totalToolUseCount`/`totalDurationMs` as "
        "`total_tokens`/`tool_uses`/`duration_ms` (print mode's keys)",
    ),
    Row(
        "task_notification",
        "`user` prompt `<task-notification>` (a background agent finished)",
        "`system/task_notification` (`task_id`, `status`, `task.tool_use_id`, "
        "`task.summary` = `<result>`, `task.usage`, other tags in `task`) in the run it "
        "ends, then the prompt starts the next run",
    ),
    Row(
        "background",
        "a turn that launched background agents (`toolUseResult.status: "
        "async_launched`) and was marked ended (`system/turn_duration`, `cost-state`) while "
        "they ran",
        "the run stays open, its end mark kept, until the last of them notifies "
        "(`<task-notification>`), as print mode prints the result after them: the agents' "
        "lines are lines of that run. The next prompt or the input's end ends it first",
    ),
    Row(
        "fork_agent",
        "a fork subagent's file (`fork-context-ref`, sidecar `isFork`): its "
        "first `assistant` (the parent's spawning message, copied) and the `user` tool result "
        "after it",
        "the copy is dropped on purpose (`inherited/assistant`, "
        "`fork-context-ref`); the tool result is the fork's prompt (its `task_started`)",
    ),
    Row(
        "fork_copy",
        "a fork's copy of its parent's turns (`--fork-session`: records stamped "
        "before the `queue-operation` dequeue that precedes them)",
        "dropped on purpose (`inherited/<type>`): those turns are the parent session's, "
        "converted from its own file",
    ),
    Row(
        "system_plain",
        "`system` with no subtype (1.0.x hook output)",
        "`system/notification`: `body` = `content`, `severity` = `level`",
    ),
    Row(
        "system_other",
        "`system/<other>` (`stop_hook_summary`, `compact_boundary`, "
        "`api_error`, `away_summary`, …)",
        "same subtype, fields in `extension`",
    ),
    Row(
        "system_init",
        "`system/init` (print mode's run start: not a durable record)",
        "`system/unrecognized` (`kind: system/init`), the record whole in `extension.record`: "
        "only the framer writes a run's init",
    ),
    Row(
        "metadata",
        "`attachment` (other types), `file-history-snapshot`, `api-request`, "
        "`api-request-blob`, `api-request-shape`, `queue-operation`, `last-prompt`, "
        "`tools-used`, `atis-latch`, `mode`, `permission-mode`, `summary`, `custom-title`, "
        "`ai-title`, `agent-name`, `pr-link`",
        "dropped on purpose: session metadata, UI state and request snapshots (counted per "
        "type in the result's `extension.dropped`, attachments per `attachment.type`)",
    ),
    Row(
        "progress",
        "`progress` (`hook_progress`, `bash_progress`, `agent_progress`, …)",
        "dropped on purpose: live UI feedback (an `agent_progress` repeats what its "
        "subagent file holds)",
    ),
    Row(
        "unknown", "anything else", "`system/unrecognized`, the record whole in `extension.record`"
    ),
)


# -- where Claude Code keeps its files ----------------------------------------------------


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


SOURCE = Source(
    name="claude-session",
    description="Claude Code durable session files (~/.claude/projects/**/*.jsonl)",
    sniff=sniff,
    open=ClaudeSessionAdapter,
    session_hint=session_hint,
    mapping=MAPPING,
    session_of=session_of,
    ended_by=ended_by,
    files=Files(homes=homes, skips=skips),
)
