"""The batch pipeline for one input: bytes → lines → records → adapter → framer → sink.

Reads as a stream: memory stays flat whatever the input size, and when the input
is a pipe each output line is written and flushed as soon as the input line that
makes it has arrived.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from translator import logs
from translator.encode import encode
from translator.events import Problem, Unrecognized
from translator.framing import Framer, FramerStats
from translator.reader import Damage, read_parsed
from translator.sources import Adapter, Source, Where, sniff, sources
from translator.timefmt import now_ts

#: How many records auto-detection may look at before it gives up.
SNIFF_LIMIT = 50
DECISIVE = 90


class InputError(Exception):
    """An input that cannot be converted at all (one clear line, exit 1)."""


@dataclass(slots=True)
class Totals:
    files: int = 0
    lines_in: int = 0
    records: int = 0
    failed_inputs: int = 0
    framing: FramerStats = field(default_factory=FramerStats)
    sources: Counter[str] = field(default_factory=Counter)

    @property
    def errors(self) -> int:
        return self.framing.errors + self.failed_inputs


@dataclass(slots=True)
class _Pipeline:
    path: str
    source: Source | None
    framer: Framer
    write: Callable[[bytes], object]
    totals: Totals
    adapter: Adapter | None = None
    held: list[tuple[dict[str, Any], Where]] = field(default_factory=list)
    held_problems: list[Problem] = field(default_factory=list)
    session_id: str | None = None

    def push(self, events: Any) -> None:
        for event in events:
            if isinstance(event, Problem):
                _log_problem(event)
            elif isinstance(event, Unrecognized):
                logs.get().debug(
                    "unrecognized record type kept whole",
                    path=self.path,
                    source_type=event.source_type,
                )
            for line in self.framer.push(event):
                self.write(encode(line))

    def record(self, rec: dict[str, Any], where: Where) -> None:
        if self.adapter is None:
            self.held.append((rec, where))
            source, score = sniff(rec)
            if source is not None and score >= DECISIVE:
                self._start(source)
            elif len(self.held) >= SNIFF_LIMIT:
                self._give_up()
            return
        self.push(self.adapter.feed(rec, where))

    def problem(self, problem: Problem) -> None:
        if self.adapter is None and self.source is None:
            self.held_problems.append(problem)
        else:
            self.push([problem])

    def _start(self, source: Source) -> None:
        self.source = source
        self.totals.sources[source.name] += 1
        self.adapter = source.open(self.path, self.session_id)
        self.push(self.held_problems)
        self.held_problems = []
        held, self.held = self.held, []
        for rec, where in held:
            self.push(self.adapter.feed(rec, where))

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
        if self.adapter is None:
            if self.held:
                self._give_up()
            elif self.held_problems:
                raise InputError("no JSON record could be read from this input")
        if self.adapter is not None:
            self.push(self.adapter.finish())
        for line in self.framer.finish():
            self.write(encode(line))


def convert_stream(
    stream: IO[bytes],
    path: str,
    write: Callable[[bytes], object],
    totals: Totals,
    source: Source | None = None,
    flush: Callable[[], None] | None = None,
    clock: Callable[[], str] = now_ts,
    session_id: str | None = None,
) -> None:
    """Convert one input. ``flush`` is called after every input line (live pipes)."""
    hint = session_id
    if hint is None:
        hint = source.session_hint(path) if source is not None else _hint_any(path)
    pipe = _Pipeline(
        path, source, Framer(clock, hint, totals.framing), write, totals, session_id=session_id
    )
    if source is not None:
        pipe._start(source)
    lines = 0
    any_text = False
    for parsed in read_parsed(stream, path):
        line = parsed.line
        lines += 1
        if parsed.records or parsed.damage:
            any_text = True
        for damage in parsed.damage:
            _report(pipe, line.path, line.number, line.offset, damage)
        for rec in parsed.records:
            totals.records += 1
            pipe.record(rec, Where(path, line.number))
        if flush is not None:
            flush()
    totals.lines_in += lines
    if not any_text:
        raise InputError("empty input: no lines to convert")
    pipe.finish()
    if flush is not None:
        flush()


def _hint_any(path: str) -> str | None:
    for source in sources().values():
        hint = source.session_hint(path)
        if hint:
            return hint
    return None


def _log_problem(p: Problem) -> None:
    log = logs.get()
    (log.error if p.fatal else log.warning)(p.message, path=p.path, line=p.line)


def _report(pipe: _Pipeline, path: str, line: int, offset: int, d: Damage) -> None:
    ext: dict[str, Any] = {"offset": offset}
    if d.fragment:
        ext["fragment"] = d.fragment
    pipe.problem(
        Problem(
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
    )


def _damage_kind(d: Damage) -> str:
    if d.tolerated:
        return "truncated_line"
    return "damaged_line" if d.lost else "repaired_line"
