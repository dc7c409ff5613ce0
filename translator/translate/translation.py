"""One input's translation: records → adapter → framer → encoded lines.

Shared by batch conversion (:mod:`translator.translate.one_input`) and the live tail daemon
(:mod:`translator.tail`). It picks the source (``--source``, or a sniff of the first
records), feeds the adapter, frames what comes out, encodes each line in the output
shape (:mod:`translator.output.shapes`) and hands it, scrubbed, to ``write``. Its state is
plain JSON (``snapshot``/``restore``): the tail daemon's checkpoints carry it, so a
run open mid-turn survives a restart.
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from streamv1.translator import logs
from streamv1.translator.model.events import (
    JSON,
    NEGATIVE_COUNTS,
    Event,
    Problem,
    Spawn,
    Unrecognized,
    negative_counts,
)
from streamv1.translator.model.framing import Framer, FramerStats
from streamv1.translator.output.encode import encode as encode_plain
from streamv1.translator.output.scrub import WHOLE_AFTER, scrubber
from streamv1.translator.output.shapes import Encoder
from streamv1.translator.output.shapes.stream_v1 import StreamV1Encoder
from streamv1.translator.reading.reader import Damage, ParsedLine
from streamv1.translator.reading.sources import DECISIVE, Adapter, Source, Where, sniff, sources
from streamv1.translator.state import StateError, dump, load
from streamv1.translator.timefmt import now_ts

log = logs.get()

#: How many records auto-detection may look at before it gives up.
SNIFF_LIMIT = 50
#: Batch conversion's ``gather``: encoded lines are scrubbed and written ~64 KiB at a
#: time (one scan and one write per buffer: on short lines, 0.13 of the cost of
#: scrubbing them one by one was the calls).
GATHER = 64 << 10
#: The layout of :meth:`Translation.snapshot` around its parts' own states.
STATE_VERSION = 5


class InputError(Exception):
    """An input that cannot be converted at all (one clear line, exit 1)."""


@dataclass(slots=True)
class Totals:
    """What a conversion read and made, over all its inputs (its summary line)."""

    #: Inputs read, their lines, and the JSON records in them.
    files: int = 0
    lines_in: int = 0
    records: int = 0
    #: Inputs that could not be converted at all (one error line each, status 1).
    failed_inputs: int = 0
    source_mismatch: int = 0  # inputs --source named wrongly, by the look of them
    framing: FramerStats = field(default_factory=FramerStats)
    #: Inputs by the source that read them.
    sources: Counter[str] = field(default_factory=Counter)

    @property
    def errors(self) -> int:
        return self.framing.errors + self.failed_inputs


class Translation:
    """Translates one input, record by record, into encoded stream_v1 lines."""

    def __init__(
        self,
        path: str,
        write: Callable[[bytes], object],
        totals: Totals,
        source: Source | None = None,
        clock: Callable[[], str] = now_ts,
        session_id: str | None = None,
        encoder: Encoder | None = None,
        redact: bool = True,
        gather: int = 0,
    ) -> None:
        self.path = path
        self.write = write
        #: Encoded bytes to gather before they are scrubbed and written together
        #: (batch conversion: one scan and one write per ~:data:`GATHER` bytes, not
        #: per line); 0 writes each line as it is framed (live output, the daemon).
        self.gather = gather
        self._gathered: list[bytes] = []
        self._gathered_bytes = 0
        #: How many of the gathered lines were scrubbed one by one as they came
        #: (Scrubber.gathered: while lines that need it are common); the rest are
        #: scrubbed as one buffer.
        self._scrubbed = 0
        # stream_v1 as it is, or another shape of the same lines (``--to``).
        self.encoder: Encoder = encoder if encoder is not None else StreamV1Encoder()
        #: Every encoded line leaves through it, whatever the shape: no ANSI escapes,
        #: and secrets masked unless ``redact`` is off (``--no-redact``).
        self.scrub = scrubber(redact)
        self.totals = totals
        self.session_id = session_id
        hint = session_id
        if hint is None:
            hint = source.session_hint(path) if source is not None else _hint_any(path)
        self.framer = Framer(clock, hint, totals.framing)
        self.source: Source | None = None
        self.adapter: Adapter | None = None
        #: The last step before encoding, where a caller has one (the tail daemon
        #: marks each line's origin, and suppresses the runs a live stream carries):
        #: a line, or None to drop it. Not checkpointed; ``extra`` is, for its state.
        self.decorate: Callable[[JSON], JSON | list[JSON] | None] | None = None
        self.extra: dict[str, Any] = {}
        self.held: list[tuple[dict[str, Any], Where]] = []
        self.held_problems: list[Problem] = []
        self.lines = 0
        #: Lines framed so far, and how many of the next ones to drop unseen: a replay
        #: (the tail daemon's) drops exactly the lines already in the output.
        self.framed = 0
        self.skip = 0
        #: Where this input's events go when it is one file of a session merged
        #: into one stream (:mod:`translator.translate.session`): one batch per record, framed
        #: by the session in time order across its files. None: framed here, now.
        self.batches: deque[list[Event]] | None = None
        #: The session merge this translation frames for (its files' batches), if
        #: any: its end drains them before the run is closed.
        self.merge: Any = None
        #: Told (the tail daemon) when this input, framing its own lines, says a
        #: nested actor was spawned whose lines another file holds (a Spawn event):
        #: the daemon makes the session's merge then, before those events are framed.
        self.on_spawn: Callable[[Translation], None] | None = None
        #: The file whose batch is being framed here, when it is another file of
        #: this session (set by the merge): a failure names that file and line.
        self.origin: Translation | None = None
        if source is not None:
            self._start(source)

    # -- input ----------------------------------------------------------------

    def feed(self, parsed: ParsedLine) -> None:
        """One line of input (or a later part of a damaged one): its damage
        reported, its records translated."""
        line = parsed.line
        if not parsed.continued:
            self.lines += 1
        records = parsed.records
        adapter = self.adapter
        if adapter is not None and len(records) == 1 and not parsed.damage:
            # The common case, first: one clean record for a known source.
            self.totals.records += 1
            where = Where(self.path, line.number)
            try:
                events = adapter.feed(records[0], where)
            except Exception as exc:
                events = _failed(where, exc)
            if NEGATIVE_COUNTS:
                events = [*events, *_negative(where)]
            self.push(events)
            return
        if parsed.damage:
            for damage in parsed.damage:
                self.problem(_damage_problem(line.path, line.number, line.offset, damage))
        if not records:
            return
        self.totals.records += len(records)
        where = Where(self.path, line.number)
        adapter = self.adapter
        for rec in records:
            if adapter is None:
                self.record(rec, where)
                adapter = self.adapter
            else:
                self.push(self._translate(adapter, rec, where))

    @staticmethod
    def _translate(adapter: Adapter, rec: dict[str, Any], where: Where) -> Any:
        """The adapter's events for one record (the fast path in ``feed`` does
        the same inline)."""
        try:
            events = adapter.feed(rec, where)
        except Exception as exc:
            events = _failed(where, exc)
        return [*events, *_negative(where)] if NEGATIVE_COUNTS else events

    def push(self, events: Any) -> None:
        if self.batches is None:
            if self.on_spawn is not None:
                events = events if type(events) is list else list(events)
                if any(type(e) is Spawn for e in events):
                    self.on_spawn(self)
            if self.batches is None:
                self.frame(events)
                return
        if events:
            self.batches.append(list(events))

    def frame(self, events: Any) -> None:
        """Events → framed lines → written (where this translation frames its own).
        An event the framer fails on ends its run with the failure said (:meth:`fail`);
        the events after it go on: one session's surprise stops nothing else."""
        frame, write_lines = self.framer.push, self._write_lines
        for event in events:
            kind = type(event)
            if kind is Problem:
                _log_problem(event)
            elif kind is Unrecognized:
                log.debug(
                    "unrecognized record type kept whole",
                    path=self.path,
                    source_type=event.source_type,
                )
            try:
                lines = frame(event)
            except Exception as exc:
                self.fail(exc, f"framing a {kind.__name__} event")
                continue
            if lines:
                write_lines(lines)

    def fail(self, exc: Exception, doing: str) -> None:
        """A failure inside this session's translation (a rule meeting a shape it
        never saw, a bug): its open run ends with a system/error naming the file, the
        line and what failed, then its result; the framing starts afresh. The file
        and line are those of the input whose records were being framed (a session's
        other file, in a merge: ``origin``)."""
        where = self.origin if self.origin is not None else self
        log.error(
            "translation failed; the run ends with an error line",
            path=where.path,
            line=where.lines,
            doing=doing,
            error=type(exc).__name__,
        )
        problem = Problem(
            f"{doing} failed ({type(exc).__name__}: {_short(str(exc))})",
            where.path,
            where.lines,
            recoverable=False,
            kind="internal_error",
            extension={"error": type(exc).__name__},
        )
        self._write_lines(self.framer.fail(problem))

    def _write_lines(self, lines: list[JSON]) -> None:
        """Framed lines → the last step (``decorate``) → encoded → scrubbed →
        ``write``: the one place output bytes are made, so every line is scrubbed."""
        self.framed += len(lines)
        if self.skip:
            dropped = min(self.skip, len(lines))
            self.skip -= dropped
            lines = lines[dropped:]
        self.emit(lines)

    def emit(self, lines: list[JSON]) -> None:
        """Lines framed (and counted) already → ``decorate`` → encoded → scrubbed →
        ``write`` (a replay writes so the lines it held back while it counted)."""
        if self.decorate is not None:
            decorated: list[JSON] = []
            for d in map(self.decorate, lines):
                if isinstance(d, list):
                    decorated.extend(d)  # (a line held back, given with this one)
                elif d is not None:
                    decorated.append(d)
            lines = decorated
        encode = self.encoder.encode
        if self.gather:
            gathered, scrub = self._gathered, self.scrub
            for line in lines:
                try:
                    data = encode(line)
                except Exception as exc:
                    data = self._stand_in(line, exc)
                if scrub.clean_run < WHOLE_AFTER:
                    data = scrub.gathered(data)
                    self._scrubbed = len(gathered) + 1
                gathered.append(data)
                self._gathered_bytes += len(data)
            if self._gathered_bytes >= self.gather:
                self.flush_output()
            return
        scrub = self.scrub
        try:
            if len(lines) == 1:
                data = scrub(encode(lines[0]))  # the common case: no join
            else:
                data = b"".join([scrub(encode(line)) for line in lines])
        except Exception:
            data = b"".join([scrub(self._encoded(line)) for line in lines])
        if data:
            self.write(data)

    def _encoded(self, line: JSON) -> bytes:
        try:
            return self.encoder.encode(line)
        except Exception as exc:
            return self._stand_in(line, exc)

    def _stand_in(self, line: JSON, exc: Exception) -> bytes:
        """A line the encoder failed on (a bug, or a value no shape foresaw): its
        envelope in its place, saying so, so its run stays framed (the init first,
        one result last, seq unbroken) and the lines around it are kept. A message
        or a delta becomes the system/error that says what was lost."""
        where = self.origin if self.origin is not None else self
        log.error(
            "a line could not be encoded; a line saying so takes its place",
            path=where.path,
            line=where.lines,
            kind=line.get("type"),
            error=type(exc).__name__,
        )
        self.totals.framing.errors += 1
        self.totals.framing.failures += 1
        keep = ("type", "subtype", "session_id", "seq", "ts", "parent_tool_use_id", "is_error")
        stand_in: JSON = {key: line[key] for key in keep if key in line}
        message = f"{where.path}:{where.lines}: a {line.get('type')} line could not be encoded"
        if stand_in.get("type") not in ("system", "result"):
            stand_in = {"type": "system", "subtype": "error", **stand_in}
            stand_in.update(type="system", subtype="error", is_error=True, message=message)
        stand_in["extension"] = {
            "kind": "internal_error",
            "path": where.path,
            "line": where.lines,
            "unencodable": line.get("type"),
            "error": f"{type(exc).__name__}: {_short(str(exc))}",
        }
        try:
            return self.encoder.encode(stand_in)
        except Exception:  # the shape fails on its envelope too: stream_v1's own bytes
            return encode_plain(stand_in)

    def flush_output(self) -> None:
        """What was gathered, scrubbed as one buffer and written (see ``gather``).
        Taken off before the write: a write that fails never sends it twice."""
        if self._gathered:
            gathered, done = self._gathered, self._scrubbed
            self._gathered, self._gathered_bytes, self._scrubbed = [], 0, 0
            data = b"".join(gathered[done:]) if done else b"".join(gathered)
            if data:
                cleaned = self.scrub.dirty(data)
                if cleaned is not None:
                    data = cleaned
                    self.scrub.clean_run = 0  # hits are back: line by line again
            if done:
                data = b"".join(gathered[:done]) + data
            self.write(data)

    def record(self, rec: dict[str, Any], where: Where) -> None:
        if self.adapter is None:
            self.held.append((rec, where))
            source, score = sniff(rec)
            if source is not None and score >= DECISIVE:
                self._start(source)
            elif len(self.held) >= SNIFF_LIMIT:
                self._give_up()
            return
        self.push(self._translate(self.adapter, rec, where))

    def problem(self, problem: Problem) -> None:
        if self.adapter is None and self.source is None:
            self.held_problems.append(problem)
        else:
            self.push([problem])

    def _start(self, source: Source) -> None:
        self.source = source
        self.totals.sources[source.name] += 1
        self.adapter = adapter = source.open(self.path, self.session_id)
        self.push(self.held_problems)
        self.held_problems = []
        held, self.held = self.held, []
        for rec, where in held:
            self.push(self._translate(adapter, rec, where))

    def _give_up(self) -> None:
        best: Source | None = None
        best_score = 0
        for rec, _ in self.held:
            source, score = sniff(rec)
            if source is not None and score > best_score:
                best, best_score = source, score
        if best is None:
            raise InputError(
                "cannot tell which source this is "
                f"(looked at {len(self.held)} records); name it with --source"
            )
        self._start(best)

    def finish(self) -> None:
        """The input is over (EOF, or idle for the tail daemon): close what is open."""
        self.finish_input()
        if self.merge is not None:
            self.merge.drain()
            self.close_framing()
        elif self.batches is None:
            self.close_framing()

    def close_framing(self) -> None:
        """No more events: the open run ends, and what waits goes out."""
        try:
            lines = self.framer.finish()
        except Exception as exc:
            self.fail(exc, "ending the input's runs")
            lines = []
        self._write_lines(lines)
        self.flush_output()

    def finish_input(self) -> None:
        """The input's records are over: what its adapter held back goes out (its
        runs' ends), but the framing stays open for the other files of its session."""
        if self.adapter is None:
            if self.held:
                self._give_up()
            elif self.held_problems:
                first = self.held_problems[0]
                raise InputError(
                    "no JSON record could be read from this input "
                    f"(line {first.line}: {_short(first.message, 120)})"
                )
        if self.adapter is not None:
            where = Where(self.path, self.lines)
            try:
                events = self.adapter.finish()
            except Exception as exc:
                events = _failed(where, exc)
            if NEGATIVE_COUNTS:
                events = [*events, *_negative(where)]
            self.push(events)

    @property
    def run_open(self) -> bool:
        """Is anything open that ``finish`` would end: a framed run, or a run's
        events an adapter holds back (``holding``, where an adapter has it)?"""
        return self.framer.in_run or bool(getattr(self.adapter, "holding", False))

    # -- checkpoints -----------------------------------------------------------------

    def snapshot(self) -> JSON:
        """Everything needed to go on translating after a restart, as plain JSON:
        each part with its own layout version (:mod:`translator.state`)."""
        adapter = self.adapter
        return {
            "version": STATE_VERSION,
            "source": self.source.name if self.source else None,
            "adapter": (
                {"version": type(adapter).STATE_VERSION, "state": dump(adapter)}  # type: ignore[attr-defined]
                if adapter is not None
                else None
            ),
            "framer": {"version": Framer.STATE_VERSION, "state": self.framer.state()},
            "encoder": {"version": self.encoder.STATE_VERSION, "state": self.encoder.state()},
            "held": dump(self.held),
            # A session's file: its events not framed yet (a subagent's, waiting for
            # the call that spawns it to be framed).
            "batches": dump([list(b) for b in self.batches]) if self.batches else None,
            "held_problems": dump(self.held_problems),
            "lines": self.lines,
            "extra": dump(self.extra),
        }

    def restore(self, snap: JSON) -> None:
        """Go on from a snapshot. Raises StateError, and changes nothing, when any
        part was written in a layout this release does not know."""
        try:
            _expect(snap, "translation", STATE_VERSION)
            name = snap["source"]
            source = sources().get(name) if name is not None else None
            if name is not None and source is None:
                raise StateError(f"no source named {name!r} in this release")
            adapter = None
            if snap["adapter"] is not None:
                if source is None:
                    raise StateError("an adapter's state without its source")
                adapter = load(snap["adapter"]["state"])
                _expect(snap["adapter"], type(adapter).__name__, type(adapter).STATE_VERSION)
                if not _opens(source, adapter):
                    raise StateError(f"adapter state of another source than {name}")
            _expect(snap["framer"], "framer", Framer.STATE_VERSION)
            _expect(snap["encoder"], "encoder", self.encoder.STATE_VERSION)
            held, problems = load(snap["held"]), load(snap["held_problems"])
            waiting = load(snap["batches"]) if snap["batches"] is not None else None
            if waiting is not None and not all(isinstance(b, list) for b in waiting):
                raise StateError("batches are not lists of events")
            lines, extra = int(snap["lines"]), load(snap["extra"])
            framer = Framer(self.framer._clock, None, self.framer.stats)
            framer.load_state(snap["framer"]["state"])
            self.encoder.load_state(snap["encoder"]["state"])
        except StateError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            raise StateError(f"damaged translator state ({exc!r})") from exc
        self.source, self.adapter, self.framer = source, adapter, framer
        self.held, self.held_problems, self.lines = held, problems, lines
        if waiting:
            self.batches = deque(waiting)  # the session it joins frames them
        self.extra.clear()
        self.extra.update(extra)  # in place: a gate may hold this very dict


def _expect(part: JSON, what: str, version: int) -> None:
    if part.get("version") != version:
        found = part.get("version")
        raise StateError(f"{what} state version {found!r}, this release reads {version}")


def _opens(source: Source, adapter: Any) -> bool:
    """Is ``adapter`` one ``source`` opens? (Its ``open`` is the adapter's class.)"""
    return source.open is type(adapter)


def _hint_any(path: str) -> str | None:
    for source in sources().values():
        hint = source.session_hint(path)
        if hint:
            return hint
    return None


def _log_problem(p: Problem) -> None:
    """The event is the problem's kind (a fixed set: ``invalid record``, ``line too
    long``, …); its message, which names what was wrong, is the reason."""
    event = p.kind.replace("_", " ")
    (log.error if p.fatal else log.warning)(event, path=p.path, line=p.line, reason=p.message)


def _failed(where: Where, exc: Exception) -> list[Problem]:
    """Whatever a record holds, it never costs a traceback: an adapter that fails
    on one says so in a system/error naming file:line, and the input goes on.
    (A bug, each time: the fuzz test fails on any ``internal_error``.)"""
    log.error(
        "record could not be translated", path=where.path, line=where.line, error=type(exc).__name__
    )
    return [
        Problem(
            f"record could not be translated ({type(exc).__name__})",
            where.path,
            where.line,
            kind="internal_error",
            extension={"error": _short(str(exc))},
        )
    ]


def _negative(where: Where) -> list[Problem]:
    """The token counts the record's usage readers found negative (each counted as
    0): one system/error each, naming the record's file:line."""
    return [
        Problem(message, where.path, where.line, kind="invalid_record")
        for message in negative_counts()
    ]


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit] + "…"


def _damage_problem(path: str, line: int, offset: int, d: Damage) -> Problem:
    ext: dict[str, Any] = {"offset": offset}
    if d.fragment:
        ext["fragment"] = d.fragment
    if d.extension:
        ext.update(d.extension)
    return Problem(
        d.reason,
        path,
        line,
        recoverable=True,
        # Bytes replaced to keep a record are still an error: the input is not
        # what it should be, even though nothing that could be kept was lost.
        fatal=not d.tolerated,
        kind=_damage_kind(d),
        extension=ext,
    )


def _damage_kind(d: Damage) -> str:
    if d.kind is not None:
        return d.kind
    if d.tolerated:
        return "truncated_line"
    return "damaged_line" if d.lost else "repaired_line"
