"""Codex CLI: the rollout ``~/.codex/sessions/YYYY/MM/DD/rollout-<start>-<thread>.jsonl``
and the live ``codex exec --json`` stream (0.171.0; older rollouts too).

One source, ``codex``, reads both views: a file never mixes them, each record says
which it is (a rollout record is ``{timestamp, [ordinal], type, payload}``; an exec
event is ``{type: thread.started | turn.* | item.* | error, ...}``), and both make
the same lines, so one adapter keeps one set of rules (usage, tool pairing, turn
ends) and one mapping table (docs/mapping.md) for what is one agent.

**Rollout** (the source of truth). ``session_meta`` (once) and the first
``turn_context`` make the init (cwd, agent ``{name: codex, provider: openai,
model}``, tools from ``additional_tools``); ``event_msg/task_started`` begins a run,
``event_msg/task_complete`` ends it (``error`` set: ``error_during_execution``). The
prompt is ``item_completed/UserMessage`` (the ``response_item`` user messages are the
model-facing history, with the environment context: dropped). The items of one model
response (``reasoning``, assistant ``message``, ``function_call``,
``custom_tool_call``, ``local_shell_call``) are one assistant line, sent when the
response's ``token_usage_record`` (its usage, once per API call) comes, or when
anything else does. Outputs (``*_call_output``) are tool_result lines by
``call_id``. Code mode: the ``CommandExecution`` / ``FileChange`` / ``McpToolCall``
items completed while an ``exec`` call is open are that script's nested calls:
tool_use/tool_result pairs whose ``parent_tool_use_id`` is the exec call, ids the
item ids. An item whose id is a call's id is that call's own execution (direct
tools): its fields are the tool_result's ``tool_use_result``. A file that ends
inside a run: ``interrupted``.

Older rollouts: no ``ordinal``, no ``token_usage_record`` (usage from
``event_msg/token_count.info.last_token_usage``, once per change of its running
total), prompts as ``event_msg/user_message``, no ``task_started`` (a prompt after an
answer starts the next run; the file's end ends the last, ``success`` when the model
had the last word and every call was answered); and the bare format (a header
``{id, timestamp, instructions, git}``, ``{record_type: state}``, then bare items).

**Subagents.** A child thread has its own rollout (``session_meta.parent_thread_id``,
``thread_source: subagent``, ``session_id`` the root thread). Its lines are lines of
the parent's run: marked with ``parent_tool_use_id`` = the parent's ``spawn_agent``
call, which the parent's ``item_completed/SubAgentActivity{id: call_id,
agent_thread_id}`` names; the adapter reads the parent rollout for it (the session
merge also tells it, :meth:`CodexAdapter.learn_spawner`), holding the child's lines
meanwhile. ``session_of`` gives a parent and its children one key. A review's child
thread has no spawning call: the parent's ``EnteredReviewMode`` item stands for it
(a ``review`` tool_use), found by the child's items the parent mirrors (dropped
there), ``ExitedReviewMode`` its result. A fork is a thread (a session) of its own.

Server-side calls (``web_search_call``) have no output item: their result follows
the response's line. A ``tool_search_call`` pairs with its ``tool_search_output``;
an output with no ``call_id`` is context (a goal's objective), no answer.

**exec --json** (a lossy live view). ``thread.started`` names the session;
``turn.started`` begins a run, ``turn.completed`` / ``turn.failed`` ends it. Items:
``agent_message`` text, ``reasoning`` thinking, ``command_execution`` /
``file_change`` / ``mcp_tool_call`` / ``collab_tool_call`` / ``web_search``
tool_use (at ``item.started``) and tool_result (at ``item.completed``).
``turn.completed.usage`` is the *thread's* running total: a run's usage is the
difference to the previous ``turn.completed`` of the same thread in the stream; the
first one in a stream is taken whole, which is the run's own for a new thread and
includes the earlier runs after ``codex exec resume`` (this view cannot tell: the
rollout can). The raw total is kept in the result's ``extension.thread_usage``.

Usage rule (both views): ``input_tokens`` = input − cached, ``cache_read`` =
``cached_input_tokens``, ``cache_creation`` = ``cache_write_input_tokens``,
``output_tokens`` = output (reasoning included).

What each record type becomes is ``MAPPING`` (in ``_codex_mapping``; docs/mapping.md
is made from it). An unknown type is kept whole (system/unrecognized); a known one
whose body does not fit is a system/error naming file:line.

The parts, a module each: this one sniffs, holds the adapter's state and frames its
runs (the init first, one result last, a subagent's lines marked and held);
``_codex_rollout`` reads the rollout's envelope, metadata and events,
``_codex_response_items`` its response items, ``_codex_ui_items`` its
``item_completed`` items, ``_codex_exec`` the exec --json events; ``_codex_usage``
has the usage rule, ``_codex_files`` where the files are and which make one
session, ``_codex_fields`` the small readers the others share.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from streamv1.adapters._codex_exec import exec_event
from streamv1.adapters._codex_files import find_spawner, homes, session_hint, session_of, skips
from streamv1.adapters._codex_mapping import MAPPING
from streamv1.adapters._codex_response_items import BARE, response_item
from streamv1.adapters._codex_rollout import META_DROPPED, rollout_record, session_meta
from streamv1.translator.model import events as ev
from streamv1.translator.reading import sources as src
from streamv1.translator.state import persisted
from streamv1.translator.timefmt import normalize_ts

AGENT_NAME = "codex"
PROVIDER = "openai"

#: Rollout envelope types.
_ROLLOUT_SURE = frozenset(
    {
        "session_meta",
        "turn_context",
        "token_usage_record",
        "world_state",
        "inter_agent_communication_metadata",
    }
)
_ROLLOUT_TYPES = _ROLLOUT_SURE | {"response_item", "event_msg", "compacted"}
#: exec --json event types.
_EXEC_TYPES = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
    }
)
#: How many events a subagent's file holds while its spawner is not found yet.
HOLD_LIMIT = 5000


def sniff(record: dict[str, Any]) -> int:
    kind = record.get("type")
    if isinstance(kind, str):
        if "payload" in record and kind in _ROLLOUT_TYPES:
            if kind in _ROLLOUT_SURE:
                return src.OWN_TYPE
            return src.DECISIVE if isinstance(record.get("payload"), dict) else src.GUESS
        if kind in _EXEC_TYPES:
            if kind == "thread.started" and "thread_id" in record:
                return src.OWN_TYPE
            if kind.startswith("item.") and isinstance(record.get("item"), dict):
                return src.OWN_TYPE
            return src.DECISIVE
        return src.NOT_MINE
    if record.get("record_type") == "state" and len(record) == 1:
        return src.OWN_TYPE  # the bare format's state marker
    if "instructions" in record and "id" in record and "timestamp" in record:
        return src.DECISIVE  # the bare format's header
    return src.NOT_MINE


# -- the adapter --------------------------------------------------------------------------


@persisted
class _Run:
    """What the adapter knows of an open run."""

    def __init__(self, turn_id: str | None, started: bool) -> None:
        self.turn_id = turn_id
        self.started = started  # a task_started / turn.started began it
        self.usage = ev.Usage()
        self.usage_seen = False
        self.by_model: dict[str, ev.Usage] = {}
        self.unattached = False  # usage that no assistant line carries (older token_count)
        self.calls = 0  # model responses (usage records)
        self.replied = False  # the model had the last word
        self.unanswered: set[str] = set()
        self.answer: str | None = None  # the last assistant text
        self.continuation = False  # the CLI began it after a turn of its own (a goal's)


@persisted
class _Response:
    """The items of one model response, waiting for its usage record."""

    def __init__(self, ts: str | None) -> None:
        self.ts = ts
        self.blocks: list[ev.JSON] = []
        self.extension: ev.JSON = {}
        # Server-side calls of the response (web search): their results, sent after
        # its assistant line (no output item answers them).
        self.served: list[ev.JSON] = []


@persisted
class CodexAdapter:
    """One Codex file's translation: its state (checkpointed whole), its runs'
    framing, the open model response. The ``_codex_*`` modules read the records,
    given the adapter: the state stays one class (a checkpoint names it), each
    record family's reading is a module of its own."""

    #: The layout of this adapter's checkpointed state (translator.state).
    STATE_VERSION = 3

    def __init__(self, path: str, session_id: str | None = None) -> None:
        self._path = path
        self._given = session_id
        self._session: str | None = session_id or session_hint(path)
        self._thread: str | None = None
        self._model: str | None = None
        self._cwd: str | None = None
        self._tools: list[str] | None = None
        self._meta: ev.JSON = {}
        self._settings: ev.JSON = {}
        self._run: _Run | None = None
        self._start: ev.RunStart | None = None  # the run's init, sent with its first line
        self._response: _Response | None = None
        self._prompt: ev.Message | None = None  # a history user message that may be the prompt
        self._event_prompts = False  # prompts come as UserMessage / user_message events
        self._records_usage = False  # token_usage_record seen: token_count repeats it
        self._last_total: ev.JSON | None = None  # older token_count's running total
        self._calls: set[str] = set()  # top-level call ids
        self._call_names: dict[str, str] = {}  # call id → its tool's name, until answered
        self._exec_open: list[str] = []  # code-mode exec calls not answered yet
        self._executions: dict[str, ev.JSON] = {}  # call id → its execution item
        self._spawned: dict[str, str] = {}  # child thread → spawning call id
        self._spawn_pending: set[str] = set()  # spawning calls of the unsent response
        self._review: str | None = None  # the open review's call (its EnteredReviewMode id)
        self._child_turns: set[str] = set()  # turns of child threads the file mirrors
        self._searches: list[str] = []  # tool_search calls not answered yet, in order
        self._ui_items = False  # item_completed seen: executions have their items
        self._per_call_usage = False  # records carry `ordinal`: every call has a usage record
        # A subagent's file: its actor, its spawner, its lines held until that is known.
        self._child = False
        self._actor: str | None = None
        self._parent_call: str | None = None
        self._parent_thread: str | None = None
        self._parent_file: str | None = None
        self._searched = 0
        self._unlinked: list[ev.Event] | None = None
        # exec --json
        self._exec_total: ev.JSON | None = None
        self._exec_thread: str | None = None
        self._exec_started: set[str] = set()
        self._raw_ts: Any = None
        self._ts: str | None = None

    @property
    def _sid(self) -> str:
        return self._session or "unknown"

    # -- the adapter contract -----------------------------------------------------------

    def feed(self, record: dict[str, Any], where: src.Where) -> Iterable[ev.Event]:
        out: list[ev.Event] = []
        kind = record.get("type")
        ts: str | None = None
        try:
            if "payload" in record and isinstance(kind, str):
                raw_ts = record.get("timestamp")
                if "ordinal" in record:
                    self._per_call_usage = True
                if raw_ts is not None and raw_ts == self._raw_ts:
                    ts = self._ts  # (records come many to a millisecond)
                else:
                    ts = normalize_ts(raw_ts)
                    self._raw_ts, self._ts = raw_ts, ts
                if ts is None and raw_ts is not None:
                    out.append(src.time_problem("timestamp", raw_ts, where, self._session))
                rollout_record(self, kind, record, ts, out)
            elif isinstance(kind, str) and (kind in _EXEC_TYPES or kind == "error"):
                exec_event(self, kind, record, out)
            elif kind is None and record.get("record_type") == "state":
                out.append(ev.Dropped("record_type/state", self._session))
            elif kind is None and "instructions" in record and "id" in record:
                session_meta(self, record, out)  # the bare format's header
            elif isinstance(kind, str) and kind in BARE:
                raw_ts = record.get("timestamp")
                ts = normalize_ts(raw_ts)
                response_item(self, kind, record, ts, out)
            else:
                if kind is not None and not isinstance(kind, str):
                    raise src.BodyError(f"type is {type(kind).__name__}, not a string")
                self._unknown(out, ev.Unrecognized(kind or "<no type>", self._session, ts, record))
        except src.BodyError as exc:
            what = kind if isinstance(kind, str) else "record"
            self._line(out, src.body_problem(f"{what}: {exc}", record, where, self._session, ts))
        return self._mark(out)

    def finish(self) -> Iterable[ev.Event]:
        out: list[ev.Event] = []
        self._send_prompt(out)
        self._flush(out)
        if self._run is not None:
            self._end_inferred(out, None)
        if self._start is not None:
            self._start = None  # a run that made no line: nothing to frame
        out = self._mark(out)
        if self._unlinked is not None:
            self._look_for_spawner()
            out = self._release() + out
        return out

    @property
    def holding(self) -> bool:
        """A subagent's lines held while its spawning call is not known."""
        return self._unlinked is not None

    def learn_spawner(self, task_id: str, tool_use_id: str) -> list[ev.Event]:
        """Told by the session that the thread ``task_id`` was spawned by
        ``tool_use_id`` (the parent's SubAgentActivity): if that is this file's
        thread and its lines wait for it, they go out now, linked."""
        if self._unlinked is None or task_id != self._thread:
            return []
        self._parent_call = tool_use_id
        return self._release()

    # -- subagent marking ---------------------------------------------------------------

    def _mark(self, out: list[ev.Event]) -> list[ev.Event]:
        if not self._child:
            return out
        for event in out:
            if isinstance(event, ev.RunStart | ev.RunEnd | ev.Message):
                if event.parent_tool_use_id is None:
                    event.parent_tool_use_id = self._parent_call
                event.actor = self._actor
            elif isinstance(event, ev.Note | ev.Unrecognized) and event.parent_tool_use_id is None:
                event.parent_tool_use_id = self._parent_call
        if self._unlinked is None:
            return out
        self._unlinked += out
        if self._look_for_spawner() or len(self._unlinked) >= HOLD_LIMIT:
            return self._release()
        return []

    def _look_for_spawner(self) -> bool:
        if self._parent_call is None and self._parent_file and self._thread:
            self._parent_call, self._searched = find_spawner(
                self._parent_file, self._thread, self._searched
            )
        return self._parent_call is not None

    def _release(self) -> list[ev.Event]:
        held, self._unlinked = self._unlinked or [], None
        return ev.linked(held, self._parent_call)

    # -- runs ---------------------------------------------------------------------------

    def _line(self, out: list[ev.Event], event: ev.Event) -> None:
        """An event that makes a line: the run's init goes first."""
        if self._start is not None:
            start, self._start = self._start, None
            start.session_id = self._sid
            start.model = start.model or self._model
            start.cwd = start.cwd or self._cwd
            start.tools = start.tools or self._tools
            if self._settings:
                start.extension.setdefault("turn_context", dict(self._settings))
            out.append(start)
        out.append(event)

    def _tool_result(
        self,
        out: list[ev.Event],
        ts: str | None,
        tool_use_id: str,
        content: Any,
        is_error: bool | None,
        *,
        detail: Any,
        has_detail: bool,
        parent: str | None = None,
    ) -> None:
        """A user line of one tool_result (``is_error`` where it is known), the tool's
        own detail in ``tool_use_result``: a call's output, a nested execution's
        result, an exec tool item's."""
        block: ev.JSON = {"type": "tool_result", "tool_use_id": tool_use_id, "content": content}
        if is_error is not None:
            block["is_error"] = is_error
        self._line(
            out,
            ev.Message(
                "user",
                self._sid,
                ts,
                [block],
                parent_tool_use_id=parent,
                tool_use_result=detail,
                has_tool_use_result=has_detail,
            ),
        )

    def _begin(
        self, ts: str | None, turn_id: str | None, started: bool, out: list[ev.Event]
    ) -> _Run:
        if self._run is not None:
            self._end_inferred(out, ts, cut=True)
        self._run = _Run(turn_id, started)
        ext: ev.JSON = {
            k: v
            for k, v in self._meta.items()
            if k not in ("id", "session_id", "cwd") and k not in META_DROPPED
        }
        if self._thread and self._thread != self._session:
            ext["thread_id"] = self._thread
        self._start = ev.RunStart(
            self._sid,
            ts,
            AGENT_NAME,
            PROVIDER,
            model=self._model,
            cwd=self._cwd,
            tools=self._tools,
            extension=ext,
        )
        if self._child:
            self._start.agent_role = "subagent"
            self._start.task = {"task_id": self._thread} if self._thread else {}
            path = self._meta.get("agent_path")
            if isinstance(path, str):
                self._start.task["description"] = path
        return self._run

    def _ensure_run(self, ts: str | None, out: list[ev.Event]) -> _Run:
        return self._run if self._run is not None else self._begin(ts, None, False, out)

    def _end(self, out: list[ev.Event], end: ev.RunEnd) -> None:
        run = self._run
        if run is None:
            return
        if end.usage is None and run.usage_seen:
            end.usage = run.usage
        if end.model_usage is None and run.unattached and run.by_model:
            end.model_usage = dict(run.by_model)
        if end.num_turns is None and (run.calls or self._records_usage):
            end.num_turns = run.calls  # model calls: one usage record each
        if self._start is not None:
            self._line(out, end)
        else:
            out.append(end)
        self._run = None
        self._exec_open.clear()

    def _end_inferred(self, out: list[ev.Event], ts: str | None, cut: bool = False) -> None:
        """A run with no end record: ``success`` in an older file where the model had
        the last word and every call was answered; otherwise cut off."""
        run = self._run
        if run is None:
            raise ev.ImpossibleState("run is not set")
        self._flush(out)
        done = not cut and not run.started and run.replied and not run.unanswered
        self._end(
            out,
            ev.RunEnd(
                self._sid,
                ts,
                subtype="success" if done else "interrupted",
                is_error=not done,
                result=run.answer if done else None,
            ),
        )

    def _unknown(self, out: list[ev.Event], event: ev.Unrecognized) -> None:
        """A record kept whole, in its place (after the response items before it)."""
        self._flush(out)
        self._line(out, event)

    # -- the open response and the prompt -----------------------------------------------

    def _response_part(self, ts: str | None, out: list[ev.Event]) -> _Response:
        self._send_prompt(out)
        run = self._ensure_run(ts, out)
        if self._response is None:
            self._response = _Response(ts)
        run.replied = True
        return self._response

    def _flush(
        self, out: list[ev.Event], usage: ev.Usage | None = None, message_id: str | None = None
    ) -> None:
        """The response's items as one assistant line (with its usage, once)."""
        self._send_prompt(out)
        response, self._response = self._response, None
        if response is None or not response.blocks:
            return
        self._line(
            out,
            ev.Message(
                "assistant",
                self._sid,
                response.ts,
                response.blocks,
                message_id=message_id,
                model=self._model if usage else None,
                usage=usage,
                extension=response.extension,
            ),
        )
        for block in response.blocks:
            if block.get("id") in self._spawn_pending:
                self._spawn_pending.discard(block["id"])
                out.append(ev.Spawn(block["id"], self._session))  # after the call it names
        for served in response.served:
            detail = served["detail"]
            self._tool_result(
                out,
                response.ts,
                served["id"],
                "",
                served["is_error"],
                detail=detail,
                has_detail=bool(detail),
            )

    def _usage(
        self, usage: ev.Usage, ts: str | None, out: list[ev.Event], message_id: str | None
    ) -> None:
        run = self._ensure_run(ts, out)
        run.usage.add(usage)
        run.usage_seen = True
        run.calls += 1
        if self._model:
            run.by_model.setdefault(self._model, ev.Usage()).add(usage)
        if self._response is not None and self._response.blocks:
            self._flush(out, usage, message_id)
        else:
            run.unattached = True

    def _send_prompt(self, out: list[ev.Event]) -> None:
        """A history user message that no prompt event followed: it was the prompt."""
        prompt, self._prompt = self._prompt, None
        if prompt is not None:
            self._user_prompt(prompt, out)

    def _user_prompt(self, prompt: ev.Message, out: list[ev.Event]) -> None:
        self._flush(out)
        run = self._run
        if run is not None and not run.started and (run.replied or run.calls):
            self._end_inferred(out, prompt.ts)
        run = self._ensure_run(prompt.ts, out)
        run.replied = False
        prompt.session_id = self._sid
        self._line(out, prompt)


SOURCE = src.Source(
    name="codex",
    description="Codex CLI rollouts (~/.codex/sessions/**/rollout-*.jsonl) and "
    "`codex exec --json` streams",
    sniff=sniff,
    open=CodexAdapter,
    session_hint=session_hint,
    mapping=MAPPING,
    session_of=session_of,
    files=src.Files(homes=homes, skips=skips),
)
