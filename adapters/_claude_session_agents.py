"""Subagent files: a subagent's own file, linked to the tool call that spawned it.

Apart from the adapter's dispatch because the link is found outside the records
being read: in the file's ``agent-<id>.meta.json`` sidecar (``toolUseId``), else in
the parent session file (searched as it grows), else told by the session
(:meth:`ClaudeSessionAdapter.learn_spawner`). Until then the file's lines wait.
The state is the adapter's own (``_parent``, ``_parent_looked``, ``_agent_id``,
``_unlinked``, ``_searched``, ``_meta``: it checkpoints them); these functions are
what works on it, and on the sidecar and parent files.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from streamv1.adapters import _claude as cc
from streamv1.adapters import _claude_session_lines as lines
from streamv1.translator.model import events as ev
from streamv1.translator.reading.files import SIDECAR_LIMIT, lines_of, open_regular, read_regular
from streamv1.translator.reading.sources import string
from streamv1.translator.timefmt import normalize_ts

if TYPE_CHECKING:
    from streamv1.adapters.claude_session import ClaudeSessionAdapter

#: A side call's file: the CLI names a forked side call's agent ``a<label>-<hex>``
#: (its ``forkLabel``: ``prompt_suggestion``, ``extract_memories``, ...); a subagent
#: of the Agent or Workflow tool is ``a<hex>``.
_SIDE_CALL = re.compile(r"agent-a(?P<kind>[\w-]+)-[0-9a-f]+\.jsonl")
_HEX = re.compile(r"[0-9a-f]+")


def side_call_kind(path: Path, meta: ev.JSON) -> str | None:
    """The kind of side call a file holds (``agent-a<kind>-<hex>.jsonl`` with no
    ``.meta.json`` sidecar: no spawning call, no agent type), else None. A labelled
    agent with a sidecar (a teammate, named by its name) is a subagent."""
    match = _SIDE_CALL.fullmatch(path.name)
    if match is None or meta or _HEX.fullmatch(match["kind"]):
        return None
    return match["kind"]


def side_call(a: ClaudeSessionAdapter, rec: dict[str, Any]) -> list[ev.Event]:
    """A side call's record: no line of its own, no run, no actor. Its own API calls
    (the assistant records after its prompt, the file's first user prompt) are
    :class:`~translator.model.events.SideCall` events: their tokens are the session's.
    Records before its prompt are the main thread's that the CLI wrote here instead
    of the main file (2.1.29: the turn's last reply, which the main file's next
    prompt names as its ``parentUuid``; capture ours/x_prompt_suggestion_tui): they
    are main-thread lines, framed in time order in the main file's run."""
    kind = rec.get("type")
    session = a._session
    message = rec.get("message")
    ts = normalize_ts(rec.get("timestamp"))
    if not isinstance(message, dict) or kind not in ("user", "assistant"):
        return [ev.Dropped(f"side_call/{a._side_kind}", session)]
    content = message.get("content")
    if not a._side_prompted:
        sid = a._sid
        if kind == "assistant":
            return [lines.assistant(rec, message, ts, sid, None, {})]
        if cc.has_tool_result(content):
            return [lines.user(rec, message, content, ts, sid, None)]
        a._side_prompted = True
    if kind == "assistant":
        return [
            ev.SideCall(
                session,
                ts,
                f"side_call/{a._side_kind}",
                string(message.get("id")),
                string(message.get("model")),
                cc.message_usage(message),
            )
        ]
    return [ev.Dropped(f"side_call/{a._side_kind}", session)]


def parent(a: ClaudeSessionAdapter, rec: dict[str, Any]) -> str | None:
    """A subagent file's spawning tool_use, looked for at its first record (which
    may name the agent); None where this is no subagent file, or none is found yet
    (its events are held from this record on)."""
    if not a._subagent:
        return None
    if not a._parent_looked:
        a._parent_looked = True
        agent = rec.get("agentId")
        if isinstance(agent, str):
            a._agent_id = agent
        a._first_ts = normalize_ts(rec.get("timestamp"))
        if not look_for_parent(a) and a._agent_id:
            a._unlinked = []  # this record's events are the first held
    return a._parent


def look_for_parent(a: ClaudeSessionAdapter) -> bool:
    """Is the spawner known (searched for in the parent file, past what was read)?"""
    if a._parent is None and a._agent_id:
        a._parent = search_spawner(Path(a._path), a._agent_id, a._session, a._searched, a._first_ts)
    return a._parent is not None


def release(a: ClaudeSessionAdapter) -> list[ev.Event]:
    """The held events, with the parent link where it was found."""
    held, a._unlinked = a._unlinked or [], None
    return ev.linked(held, a._parent)


def mark_actor(a: ClaudeSessionAdapter, events: list[ev.Event]) -> None:
    """A subagent file's runs are one nested actor's: its starts, ends and
    messages say so, with its spawning tool_use where known, else its name."""
    name = f"agent-{a._agent_id}" if a._agent_id else os.path.basename(a._path)
    for event in events:
        if isinstance(event, ev.RunStart | ev.RunEnd | ev.Message):
            if event.parent_tool_use_id is None:
                event.parent_tool_use_id = a._parent
            event.actor = name


def run_start(
    a: ClaudeSessionAdapter, rec: dict[str, Any], content: Any, ts: str | None
) -> ev.RunStart:
    """A subagent file's run start: its role (the sidecar's ``agentType``), its
    spawner, and its task (the agent id, the sidecar's description) for the
    task_started line it becomes inside its parent's run."""
    agent_type = a._meta.get("agentType")
    role = agent_type if isinstance(agent_type, str) else "subagent"
    start = lines.run_start(rec, content, ts, a._sid, role, parent(a, rec))
    task: ev.JSON = {}
    if a._agent_id:
        task["task_id"] = a._agent_id
    description = a._meta.get("description")
    if isinstance(description, str):
        task["description"] = description
    if a._meta.get("requestShape") == "background":
        # Print mode's task_started says it (``is_backgrounded``): its end is its own
        # notification, never the answer to its call (the launch).
        task["is_backgrounded"] = True
    start.task = task
    if a._meta:
        start.extension["subagent"] = a._meta
    return start


def read_meta(path: Path) -> ev.JSON:
    """A subagent file's ``agent-<id>.meta.json`` sidecar (``toolUseId``,
    ``agentType``, ``description``, ``model``, ``isFork``); {} where there is none,
    or where the name holds no regular file of a sidecar's size (a FIFO there must
    not block the daemon, nor /dev/zero through a symlink fill its memory)."""
    sidecar = path.with_name(path.name[: -len(".jsonl")] + ".meta.json")
    try:
        value = orjson.loads(read_regular(sidecar, SIDECAR_LIMIT))
    except (OSError, orjson.JSONDecodeError):
        return {}
    return value if isinstance(value, dict) else {}


def workflow_run(path: Path) -> str | None:
    """A Workflow tool's agent file, ``subagents/workflows/<run id>/agent-<id>.jsonl``:
    the run id. Its sidecar names no ``toolUseId``; the Workflow call's tool result
    does name the run (``toolUseResult.runId``, and ``transcriptDir`` is this folder)."""
    folder = path.parent
    if folder.parent.name == "workflows" and folder.parent.parent.name == "subagents":
        return folder.name
    return None


def in_side_call(main: Path, uuid: str) -> bool:
    """Does a side call's file of the session whose main file is ``main``
    (``<session>/subagents/agent-a<kind>-<hex>.jsonl``) hold the record ``uuid``?
    Read only where a main-thread record names a parent its own file lacks."""
    folder = main.with_suffix("") / "subagents"
    needle = uuid.encode()
    try:
        names = sorted(os.listdir(folder))
    except OSError:
        return False
    for name in names:
        path = folder / name
        if side_call_kind(path, read_meta(path)) is None:
            continue
        try:
            with path.open("rb") as fh:
                for raw in fh:
                    if needle in raw and _uuid_of(raw) == uuid:
                        return True
        except OSError:
            continue
    return False


def _uuid_of(raw: bytes) -> Any:
    try:
        rec = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    return rec.get("uuid") if isinstance(rec, dict) else None


def search_spawner(
    path: Path,
    agent_id: str,
    session: str | None,
    searched: dict[str, int],
    begun: str | None = None,
) -> str | None:
    """Without a sidecar link: the parent session file names the tool_use that
    spawned an agent (a tool_result whose toolUseResult.agentId is it, or a progress
    record; for a workflow's agent, the Workflow call whose toolUseResult.runId is
    its folder's: the last one made before the agent ``begun``, as a resumed run,
    ``resumeFromRunId``, reuses its run id and folder; capture x_workflow_resume).
    Only whole lines past ``searched[candidate]`` are read, and the mark moves on:
    looking again as the parent grows costs a stat when it has not."""
    run = workflow_run(path)
    needle = (run or agent_id).encode()
    latest: str | None = None  # a workflow run's: the last call before the agent began
    for candidate in _parent_files(path, session):
        key = str(candidate)
        start = searched.get(key, 0)
        if candidate == path:
            continue
        try:
            with open_regular(candidate) as fh:
                if os.fstat(fh.fileno()).st_size <= start:
                    continue
                fh.seek(start)
                for raw, n, whole in lines_of(fh):
                    if not whole:
                        break  # a line still being written: searched when whole
                    start += n
                    if needle in raw:
                        found = _spawner_in(raw, agent_id, run)
                        if found and run is None:
                            return found
                        if found and _made_before(raw, begun):
                            latest = found
        except OSError:
            continue
        finally:
            searched[key] = start
        if latest is not None:
            return latest
    return None


def _parent_files(path: Path, session: str | None) -> list[Path]:
    """Where an agent file's parent session file may be (both layouts)."""
    candidates = []
    for folder in path.parents:
        if folder.name == "subagents":
            candidates.append(folder.parent.with_suffix(".jsonl"))
            break
    if session:
        candidates.append(path.parent / f"{session}.jsonl")
    return [c for c in candidates if c != path]


def unspawned(a: ClaudeSessionAdapter, held: list[ev.Event], at_end: bool) -> bool | None:
    """Is this sidecar-less agent file one that no tool call spawned? 2.0.x writes one
    per agent it warms up when it starts (prompt ``Warmup``, capture
    x_old_2_0_77_resume): not a run, nor a subagent of any. Told by structure, not by
    its words: its parent session file names no spawner (no ``toolUseResult.agentId``,
    no progress record) and holds no tool call whose ``input.prompt`` is this file's
    first prompt (a spawned agent's file starts with its spawner's prompt, even when
    the run was cut before the tool result came) before a record stamped after that
    prompt (2.0.x writes the call before the agent begins; a file with sidecars, 2.1.x,
    is never asked). So it is decided as soon as the parent file holds such a record,
    live as in batch (the daemon never ends an agent file); else at the input's end
    (``at_end``), from the parent file read whole. None: not decided yet (live)."""
    if a._unspawned is not None:
        return a._unspawned
    if a._parent is not None or not a._agent_id or a._meta:
        return False
    start = next((e for e in held if isinstance(e, ev.RunStart)), None)
    prompt = start.extension.get("prompt") if start is not None else None
    if start is None or not isinstance(prompt, str):
        return False if at_end else None
    files = [f for f in _parent_files(Path(a._path), a._session) if f.is_file()]
    if not files:
        return False  # no parent to ask: the file is converted as it is
    verdicts = [_scan(a, f, prompt, start.ts, at_end) for f in files]
    if False in verdicts:
        a._unspawned = False  # a call with its prompt: a spawned agent's, for good
        return False
    return True if all(verdicts) else None


def _scan(
    a: ClaudeSessionAdapter, candidate: Path, prompt: str, after: str | None, at_end: bool
) -> bool | None:
    """The parent file's whole lines past what was scanned: False at a tool call whose
    prompt is ``prompt``, True at a record stamped after ``after`` (or at the end of a
    file read whole, ``at_end``), None when neither came yet. The mark moves on, so
    asking again as the parent grows reads only what is new."""
    key = str(candidate)
    offset = a._prompt_scan.get(key, 0)
    needle = orjson.dumps(prompt)
    try:
        with open_regular(candidate) as fh:
            fh.seek(offset)
            for raw, n, whole in lines_of(fh):
                if not whole:
                    # a line still being written: read when whole (at the end, the
                    # file is not whole, and the agent's lines stay a run's)
                    return False if at_end else None
                offset += n
                try:
                    rec = orjson.loads(raw)
                except orjson.JSONDecodeError:
                    continue
                if not isinstance(rec, dict):
                    continue
                if needle in raw and _calls_with(rec, prompt):
                    return False
                ts = normalize_ts(rec.get("timestamp"))
                if after is not None and ts is not None and ts > after:
                    return True
    except OSError:
        return False if at_end else None
    finally:
        a._prompt_scan[key] = offset
    return True if at_end else None


def as_unspawned(a: ClaudeSessionAdapter, events: list[ev.Event]) -> list[ev.Event]:
    """An unspawned agent file's events: no run's, so its start and end go; every line
    it would have made is counted as dropped (``agent/unspawned``); its own drops and
    problems stay what they are."""
    out: list[ev.Event] = []
    for event in events:
        if isinstance(event, ev.Dropped | ev.Problem):
            out.append(event)
        elif isinstance(event, ev.Message | ev.Note | ev.Unrecognized):
            out.append(ev.Dropped("agent/unspawned", a._session))
    return out


def _calls_with(rec: dict[str, Any], prompt: str) -> bool:
    """Does this record hold a tool call whose input's prompt is ``prompt``?"""
    message = rec.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if not isinstance(content, list):
        return False
    return any(
        isinstance(b, dict)
        and b.get("type") == "tool_use"
        and isinstance(b.get("input"), dict)
        and b["input"].get("prompt") == prompt
        for b in content
    )


def _made_before(raw: bytes, begun: str | None) -> bool:
    """Was the record written before ``begun`` (unknown either way: yes)?"""
    if begun is None:
        return True
    try:
        rec = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return True
    ts = normalize_ts(rec.get("timestamp")) if isinstance(rec, dict) else None
    return ts is None or ts <= begun


def _spawner_in(raw: bytes, agent_id: str, run: str | None) -> str | None:
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
    if not isinstance(result, dict):
        return None
    if (result.get("runId") == run) if run is not None else (result.get("agentId") == agent_id):
        message = rec.get("message")
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    return string(block.get("tool_use_id"))
    return None
