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
meanwhile. ``session_of`` gives a parent and its children one key.

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

What each record type becomes is ``MAPPING`` below (docs/mapping.md is made from it).
An unknown type is kept whole (system/unrecognized); a known one whose body does not
fit is a system/error naming file:line.
"""

from __future__ import annotations

import glob
import os
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
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
    DECISIVE,
    GUESS,
    NOT_MINE,
    OWN_TYPE,
    BodyError,
    Files,
    Source,
    Where,
    body_problem,
    count_field,
    open_regular,
    str_field,
    time_problem,
)
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
#: Items of a model response: one assistant line.
_CALLS = frozenset({"function_call", "custom_tool_call", "local_shell_call"})
_OUTPUTS = frozenset({"function_call_output", "custom_tool_call_output", "local_shell_call_output"})
#: UI items that are the execution of a tool (nested in code mode, a call's own otherwise).
_EXECUTIONS = {
    "CommandExecution": "command_execution",
    "FileChange": "file_change",
    "McpToolCall": "mcp_tool_call",
}
#: A nested execution item's fields its tool_use / tool_result lines carry already.
_SAID = frozenset({"id", "type", "command", "cwd", "changes", "aggregated_output", "result"})
#: UI items that repeat a response item (dropped on purpose).
_REPEATS = frozenset({"AgentMessage", "Reasoning"})
#: exec items that are tool calls.
_EXEC_TOOLS = frozenset(
    {"command_execution", "file_change", "mcp_tool_call", "collab_tool_call", "web_search"}
)
#: exec tool item fields that are the call's result, not its input.
_EXEC_RESULT_KEYS = ("id", "type", "status", "aggregated_output", "exit_code", "result", "error")
#: Metadata records, consumed for the init or repeated elsewhere: dropped, counted.
_METADATA = frozenset({"world_state", "inter_agent_communication_metadata", "compacted"})
_METADATA_EVENTS = frozenset(
    {"thread_settings_applied", "agent_message", "agent_reasoning", "token_count"}
)
#: The start of a user history message that is context, never a prompt.
_CONTEXT_PREFIXES = (
    "<environment_context>",
    "<user_instructions>",
    "# AGENTS.md",
    "<INSTRUCTIONS>",
    "<permissions instructions>",
    "<skill>",
)
#: session_meta keys not carried (the system prompt's full text: kilobytes per run).
_META_DROPPED = frozenset({"base_instructions", "instructions"})
_UUID_TAIL = re.compile(r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$")
#: How many events a subagent's file holds while its spawner is not found yet.
HOLD_LIMIT = 5000
_HEAD = 1 << 20


def sniff(record: dict[str, Any]) -> int:
    kind = record.get("type")
    if isinstance(kind, str):
        if "payload" in record and kind in _ROLLOUT_TYPES:
            if kind in _ROLLOUT_SURE:
                return OWN_TYPE
            return DECISIVE if isinstance(record.get("payload"), dict) else GUESS
        if kind in _EXEC_TYPES:
            if kind == "thread.started" and "thread_id" in record:
                return OWN_TYPE
            if kind.startswith("item.") and isinstance(record.get("item"), dict):
                return OWN_TYPE
            return DECISIVE
        return NOT_MINE
    if record.get("record_type") == "state" and len(record) == 1:
        return OWN_TYPE  # the bare format's state marker
    if "instructions" in record and "id" in record and "timestamp" in record:
        return DECISIVE  # the bare format's header
    return NOT_MINE


# -- which files make one session -------------------------------------------------------


def _first_line(path: str) -> bytes:
    try:
        with open_regular(path) as fh:
            return fh.readline(_HEAD)
    except OSError:
        return b""


def _first_record(path: str, line: bytes | None = None) -> dict[str, Any] | None:
    line = _first_line(path) if line is None else line
    try:
        record = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


def _meta_of(record: dict[str, Any] | None) -> dict[str, Any]:
    if record is None or record.get("type") != "session_meta":
        return {}
    payload = record.get("payload")
    return payload if isinstance(payload, dict) else {}


def sessions_root(path: str) -> str:
    """The folder a rollout's session tree starts at: above ``YYYY/MM/DD`` when the
    file is in one, else its own folder."""
    folder = os.path.dirname(path)
    parts = folder.split(os.sep)
    if (
        len(parts) > 3
        and [len(p) for p in parts[-3:]] == [4, 2, 2]
        and all(p.isdigit() for p in parts[-3:])
    ):
        return os.sep.join(parts[:-3])
    return folder


def find_rollout(root: str, thread: str) -> str | None:
    """The rollout of ``thread`` in the session tree at ``root`` (any date folder)."""
    for pattern in ("*/*/*/rollout-*-%s.jsonl", "rollout-*-%s.jsonl"):
        found = sorted(glob.glob(os.path.join(glob.escape(root) if root else "", pattern % thread)))
        if found:
            return found[0]
    return None


def thread_of(path: str) -> str | None:
    name = os.path.basename(path)
    if not (name.startswith("rollout-") and name.endswith(".jsonl")):
        return None
    match = _UUID_TAIL.search(name[: -len(".jsonl")])
    return match.group(1) if match else None


def session_of(path: str) -> str | None:
    """A rollout and its subagents' rollouts share a key: the root thread's rollout
    path without ``.jsonl`` (its sessions folder included, so a copy elsewhere is
    another session). A child whose root rollout is not there: its sessions folder
    and the root thread id (a key no file has: the child stands as the first)."""
    thread = thread_of(path)
    if thread is None:
        return None
    line = _first_line(path)
    if not line.endswith(b"\n") and len(line) < _HEAD:
        return None  # its first record not whole yet (a live file): not known yet
    if b'"parent_thread_id"' not in line and b'"subagent"' not in line:
        return os.path.splitext(path)[0]  # a root thread's rollout (no parse needed)
    meta = _meta_of(_first_record(path, line))
    root_id = meta.get("session_id")
    if not isinstance(root_id, str) or root_id == thread or not _UUID_TAIL.fullmatch(root_id):
        return os.path.splitext(path)[0]
    root = sessions_root(path)
    main = find_rollout(root, root_id)
    if main is not None:
        return os.path.splitext(main)[0]
    return os.path.join(root, root_id)


def session_hint(path: str) -> str | None:
    return thread_of(path)


def _find_spawner(parent_file: str, child: str, offset: int) -> tuple[str | None, int]:
    """The call that spawned ``child``, from the parent rollout's SubAgentActivity
    items past ``offset`` (complete lines only), and where the search stopped."""
    needle = child.encode()
    try:
        with open_regular(parent_file) as fh:
            fh.seek(offset)
            for raw in fh:
                if not raw.endswith(b"\n"):
                    break
                offset += len(raw)
                if needle not in raw or b"SubAgentActivity" not in raw:
                    continue
                try:
                    rec = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                item = _dig(rec, "payload", "item")
                if (
                    isinstance(item, dict)
                    and item.get("type") == "SubAgentActivity"
                    and item.get("agent_thread_id") == child
                    and item.get("kind") == "started"
                    and isinstance(item.get("id"), str)
                ):
                    return item["id"], offset
    except OSError:
        pass
    return None, offset


def _dig(value: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


# -- small readers ------------------------------------------------------------------------


def _obj(obj: dict[str, Any], key: str, what: str, required: bool = False) -> dict[str, Any]:
    value = obj.get(key)
    if value is None:
        if required:
            raise BodyError(f"{what}: no {key}")
        return {}
    if not isinstance(value, dict):
        raise BodyError(f"{what}.{key} is {type(value).__name__}, not an object")
    return value


def _count(raw: dict[str, Any], key: str, what: str) -> int:
    """A token count: 0 where absent."""
    return count_field(raw, key, what) or 0


def usage_of(raw: Any, what: str) -> Usage:
    """Codex usage (input includes cached; output includes reasoning) in stream_v1's
    keys: input_tokens = input − cached, cache_read = cached, cache_creation =
    cache_write, output_tokens = output."""
    if not isinstance(raw, dict):
        raise BodyError(f"{what} is {type(raw).__name__}, not an object")
    total = _count(raw, "input_tokens", what)
    cached = _count(raw, "cached_input_tokens", what)
    return Usage(
        input_tokens=max(0, total - cached),
        output_tokens=_count(raw, "output_tokens", what),
        cache_read=cached,
        cache_creation=_count(raw, "cache_write_input_tokens", what),
    )


def _texts(content: Any, what: str) -> list[str]:
    """The text parts of a content list (``input_text``, ``output_text``, ``text``,
    ``Text``), or a string as one part."""
    if isinstance(content, str):
        return [content]
    if content is None:
        return []
    if not isinstance(content, list):
        raise BodyError(f"{what} is {type(content).__name__}, not a list")
    out = []
    for part in content:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
    return out


def _is_context(text: str) -> bool:
    return text.lstrip().startswith(_CONTEXT_PREFIXES)


def _arguments(raw: Any) -> Any:
    """A function call's input: its JSON ``arguments`` parsed where they are an
    object, else kept as given."""
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            parsed = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"arguments": raw}
        return parsed if isinstance(parsed, dict) else {"arguments": raw}
    return {} if raw is None else {"arguments": raw}


def _exit_error(output: str) -> bool | None:
    """is_error an output's own text proves: code mode's ``Script failed``, an older
    shell output's JSON ``metadata.exit_code``, ``Exit code: N`` / ``Process exited
    with code N``; None where it says nothing."""
    if output.startswith("Script failed"):
        return True
    if output.startswith("Script completed"):
        return False
    if output.startswith("{"):
        try:
            parsed = orjson.loads(output)
        except orjson.JSONDecodeError:
            parsed = None
        code = _dig(parsed, "metadata", "exit_code")
        if isinstance(code, int) and not isinstance(code, bool):
            return code != 0
        return None
    match = _EXIT.search(output[:400])
    return int(match.group(1)) != 0 if match else None


def _shell_output(output: str) -> tuple[str, JSON] | None:
    """An older ``shell`` call's output, JSON ``{output, metadata{exit_code,
    duration_seconds}}``: its text, and the rest for ``tool_use_result``."""
    if not output.startswith('{"output"'):
        return None
    try:
        parsed = orjson.loads(output)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(parsed, dict) or not isinstance(parsed.get("output"), str):
        return None
    return parsed["output"], {k: v for k, v in parsed.items() if k != "output"}


_EXIT = re.compile(r"^(?:Exit code: |Process exited with code )(-?\d+)$", re.M)


# -- the adapter --------------------------------------------------------------------------


@persisted
class _Run:
    """What the adapter knows of an open run."""

    def __init__(self, turn_id: str | None, started: bool) -> None:
        self.turn_id = turn_id
        self.started = started  # a task_started / turn.started began it
        self.usage = Usage()
        self.usage_seen = False
        self.by_model: dict[str, Usage] = {}
        self.unattached = False  # usage that no assistant line carries (older token_count)
        self.calls = 0  # model responses (usage records)
        self.replied = False  # the model had the last word
        self.unanswered: set[str] = set()
        self.answer: str | None = None  # the last assistant text


@persisted
class _Response:
    """The items of one model response, waiting for its usage record."""

    def __init__(self, ts: str | None) -> None:
        self.ts = ts
        self.blocks: list[JSON] = []
        self.extension: JSON = {}


@persisted
class CodexAdapter:
    #: The layout of this adapter's checkpointed state (translator.state).
    STATE_VERSION = 2

    def __init__(self, path: str, session_id: str | None = None) -> None:
        self._path = path
        self._given = session_id
        self._session: str | None = session_id or session_hint(path)
        self._thread: str | None = None
        self._model: str | None = None
        self._cwd: str | None = None
        self._tools: list[str] | None = None
        self._meta: JSON = {}
        self._settings: JSON = {}
        self._run: _Run | None = None
        self._start: RunStart | None = None  # the run's init, sent with its first line
        self._response: _Response | None = None
        self._prompt: Message | None = None  # a history user message that may be the prompt
        self._event_prompts = False  # prompts come as UserMessage / user_message events
        self._records_usage = False  # token_usage_record seen: token_count repeats it
        self._last_total: JSON | None = None  # older token_count's running total
        self._calls: set[str] = set()  # top-level call ids
        self._exec_open: list[str] = []  # code-mode exec calls not answered yet
        self._executions: dict[str, JSON] = {}  # call id → its execution item
        self._spawned: dict[str, str] = {}  # child thread → spawning call id
        self._spawn_pending: set[str] = set()  # spawning calls of the unsent response
        # A subagent's file: its actor, its spawner, its lines held until that is known.
        self._child = False
        self._actor: str | None = None
        self._parent_call: str | None = None
        self._parent_thread: str | None = None
        self._parent_file: str | None = None
        self._searched = 0
        self._unlinked: list[Event] | None = None
        # exec --json
        self._exec_total: JSON | None = None
        self._exec_thread: str | None = None
        self._exec_started: set[str] = set()
        self._raw_ts: Any = None
        self._ts: str | None = None

    @property
    def _sid(self) -> str:
        return self._session or "unknown"

    # -- the adapter contract -----------------------------------------------------------

    def feed(self, record: dict[str, Any], where: Where) -> Iterable[Event]:
        out: list[Event] = []
        kind = record.get("type")
        ts: str | None = None
        try:
            if "payload" in record and isinstance(kind, str):
                raw_ts = record.get("timestamp")
                if raw_ts is not None and raw_ts == self._raw_ts:
                    ts = self._ts  # (records come many to a millisecond)
                else:
                    ts = normalize_ts(raw_ts)
                    self._raw_ts, self._ts = raw_ts, ts
                if ts is None and raw_ts is not None:
                    out.append(time_problem("timestamp", raw_ts, where, self._session))
                self._rollout(kind, record, ts, out)
            elif isinstance(kind, str) and (kind in _EXEC_TYPES or kind == "error"):
                self._exec(kind, record, out)
            elif kind is None and record.get("record_type") == "state":
                out.append(Dropped("record_type/state", self._session))
            elif kind is None and "instructions" in record and "id" in record:
                self._header(record, out)
            elif isinstance(kind, str) and kind in _BARE:
                raw_ts = record.get("timestamp")
                ts = normalize_ts(raw_ts)
                self._response_item(kind, record, ts, out)
            else:
                if kind is not None and not isinstance(kind, str):
                    raise BodyError(f"type is {type(kind).__name__}, not a string")
                self._unknown(out, Unrecognized(kind or "<no type>", self._session, ts, record))
        except BodyError as exc:
            what = kind if isinstance(kind, str) else "record"
            self._line(out, body_problem(f"{what}: {exc}", record, where, self._session, ts))
        return self._mark(out)

    def finish(self) -> Iterable[Event]:
        out: list[Event] = []
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

    def learn_spawner(self, task_id: str, tool_use_id: str) -> list[Event]:
        """Told by the session that the thread ``task_id`` was spawned by
        ``tool_use_id`` (the parent's SubAgentActivity): if that is this file's
        thread and its lines wait for it, they go out now, linked."""
        if self._unlinked is None or task_id != self._thread:
            return []
        self._parent_call = tool_use_id
        return self._release()

    # -- subagent marking -----------------------------------------------------------------

    def _mark(self, out: list[Event]) -> list[Event]:
        if not self._child:
            return out
        for event in out:
            if isinstance(event, RunStart | RunEnd | Message):
                if event.parent_tool_use_id is None:
                    event.parent_tool_use_id = self._parent_call
                event.actor = self._actor
            elif isinstance(event, Note | Unrecognized) and event.parent_tool_use_id is None:
                event.parent_tool_use_id = self._parent_call
        if self._unlinked is None:
            return out
        self._unlinked += out
        if self._look_for_spawner() or len(self._unlinked) >= HOLD_LIMIT:
            return self._release()
        return []

    def _look_for_spawner(self) -> bool:
        if self._parent_call is None and self._parent_file and self._thread:
            self._parent_call, self._searched = _find_spawner(
                self._parent_file, self._thread, self._searched
            )
        return self._parent_call is not None

    def _release(self) -> list[Event]:
        held, self._unlinked = self._unlinked or [], None
        if self._parent_call is not None:
            for event in held:
                if getattr(event, "parent_tool_use_id", "") is None:
                    event.parent_tool_use_id = self._parent_call  # type: ignore[union-attr]
        return held

    # -- runs ---------------------------------------------------------------------------------

    def _line(self, out: list[Event], event: Event) -> None:
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

    def _begin(self, ts: str | None, turn_id: str | None, started: bool, out: list[Event]) -> _Run:
        if self._run is not None:
            self._end_inferred(out, ts, cut=True)
        self._run = _Run(turn_id, started)
        ext: JSON = {
            k: v
            for k, v in self._meta.items()
            if k not in ("id", "session_id", "cwd") and k not in _META_DROPPED
        }
        if self._thread and self._thread != self._session:
            ext["thread_id"] = self._thread
        self._start = RunStart(
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

    def _ensure_run(self, ts: str | None, out: list[Event]) -> _Run:
        return self._run if self._run is not None else self._begin(ts, None, False, out)

    def _end(self, out: list[Event], end: RunEnd) -> None:
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

    def _end_inferred(self, out: list[Event], ts: str | None, cut: bool = False) -> None:
        """A run with no end record: ``success`` in an older file where the model had
        the last word and every call was answered; otherwise cut off."""
        run = self._run
        assert run is not None
        self._flush(out)
        done = not cut and not run.started and run.replied and not run.unanswered
        self._end(
            out,
            RunEnd(
                self._sid,
                ts,
                subtype="success" if done else "interrupted",
                is_error=not done,
                result=run.answer if done else None,
            ),
        )

    # -- the rollout --------------------------------------------------------------------------

    def _rollout(self, kind: str, record: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        payload = record.get("payload")
        if not isinstance(payload, dict):
            raise BodyError(f"payload is {type(payload).__name__}, not an object")
        if kind == "response_item":  # (the common types first: this is the hot path)
            sub = payload.get("type")
            if not isinstance(sub, str):
                raise BodyError("payload.type is not a string")
            self._response_item(sub, payload, ts, out)
        elif kind == "event_msg":
            sub = payload.get("type")
            if not isinstance(sub, str):
                raise BodyError("payload.type is not a string")
            self._event(sub, payload, record, ts, out)
        elif kind == "token_usage_record":
            self._records_usage = True
            self._usage(
                usage_of(payload.get("usage"), "usage"),
                ts,
                out,
                str_field(payload, "response_id", kind),
            )
        elif kind == "turn_context":
            self._turn_context(payload)
            out.append(Dropped("turn_context", self._session))
        elif kind == "session_meta":
            self._session_meta(payload, out)
        elif kind in _METADATA:
            out.append(Dropped(kind, self._session))
        else:
            self._unknown(out, Unrecognized(kind, self._session, ts, record))

    def _unknown(self, out: list[Event], event: Unrecognized) -> None:
        """A record kept whole, in its place (after the response items before it)."""
        self._flush(out)
        self._line(out, event)

    def _header(self, record: dict[str, Any], out: list[Event]) -> None:
        """The bare format's first line: the session's id, time and git state."""
        self._session_meta(record, out)

    def _session_meta(self, meta: dict[str, Any], out: list[Event]) -> None:
        thread = str_field(meta, "id", "session_meta")
        root = str_field(meta, "session_id", "session_meta")
        self._thread = thread
        if self._given is None:
            self._session = root or thread or self._session
        self._cwd = str_field(meta, "cwd", "session_meta") or self._cwd
        self._meta = {k: v for k, v in meta.items() if k not in _META_DROPPED}
        parent = meta.get("parent_thread_id")
        if isinstance(parent, str) or meta.get("thread_source") == "subagent":
            self._child = True
            self._parent_thread = parent if isinstance(parent, str) else None
            path = meta.get("agent_path")
            self._actor = path if isinstance(path, str) else f"thread-{thread}"
            if self._parent_thread and self._path != "-":
                self._parent_file = find_rollout(sessions_root(self._path), self._parent_thread)
            if self._parent_file is not None and not self._look_for_spawner():
                self._unlinked = []
        out.append(Dropped("session_meta", self._session))

    def _turn_context(self, ctx: dict[str, Any]) -> None:
        model = str_field(ctx, "model", "turn_context")
        if model:
            self._model = model
            if self._start is not None:
                self._start.model = model
        cwd = str_field(ctx, "cwd", "turn_context")
        if cwd:
            self._cwd = cwd
            if self._start is not None:
                self._start.cwd = cwd
        self._settings = {
            k: ctx[k]
            for k in ("approval_policy", "sandbox_policy", "effort", "summary")
            if k in ctx
        }

    def _tools_of(self, payload: dict[str, Any]) -> None:
        names: list[str] = []
        tools = payload.get("tools")
        for tool in tools if isinstance(tools, list) else []:
            if not isinstance(tool, dict) or not isinstance(tool.get("name"), str):
                continue
            inner = tool.get("tools")
            if tool.get("type") == "namespace" and isinstance(inner, list):
                names += [
                    f"{tool['name']}.{t['name']}"
                    for t in inner
                    if isinstance(t, dict) and isinstance(t.get("name"), str)
                ]
            else:
                names.append(tool["name"])
        self._tools = names
        if self._start is not None:
            self._start.tools = names

    # response items -------------------------------------------------------------------------

    def _response_item(
        self, sub: str, item: dict[str, Any], ts: str | None, out: list[Event]
    ) -> None:
        if sub == "message":
            role = str_field(item, "role", "message")
            if role == "assistant":
                self._assistant_text(item, ts, out)
            elif role == "user":
                self._history_user(item, ts, out)
            else:
                out.append(Dropped(f"response_item/message/{role}", self._session))
        elif sub == "reasoning":
            self._reasoning(item, ts, out)
        elif sub in _CALLS:
            self._call(sub, item, ts, out)
        elif sub in _OUTPUTS:
            self._output(sub, item, ts, out)
        elif sub == "additional_tools":
            self._tools_of(item)
            out.append(Dropped("response_item/additional_tools", self._session))
        elif sub == "agent_message":
            self._agent_mail(item, ts, out)
        elif sub == "configuration_update":
            self._flush(out)
            self._ensure_run(ts, out)
            fields = {k: v for k, v in item.items() if k != "type"}
            self._line(
                out,
                Note(
                    "warning",
                    self._sid,
                    ts,
                    {
                        "kind": "configuration_update",
                        "message": "the model's configuration was updated",
                    },
                    fields,
                ),
            )
        else:
            self._unknown(
                out,
                Unrecognized(
                    f"response_item/{sub}",
                    self._session,
                    ts,
                    {"type": "response_item", "payload": item},
                ),
            )

    def _response_part(self, ts: str | None, out: list[Event]) -> _Response:
        self._send_prompt(out)
        run = self._ensure_run(ts, out)
        if self._response is None:
            self._response = _Response(ts)
        run.replied = True
        return self._response

    def _assistant_text(self, item: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        texts = _texts(item.get("content"), "message.content")
        response = self._response_part(ts, out)
        for text in texts:
            response.blocks.append({"type": "text", "text": text})
        if texts:
            assert self._run is not None
            self._run.answer = texts[-1]
        phase = str_field(item, "phase", "message")
        if phase is not None:
            response.extension["phase"] = phase

    def _reasoning(self, item: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        summary = item.get("summary")
        texts = _texts(summary, "reasoning.summary")
        response = self._response_part(ts, out)
        block: JSON = {"type": "thinking", "thinking": "\n\n".join(texts)}
        ext = {k: item[k] for k in ("encrypted_content", "content") if item.get(k) is not None}
        if ext:
            block["extension"] = ext
        response.blocks.append(block)
        assert self._run is not None
        self._run.replied = True

    def _call(self, sub: str, item: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        call_id = str_field(item, "call_id", sub) or str_field(item, "id", sub)
        if call_id is None:
            raise BodyError("no call_id")
        name = str_field(item, "name", sub) or (
            "local_shell" if sub == "local_shell_call" else None
        )
        if name is None:
            raise BodyError("no name")
        namespace = str_field(item, "namespace", sub)
        if sub == "function_call":
            tool_input = _arguments(item.get("arguments"))
        elif sub == "custom_tool_call":
            tool_input = {"input": item.get("input")}
        else:
            tool_input = item.get("action") if isinstance(item.get("action"), dict) else {}
        full = f"{namespace}.{name}" if namespace else name
        response = self._response_part(ts, out)
        response.blocks.append(
            {"type": "tool_use", "id": call_id, "name": full, "input": tool_input}
        )
        assert self._run is not None
        self._run.replied = False
        self._run.unanswered.add(call_id)
        self._calls.add(call_id)
        if sub == "custom_tool_call" and name == "exec":
            self._exec_open.append(call_id)

    def _output(self, sub: str, item: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        call_id = str_field(item, "call_id", sub) or str_field(item, "id", sub)
        if call_id is None:
            raise BodyError("no call_id")
        self._flush(out)
        run = self._ensure_run(ts, out)
        raw = item.get("output")
        if isinstance(raw, dict):
            text = raw.get("output") if isinstance(raw.get("output"), str) else None
            content: Any = text if text is not None else raw
            is_error = (raw.get("exit_code") not in (None, 0)) if "exit_code" in raw else None
        else:
            content = "".join(_texts(raw, f"{sub}.output"))
            is_error = _exit_error(content)
        done = self._executions.pop(call_id, None)
        shell = _shell_output(content) if isinstance(content, str) else None
        if shell is not None and done is None:
            content, done = shell[0], shell[1] or None
        if done is not None:
            failed = _failed(done)
            if failed is not None:
                is_error = failed if is_error is None else (is_error or failed)
        block: JSON = {"type": "tool_result", "tool_use_id": call_id, "content": content}
        if is_error is not None:
            block["is_error"] = is_error
        run.unanswered.discard(call_id)
        run.replied = False
        self._calls.discard(call_id)  # (answered: no execution item of its can follow)
        if call_id in self._exec_open:
            self._exec_open.remove(call_id)
        self._line(
            out,
            Message(
                "user",
                self._sid,
                ts,
                [block],
                tool_use_result=done,
                has_tool_use_result=done is not None,
            ),
        )

    def _history_user(self, item: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        texts = _texts(item.get("content"), "message.content")
        if self._event_prompts or not texts or all(_is_context(t) for t in texts):
            out.append(Dropped("response_item/message/user", self._session))
            return
        self._send_prompt(out)
        self._prompt = Message("user", self._sid, ts, [{"type": "text", "text": t} for t in texts])

    def _send_prompt(self, out: list[Event]) -> None:
        """A history user message that no prompt event followed: it was the prompt."""
        prompt, self._prompt = self._prompt, None
        if prompt is not None:
            self._user_prompt(prompt, out)

    def _user_prompt(self, prompt: Message, out: list[Event]) -> None:
        self._flush(out)
        run = self._run
        if run is not None and not run.started and (run.replied or run.calls):
            self._end_inferred(out, prompt.ts)
        run = self._ensure_run(prompt.ts, out)
        run.replied = False
        prompt.session_id = self._sid
        self._line(out, prompt)

    def _agent_mail(self, item: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        """Mail between agents (a task to a subagent, its final answer back): a user
        line, as the model reads it."""
        content = item.get("content")
        texts = _texts(content, "agent_message.content")
        self._flush(out)
        run = self._ensure_run(ts, out)
        run.replied = False
        ext: JSON = {k: item[k] for k in ("id", "author", "recipient") if k in item}
        hidden = (
            [p for p in content if isinstance(p, dict) and p.get("type") != "input_text"]
            if isinstance(content, list)
            else []
        )
        if hidden:
            ext["content"] = hidden
        self._line(
            out,
            Message(
                "user", self._sid, ts, [{"type": "text", "text": "".join(texts)}], extension=ext
            ),
        )

    def _flush(
        self, out: list[Event], usage: Usage | None = None, message_id: str | None = None
    ) -> None:
        """The response's items as one assistant line (with its usage, once)."""
        self._send_prompt(out)
        response, self._response = self._response, None
        if response is None or not response.blocks:
            return
        self._line(
            out,
            Message(
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
                out.append(Spawn(block["id"], self._session))  # after the call it names

    def _usage(
        self, usage: Usage, ts: str | None, out: list[Event], message_id: str | None
    ) -> None:
        run = self._ensure_run(ts, out)
        run.usage.add(usage)
        run.usage_seen = True
        run.calls += 1
        if self._model:
            run.by_model.setdefault(self._model, Usage()).add(usage)
        if self._response is not None and self._response.blocks:
            self._flush(out, usage, message_id)
        else:
            run.unattached = True

    # events ---------------------------------------------------------------------------------

    def _event(
        self,
        sub: str,
        payload: dict[str, Any],
        record: dict[str, Any],
        ts: str | None,
        out: list[Event],
    ) -> None:
        if sub == "task_started":
            self._send_prompt(out)
            self._flush(out)
            self._begin(ts, str_field(payload, "turn_id", sub), True, out)
            out.append(Dropped("event_msg/task_started", self._session))
        elif sub == "task_complete":
            self._task_complete(payload, ts, out)
        elif sub == "turn_aborted":
            self._send_prompt(out)
            self._flush(out)
            self._ensure_run(ts, out)
            reason = str_field(payload, "reason", sub)
            ext = {k: v for k, v in payload.items() if k not in ("type", "duration_ms")}
            self._end(
                out,
                RunEnd(
                    self._sid,
                    ts,
                    subtype="interrupted",
                    is_error=True,
                    stop_reason=reason,
                    duration_ms=whole(payload.get("duration_ms")),
                    extension=ext,
                ),
            )
        elif sub == "item_completed":
            self._item(_obj(payload, "item", sub, required=True), ts, out)
        elif sub == "user_message":
            message = payload.get("message")
            if not isinstance(message, str):
                raise BodyError("user_message.message is not a string")
            self._event_prompts = True
            self._prompt = None
            self._user_prompt(
                Message("user", self._sid, ts, [{"type": "text", "text": message}]), out
            )
        elif sub == "token_count":
            info = payload.get("info")
            last = info.get("last_token_usage") if isinstance(info, dict) else None
            total = info.get("total_token_usage") if isinstance(info, dict) else None
            if (
                self._records_usage
                or (last is None and total is None)
                or (total is not None and total == self._last_total)
            ):
                out.append(Dropped("event_msg/token_count", self._session))
                return
            if last is not None:
                usage = usage_of(last, "token_count.info.last_token_usage")
            else:
                # Only the running total: this call is what it grew by.
                usage = usage_of(total, "token_count.info.total_token_usage")
                if self._last_total is not None:
                    before = usage_of(self._last_total, "token_count.info.total_token_usage")
                    usage = _minus(usage, before) or usage
            self._last_total = total if isinstance(total, dict) else None
            self._usage(usage, ts, out, None)
        elif sub in _METADATA_EVENTS:
            out.append(Dropped(f"event_msg/{sub}", self._session))
        else:
            self._unknown(out, Unrecognized(f"event_msg/{sub}", self._session, ts, record))

    def _task_complete(self, payload: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        self._send_prompt(out)
        self._flush(out)
        self._ensure_run(ts, out)
        error = payload.get("error")
        if error is not None and not isinstance(error, dict):
            raise BodyError("task_complete.error is not an object")
        answer = str_field(payload, "last_agent_message", "task_complete")
        duration = payload.get("duration_ms")
        ttft = payload.get("time_to_first_token_ms")
        ext = {
            k: v
            for k, v in payload.items()
            if k
            not in ("type", "last_agent_message", "duration_ms", "time_to_first_token_ms", "error")
        }
        failed = bool(error)
        if failed:
            assert isinstance(error, dict)
            extra = {k: v for k, v in error.items() if k != "message"}
            if extra:
                ext["error"] = extra
        message = (
            str_field(error, "message", "task_complete.error") if isinstance(error, dict) else None
        )
        self._end(
            out,
            RunEnd(
                self._sid,
                ts,
                subtype="error_during_execution" if failed else "success",
                is_error=failed,
                result=message if failed else answer,
                duration_ms=whole(duration) if whole(duration) is not None else None,
                ttft_ms=whole(ttft),
                extension=ext,
            ),
        )

    def _item(self, item: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        kind = str_field(item, "type", "item", required=True)
        assert kind is not None
        if kind == "UserMessage":
            texts = _texts(item.get("content"), "UserMessage.content")
            self._event_prompts = True
            self._prompt = None
            self._user_prompt(
                Message(
                    "user",
                    self._sid,
                    ts,
                    [{"type": "text", "text": t} for t in texts],
                    extension={"id": item["id"]} if "id" in item else {},
                ),
                out,
            )
        elif kind in _REPEATS:
            out.append(Dropped(f"item_completed/{kind}", self._session))
        elif kind in _EXECUTIONS:
            self._execution(kind, item, ts, out)
        elif kind == "CollabAgentToolCall":
            call = item.get("id")
            if isinstance(call, str) and call in self._calls:
                self._executions[call] = {k: v for k, v in item.items() if k != "id"}
                out.append(Dropped("item_completed/CollabAgentToolCall", self._session))
            else:
                self._unknown(
                    out, Unrecognized("item_completed/CollabAgentToolCall", self._session, ts, item)
                )
        elif kind == "SubAgentActivity":
            self._subagent_activity(item, ts, out)
        else:
            self._unknown(out, Unrecognized(f"item_completed/{kind}", self._session, ts, item))

    def _execution(self, kind: str, item: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        item_id = str_field(item, "id", kind, required=True)
        assert item_id is not None
        if item_id in self._calls:
            # A direct tool's own execution: its detail goes with the call's result.
            self._executions[item_id] = {k: v for k, v in item.items() if k != "id"}
            out.append(Dropped(f"item_completed/{kind}", self._session))
            return
        self._flush(out)
        self._ensure_run(ts, out)
        parent = self._exec_open[-1] if self._exec_open else None
        name = _EXECUTIONS[kind]
        tool_input, result, failed = _execution_parts(kind, item)
        self._line(
            out,
            Message(
                "assistant",
                self._sid,
                ts,
                [{"type": "tool_use", "id": item_id, "name": name, "input": tool_input}],
                parent_tool_use_id=parent,
            ),
        )
        block: JSON = {"type": "tool_result", "tool_use_id": item_id, "content": result}
        if failed is not None:
            block["is_error"] = failed
        # The item's other fields (what the tool_use and tool_result do not say already).
        rest = {k: v for k, v in item.items() if k not in _SAID}
        self._line(
            out,
            Message(
                "user",
                self._sid,
                ts,
                [block],
                parent_tool_use_id=parent,
                tool_use_result=rest,
                has_tool_use_result=True,
            ),
        )

    def _subagent_activity(self, item: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        child = item.get("agent_thread_id")
        kind = item.get("kind")
        call = item.get("id")
        if kind == "started" and isinstance(child, str) and isinstance(call, str):
            self._spawned[child] = call
            out.append(Dropped("item_completed/SubAgentActivity/started", self._session))
            # The child's rollout holds its lines: said after the spawning call (its
            # response may still be waiting for its usage).
            if self._response is not None and any(
                b.get("id") == call for b in self._response.blocks
            ):
                self._spawn_pending.add(call)
            else:
                out.append(Spawn(call, self._session))
        elif kind == "completed" and isinstance(child, str) and child in self._spawned:
            self._flush(out)
            self._ensure_run(ts, out)
            fields: JSON = {
                "task_id": child,
                "status": "completed",
                "task": {"tool_use_id": self._spawned[child]},
            }
            ext = {k: v for k, v in item.items() if k not in ("type", "agent_thread_id", "kind")}
            self._line(out, Note("task_notification", self._sid, ts, fields, ext))
        else:
            self._unknown(
                out, Unrecognized("item_completed/SubAgentActivity", self._session, ts, item)
            )

    # -- exec --json ----------------------------------------------------------------------------

    def _exec(self, kind: str, ev: dict[str, Any], out: list[Event]) -> None:
        if kind == "thread.started":
            thread = str_field(ev, "thread_id", kind, required=True)
            if self._run is not None:
                self._end_inferred(out, None, cut=True)
            if thread != self._exec_thread:
                self._exec_total = None
            self._exec_thread = thread
            if self._given is None:
                self._session = thread
            self._exec_started.clear()
            out.append(Dropped("thread.started", self._session))
        elif kind == "turn.started":
            self._begin(None, None, True, out)
            out.append(Dropped("turn.started", self._session))
        elif kind == "turn.completed":
            self._turn_completed(ev, out)
        elif kind == "turn.failed":
            error = _obj(ev, "error", kind)
            message = str_field(error, "message", "turn.failed.error")
            self._ensure_run(None, out)
            ext = {k: v for k, v in ev.items() if k not in ("type", "error")}
            extra = {k: v for k, v in error.items() if k != "message"}
            if extra:
                ext["error"] = extra
            self._end(
                out,
                RunEnd(
                    self._sid,
                    None,
                    subtype="error_during_execution",
                    is_error=True,
                    result=message,
                    extension=ext,
                ),
            )
        elif kind == "error":
            message = str_field(ev, "message", kind)
            self._ensure_run(None, out)
            fields = {k: v for k, v in ev.items() if k not in ("type", "message")}
            self._line(
                out,
                Note(
                    "warning", self._sid, None, {"kind": "error", "message": message or ""}, fields
                ),
            )
        elif kind == "item.updated":
            out.append(Dropped("item.updated", self._session))
        else:
            self._exec_item(kind, _obj(ev, "item", kind, required=True), ev, out)

    def _turn_completed(self, ev: dict[str, Any], out: list[Event]) -> None:
        raw = ev.get("usage")
        usage = None
        if raw is not None:
            total = usage_of(raw, "usage")
            usage = total
            prev = self._exec_total
            if prev is not None:
                usage = _minus(total, usage_of(prev, "usage")) or total
            self._exec_total = raw
        self._ensure_run(None, out)
        ext: JSON = {k: v for k, v in ev.items() if k not in ("type", "usage")}
        if raw is not None:
            ext["thread_usage"] = raw
        self._end(
            out,
            RunEnd(self._sid, None, subtype="success", is_error=False, usage=usage, extension=ext),
        )

    def _exec_item(
        self, kind: str, item: dict[str, Any], ev: dict[str, Any], out: list[Event]
    ) -> None:
        item_type = str_field(item, "type", "item", required=True)
        item_id = str_field(item, "id", "item", required=True)
        assert item_type is not None and item_id is not None
        self._ensure_run(None, out)
        if item_type in _EXEC_TOOLS:
            if item_id not in self._exec_started:
                self._exec_started.add(item_id)
                tool_input = {k: v for k, v in item.items() if k not in _EXEC_RESULT_KEYS}
                self._line(
                    out,
                    Message(
                        "assistant",
                        self._sid,
                        None,
                        [
                            {
                                "type": "tool_use",
                                "id": item_id,
                                "name": item_type,
                                "input": tool_input,
                            }
                        ],
                    ),
                )
            if kind == "item.completed":
                self._exec_started.discard(item_id)
                self._exec_tool_done(item_type, item_id, item, out)
            return
        if kind == "item.started":
            out.append(Dropped(f"item.started/{item_type}", self._session))
            return
        text = item.get("text")
        if item_type == "agent_message":
            if not isinstance(text, str):
                raise BodyError("agent_message.text is not a string")
            assert self._run is not None
            self._run.answer = text
            self._line(out, Message("assistant", self._sid, None, [{"type": "text", "text": text}]))
        elif item_type == "reasoning":
            if not isinstance(text, str):
                raise BodyError("reasoning.text is not a string")
            self._line(
                out, Message("assistant", self._sid, None, [{"type": "thinking", "thinking": text}])
            )
        elif item_type == "error":
            message = str_field(item, "message", "error")
            self._line(
                out,
                Note(
                    "warning",
                    self._sid,
                    None,
                    {"kind": "error_item", "message": message or "", "id": item_id},
                ),
            )
        else:
            self._line(out, Unrecognized(f"item.completed/{item_type}", self._session, None, ev))

    def _exec_tool_done(
        self, item_type: str, item_id: str, item: dict[str, Any], out: list[Event]
    ) -> None:
        result: Any = item.get("aggregated_output")
        if result is None:
            result = item.get("result")
        if result is None:
            result = ""
        block: JSON = {"type": "tool_result", "tool_use_id": item_id, "content": result}
        failed = _failed(item)
        if failed is not None:
            block["is_error"] = failed
        detail = {k: item[k] for k in ("status", "exit_code", "error", "changes") if k in item}
        self._line(
            out,
            Message(
                "user",
                self._sid,
                None,
                [block],
                tool_use_result=detail,
                has_tool_use_result=bool(detail),
            ),
        )


#: Bare-format items (no envelope): read as response items once the source is chosen.
_BARE = frozenset({"message", "reasoning"}) | _CALLS | _OUTPUTS


def _minus(total: Usage, before: Usage) -> Usage | None:
    """What a running total grew by; None when it did not only grow (another
    thread's total, a reset)."""
    share = Usage(
        total.input_tokens - before.input_tokens,
        total.output_tokens - before.output_tokens,
        total.cache_read - before.cache_read,
        total.cache_creation - before.cache_creation,
    )
    return share if min(share.as_dict().values()) >= 0 else None


def _failed(item: dict[str, Any]) -> bool | None:
    """is_error of an execution item: status failed/declined, a non-zero exit code,
    an error; None where the item says neither way."""
    status = item.get("status")
    code = item.get("exit_code")
    if status in ("failed", "declined") or item.get("error"):
        return True
    if isinstance(code, int) and not isinstance(code, bool):
        return code != 0
    if status == "completed":
        return False
    return None


def _execution_parts(kind: str, item: dict[str, Any]) -> tuple[JSON, Any, bool | None]:
    """A nested execution's tool input, result content and is_error."""
    if kind == "CommandExecution":
        tool_input: JSON = {"command": item.get("command")}
        if "cwd" in item:
            tool_input["cwd"] = item["cwd"]
        result: Any = item.get("aggregated_output")
    elif kind == "FileChange":
        tool_input = {"changes": item.get("changes")}
        parts = [p for p in (item.get("stdout"), item.get("stderr")) if isinstance(p, str) and p]
        result = "".join(parts)
    else:
        tool_input = {
            k: v for k, v in item.items() if k not in ("id", "type", "status", "result", "error")
        }
        result = item.get("result")
    return tool_input, "" if result is None else result, _failed(item)


_Opener = Callable[[str, str | None], CodexAdapter]

MAPPING = (
    Row(
        "session_meta",
        "rollout `session_meta`",
        "the init's session id (`session_id`: the root thread; `id` is the thread), "
        "`cwd`, the rest in the init's `extension` (`cli_version`, `originator`, `source`, "
        "`git`, …; `base_instructions` dropped on purpose: the system prompt's text)",
    ),
    Row(
        "turn_context",
        "`turn_context`",
        "the init's `agent.model` (and every assistant line's model, for `model_usage`), "
        "`cwd`; `approval_policy`, `sandbox_policy`, `effort`, `summary` in "
        "`extension.turn_context`; counted as dropped",
    ),
    Row(
        "additional_tools",
        "`response_item/additional_tools`",
        "the init's `tools`: `namespace.name` per tool of each namespace (the catalogue "
        "itself dropped on purpose)",
    ),
    Row("task_started", "`event_msg/task_started`", "a run begins: its `system/init`"),
    Row(
        "user_message",
        "`item_completed/UserMessage` (older: `event_msg/user_message`)",
        "`user` text: the typed prompt",
    ),
    Row(
        "history_user",
        "`response_item/message` role `user` / `developer`",
        "dropped on purpose (the model-facing history: instructions, `<environment_context>`, "
        "the prompt again); in a file with no prompt events, a user message that is not "
        "context is the prompt",
    ),
    Row(
        "assistant",
        "`response_item/message` role `assistant`",
        "`assistant` text blocks; `phase` (commentary, final_answer) in the line's "
        "`extension`. The items of one model response are one assistant line",
    ),
    Row(
        "reasoning",
        "`response_item/reasoning`",
        "a `thinking` block: the `summary` texts (joined by a blank line); "
        "`encrypted_content` in the block's `extension`",
    ),
    Row(
        "function_call",
        "`response_item/function_call`",
        "`tool_use`: `id` = `call_id`, `name` = `namespace.name` (or `name`), `input` = the "
        "parsed `arguments` (`{arguments: <text>}` when they are no JSON object)",
    ),
    Row(
        "custom_tool_call",
        "`response_item/custom_tool_call`",
        "`tool_use`: `input` = `{input: <freeform text>}` (code mode's `functions.exec`: "
        "its JavaScript)",
    ),
    Row(
        "local_shell_call",
        "`response_item/local_shell_call` (older)",
        "`tool_use` `local_shell`, `input` = its `action`",
    ),
    Row(
        "token_usage_record",
        "`token_usage_record`",
        "the response's usage, once per API call, on its assistant line (`message.id` = "
        "`response_id`); they add up into the result's `usage`; `num_turns` counts them",
    ),
    Row(
        "call_output",
        "`response_item/function_call_output`, `custom_tool_call_output`, "
        "`local_shell_call_output`",
        "`user` `tool_result` by `call_id`: `content` = the output text; `is_error` where "
        "the output or the call's execution item says it (`Script failed`, exit code ≠ 0, "
        "status failed); the direct tool's execution item in `tool_use_result`",
    ),
    Row(
        "nested_execution",
        "`item_completed/CommandExecution` / `FileChange` / `McpToolCall` inside an `exec` call",
        "a `tool_use` (`command_execution`, `file_change`, `mcp_tool_call`; id = the item "
        "id) and its `tool_result` (`aggregated_output`, `is_error` from status/exit "
        "code), both with `parent_tool_use_id` = the exec call; the item's other fields "
        "(`status`, `exit_code`, `duration`, `parsed_cmd`, …) in `tool_use_result`",
    ),
    Row(
        "direct_execution",
        "an execution item whose id is a call's (`CommandExecution`, "
        "`FileChange`, `CollabAgentToolCall`)",
        "its fields are the call's `tool_result`'s `tool_use_result`; counted as dropped",
    ),
    Row(
        "repeats",
        "`item_completed/AgentMessage`, `Reasoning`; `event_msg/token_count` "
        "beside `token_usage_record`; older `event_msg/agent_message`, `agent_reasoning`",
        "dropped on purpose: they repeat a response item or a usage record",
    ),
    Row(
        "legacy_usage",
        "`event_msg/token_count` in a file without `token_usage_record`",
        "the usage of a call: `info.last_token_usage`, once per change of `info.total_token_usage`",
    ),
    Row(
        "task_complete",
        "`event_msg/task_complete`",
        "the run's one `result`: `success`, or `error_during_execution` (`is_error`) when "
        "`error` is set; `result` = `last_agent_message` (the error's message on failure); "
        "`duration_ms`, `ttft_ms` = `time_to_first_token_ms`; `usage` = Σ the run's "
        "usage records",
    ),
    Row(
        "turn_aborted",
        "`event_msg/turn_aborted` (an interrupted turn)",
        "the run's `interrupted` result (`is_error`), `stop_reason` = `reason`, "
        "`duration_ms` when given; `turn_id`, times in `extension`",
    ),
    Row(
        "killed",
        "a rollout that ends inside a run (no `task_complete`)",
        "a synthetic `interrupted` result (`is_error`), usage what the records sum to; in "
        "an older file without `task_started`: `success` when the model had the last word "
        "and every call was answered",
    ),
    Row(
        "subagent_spawn",
        "`item_completed/SubAgentActivity` `started`",
        "the spawning call of a child thread (the child's lines get it as "
        "`parent_tool_use_id`); counted as dropped",
    ),
    Row(
        "subagent_done",
        "`item_completed/SubAgentActivity` `completed`",
        "`system/task_notification`: `task_id` = the child thread, `status`, "
        "`task.tool_use_id` = the spawning call",
    ),
    Row(
        "child_rollout",
        "a child thread's rollout (`session_meta.parent_thread_id`)",
        "its runs are a nested actor inside the parent's run: `system/task_started` "
        "(`task_id` = its thread), every line with `parent_tool_use_id` = the spawning "
        "call; its end is no line",
    ),
    Row(
        "agent_message",
        "`response_item/agent_message` (mail between agents)",
        "`user` text (the `input_text` parts); `author`, `recipient`, other parts in `extension`",
    ),
    Row(
        "configuration_update",
        "`response_item/configuration_update`",
        "`system/warning` (`kind` configuration_update), the record in `extension`",
    ),
    Row(
        "metadata",
        "`world_state`, `event_msg/thread_settings_applied`, "
        "`inter_agent_communication_metadata`; the bare format's `{record_type: state}`",
        "dropped on purpose, counted",
    ),
    Row(
        "bare_format",
        "the bare format: a header `{id, timestamp, instructions, git}` then bare items",
        "the header is a `session_meta`; bare `message`, `reasoning`, `*_call`, "
        "`*_call_output` are response items",
    ),
    Row("exec_thread", "exec `thread.started`", "the session id (`thread_id`)"),
    Row(
        "exec_turn",
        "exec `turn.started`",
        "a run begins (no model, cwd or tools: this view does not say them)",
    ),
    Row(
        "exec_text",
        "exec `item.completed` `agent_message` / `reasoning`",
        "`assistant` text / `thinking`",
    ),
    Row(
        "exec_tool",
        "exec `item.started` / `item.completed` of `command_execution`, "
        "`file_change`, `mcp_tool_call`, `collab_tool_call`, `web_search`",
        "`tool_use` (id = the item id, name = its type, input = its other fields) and its "
        "`tool_result` (`aggregated_output`; `is_error` from status failed/declined or "
        "exit code ≠ 0; status, exit code, changes in `tool_use_result`)",
    ),
    Row(
        "exec_completed",
        "exec `turn.completed`",
        "the run's `success` result; `usage` = this total minus the previous "
        "`turn.completed` of the thread in the stream (the first: taken whole); the raw "
        "total in `extension.thread_usage`",
    ),
    Row(
        "exec_failed",
        "exec `turn.failed`",
        "`error_during_execution` result, `result` = `error.message`",
    ),
    Row(
        "exec_error",
        "exec `error`, `item.completed` `error`",
        "`system/warning` with the `message` (retries, the transport fallback)",
    ),
    Row(
        "unknown",
        "anything else",
        "`system/unrecognized` (`kind` = its type, the record whole in "
        "`extension.record`); never an error",
    ),
    Row(
        "bad_body",
        "a known type whose body does not fit (`payload` no object, no "
        "`call_id`, tokens not whole numbers, …)",
        "`system/error` naming file:line, the record in `extension.record`; exit status 1",
    ),
)


# -- where Codex CLI keeps its files -----------------------------------------------------

#: Codex's own files beside its rollouts: typed prompts and the TUI's thread index.
_BOOKKEEPING = frozenset({"history.jsonl", "session_index.jsonl"})


def homes(env: Mapping[str, str], home: str) -> list[str]:
    """``${CODEX_HOME:-~/.codex}``'s ``sessions`` (one folder a day) and
    ``archived_sessions`` (what ``codex`` archives; ccusage reads both)."""
    base = env.get("CODEX_HOME") or os.path.join(home, ".codex")
    return [os.path.join(base, "sessions"), os.path.join(base, "archived_sessions")]


def skips(parts: Sequence[str]) -> bool:
    """Codex's typed-prompt history and thread index (``~/.codex/history.jsonl``,
    ``session_index.jsonl``: JSONL, not transcripts), where a walk of its home or
    of a folder holding ``.codex`` meets them."""
    return parts[-1] in _BOOKKEEPING and (len(parts) == 1 or parts[-2] == ".codex")


SOURCE = Source(
    name="codex",
    description="Codex CLI rollouts (~/.codex/sessions/**/rollout-*.jsonl) and "
    "`codex exec --json` streams",
    sniff=sniff,
    open=CodexAdapter,
    session_hint=session_hint,
    mapping=MAPPING,
    session_of=session_of,
    files=Files(homes=homes, skips=skips),
)
