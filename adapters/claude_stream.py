"""Claude Code print-mode stream: ``claude -p --verbose --output-format stream-json``.

What each record type becomes is ``MAPPING`` below (docs/mapping.md is made from
it); a ``result`` record's own rules are in adapters/_claude_stream_result.py.

Runs: each ``system/init`` starts one. A stream that stops before a run's result
(a killed CLI) ends that run ``interrupted``, with ``num_turns`` counted by the rule
both Claude adapters share (:class:`adapters._claude.TurnCount`). A background task
can make Claude print the next invocation's init before the previous result (see
the corpus' s10): the later run's lines are held until the earlier run's result
arrives, so runs never overlap in the output. Results pair with runs in order.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable
from typing import Any

from streamv1.adapters import _claude as cc
from streamv1.adapters import _claude_stream_result as results
from streamv1.translator.model import events as ev
from streamv1.translator.reading import sources as src
from streamv1.translator.reading.mapping import Row
from streamv1.translator.reading.sources import STR_OR_NONE, rest, string  # (bare: per record)
from streamv1.translator.state import persisted
from streamv1.translator.timefmt import normalize_ts

_NAMING_KEYS = ("type", "session_id")
_STREAM_TYPES = frozenset({"system", "assistant", "user", "result", "stream_event"})
#: An init's fields (the rest goes into the run start's extension).
_INIT: src.Spec = {
    "type": object,
    "subtype": object,
    "session_id": object,
    "cwd": string,
    "tools": object,
    "mcp_servers": object,
    "model": string,
}
#: A message line's keys that are not its extension.
_LINE_KEYS = frozenset(
    {"type", "message", "session_id", "parent_tool_use_id", "timestamp", "tool_use_result"}
)
_PASSED_EVENTS = frozenset(
    {"message_start", "content_block_start", "content_block_stop", "message_delta", "message_stop"}
)


def sniff(record: dict[str, Any]) -> int:
    if "seq" in record:
        return src.NOT_MINE  # stream_v1's envelope: print mode never writes a seq
    if ("sessionId" in record or "parentUuid" in record) and "session_id" not in record:
        return src.NOT_MINE  # a durable record (``--to claude`` keeps its keys beside session_id)
    kind = record.get("type")
    if kind == "system" and record.get("subtype") == "init" and "session_id" in record:
        return src.CERTAIN
    if isinstance(kind, str) and kind in _STREAM_TYPES and "session_id" in record:
        return src.DECISIVE
    if isinstance(kind, str) and "session_id" in record:
        return src.POSSIBLE  # a snake_case record of a type not listed here (command_lifecycle)
    if isinstance(kind, str) and "uuid" not in record and "timestamp" not in record:
        return src.GUESS  # a control record (control_response)
    return src.NOT_MINE


@persisted
class ClaudeStreamAdapter:
    #: The layout of this adapter's checkpointed state (translator.state): a new
    #: number whenever its fields change, so an old checkpoint is replayed, not misread.
    STATE_VERSION = 3

    def __init__(self, path: str, session_id: str | None = None) -> None:
        self._path = path
        self._held_init: ev.RunStart | None = None
        self._runs: deque[_Run] = deque()  # open runs, oldest (the live one) first
        self._later: deque[list[ev.Event]] = deque()  # lines of runs that began early
        self._tool_ids: dict[tuple[str | None, int], str] = {}
        self._session: str | None = session_id
        # The last result's modelUsage, where the CLI gives only that running total
        # of its process (before model_usage_since_last_result): a run's share is
        # the difference to it.
        self._process_usage: dict[str, ev.Usage] | None = None

    # -- the adapter contract -------------------------------------------------

    def feed(self, record: dict[str, Any], where: src.Where) -> Iterable[ev.Event]:
        out: list[ev.Event] = []
        if self._held_init is not None and _replayed_prompt(record):
            # --replay-user-messages echoes the prompt right after the init: it is the
            # run's prompt (as the durable view has it), not a user line.
            ext = self._held_init.extension
            ext["prompt"] = record["message"]["content"]
            ext.update((k, v) for k, v in record.items() if k not in _REPLAY_KEYS)
            return out
        if self._held_init is not None:
            partial = record.get("type") == "stream_event" or (
                record.get("type") == "system" and record.get("subtype") == "status"
            )
            self._held_init.partial_messages = partial
            self._route(out, self._held_init)
            self._held_init = None
        raw_ts = record.get("timestamp")
        if raw_ts is not None and normalize_ts(raw_ts) is None:
            self._route(out, src.time_problem("timestamp", raw_ts, where, self._session))
        try:
            self._translate(record, out)
        except cc.BodyError as exc:
            self._route(out, cc.body_problem(exc, record, where, self._session))
        return out

    def finish(self) -> Iterable[ev.Event]:
        out: list[ev.Event] = []
        if self._held_init is not None:
            self._route(out, self._held_init)
            self._held_init = None
        while self._runs:
            run = self._runs.popleft()
            ext: ev.JSON = {"interrupt": run.interrupt} if run.interrupt else {"cut_off": True}
            out.append(
                ev.RunEnd(
                    self._session or "unknown",
                    None,
                    subtype="interrupted",
                    num_turns=run.count.value,
                    extension=ext,
                )
            )
            if self._later:
                out += self._later.popleft()
        while self._later:
            out += self._later.popleft()
        return out

    # -- runs -------------------------------------------------------------------

    def _route(self, out: list[ev.Event], event: ev.Event) -> None:
        """Live for the oldest open run; held for runs that began before it ended."""
        if self._later:
            self._later[-1].append(event)
        else:
            out.append(event)

    def _translate(self, rec: dict[str, Any], out: list[ev.Event]) -> None:
        kind = rec.get("type")
        sid = rec.get("session_id")
        if type(kind) not in STR_OR_NONE or type(sid) not in STR_OR_NONE:
            src.expect_strings(rec, _NAMING_KEYS)  # (raises: inline first, it is hot)
        if isinstance(sid, str):
            self._session = sid
        session = self._session or "unknown"
        if kind == "system":
            subtype = rec.get("subtype")
            if not isinstance(subtype, str):
                raise cc.BodyError("system record without a subtype")
            if subtype == "init":
                self._start(rec, session)
            elif subtype == "session_state_changed":
                self._route(out, _state(rec, session))
            else:
                self._route(out, _note(rec, subtype, session))
        elif kind == "assistant" or kind == "user":
            msg = _message(rec, kind, session)
            text = cc.text_of(msg.content) if kind == "user" else None
            if not self._runs and text is not None and cc.local_command_output(text) is not None:
                # A local command's output echoed between runs (the /model a host's
                # set_model ran, x_sdk_two_prompts): no run of its own (the CLI prints
                # no result for it); a line of the next run.
                self._route(
                    out,
                    ev.Note("local_command_output", session, msg.ts, {"body": text}, msg.extension),
                )
                return
            if self._runs and msg.parent_tool_use_id is None and cc.is_interrupt(text):
                # The CLI's interrupt marker: the run was stopped (as the durable view
                # ends it); not a line of the conversation.
                self._current_run().interrupt = text
                self._route(out, ev.Dropped("user/interrupt", session))
                return
            self._tally(msg)
            self._route(out, msg)
        elif kind == "stream_event":
            self._route(out, self._delta(rec, session))
        elif kind == "result":
            self._end(rec, session, out)
        elif kind == "rate_limit_event":
            ext = rest(rec, ("type", "session_id"))
            self._route(out, ev.Note("rate_limit", session, None, extension=ext))
        elif kind in _HOST_PROTOCOL:
            # An SDK host's protocol (answers to its initialize, set_model, interrupt;
            # the CLI's prompt suggestions): no activity of a run, and none is opened
            # for it (capture: x_sdk_two_prompts).
            self._route(out, ev.Dropped(kind, session))
        elif kind == "control_request":
            ext = rest(rec, ("type", "session_id"))
            self._route(out, ev.Note("control_request", session, None, extension=ext))
        else:
            name = kind if isinstance(kind, str) else "<no type>"
            self._route(
                out, ev.Unrecognized(name, session, normalize_ts(rec.get("timestamp")), rec)
            )

    def _current_run(self) -> _Run:
        """The run a line now belongs to: the newest, if one began early, else the
        live one (the same choice :meth:`_route` makes for the line itself)."""
        return self._runs[-1] if self._later else self._runs[0]

    def _tally(self, msg: ev.Message) -> None:
        """Count a main-thread line toward its run (the newest, if one began early)."""
        if not self._runs or msg.parent_tool_use_id is not None:
            return
        run = self._current_run()
        if msg.role == "user":
            run.count.user_records += 1
        elif msg.usage is not None:
            run.api_call = True

    def _start(self, rec: dict[str, Any], session: str) -> None:
        if self._runs:
            self._later.append([])
        self._runs.append(_Run())
        line, ext = src.take(rec, _INIT)
        tools, servers = line["tools"], line["mcp_servers"]
        # Tools and servers of another shape are kept, in the extension.
        if tools is not None and not _str_list(tools):
            ext["tools"] = tools
            tools = None
        if servers is not None and not isinstance(servers, list):
            ext["mcp_servers"] = servers
            servers = None
        self._held_init = ev.RunStart(
            session_id=session,
            ts=normalize_ts(rec.get("timestamp")),
            agent_name=cc.AGENT_NAME,
            provider=cc.PROVIDER,
            model=line["model"],
            cwd=line["cwd"],
            tools=tools,
            mcp_servers=servers,
            extension=ext,
        )

    def _end(self, rec: dict[str, Any], session: str, out: list[ev.Event]) -> None:
        # The result belongs to the oldest open run, which is the live one: it goes
        # out now, then the held lines of the run that began early, live from here on.
        run = self._runs.popleft() if self._runs else _Run()
        end = results.run_end(rec, session, run.api_call)
        if "model_usage_since_last_result" not in end.extension and end.model_usage:
            last, self._process_usage = self._process_usage, end.model_usage
            end.model_usage = results.run_share(end, last)
        out.append(end)
        if self._later:
            out += self._later.popleft()

    def _delta(self, rec: dict[str, Any], session: str) -> ev.Event:
        event = rec.get("event")
        if not isinstance(event, dict):
            raise cc.BodyError("stream_event record without an event object")
        parent = string(rec.get("parent_tool_use_id"))
        ts = normalize_ts(rec.get("timestamp"))
        etype = event.get("type")
        index = ev.whole(event.get("index"))
        if etype == "message_start":
            for key in [k for k in self._tool_ids if k[0] == parent]:
                del self._tool_ids[key]
        if etype == "content_block_start" and index is not None:
            block = event.get("content_block")
            if isinstance(block, dict) and block.get("type") in ("tool_use", "server_tool_use"):
                tool_id = block.get("id")
                if isinstance(tool_id, str):
                    self._tool_ids[(parent, index)] = tool_id
        if isinstance(etype, str) and etype in _PASSED_EVENTS:
            return ev.Dropped(f"stream_event/{etype}", session)
        if etype != "content_block_delta":
            return ev.Delta(session, ts, event, parent)
        delta = event.get("delta")
        if not isinstance(delta, dict):
            raise cc.BodyError("content_block_delta without a delta object")
        dtype = delta.get("type")
        if dtype == "signature_delta":
            return ev.Dropped("stream_event/signature_delta", session)
        if dtype == "input_json_delta":
            payload: ev.JSON = {"type": "tool_args_delta"}
            tool_id = self._tool_ids.get((parent, index)) if index is not None else None
            if tool_id is not None:
                payload["tool_use_id"] = tool_id
            if index is not None:
                payload["index"] = index
            payload["partial_json"] = delta.get("partial_json", "")
            return ev.Delta(session, ts, payload, parent)
        return ev.Delta(session, ts, event, parent)


@persisted
class _Run:
    """What the stream shows of an open run, for the rules its result may need."""

    __slots__ = ("api_call", "count", "interrupt")

    def __init__(self) -> None:
        self.count = cc.TurnCount()
        self.api_call = False  # a main-thread message of a real API call
        self.interrupt: str | None = None


_REPLAY_KEYS = frozenset({"type", "message", "session_id", "parent_tool_use_id"})


def _replayed_prompt(rec: dict[str, Any]) -> bool:
    """A prompt echoed by ``--replay-user-messages`` (not a message the CLI made:
    those are ``isSynthetic``; not a local command's replayed output)."""
    if rec.get("type") != "user" or rec.get("isReplay") is not True:
        return False
    if rec.get("isSynthetic") is True or rec.get("parent_tool_use_id") is not None:
        return False
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, str | list) or cc.has_tool_result(content):
        return False
    return not (cc.text_of(content) or "").lstrip().startswith("<local-command-")


def _str_list(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _message(rec: dict[str, Any], kind: str, session: str) -> ev.Message:
    message = cc.message_of(rec, kind)
    content = cc.content_blocks(message.get("content"))
    return ev.Message(
        role=kind,
        session_id=session,
        ts=normalize_ts(rec.get("timestamp")),
        content=content,
        message_id=string(message.get("id")),
        parent_tool_use_id=string(rec.get("parent_tool_use_id")),
        tool_use_result=rec.get("tool_use_result"),
        has_tool_use_result="tool_use_result" in rec,
        model=string(message.get("model")),
        stop_reason=string(message.get("stop_reason")),
        usage=cc.message_usage(message) if kind == "assistant" else None,
        extension=cc.message_extension(rec, _LINE_KEYS, message),
    )


#: Record types of an SDK host's protocol, dropped on purpose (counted).
_HOST_PROTOCOL = frozenset({"control_response", "control_cancel_request", "prompt_suggestion"})


def _state(rec: dict[str, Any], session: str) -> ev.Note:
    """``system/session_state_changed`` (``running``, ``idle``, …): stream_v1's
    ``system/state`` with ``session_state``."""
    body = rest(rec, ("type", "subtype", "session_id", "state"))
    ts = normalize_ts(body.pop("timestamp", None))
    state = rec.get("state")
    fields: ev.JSON = {"session_state": state} if isinstance(state, str) else {}
    return ev.Note("state", session, ts, fields, body)


def _note(rec: dict[str, Any], subtype: str, session: str) -> ev.Note:
    body = rest(rec, ("type", "subtype", "session_id"))
    parent = string(body.pop("parent_tool_use_id", None))
    ts = normalize_ts(body.pop("timestamp", None))
    if subtype.startswith("task_"):
        fields: ev.JSON = {}
        for key in ("task_id", "status"):
            if isinstance(body.get(key), str):
                fields[key] = body.pop(key)
        if body:
            fields["task"] = body
        return ev.Note(subtype, session, ts, fields, {}, parent)
    if subtype == "background_tasks_changed" and isinstance(body.get("tasks"), list):
        ids = [t["task_id"] for t in body["tasks"] if isinstance(t, dict) and "task_id" in t]
        return ev.Note(subtype, session, ts, {"running_ids": ids}, body)
    return ev.Note(subtype, session, ts, body, {}, parent)


MAPPING = (
    Row(
        "init",
        "`system/init`",
        "`system/init`: `cwd`, `tools`, `mcp_servers` (`{name, status}`), `agent.model`; "
        "every other key (`permissionMode`, `apiKeySource`, `claude_code_version`, "
        "`slash_commands`, …) in `extension`. `capabilities`: `stream_v1`, plus "
        "`partial_messages_v1` when the next record is a `stream_event` or `system/status` "
        "(the init is held for one record to see it)",
    ),
    Row(
        "before_init",
        "`system/hook_started`, `hook_response`, `status` … before the first `system/init`",
        "kept, framed as the next run's lines right after its init",
    ),
    Row(
        "assistant",
        "`assistant`",
        "`assistant`, one line per record (one content block each, any block type, "
        "carried whole); `message.id` kept; `model`, `stop_reason`, `usage`, … in "
        "`extension.message`; `uuid`, `request_id`, `error`, `is_api_error_message`, "
        "`tool_use_meta`, … in `extension`. A `<synthetic>` message adds no usage",
    ),
    Row(
        "user",
        "`user`",
        "`user`: tool_result blocks, text (a replayed or injected message: `isSynthetic`, "
        "`isReplay` in `extension`); `tool_use_result` as written (object, string or list); "
        "counts toward `num_turns` when the stream has no result",
    ),
    Row(
        "text_delta",
        "`stream_event` `content_block_delta` `text_delta` / `thinking_delta`",
        "`stream_event` `content_block_delta` (`index`, `delta`)",
    ),
    Row(
        "json_delta",
        "`stream_event` `content_block_delta` `input_json_delta`",
        "`stream_event` `tool_args_delta` (`tool_use_id` from the block's "
        "`content_block_start`, `index`, `partial_json`)",
    ),
    Row(
        "signature",
        "`stream_event` `signature_delta`",
        "dropped on purpose: the complete signature is in the thinking block",
    ),
    Row(
        "api_framing",
        "`stream_event` `message_start`, `content_block_start`, "
        "`content_block_stop`, `message_delta`, `message_stop`",
        "dropped on purpose: API framing; the completed blocks arrive as assistant lines",
    ),
    Row(
        "other_event",
        "`stream_event` of another type",
        "`stream_event` with its type, payload in `extension`",
    ),
    Row(
        "result",
        "`result`",
        "`result`: `subtype`, `is_error`, `result`, `num_turns`, `duration_ms`, "
        "`stop_reason`, `ttft_ms`, `total_cost_usd` (1.0.x: `total_cost`), `usage`; "
        "`model_usage` from `model_usage_since_last_result`, else `modelUsage` (the "
        "process's running total: the run's share is its difference to the last "
        "result's, the total kept in `extension.process_model_usage`; smaller than the "
        "last, another process: taken whole); `total_cost_usd` as the CLI gives it (a "
        "running total too); the rest (`terminal_reason`, `errors`, "
        "`structured_output`, …) in `extension`",
    ),
    Row(
        "result_zero_usage",
        "`result` with all-zero `usage` after real API calls (the CLI "
        "stopped early: `--max-budget-usd`)",
        "`usage` = the sum of `model_usage_since_last_result`; the printed usage in "
        "`extension.usage`",
    ),
    Row(
        "no_result",
        "end of the stream before a run's `result` (a killed CLI)",
        "`result/interrupted` (`is_error: true`, `extension.cut_off`), `num_turns` by the "
        "Claude rule (the prompt plus each main-thread user line)",
    ),
    Row(
        "task",
        "`system/task_started`, `task_progress`, `task_updated`, `task_notification`",
        "same subtype: `task_id`, `status`; the rest in `task`",
    ),
    Row(
        "bg_tasks",
        "`system/background_tasks_changed`",
        "same subtype: `running_ids`; `tasks` in `extension`",
    ),
    Row(
        "system_other",
        "`system/status`, `compact_boundary`, `notification`, other subtypes",
        "same subtype: catalog fields (`status`, …) kept, the rest in `extension`",
    ),
    Row("rate_limit", "`rate_limit_event`", "`system/rate_limit`, the record in `extension`"),
    Row(
        "state",
        "`system/session_state_changed` (`running`, `idle`, …)",
        "`system/state` with `session_state`. Between two runs (an `idle` after a result, "
        "a `running` before an init) it is a line of the next run; after the last run it is "
        "dropped and counted (`between_runs/state`): no run is made for it",
    ),
    Row(
        "host_protocol",
        "`control_response`, `control_cancel_request`, `prompt_suggestion` "
        "(an SDK host's `--input-format stream-json` session)",
        "dropped on purpose, counted: protocol answers and UI suggestions, never a run",
    ),
    Row(
        "control_request",
        "`control_request` (the CLI asking its host: `can_use_tool`, …)",
        "`system/control_request`, the record in `extension`; between runs, a line of the next run",
    ),
    Row(
        "local_echo",
        "`user` `<local-command-stdout>` between runs (a host's `set_model` runs `/model`)",
        "`system/local_command_output` (`body`), a line of the next run: "
        "the CLI prints no result for it",
    ),
    Row(
        "unknown",
        "anything else (`command_lifecycle`, …)",
        "`system/unrecognized`, the record whole in `extension.record`",
    ),
)


SOURCE = src.Source(
    name="claude-stream",
    description="Claude Code print-mode stdout (claude -p --verbose --output-format stream-json)",
    sniff=sniff,
    open=ClaudeStreamAdapter,
    mapping=MAPPING,
)
