"""Runs: system/init first, monotonic seq, exactly one result last.

The framer turns neutral events (:mod:`translator.model.events`) into stream_v1 lines. It
knows the catalog and nothing about sources:

* a run starts at :class:`RunStart`; a line that arrives with no run open opens a
  synthetic one, so no line is ever outside a run;
* ``seq`` is 0 on system/init and +1 per line of that run;
* every run ends with exactly one result — the adapter's :class:`RunEnd`, or a
  synthetic ``interrupted`` one when the input stops mid-turn;
* what a result does not get from its source is filled from the run itself where
  the run knows it (usage counted once per API message, num_turns, the final text),
  and left out otherwise: :mod:`translator.model.results` counts and says it.

Lines that belong to no run yet (a damaged first line, a note between two turns)
wait for the next run's init, so they are framed like every other line. After the
input's last run, system notes with no run to go to are counted as dropped
(``between_runs/<subtype>``), not given a run of their own; anything else (an
error, a message) still opens one, so nothing is lost.

A session is the unit: a nested actor (a subagent, in its own file or inline in
its parent's) is lines of the run it was spawned in, as the CLI's print mode and
milk's goldens show it. A :class:`RunStart` whose ``parent_tool_use_id`` differs
from the open run's is that actor beginning: a ``system/task_started`` line of the
open run (its seq), never an init of its own; its lines carry its
``parent_tool_use_id``; its :class:`RunEnd` (same id) ends it without a line (the
source's own record of the end, a ``task_notification``, is the adapter's to
say). The run's ``usage`` counts its own actor's API messages, its
``model_usage`` every actor's (the CLI's ``usage`` and ``modelUsage``). Only a
nested actor with no run open (a subagent file converted alone) is a run of its
own, marked with its ``parent_tool_use_id``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from streamv1.translator.model import catalog, results
from streamv1.translator.model import events as ev

# The kinds push tells apart on every line, bound by name (``ev.Message`` would be
# one more lookup a line).
from streamv1.translator.model.events import Delta, Message, Note
from streamv1.translator.state import StateError, dump, load, persisted
from streamv1.translator.timefmt import now_ts


@dataclass(slots=True)
class FramerStats:
    """What framing did: the closing summary's figures (``convert``'s log line)."""

    #: Runs framed, and the stream_v1 lines they came to.
    runs: int = 0
    lines_out: int = 0
    #: Inits and results made where the source had none (a result: a run cut off).
    synthetic_inits: int = 0
    synthetic_results: int = 0
    #: system/error lines: problems that fail the conversion (status 1 unless
    #: --lenient), and problems noted that do not.
    errors: int = 0
    tolerated: int = 0
    #: Of the errors, failures of the translation itself (an adapter or the framer
    #: meeting what no rule foresaw, ``kind: internal_error``): each ended its run
    #: alone, the other sessions went on. Never --lenient: a bug each time.
    failures: int = 0
    #: Records left out on purpose (docs/mapping.md), and records of types no
    #: adapter knows (kept whole as system/unrecognized), by kind.
    dropped: Counter[str] = field(default_factory=Counter)
    unrecognized: Counter[str] = field(default_factory=Counter)
    #: Every actor's tokens over the results framed (each run's model_usage, else
    #: its usage), and the cost the sources stated (print mode's total_cost_usd):
    #: the closing summary's figures.
    usage: ev.Usage = field(default_factory=ev.Usage)
    stated_cost_usd: float = 0.0
    costed_runs: int = 0


@persisted
@dataclass(slots=True)
class _Run:
    session_id: str
    parent_tool_use_id: str | None
    synthetic: bool
    #: Its own actor: its parent_tool_use_id, or the name of a nested actor whose
    #: spawner is not known (a subagent file alone); None for a session's main run.
    actor: str | None = None
    seq: int = 0
    first_ts: str | None = None
    last_ts: str | None = None
    messages: int = 0
    usage: dict[str, ev.Usage] = field(default_factory=dict)
    usage_model: dict[str, str] = field(default_factory=dict)
    turn_ids: set[str] = field(default_factory=set)  # API messages of the run's actor
    last_message_id: str | None = None
    last_texts: list[str] = field(default_factory=list)
    last_stop_reason: str | None = None
    dropped: Counter[str] = field(default_factory=Counter)
    unrecognized: Counter[str] = field(default_factory=Counter)
    #: Every actor's API messages (its own and its nested actors'): model_usage.
    all_usage: dict[str, ev.Usage] = field(default_factory=dict)
    all_model: dict[str, str] = field(default_factory=dict)
    #: tool_use id → the actor (its parent_tool_use_id, "" for the run's own) whose
    #: message called it: a nested actor's task_started is a line of its spawner.
    tool_owner: dict[str, str] = field(default_factory=dict)
    #: Nested actors begun in this run whose end no task_notification has said yet:
    #: spawning tool_use id → task_id.
    actors: dict[str, str | None] = field(default_factory=dict)


#: The framer's checkpointed fields; their layout is ``Framer.STATE_VERSION``.
_STATE_FIELDS = (
    "_session_hint",
    "_run",
    "_last_ts",
    "_pending",
    "_anon",
    "_runs_here",
    "_last_session",
)


class Framer:
    """Frames one input's events into stream_v1 lines (one framer per input)."""

    #: The layout of ``state()`` (translator.state's rule: new fields, new number).
    STATE_VERSION = 2

    def __init__(
        self,
        clock: Callable[[], str] = now_ts,
        session_hint: str | None = None,
        stats: FramerStats | None = None,
    ) -> None:
        self._clock = clock
        self._session_hint = session_hint
        self.stats = stats if stats is not None else FramerStats()
        self._run: _Run | None = None
        self._last_ts: str | None = None
        self._pending: list[ev.Event] = []
        self._anon = 0
        self._runs_here = 0
        self._last_session: str | None = None
        # The last total_cost_usd framed (results.add_stated_cost; not checkpointed:
        # the summary is a batch conversion's).
        self._last_stated: float | None = None

    # -- public -------------------------------------------------------------

    def push(self, event: ev.Event) -> list[ev.JSON]:
        run = self._run
        if run is not None and type(event) is Message:
            if run.actors and event.role == "user":
                return [*self._ended_actors(run, event), self._message(run, event)]
            return [self._message(run, event)]  # the common case, first
        if run is not None and type(event) is Note and event.subtype != "init":
            return [self._note(run, event)]  # the next most common: a system line
        if run is not None and type(event) is Delta:
            return [self._delta(run, event)]
        out: list[ev.JSON] = []
        if type(event) is ev.Spawn:
            return out  # for a session merge (translator.translate.session); no line
        if isinstance(event, ev.RunStart):
            if run is not None and _nested_in(run, event.parent_tool_use_id or event.actor):
                return [self._task_started(run, event)]
            if run is not None:
                out += self._close(
                    ev.RunEnd(run.session_id, event.ts, subtype="interrupted"), made_here=True
                )
            out += self._open(event)
            for held in self._pending:
                out += self._line(held)
            self._pending.clear()
            return out
        if isinstance(event, ev.RunEnd):
            if run is not None and _nested_in(run, event.parent_tool_use_id or event.actor):
                # A nested actor is over: its lines are the run's, its end no line of
                # its own (the source's task_notification says it, where it has one).
                self._track_time(run, event.ts)
                self._note_time(event)
                return out
            if run is None:
                if event.parent_tool_use_id is not None or event.actor is not None:
                    return out  # a nested actor's end after its run ended: nothing is open
                out += self._open_synthetic(event.session_id, event.ts, None)
            return out + self._close(event)
        if run is None:
            if isinstance(event, Message | Delta):
                out += self._open_synthetic(
                    event.session_id,
                    event.ts,
                    event.parent_tool_use_id,
                    getattr(event, "actor", None),
                )
            else:
                self._note_time(event)
                self._pending.append(event)
                return out
        return out + self._line(event)

    def finish(self) -> list[ev.JSON]:
        """The input is over: flush what waits, and close the open runs."""
        out: list[ev.JSON] = []
        if (
            self._pending
            and self._runs_here
            and all(isinstance(e, ev.Dropped | Note | ev.SideCall) for e in self._pending)
        ):
            # After the input's last run, status lines with no run to go to (a state
            # change to idle, a host's echo): counted, never a run made for them.
            for event in self._pending:
                if isinstance(event, ev.Dropped):
                    self.stats.dropped[event.kind] += 1
                elif isinstance(event, Note):
                    self.stats.dropped[f"between_runs/{event.subtype}"] += 1
                elif isinstance(event, ev.SideCall):
                    # No result after it: its tokens are still the session's summary's.
                    self.stats.dropped[event.kind] += 1
                    if event.usage is not None:
                        self.stats.usage.add(event.usage)
            self._pending.clear()
        if self._pending and (
            not self._runs_here
            or any(not isinstance(e, ev.Dropped | ev.SideCall) for e in self._pending)
        ):
            # A run made for what waits (it frames it). Only metadata and no turn at
            # all: one empty run still says what was dropped, so an input never
            # vanishes without a trace.
            sid = getattr(self._pending[0], "session_id", None) or self._fallback_session()
            out += self._open_synthetic(sid, None, None)
        else:
            for event in self._pending:
                if isinstance(event, ev.Dropped):
                    self.stats.dropped[event.kind] += 1
            self._pending.clear()
        if self._run is not None:
            run = self._run
            cut_off = not run.synthetic or run.messages > 0
            end = ev.RunEnd(run.session_id, None, subtype="interrupted" if cut_off else None)
            out += self._close(end, made_here=True)
        return out

    def fail(self, problem: ev.Problem) -> list[ev.JSON]:
        """Something failed inside this session's translation (``problem`` names the
        file, the line and what): the open run ends as the contract ends a failed
        run, with a system/error line and then its result (``error_during_execution``),
        and framing starts afresh, so the next line opens a run of its own. The
        state the failure left is not trusted further: what waited for a run (a
        damaged first line, a note) is counted in the error line, not replayed, as
        replaying it may be what failed."""
        unframed = len(self._pending)
        self._pending = []
        if unframed:
            problem.extension = {**problem.extension, "unframed_events": unframed}
        run, sid = self._run, problem.session_id
        try:
            out: list[ev.JSON] = []
            if run is None:
                out += self._open_synthetic(sid or self._fallback_session(), problem.ts, None)
            out += self._line(problem)
            session = self._run.session_id if self._run is not None else sid or "unknown"
            failed = ev.RunEnd(session, problem.ts, "error_during_execution", is_error=True)
            out += self._close(failed, made_here=True)
            return out
        except Exception:  # the run's own state is what broke: its end from what is sure
            return self._bare_failure(run, problem)
        finally:
            self._run = None

    def _bare_failure(self, run: _Run | None, problem: ev.Problem) -> list[ev.JSON]:
        """A failed run's error and result built from nothing but its session and
        seq (:meth:`fail`, when the run's state cannot even say that much more)."""
        sid = (run.session_id if run is not None else None) or problem.session_id or "unknown"
        seq = run.seq if run is not None and isinstance(run.seq, int) else 0
        ts = self._ts(problem.ts)
        out: list[ev.JSON] = []
        if run is None:
            synthetic = {"synthetic": True}
            out.append(catalog.envelope("system", sid, 0, ts, subtype="init", extension=synthetic))
            seq = 1
        message = f"{problem.path}:{problem.line}: {problem.message}"
        ext = {"kind": problem.kind, "path": problem.path, "line": problem.line}
        ext.update(problem.extension)
        out.append(
            catalog.envelope(
                "system",
                sid,
                seq,
                ts,
                subtype="error",
                is_error=True,
                message=message,
                recoverable=problem.recoverable,
                extension=ext,
            )
        )
        out.append(
            catalog.envelope(
                "result",
                sid,
                seq + 1,
                ts,
                subtype="error_during_execution",
                is_error=True,
                num_turns=0,
                extension={"synthetic": True},
            )
        )
        self.stats.errors += 1
        self.stats.failures += 1
        self.stats.synthetic_results += 1
        self.stats.lines_out += len(out)
        return out

    @property
    def run_key(self) -> tuple[str, str | None] | None:
        """The open (outer) run's session_id and parent_tool_use_id (a subagent
        file's spawning tool_use), or None when no run is open."""
        run = self._run
        return (run.session_id, run.parent_tool_use_id) if run is not None else None

    @property
    def in_run(self) -> bool:
        return self._run is not None

    @property
    def last_ts(self) -> str | None:
        """The latest time framed (what an untimed line after it takes)."""
        return self._last_ts

    def actors_begun(self) -> list[str]:
        """The spawning calls of the nested actors begun in the open run whose end
        has not been said (inline ones included)."""
        return list(self._run.actors) if self._run is not None else []

    def tool_calls(self) -> set[str]:
        """The tool calls framed in the open run (a nested actor spawned by one of
        them may still begin)."""
        return set(self._run.tool_owner) if self._run is not None else set()

    def state(self) -> ev.JSON:
        """What a restart needs to go on mid-run, as plain JSON (translator.state);
        the clock and the counters are the running process's own."""
        return {name: dump(getattr(self, name)) for name in _STATE_FIELDS}

    def load_state(self, state: ev.JSON) -> None:
        if set(state) != set(_STATE_FIELDS):
            raise StateError(f"framer state fields {sorted(state)}, not {list(_STATE_FIELDS)}")
        for name in _STATE_FIELDS:
            setattr(self, name, load(state[name]))

    # -- runs -----------------------------------------------------------------

    def _fallback_session(self) -> str:
        return self._last_session or self._session_hint or "unknown"

    def _ts(self, ts: str | None) -> str:
        if ts is not None:
            self._last_ts = ts
            return ts
        if self._last_ts is None:
            self._last_ts = self._clock()
        return self._last_ts

    def _note_time(self, event: ev.Event) -> None:
        ts = getattr(event, "ts", None)
        if isinstance(ts, str):
            self._last_ts = ts

    def _task_started(self, run: _Run, start: ev.RunStart) -> ev.JSON:
        """A nested actor begins inside ``run``: the run's system/task_started line,
        a line of the actor that spawned it (the run's own, or a nested actor's)."""
        self._track_time(run, start.ts)
        parent = start.parent_tool_use_id
        task: ev.JSON = dict(start.task)
        task_id = task.pop("task_id", None)
        if parent is not None:
            task.setdefault("tool_use_id", parent)
        # An actor known by name only (no spawning call the source records): begun
        # under that name, its lines marked by it, never a call made up for it.
        key = parent if parent is not None else str(start.actor)
        ext = dict(start.extension)
        if "prompt" in ext and "prompt" not in task:
            task["prompt"] = ext.pop("prompt")  # where the CLI's task_started has it
        if start.agent_role is not None and "subagent_type" not in task:
            task["subagent_type"] = start.agent_role
        owner = run.tool_owner.get(key) or run.parent_tool_use_id
        task_id = task_id if isinstance(task_id, str) else None
        if task.get("is_backgrounded") is not True:
            # (A background actor's call is answered at its launch: not its end.)
            run.actors[key] = task_id
        return self._system(
            run, start.ts, "task_started", owner, task_id=task_id, task=task, extension=ext or None
        )

    def _ended_actors(self, run: _Run, msg: Message) -> list[ev.JSON]:
        """A tool result answering the call that spawned a nested actor whose end
        the source did not say (a subagent's own subagent: its file has no record of
        the end): the actor is over, and a task_notification says so, just before
        the result, with what is known (its task_id, its spawning call), no status."""
        out: list[ev.JSON] = []
        for block in msg.content:
            if block.get("type") != "tool_result":
                continue
            tool = block.get("tool_use_id")
            if not isinstance(tool, str) or tool not in run.actors:
                continue
            out.append(
                self._system(
                    run,
                    msg.ts,
                    "task_notification",
                    msg.parent_tool_use_id or run.parent_tool_use_id,
                    task_id=run.actors.pop(tool),
                    task={"tool_use_id": tool},
                )
            )
        return out

    def _open(self, start: ev.RunStart) -> list[ev.JSON]:
        run = _Run(
            start.session_id,
            start.parent_tool_use_id,
            synthetic=False,
            actor=start.parent_tool_use_id or start.actor,
        )
        self._run = run
        self._runs_here += 1
        self.stats.runs += 1
        self._track_time(run, start.ts)
        ext = dict(start.extension)
        servers: list[ev.JSON] | None = None
        if start.mcp_servers is not None:
            servers, rest = catalog.mcp_servers(start.mcp_servers)
            if rest:
                ext["mcp_servers"] = rest
        tools = start.tools
        if tools is not None and not all(isinstance(t, str) for t in tools):
            ext["tools"] = tools  # the schema's tools are names: anything else is kept here
            tools = None
        line = catalog.envelope(
            "system",
            start.session_id,
            0,
            self._ts(start.ts),
            subtype="init",
            parent_tool_use_id=start.parent_tool_use_id,
            cwd=start.cwd,
            agent=catalog.agent_info(
                start.agent_name, start.provider, start.model, start.agent_role
            ),
            tools=tools,
            mcp_servers=servers,
            capabilities=catalog.capabilities(start.partial_messages),
            extension=ext or None,
        )
        return [self._emit(run, line)]

    def _open_synthetic(
        self, session_id: str, ts: str | None, parent: str | None, actor: str | None = None
    ) -> list[ev.JSON]:
        run = _Run(session_id, parent, synthetic=True, actor=parent or actor)
        self._run = run
        self._runs_here += 1
        self.stats.runs += 1
        self.stats.synthetic_inits += 1
        self._track_time(run, ts)
        line = catalog.envelope(
            "system",
            session_id,
            0,
            self._ts(ts),
            subtype="init",
            parent_tool_use_id=parent,
            capabilities=catalog.capabilities(False),
            extension={"synthetic": True},
        )
        out = [self._emit(run, line)]
        held, self._pending = self._pending, []
        for event in held:
            out += self._line(event)
        return out

    def _close(self, end: ev.RunEnd, made_here: bool = False) -> list[ev.JSON]:
        run = self._run
        if run is None:
            raise ev.ImpossibleState("a run's end with no run open")
        self._track_time(run, end.ts)
        if made_here:
            self.stats.synthetic_results += 1
        if end.total_cost_usd is not None:
            stated = results.add_stated_cost(self.stats, end.total_cost_usd, self._last_stated)
            self._last_stated = stated
        self._last_session = run.session_id
        line = results.result_line(run, end, self._ts(end.ts), self.stats)
        self._run = None
        return [self._emit(run, line)]

    @staticmethod
    def _track_time(run: _Run, ts: str | None) -> None:
        """The run's earliest and latest source times (clocks may step backwards)."""
        if ts is None:
            return
        if run.first_ts is None or ts < run.first_ts:
            run.first_ts = ts
        if run.last_ts is None or ts > run.last_ts:
            run.last_ts = ts

    def _emit(self, run: _Run, line: ev.JSON) -> ev.JSON:
        run.seq += 1
        self.stats.lines_out += 1
        return line

    def _system(
        self, run: _Run, ts: str | None, subtype: str, parent: str | None, **body: Any
    ) -> ev.JSON:
        """A system line of ``run`` in its seq, built by the catalog (``body`` in the
        order it is written, None values left out): the rare ones, a nested actor's
        start or end, an error, an unknown record. Not init: it comes once a run, and
        a run may be a few lines (stella, Gemini), so it passes its keywords once."""
        line = catalog.envelope(
            "system",
            run.session_id,
            run.seq,
            self._ts(ts),
            subtype=subtype,
            parent_tool_use_id=parent,
            **body,
        )
        return self._emit(run, line)

    # -- lines inside a run ------------------------------------------------------

    def _line(self, event: ev.Event, run: _Run | None = None) -> list[ev.JSON]:
        run = run if run is not None else self._run
        if run is None:
            raise ev.ImpossibleState("a line with no run open")
        if isinstance(event, ev.Dropped):
            run.dropped[event.kind] += 1
            self.stats.dropped[event.kind] += 1
            return []
        if type(event) is ev.SideCall:
            run.dropped[event.kind] += 1
            self.stats.dropped[event.kind] += 1
            key = event.message_id or f"#anon{self._next_anon()}"
            results.count_side_call(run, event, key)
            return []
        if type(event) is Message:
            if run.actors and event.role == "user":
                return [*self._ended_actors(run, event), self._message(run, event)]
            return [self._message(run, event)]
        ts = getattr(event, "ts", None)
        self._track_time(run, ts)
        sid = run.session_id
        # Every line of a nested actor's run is that actor's, whatever its kind.
        parent = getattr(event, "parent_tool_use_id", None) or run.parent_tool_use_id
        if isinstance(event, Delta):
            return [self._delta(run, event)]
        if isinstance(event, Note) and event.subtype == "init":
            # Only a RunStart makes a system/init: one in the middle of a run would
            # break its framing (seq 0 twice). Kept whole, as an unknown record is.
            record = {"type": "system", "subtype": "init", **event.fields, **event.extension}
            event = ev.Unrecognized("system/init", sid, ts, record, event.parent_tool_use_id)
        if isinstance(event, Note):
            return [self._note(run, event)]
        if isinstance(event, ev.Problem):
            if event.fatal:
                self.stats.errors += 1
                if event.kind == "internal_error":
                    self.stats.failures += 1
            else:
                self.stats.tolerated += 1
            ext = {"kind": event.kind, "path": event.path, "line": event.line, **event.extension}
            line = self._system(
                run,
                ts,
                "error",
                parent,
                is_error=True,
                message=f"{event.path}:{event.line}: {event.message}",
                recoverable=event.recoverable,
                extension=ext,
            )
            return [line]
        if isinstance(event, ev.Unrecognized):
            run.unrecognized[event.source_type] += 1
            self.stats.unrecognized[event.source_type] += 1
            record = {"record": event.record}
            line = self._system(
                run, ts, "unrecognized", parent, kind=event.source_type, extension=record
            )
            return [line]
        raise TypeError(f"not a line event: {event!r}")  # pragma: no cover

    def _head(
        self, run: _Run, line_type: str, subtype: str | None, ts: str | None, parent: str | None
    ) -> ev.JSON:
        """The envelope of a line built in place (the hot path, instead of
        catalog.envelope's keyword arguments), in its key order; the event's time
        counted in the run's."""
        self._track_time(run, ts)
        line: ev.JSON = {"type": line_type}
        if subtype is not None:
            line["subtype"] = subtype
        line["session_id"] = run.session_id
        line["seq"] = run.seq
        line["ts"] = self._ts(ts)
        parent = parent or run.parent_tool_use_id
        if parent is not None:
            line["parent_tool_use_id"] = parent
        return line

    def _delta(self, run: _Run, event: Delta) -> ev.JSON:
        """A stream_event line (push calls it straight: partial messages are hot)."""
        line = self._head(run, "stream_event", None, event.ts, event.parent_tool_use_id)
        line["event"] = catalog.stream_payload(event.event)
        return self._emit(run, line)

    def _note(self, run: _Run, event: Note) -> ev.JSON:
        """A system line other than init (push calls it straight: it is hot)."""
        if event.subtype == "task_notification" and run.actors:
            task = event.fields.get("task")
            if isinstance(task, dict) and isinstance(task.get("tool_use_id"), str):
                run.actors.pop(task["tool_use_id"], None)  # its end, said
        fields, rest = catalog.system_fields(event.fields)
        line = self._head(run, "system", event.subtype, event.ts, event.parent_tool_use_id)
        for key, value in fields.items():
            if value is not None:
                line[key] = value
        if rest:
            line["extension"] = {**rest, **event.extension}
        elif event.extension:
            line["extension"] = dict(event.extension)
        return self._emit(run, line)

    def _message(self, run: _Run, msg: Message) -> ev.JSON:
        """A message's line (the hot path: push calls it straight, not via _line)."""
        self._track_time(run, msg.ts)
        if msg.parent_tool_use_id is None and msg.actor is None:
            msg.parent_tool_use_id = run.parent_tool_use_id
        run.messages += 1
        if msg.role == "assistant":
            results.count_message(run, msg, msg.message_id or f"#anon{self._next_anon()}")
        return self._emit(run, self._message_line(run, msg))

    def _next_anon(self) -> int:
        self._anon += 1
        return self._anon

    def _message_line(self, run: _Run, msg: Message) -> ev.JSON:
        # Built in place (the hot path): the same key order as catalog.envelope.
        line: ev.JSON = {
            "type": msg.role,
            "session_id": run.session_id,
            "seq": run.seq,
            "ts": self._ts(msg.ts),
        }
        if msg.parent_tool_use_id is not None:
            line["parent_tool_use_id"] = msg.parent_tool_use_id
        elif msg.role == "assistant" and msg.actor is None:
            line["agent"] = "primary"
        if msg.message_id is not None:
            line["message"] = {"id": msg.message_id, "role": msg.role, "content": msg.content}
        else:
            line["message"] = {"role": msg.role, "content": msg.content}
        if msg.has_tool_use_result and msg.tool_use_result is not None:
            line["tool_use_result"] = msg.tool_use_result
        if msg.extension:
            line["extension"] = msg.extension
        return line


def _nested_in(run: _Run, actor: str | None) -> bool:
    """Is this actor (a spawning tool_use, or a name) nested inside ``run``?"""
    return actor is not None and actor != run.actor
