"""Claude Code durable session files: ``~/.claude/projects/<project>/<session>.jsonl``.

Also subagent files, ``<session>/subagents/**/agent-<id>.jsonl``, whose
``agent-<id>.meta.json`` sidecar names the spawning tool_use (``toolUseId``); the
older flat ``<project>/agent-<id>.jsonl``; and 1.0.x files that keep subagent
(sidechain) records inline in the main file.

Records are camelCase, one per content block (the blocks of one API message share
``message.id`` and its usage). There is no ``system/init`` and no result.

What each record type becomes is ``MAPPING`` (adapters/_claude_session_mapping.py;
docs/mapping.md is made from it). Where no marker ends a turn (most files before
2.1.x), the next prompt or the end of the file does: the turn is complete when its
last word was the model's and no tool call is left unanswered; otherwise it was cut
off (``interrupted``).

This module reads the records in order: each type to its handler, with the state
the adapter keeps. Its helpers, a job each: ``_claude_session_turns`` (how a turn
ends: its result), ``_claude_session_sidechains`` (inline subagents),
``_claude_session_agents`` (subagent files: the link to their spawner),
``_claude_session_lines`` (the lines records become), ``_claude_session_discovery``
(sniff; where the files are, which make one session).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from streamv1.adapters import _claude as cc
from streamv1.adapters import _claude_session_agents as agents
from streamv1.adapters import _claude_session_discovery as discovery
from streamv1.adapters import _claude_session_lines as lines
from streamv1.adapters import _claude_session_sidechains as sidechains
from streamv1.adapters import _claude_session_turns as turns
from streamv1.adapters._claude_session_discovery import METADATA_TYPES
from streamv1.adapters._claude_session_lines import CONTEXT_KEYS, SYSTEM_KEYS
from streamv1.adapters._claude_session_mapping import MAPPING
from streamv1.translator.model import events as ev
from streamv1.translator.reading import sources as src
from streamv1.translator.reading.sources import STR_OR_NONE  # (bare: per record)
from streamv1.translator.state import persisted
from streamv1.translator.timefmt import normalize_ts

_TURN_DURATION_KEYS = SYSTEM_KEYS | {"durationMs"}
_NAMING_KEYS = ("type", "sessionId")
_LOCAL_OUTPUT = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-stdout>",
    "<bash-stderr>",
)


@persisted
class _Turn:
    """What the adapter knows of an open run, to end it the way its source did
    (the rules that read it: adapters/_claude_session_turns.py)."""

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
        # The type of the model's last block (None once tool results answer it):
        # how the CLI judges a turn it ended (adapters/_claude_session_turns.py).
        self.last_block: str | None = None
        self.structured: Any = None  # --json-schema output, as the CLI recorded it
        self.has_structured = False
        self.budget: tuple[float, float] | None = None  # (total, used) of --max-budget-usd
        self.held: list[ev.Message] = []  # injected messages waiting for the model's reply
        # A cost-state written while the turn was unfinished (the CLI exiting on
        # SIGINT writes it before the interrupt marker): the end it proves, kept for
        # the record that says how the turn ended.
        self.cost_end: tuple[float | None, float | None, ev.JSON] | None = None
        self.command_output: str | None = None  # a local command's stdout, as written
        # Background agents the turn launched that have not notified their end: the
        # CLI's end of the turn waits for them (print mode prints its result after
        # they finish), and so does the run's, its end mark kept meanwhile.
        self.background: set[str] = set()
        self.held_end: ev.JSON | None = None
        # A run written by 1.0.17-1.0.128: the conversation's records so far, the
        # count its print mode's num_turns is made of (turns.old_num_turns); None
        # for any other version.
        self.conversation: int | None = None


@persisted
class _Side:
    """An inline subagent's own run (a sidechain kept in its parent's file, 1.0.x-2.0.x).

    Linked (its spawning tool_use found): its events go out at once, as a nested run.
    Unlinked: held, and emitted as a run of its own after the parent's run ends, so
    it never interleaves with a run of the same key."""

    def __init__(self, parent: str | None) -> None:
        self.parent = parent
        self.turn = _Turn()
        self.events: list[ev.Event] = []  # held while unlinked


@persisted
class ClaudeSessionAdapter:
    #: The layout of this adapter's checkpointed state (translator.state): a new
    #: number whenever its fields change, so an old checkpoint is replayed, not misread.
    STATE_VERSION = 6

    def __init__(self, path: str, session_id: str | None = None) -> None:
        self._path = path
        p = Path(path)
        named_agent = p.name.startswith("agent-")
        self._agent_id: str | None = p.stem[6:] if named_agent else None
        # A subagent file by its name, or (decided at the first conversation record)
        # by its records: an agent file whose name says nothing still holds only
        # sidechain records.
        self._subagent: bool | None = True if named_agent else None
        self._meta = agents.read_meta(p) if named_agent else {}
        self._parent = src.string(self._meta.get("toolUseId"))
        self._parent_looked = self._parent is not None
        # A subagent with no sidecar whose parent does not name it yet (live: the
        # parent writes the link later): its events wait here until it does, or the
        # input ends. Parent files are searched only past what was searched before.
        self._unlinked: list[ev.Event] | None = None
        self._searched: dict[str, int] = {}
        # Whether no tool call spawned this agent file (2.0.x's Warmup files), once
        # decided (agents.unspawned), and how far each parent file was scanned for it.
        self._unspawned: bool | None = None
        self._prompt_scan: dict[str, int] = {}
        self._first_ts: str | None = None  # a subagent file's first record's time
        self._session: str | None = session_id or discovery.session_hint(path)
        self._pending: ev.RunStart | None = None
        self._turn: _Turn | None = None
        self._waiting: list[ev.Event] = []  # lines between turns that open the next run
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
        self._conversation = 0  # main-thread conversation records so far (1.0.x's count)
        # A side call's file (a prompt suggestion's): no run, its calls' tokens the
        # session's; its prompt is its first user record.
        self._side_kind = agents.side_call_kind(p, self._meta) if named_agent else None
        self._side_prompted = False
        # The uuids of this file's records since the last prompt: a prompt whose
        # parentUuid is none of them follows a record written to another file.
        self._since_prompt: set[str] = set()
        self._chain_gap: str | None = None
        # The main thread's agent (``--agent``, an ``agent-setting`` record): on
        # each run's init, as written (print mode's init does not name it).
        self._agent_setting: str | None = None

    # -- the adapter contract -------------------------------------------------

    def feed(self, record: dict[str, Any], where: src.Where) -> Iterable[ev.Event]:
        out: list[ev.Event] = []
        sid = record.get("sessionId")
        if isinstance(sid, str) and (self._session is None or self._turn is None):
            self._session = sid
        if self._side_kind is not None:
            return agents.side_call(self, record)
        try:
            if type(record.get("type")) not in STR_OR_NONE or type(sid) not in STR_OR_NONE:
                src.expect_strings(record, _NAMING_KEYS)  # (raises: inline first, it is hot)
            self._translate(record, where, out)
        except cc.BodyError as exc:
            out.append(cc.body_problem(exc, record, where, self._session))
        if self._unspawned:
            return agents.as_unspawned(self, out)
        if self._subagent:
            agents.mark_actor(self, out)
        if self._unlinked is not None:
            self._unlinked += out
            if agents.look_for_parent(self):
                return agents.release(self)
            return self._drop_held(at_end=False)
        return out

    def finish(self) -> Iterable[ev.Event]:
        out: list[ev.Event] = []
        if self._side_kind is not None:
            return out
        if self._unlinked is not None:
            agents.look_for_parent(self)
            dropped = self._drop_held(at_end=True)
            if self._unspawned:
                return dropped
            out += agents.release(self)
        self._end_open(out)
        out += self._waiting
        self._waiting = []
        if self._unspawned:
            return agents.as_unspawned(self, out)
        if self._subagent:
            agents.mark_actor(self, out)
        return out

    @property
    def holding(self) -> bool:
        """A run held back: a prompt not yet answered (its init waits for the
        model's first record), or a sidecar-less subagent's run waiting for its
        parent to name it. (Notes between turns are not a run: they wait for one.)"""
        return self._unlinked is not None or self._pending is not None

    def settle(self) -> list[ev.Event]:
        """Asked again while it holds its lines, each time its session is framed live
        (the daemon never ends an agent file): are they no run's after all, the
        parent file having grown past them (agents.unspawned)? Then their drops."""
        return self._drop_held(at_end=False) if self._unlinked is not None else []

    def _drop_held(self, at_end: bool) -> list[ev.Event]:
        """The held lines, when no tool call spawned this file (2.0.x's Warmup
        files): no run's; counted as dropped, and so is all the file says after."""
        if self._unlinked is None or not agents.unspawned(self, self._unlinked, at_end):
            return []
        self._unspawned = True
        held, self._unlinked = self._unlinked, None
        if at_end:
            self._end_open(held)
            held += self._waiting
            self._waiting = []
        return agents.as_unspawned(self, held)

    def learn_spawner(self, agent_id: str, tool_use_id: str) -> list[ev.Event]:
        """Told by the session that the agent ``agent_id`` was spawned by
        ``tool_use_id`` (its parent's file says so): if that is this file's agent
        and its lines wait for it, they go out now, linked."""
        if self._unlinked is None or self._parent is not None or agent_id != self._agent_id:
            return []
        self._parent = tool_use_id
        return agents.release(self)

    # -- records ----------------------------------------------------------------

    @property
    def _sid(self) -> str:
        return self._session or "unknown"

    def _translate(self, rec: dict[str, Any], where: src.Where, out: list[ev.Event]) -> None:
        kind = rec.get("type")
        if not self._subagent and rec.get("isSidechain") is not True:
            self._follow_chain(rec)
        raw_ts = rec.get("timestamp")
        ts = normalize_ts(raw_ts)
        if ts is None and raw_ts is not None:
            out.append(src.time_problem("timestamp", raw_ts, where, self._session))
        if self._subagent is None and kind in ("user", "assistant"):
            self._subagent = rec.get("isSidechain") is True
            agent = rec.get("agentId")
            if self._subagent and isinstance(agent, str):
                self._agent_id = agent
        if turns.in_conversation(rec) and not self._subagent:
            self._conversation += 1
        if (
            self._inherited
            and kind in ("user", "assistant", "system")
            and not (kind == "user" and self._is_prompt(rec) and not self._copied(ts))
        ):
            out.append(ev.Dropped(f"inherited/{kind}", self._session))
            return
        if self._fork_context and kind in ("user", "assistant"):
            if kind == "assistant":
                out.append(ev.Dropped("inherited/assistant", self._session))
                return
            self._fork_context = False
            message = cc.message_of(rec, "user")
            self._prompt(rec, message.get("content"), ts, out)  # the fork's directive
            return
        if kind in ("user", "assistant", "system"):
            if kind == "user":
                self._user(rec, ts, out)
            elif kind == "assistant":
                self._assistant(rec, ts, out)
            else:
                self._system(rec, ts, out)
            if self._turn is not None and self._turn.conversation is not None:
                self._turn.conversation = self._conversation
        elif kind == "cost-state":
            self._cost_state(rec, out)
        elif kind == "agent-setting":
            setting = rec.get("agentSetting")
            self._agent_setting = setting if isinstance(setting, str) else self._agent_setting
            out.append(ev.Dropped(kind, self._session))
        elif kind == "fork-context-ref":
            # A fork subagent's file: it shares its parent's context by reference.
            self._fork_context = self._turn is None and bool(self._subagent)
            out.append(ev.Dropped(kind, self._session))
        elif isinstance(kind, str) and kind in METADATA_TYPES:
            if kind == "attachment":
                kind = self._attachment(rec, ts, out)
            elif kind == "progress":
                data = rec.get("data")
                sub = data.get("type") if isinstance(data, dict) else None
                kind = f"progress/{sub}" if isinstance(sub, str) else "progress"
            elif kind == "queue-operation" and rec.get("operation") == "dequeue":
                self._dequeued = ts or self._dequeued
            out.append(ev.Dropped(str(kind), self._session))
        else:
            name = kind if isinstance(kind, str) else "<no type>"
            out.append(ev.Unrecognized(name, self._session, ts, rec, self._nested_parent(rec)))

    def _attachment(self, rec: dict[str, Any], ts: str | None, out: list[ev.Event]) -> str:
        """An attachment is metadata, but some kinds decide how the turn ends."""
        att = rec.get("attachment")
        sub = att.get("type") if isinstance(att, dict) else None
        turn = self._turn
        if sub == "queued_command" and isinstance(att, dict) and not self._subagent:
            self._queued_notification(att.get("prompt"), ts, out)
        if turn is not None and isinstance(att, dict) and self._is_own(rec):
            if sub == "max_turns_reached":
                count = att.get("turnCount")
                limit = ev.whole(count)
                turn.max_turns = limit if limit is not None else -1
            elif sub == "structured_output" and "data" in att:
                turn.structured = att["data"]
                turn.has_structured = True
            elif sub == "budget_usd":
                total, used = att.get("total"), att.get("used")
                if isinstance(total, int | float) and isinstance(used, int | float):
                    turn.budget = (float(total), float(used))
        return f"attachment/{sub}" if isinstance(sub, str) else "attachment"

    def _queued_notification(self, prompt: Any, ts: str | None, out: list[ev.Event]) -> None:
        """A background agent's ``<task-notification>`` that came while the turn was
        busy: the CLI hands it to the model inside the turn (after a tool result),
        not as a prompt of its own; several such are answered by one reply (capture
        ours/x_background_busy). The agent is over: print mode's task_notification,
        in the run it is handed to, and the turn no longer waits for it."""
        text = prompt if isinstance(prompt, str) else None
        if not cc.is_task_notification(text):
            return
        fields = cc.notification_fields(text or "")
        out.append(ev.Note("task_notification", self._sid, ts, fields))
        if self._turn is not None:
            self._turn.background.discard(fields["task"].get("tool_use_id"))

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

    def _user(self, rec: dict[str, Any], ts: str | None, out: list[ev.Event]) -> None:
        message = cc.message_of(rec, "user")
        content = message.get("content")
        if content is None:
            raise cc.BodyError("user record whose message has no content")
        if rec.get("isSidechain") is True and not self._subagent:
            sidechains.user(self, rec, message, content, ts, out)
            return
        turn = self._turn
        if rec.get("isMeta") is True:
            # Injected after the model spoke (the max_tokens note, stop-hook feedback):
            # a line of the turn once the model answers it, as print mode shows it.
            # Before a prompt (caveats, reminders, command expansions): not shown.
            if turn is not None and turn.replied:
                parent = agents.parent(self, rec) if self._subagent else None
                turn.held.append(lines.user(rec, message, content, ts, self._sid, parent))
            else:
                out.append(ev.Dropped("user/isMeta", self._session))
            return
        if rec.get("isCompactSummary") is True:
            parent = agents.parent(self, rec) if self._subagent else None
            line = lines.user(rec, message, content, ts, self._sid, parent)
            if turn is None:
                self._waiting.append(line)  # the summary opens the /compact run
            else:
                self._ensure_started(out, None)
                turn.count.user_records += 1
                out.append(line)
            return
        if cc.has_tool_result(content) or not isinstance(content, str | list):
            if turn is not None:
                sidechains.end_answered(self, content, out)
            self._ensure_started(out, None)
            parent = agents.parent(self, rec) if self._subagent else None
            line = lines.user(rec, message, content, ts, self._sid, parent)
            if turn is not None:
                turns.after_user_record(turn, line)
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
                    out.append(ev.Spawn(spawner, self._sid))
                out.append(
                    ev.Note(
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
            out.append(ev.Note("task_notification", self._sid, ts, fields))
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
                out.append(ev.Note("interrupted", self._sid, ts, {"body": text}))
            return
        if text.lstrip().startswith(_LOCAL_OUTPUT):
            # A local command's output: print mode replays it as a user line.
            if turn is not None:
                turn.expects_reply = False
            self._ensure_started(out, None)
            parent = agents.parent(self, rec) if self._subagent else None
            out.append(lines.user(rec, message, content, ts, self._sid, parent))
            return
        self._prompt(rec, content, ts, out)

    def _prompt(
        self, rec: dict[str, Any], content: Any, ts: str | None, out: list[ev.Event]
    ) -> None:
        self._end_open(out)
        self._since_prompt = {rec["uuid"]} if isinstance(rec.get("uuid"), str) else set()
        self._chain_gap = None
        if self._copied(ts):
            self._inherited = True
            out.append(ev.Dropped("inherited/user", self._session))
            return
        self._inherited = False
        if self._subagent:
            self._pending = agents.run_start(self, rec, content, ts)
        else:
            self._pending = lines.run_start(rec, content, ts, self._sid, None, None)
            if self._agent_setting is not None:
                self._pending.extension["agentSetting"] = self._agent_setting
        self._turn = _Turn()
        if turns.counts_conversation(rec) and not self._subagent:
            self._turn.conversation = self._conversation
        # The run begins when its prompt is written, not when the model first answers
        # (live, a consumer sees the prompt at once): the model is on the init only
        # where the source has said it by then (a subagent's sidecar).
        model = self._meta.get("model") if self._subagent else None
        self._ensure_started(out, model if isinstance(model, str) else None)

    def _follow_chain(self, rec: dict[str, Any]) -> None:
        """A main-thread record chained (``parentUuid``) to a record this file does
        not hold, in an open turn whose last word here was not the model's: the
        chain may have gone on through another file (see :meth:`_end_open`)."""
        parent = rec.get("parentUuid")
        uuid = rec.get("uuid")
        known = not isinstance(parent, str) or parent in self._since_prompt
        if isinstance(uuid, str):
            self._since_prompt.add(uuid)
        turn = self._turn
        if not known and turn is not None and not (turn.last_is_model and not turn.unanswered):
            self._chain_gap = parent

    def _assistant(self, rec: dict[str, Any], ts: str | None, out: list[ev.Event]) -> None:
        message = cc.message_of(rec, "assistant")
        if rec.get("isSidechain") is True and not self._subagent:
            sidechains.assistant(self, rec, message, ts, out)
            return
        turn = self._turn
        if self._pending is not None:
            self._ensure_started(out, src.string(message.get("model")))
        if turn is not None and turn.held:
            turn.count.user_records += len(turn.held)
            out += turn.held
            turn.held = []
        parent = agents.parent(self, rec)
        line = lines.assistant(rec, message, ts, self._sid, parent, self._task_prompts)
        out.append(line)
        if turn is not None:
            turns.after_reply(turn, rec, line)

    def _system(self, rec: dict[str, Any], ts: str | None, out: list[ev.Event]) -> None:
        subtype = rec.get("subtype")
        content = rec.get("content")
        if subtype == "init":
            # Print mode's run start, not a durable record: a line of its own would
            # be a second system/init inside the run. Kept whole, as unknown types are.
            parent = self._nested_parent(rec)
            out.append(ev.Unrecognized("system/init", self._session, ts, rec, parent))
        elif subtype == "turn_duration" and self._is_own(rec):
            self._turn_duration(rec, ts, out)
        elif subtype == "local_command" and isinstance(content, str):
            self._local_command(rec, content, ts, out)
        elif isinstance(rec.get("promptSubmitEnding"), dict) and not self._subagent:
            self._prompt_ended(rec, content, ts, out)
        else:
            self._system_note(rec, subtype, content, ts, out)

    def _turn_duration(self, rec: dict[str, Any], ts: str | None, out: list[ev.Event]) -> None:
        """The CLI's mark that a turn of an interactive session ended."""
        if self._turn is None:
            out.append(ev.Dropped("system/turn_duration", self._session))
            return
        duration = ev.whole(rec.get("durationMs"))
        self._end(out, ts, duration_ms=duration, extension=src.rest(rec, _TURN_DURATION_KEYS))

    def _local_command(
        self, rec: dict[str, Any], content: str, ts: str | None, out: list[ev.Event]
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
            line = lines.command_reply(rec, shown, ts, self._sid)
            out.append(line)
            turns.after_reply(turn, rec, line)
            turn.command_output = shown
        else:
            if turn is not None:
                turn.expects_reply = False
                self._ensure_started(out, None)
            out.append(ev.Note("local_command_output", self._sid, ts, {"body": content}))

    def _prompt_ended(
        self, rec: dict[str, Any], content: Any, ts: str | None, out: list[ev.Event]
    ) -> None:
        """The CLI's record that a prompt went no further (``promptSubmitEnding``: a
        UserPromptSubmit hook blocked it; the prompt itself is written nowhere): a
        run of its own, as print mode prints it (init, this line, a ``success``
        result with ``num_turns: 0``, the record's text as ``result``, no usage).
        Its end is the next record that ends a run (the invocation's cost-state,
        the next prompt), as a local command's is. Capture ours/x_hook_block_prompt."""
        self._end_open(out)
        start = lines.run_start(rec, None, ts, self._sid, None, None)
        del start.extension["prompt"]  # not written: only the hook's text quotes it
        self._pending = start
        turn = self._turn = _Turn()
        turn.expects_reply = False
        turn.command_output = content if isinstance(content, str) else None
        self._ensure_started(out, None)
        out.append(lines.system_note(rec, rec.get("subtype"), content, ts, self._sid, None))

    def _system_note(
        self, rec: dict[str, Any], subtype: Any, content: Any, ts: str | None, out: list[ev.Event]
    ) -> None:
        """Any other system record: its line, in the inline sidechain it is of, if any."""
        inline = rec.get("isSidechain") is True and not self._subagent
        side = sidechains.side_of(self, rec) if inline else None
        parent = side.parent if side is not None else self._nested_parent(rec)
        note = lines.system_note(rec, subtype, content, ts, self._sid, parent)
        if side is not None:
            sidechains.emit(side, note, out)
        else:
            out.append(note)

    def _cost_state(self, rec: dict[str, Any], out: list[ev.Event]) -> None:
        raw = src.number(rec.get("totalCostUSD"))
        cost = float(raw) if raw is not None else None
        spent: float | None = None
        if cost is not None:
            spent, self._cost_total = cost - self._cost_total, cost
        if self._turn is None:
            out.append(ev.Dropped("cost-state", self._session))
            return
        ext: ev.JSON = {"cost_state": src.rest(rec, CONTEXT_KEYS)}
        if turns.may_be_interrupted(self._turn):
            self._turn.cost_end = (cost, spent, ext)
            return
        self._end(out, None, total_cost_usd=cost, spent=spent, extension=ext)

    # -- runs ---------------------------------------------------------------------

    def _ensure_started(self, out: list[ev.Event], model: str | None) -> None:
        if self._pending is not None:
            if model and not self._pending.model:
                self._pending.model = model
            out.append(self._pending)
            self._pending = None
            out += self._waiting
            self._waiting = []

    def _end_open(self, out: list[ev.Event]) -> None:
        """A prompt or the input's end: the open run ends, inferred (between runs:
        the inline sidechains still open, and those held for after it)."""
        turn = self._turn
        gap = self._chain_gap
        if turn is not None and gap is not None and agents.in_side_call(Path(self._path), gap):
            # The turn's last records were written to a side call's file of the
            # session (2.1.29 wrote the reply a prompt suggestion forked from into
            # the suggestion's file; capture ours/x_prompt_suggestion_tui), whose
            # lines the session frames in this run: it ended on the model's word,
            # not cut off. Only where no end mark came (this end is inferred).
            turn.replied = turn.last_is_model = turn.api_call = True
            turn.unanswered.clear()
            turn.unfinished = False
            turn.last_stop = None
        if turn is not None:
            self._end(out, None, inferred=True)
        else:
            sidechains.end_all(self, out)
            sidechains.release_held(self, out)

    def _end(
        self,
        out: list[ev.Event],
        ts: str | None,
        inferred: bool = False,
        duration_ms: int | None = None,
        total_cost_usd: float | None = None,
        extension: ev.JSON | None = None,
        spent: float | None = None,
    ) -> None:
        """The open run ends (unless its mark waits for background agents): its
        inline sidechains first, then its result."""
        turn = self._turn
        if turn is None:
            raise ev.ImpossibleState("turn is not set")
        end = turns.end(
            turn, self._sid, ts, inferred, duration_ms, total_cost_usd, extension, spent
        )
        if end is None:
            return
        self._ensure_started(out, None)
        sidechains.end_all(self, out)
        for _ in turn.held:
            out.append(ev.Dropped("user/isMeta", self._session))
        out.append(end)
        self._turn = None
        sidechains.release_held(self, out)

    # -- nested actors ----------------------------------------------------------------

    def _is_own(self, rec: dict[str, Any]) -> bool:
        """Is the record the run's own actor's (not an inline subagent's)?"""
        return bool(self._subagent) or rec.get("isSidechain") is not True

    def _nested_parent(self, rec: dict[str, Any]) -> str | None:
        """parent_tool_use_id for a record: set exactly when its actor is nested."""
        if self._subagent:
            return agents.parent(self, rec)
        if rec.get("isSidechain") is not True:
            return None
        side = sidechains.side_of(self, rec)
        return side.parent if side is not None else None


SOURCE = src.Source(
    name="claude-session",
    description="Claude Code durable session files (~/.claude/projects/**/*.jsonl)",
    sniff=discovery.sniff,
    open=ClaudeSessionAdapter,
    session_hint=discovery.session_hint,
    mapping=MAPPING,
    session_of=discovery.session_of,
    ended_by=discovery.ended_by,
    files=src.Files(homes=discovery.homes, skips=discovery.skips),
)
