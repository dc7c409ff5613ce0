"""Claude Code durable session files: ``~/.claude/projects/<project>/<session>.jsonl``.

Also subagent files, ``<session>/subagents/**/agent-<id>.jsonl``, whose
``agent-<id>.meta.json`` sidecar names the spawning tool_use (``toolUseId``); the
older flat ``<project>/agent-<id>.jsonl``; and 1.0.x files that keep subagent
(sidechain) records inline in the main file.

Records are camelCase, one per content block (the blocks of one API message share
``message.id`` and its usage). There is no ``system/init`` and no result.

Record catalog → what it becomes (docs/mapping.md has the full table):

* ``user`` prompt (text/image content, not ``isMeta``) — starts a run: a
  synthetic system/init (cwd and the record's other keys; the prompt itself in
  ``extension.prompt``, never echoed as a user line, as in print mode). A
  ``<command-name>`` record is a prompt too (a slash command starts a turn).
* ``user`` with tool_result blocks — user line, ``toolUseResult`` →
  ``tool_use_result`` as written.
* ``user`` ``[Request interrupted by user…]`` — ends the run: ``interrupted``.
* ``user`` ``<local-command-stdout>`` / ``<bash-stdout>`` … — system/local_command_output.
* ``user`` ``isCompactSummary`` — system/compact_summary; ``isMeta`` — dropped.
* ``assistant`` — assistant line (one block each, as written); model, stop_reason
  and usage in ``extension.message``. The init waits for the first of these, so it
  can name the model.
* ``system/turn_duration`` — ends the run (``duration_ms``); interactive only.
* ``cost-state`` — ends the run of a print-mode invocation (``total_cost_usd``).
* ``attachment/max_turns_reached`` — the run's result is ``error_max_turns``.
* ``system/local_command`` — a ``<command-name>`` starts a run; output is a note.
* ``system/<other>`` — system line, same subtype; no subtype (1.0.x hook output)
  → system/notification with ``body``.
* metadata (attachment, file-history-snapshot, api-request*, queue-operation,
  last-prompt, tools-used, atis-latch, mode, permission-mode, summary, custom-title,
  ai-title, agent-name, pr-link, progress): dropped on purpose, counted in the
  run's result ``extension.dropped``.
* anything else — system/unrecognized, the record whole in ``extension``.

Where no marker ends a turn (most files before 2.1.x), the next prompt or the end
of the file does: the turn is complete when its last word was the model's and no
tool call is left unanswered; otherwise it was cut off (``interrupted``).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import orjson

from adapters import _claude as cc
from translator.events import (
    JSON,
    Dropped,
    Event,
    Message,
    Note,
    RunEnd,
    RunStart,
    Unrecognized,
)
from translator.sources import Source, Where
from translator.timefmt import normalize_ts

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

_INTERRUPT = "[Request interrupted by user"
_LOCAL_OUTPUT = (
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<bash-stdout>",
    "<bash-stderr>",
)
_COMMAND = re.compile(r"<command-name>")
_UUIDISH = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")


def sniff(record: dict[str, Any]) -> int:
    if "sessionId" in record or "parentUuid" in record or "leafUuid" in record:
        return 100
    if record.get("type") in METADATA_TYPES:
        return 95
    return 0


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


class _Turn:
    """What the adapter knows of the open run, to end it the way its source did."""

    def __init__(self) -> None:
        self.started = False  # RunStart emitted
        self.expects_reply = True
        self.replied = False
        self.last_is_model = False
        self.unanswered: set[str] = set()
        self.last_stop: str | None = None
        self.max_turns: int | None = None
        self.interrupted: str | None = None


class ClaudeSessionAdapter:
    def __init__(self, path: str, session_id: str | None = None) -> None:
        self._path = path
        p = Path(path)
        self._agent_id: str | None = p.stem[6:] if p.name.startswith("agent-") else None
        self._subagent = self._agent_id is not None
        self._meta = _read_meta(p) if self._subagent else {}
        parent = self._meta.get("toolUseId")
        self._parent: str | None = parent if isinstance(parent, str) else None
        self._parent_looked = self._parent is not None
        self._session: str | None = session_id or session_hint(path)
        self._pending: RunStart | None = None
        self._turn: _Turn | None = None
        self._task_prompts: dict[str, str] = {}  # Task prompt text → tool_use id
        self._side_parent: dict[str, str | None] = {}  # sidechain uuid → tool_use id

    # -- the adapter contract -------------------------------------------------

    def feed(self, record: dict[str, Any], where: Where) -> Iterable[Event]:
        out: list[Event] = []
        sid = record.get("sessionId")
        if isinstance(sid, str) and (self._session is None or self._turn is None):
            self._session = sid
        try:
            self._translate(record, where, out)
        except cc.BodyError as exc:
            out.append(cc.body_problem(exc, record, where, self._session))
        return out

    def finish(self) -> Iterable[Event]:
        out: list[Event] = []
        if self._turn is not None:
            self._end(out, None, inferred=True)
        return out

    # -- records ----------------------------------------------------------------

    @property
    def _sid(self) -> str:
        return self._session or "unknown"

    def _translate(self, rec: dict[str, Any], where: Where, out: list[Event]) -> None:
        kind = rec.get("type")
        ts = normalize_ts(rec.get("timestamp"))
        if kind == "user":
            self._user(rec, ts, out)
        elif kind == "assistant":
            self._assistant(rec, ts, out)
        elif kind == "system":
            self._system(rec, ts, out)
        elif kind == "cost-state":
            self._cost_state(rec, out)
        elif kind in METADATA_TYPES:
            if kind == "attachment":
                att = rec.get("attachment")
                sub = att.get("type") if isinstance(att, dict) else None
                if sub == "max_turns_reached" and self._turn is not None and isinstance(att, dict):
                    count = att.get("turnCount")
                    self._turn.max_turns = count if isinstance(count, int) else -1
                kind = f"attachment/{sub}" if isinstance(sub, str) else "attachment"
            elif kind == "progress":
                data = rec.get("data")
                sub = data.get("type") if isinstance(data, dict) else None
                kind = f"progress/{sub}" if isinstance(sub, str) else "progress"
            out.append(Dropped(str(kind), self._session))
        else:
            name = kind if isinstance(kind, str) else "<no type>"
            out.append(Unrecognized(name, self._session, ts, rec, self._nested_parent(rec)))

    def _user(self, rec: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        message = cc.message_of(rec, "user")
        content = message.get("content")
        if content is None:
            raise cc.BodyError("user record whose message has no content")
        if rec.get("isMeta") is True:
            out.append(Dropped("user/isMeta", self._session))
            return
        if rec.get("isCompactSummary") is True:
            out.append(Note("compact_summary", self._sid, ts, extension={"content": content}))
            return
        inline_side = rec.get("isSidechain") is True and not self._subagent
        if cc.has_tool_result(content) or not isinstance(content, str | list):
            parent = self._nested_parent(rec)
            self._ensure_started(out, None)
            msg = Message(
                role="user",
                session_id=self._sid,
                ts=ts,
                content=cc.content_blocks(content),
                parent_tool_use_id=parent,
                tool_use_result=rec.get("toolUseResult"),
                has_tool_use_result="toolUseResult" in rec,
                extension=_extension(rec, message),
                foreign=parent is None and self._is_nested(rec) and not self._subagent,
            )
            out.append(msg)
            if self._turn is not None and self._is_own(rec):
                for block in msg.content:
                    if block.get("type") == "tool_result":
                        self._turn.unanswered.discard(str(block.get("tool_use_id")))
                self._turn.last_is_model = False
            return
        text = cc.text_of(content) or ""
        if inline_side:
            # A subagent's prompt, inline (1.0.x): a user line of the nested actor.
            parent = self._nested_parent(rec, prompt=text)
            self._ensure_started(out, None)
            out.append(
                Message(
                    "user",
                    self._sid,
                    ts,
                    cc.content_blocks(content),
                    parent_tool_use_id=parent,
                    extension=_extension(rec, message),
                    foreign=parent is None,
                )
            )
            return
        if text.startswith(_INTERRUPT):
            if self._turn is not None:
                self._turn.interrupted = text
                self._end(out, ts)
            else:
                out.append(Note("interrupted", self._sid, ts, {"body": text}))
            return
        if text.lstrip().startswith(_LOCAL_OUTPUT):
            self._local_output(text, ts, out)
            return
        self._prompt(rec, content, ts, out)

    def _prompt(self, rec: dict[str, Any], content: Any, ts: str | None, out: list[Event]) -> None:
        if self._turn is not None:
            self._end(out, None, inferred=True)
        ext: JSON = {"prompt": content}
        ext.update({k: v for k, v in rec.items() if k not in ("type", "message", "cwd")})
        if self._subagent and self._meta:
            ext["subagent"] = self._meta
        cwd = rec.get("cwd")
        role = None
        if self._subagent:
            agent_type = self._meta.get("agentType")
            role = agent_type if isinstance(agent_type, str) else "subagent"
        self._pending = RunStart(
            session_id=self._sid,
            ts=ts,
            agent_name=cc.AGENT_NAME,
            provider=cc.PROVIDER,
            agent_role=role,
            cwd=cwd if isinstance(cwd, str) else None,
            parent_tool_use_id=self._subagent_parent(rec),
            extension=ext,
        )
        self._turn = _Turn()

    def _local_output(self, text: str, ts: str | None, out: list[Event]) -> None:
        if self._turn is not None:
            self._turn.expects_reply = False
            self._ensure_started(out, None)
        out.append(Note("local_command_output", self._sid, ts, {"body": text}))

    def _assistant(self, rec: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        message = cc.message_of(rec, "assistant")
        content = cc.content_blocks(message.get("content"))
        model = message.get("model")
        model = model if isinstance(model, str) else None
        stop = message.get("stop_reason")
        stop = stop if isinstance(stop, str) else None
        msg_id = message.get("id")
        # _is_own/_is_nested/_nested_parent spelled out: this runs for every record.
        side = rec.get("isSidechain") is True
        own = self._subagent or not side
        nested = self._subagent or side
        if self._pending is not None:
            self._ensure_started(out, model if own else None)
        parent = self._nested_parent(rec) if nested else None
        out.append(
            Message(
                role="assistant",
                session_id=self._sid,
                ts=ts,
                content=content,
                message_id=msg_id if isinstance(msg_id, str) else None,
                parent_tool_use_id=parent,
                model=model,
                stop_reason=stop,
                usage=cc.usage_from_api(message.get("usage")),
                extension=_extension(rec, message),
                foreign=nested and parent is None and not self._subagent,
            )
        )
        for block in content:
            if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                prompt = (
                    block.get("input", {}).get("prompt")
                    if isinstance(block.get("input"), dict)
                    else None
                )
                if isinstance(prompt, str):
                    self._task_prompts[prompt] = block["id"]
                if self._turn is not None and own:
                    self._turn.unanswered.add(block["id"])
        if self._turn is not None and own:
            self._turn.replied = True
            self._turn.last_is_model = True
            if stop is not None:
                self._turn.last_stop = stop

    def _system(self, rec: dict[str, Any], ts: str | None, out: list[Event]) -> None:
        subtype = rec.get("subtype")
        if subtype == "turn_duration" and self._is_own(rec):
            if self._turn is not None:
                duration = rec.get("durationMs")
                self._end(
                    out,
                    ts,
                    duration_ms=duration if isinstance(duration, int) else None,
                    extension=_rest(rec, ("subtype", "durationMs")),
                )
            else:
                out.append(Dropped("system/turn_duration", self._session))
            return
        body = _rest(rec, ("subtype",))
        content = rec.get("content")
        if subtype == "local_command" and isinstance(content, str):
            if _COMMAND.search(content) and not content.lstrip().startswith(_LOCAL_OUTPUT):
                self._prompt(rec, content, ts, out)
            else:
                self._local_output(content, ts, out)
            return
        if not isinstance(subtype, str):
            fields: JSON = {}
            if isinstance(content, str):
                fields["body"] = body.pop("content")
            if isinstance(rec.get("level"), str):
                fields["severity"] = body.pop("level")
            out.append(Note("notification", self._sid, ts, fields, body, self._nested_parent(rec)))
            return
        out.append(Note(subtype, self._sid, ts, {}, body, self._nested_parent(rec)))

    def _cost_state(self, rec: dict[str, Any], out: list[Event]) -> None:
        if self._turn is None:
            out.append(Dropped("cost-state", self._session))
            return
        cost = rec.get("totalCostUSD")
        self._end(
            out,
            None,
            total_cost_usd=cost
            if isinstance(cost, int | float) and not isinstance(cost, bool)
            else None,
            extension={"cost_state": _rest(rec, ())},
        )

    # -- runs ---------------------------------------------------------------------

    def _ensure_started(self, out: list[Event], model: str | None) -> None:
        if self._pending is not None:
            if model and not self._pending.model:
                self._pending.model = model
            out.append(self._pending)
            self._pending = None
            if self._turn is not None:
                self._turn.started = True

    def _end(
        self,
        out: list[Event],
        ts: str | None,
        inferred: bool = False,
        duration_ms: int | None = None,
        total_cost_usd: float | None = None,
        extension: JSON | None = None,
    ) -> None:
        turn = self._turn
        assert turn is not None
        self._ensure_started(out, None)
        ext: JSON = dict(extension or {})
        subtype = "success"
        num_turns: int | None = None
        stop: str | None = None
        if turn.max_turns is not None:
            subtype = "error_max_turns"
            num_turns = turn.max_turns if turn.max_turns >= 0 else None
        elif turn.interrupted is not None:
            subtype = "interrupted"
            ext["interrupt"] = turn.interrupted
        elif inferred and not self._complete(turn):
            subtype = "interrupted"
            ext["cut_off"] = True
        if subtype == "success" and turn.last_stop == "refusal":
            subtype = "refused"
        if not turn.replied and not turn.expects_reply:
            num_turns = 0
        out.append(
            RunEnd(
                session_id=self._sid,
                ts=ts,
                subtype=subtype,
                num_turns=num_turns,
                duration_ms=duration_ms,
                stop_reason=stop,
                total_cost_usd=total_cost_usd,
                extension=ext,
            )
        )
        self._turn = None

    @staticmethod
    def _complete(turn: _Turn) -> bool:
        if not turn.replied:
            return not turn.expects_reply
        return turn.last_is_model and not turn.unanswered and turn.last_stop != "tool_use"

    # -- nested actors ----------------------------------------------------------------

    def _is_nested(self, rec: dict[str, Any]) -> bool:
        return self._subagent or rec.get("isSidechain") is True

    def _is_own(self, rec: dict[str, Any]) -> bool:
        """Is the record the run's own actor's (not an inline subagent's)?"""
        return self._subagent or rec.get("isSidechain") is not True

    def _nested_parent(self, rec: dict[str, Any], prompt: str | None = None) -> str | None:
        """parent_tool_use_id for a record: set exactly when its actor is nested."""
        if self._subagent:
            return self._subagent_parent(rec)
        if rec.get("isSidechain") is not True:
            return None
        uuid = rec.get("uuid")
        parent_uuid = rec.get("parentUuid")
        parent: str | None = None
        if isinstance(parent_uuid, str) and parent_uuid in self._side_parent:
            parent = self._side_parent[parent_uuid]
        elif prompt is not None:
            parent = self._task_prompts.get(prompt)
        if isinstance(uuid, str):
            self._side_parent[uuid] = parent
        return parent

    def _subagent_parent(self, rec: dict[str, Any]) -> str | None:
        if not self._subagent:
            return None
        if not self._parent_looked:
            self._parent_looked = True
            agent = rec.get("agentId")
            agent_id = agent if isinstance(agent, str) else self._agent_id
            if agent_id:
                self._parent = _find_spawning_tool_use(Path(self._path), agent_id, self._session)
        return self._parent


def _rest(rec: dict[str, Any], used: tuple[str, ...]) -> JSON:
    return {k: v for k, v in rec.items() if k not in CONTEXT_KEYS and k not in used}


_NOT_IN_EXTENSION = CONTEXT_KEYS | {"toolUseResult"}


def _extension(rec: dict[str, Any], message: dict[str, Any]) -> JSON:
    # (A filtering comprehension measured faster on these records than popping the
    # context keys from a copy, or than a cache of record layouts.)
    ext = {k: v for k, v in rec.items() if k not in _NOT_IN_EXTENSION}
    inner = message.copy()
    inner.pop("content", None)
    inner.pop("id", None)
    inner.pop("role", None)
    if inner:
        ext["message"] = inner
    return ext


def _read_meta(path: Path) -> JSON:
    sidecar = path.with_name(path.name[: -len(".jsonl")] + ".meta.json")
    try:
        value = orjson.loads(sidecar.read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def _find_spawning_tool_use(path: Path, agent_id: str, session: str | None) -> str | None:
    """Without a sidecar: the parent session file names the tool_use that spawned an
    agent (a tool_result whose toolUseResult.agentId is it, or a progress record)."""
    candidates = []
    for parent in path.parents:
        if parent.name == "subagents":
            candidates.append(parent.parent.with_suffix(".jsonl"))
            break
    if session:
        candidates.append(path.parent / f"{session}.jsonl")
    needle = agent_id.encode()
    for candidate in candidates:
        if candidate == path or not candidate.is_file():
            continue
        try:
            with candidate.open("rb") as fh:
                for raw in fh:
                    if needle not in raw:
                        continue
                    found = _spawner_in(raw, agent_id)
                    if found:
                        return found
        except OSError:
            continue
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
        tool = rec.get("parentToolUseID") or rec.get("toolUseID")
        return tool if isinstance(tool, str) else None
    result = rec.get("toolUseResult")
    if isinstance(result, dict) and result.get("agentId") == agent_id:
        message = rec.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    tool = block.get("tool_use_id")
                    return tool if isinstance(tool, str) else None
    return None


SOURCE = Source(
    name="claude-session",
    description="Claude Code durable session files (~/.claude/projects/**/*.jsonl)",
    sniff=sniff,
    open=ClaudeSessionAdapter,
    session_hint=session_hint,
)
