"""Batch conversion of one input, or of one session's files: bytes → lines → records
→ the translation → sink.

Reads as a stream: memory stays flat whatever the input size, and when the input
is a pipe each output line is written and flushed as soon as the input line that
makes it has arrived.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO

from streamv1.translator.events import Event, Message
from streamv1.translator.pipeline import InputError, Interrupted, Totals, Translation
from streamv1.translator.reader import MAX_LINE_BYTES, ParsedLine, read_parsed
from streamv1.translator.shapes import Encoder
from streamv1.translator.sources import Source
from streamv1.translator.timefmt import now_ts

__all__ = [
    "InputError", "Interrupted", "SessionInput", "Totals", "convert_session", "convert_stream",
]


def convert_stream(
    stream: IO[bytes],
    path: str,
    write: Callable[[bytes], object],
    totals: Totals,
    source: Source | None = None,
    flush: Callable[[], object] | None = None,
    clock: Callable[[], str] = now_ts,
    session_id: str | None = None,
    encoder: Encoder | None = None,
    max_line: int = MAX_LINE_BYTES,
    redact: bool = True,
) -> None:
    """Convert one input. ``flush`` is called after every input line (live pipes).
    A line longer than ``max_line`` bytes is reported and skipped, never held."""
    translation = Translation(path, write, totals, source, clock, session_id, encoder, redact)
    any_text = False
    try:
        for parsed in read_parsed(stream, path, max_line=max_line):
            if parsed.records or parsed.damage:
                any_text = True
            translation.feed(parsed)
            if flush is not None:
                flush()
    except Interrupted:
        # Stopped by the user: what is open ends as a cut-off input ends (an
        # ``interrupted`` result), so what was written still validates.
        with contextlib.suppress(InputError):
            translation.finish()
        if flush is not None:
            flush()
        totals.lines_in += translation.lines
        raise
    totals.lines_in += translation.lines
    if not any_text:
        raise InputError("empty input: no lines to convert")
    translation.finish()
    if flush is not None:
        flush()


@dataclass(slots=True)
class SessionInput:
    """One file of a session: its stream and the name errors give it."""

    stream: IO[bytes]
    path: str


@dataclass(slots=True, eq=False)
class _Part:
    """A file of a session being merged: its translation's events for its next
    record (``batch``), and the time they are ordered by."""

    path: str
    lines: Iterator[ParsedLine]
    translation: Translation
    rank: int
    batch: list[Event] = field(default_factory=list)
    key: str = ""
    ended: bool = False
    any_text: bool = False


def convert_session(
    inputs: list[SessionInput],
    write: Callable[[bytes], object],
    totals: Totals,
    source: Source | None = None,
    clock: Callable[[], str] = now_ts,
    session_id: str | None = None,
    encoder: Encoder | None = None,
    max_line: int = MAX_LINE_BYTES,
    redact: bool = True,
    on_error: Callable[[str, str], None] | None = None,
) -> None:
    """Convert the files of one session (the first is its main file) into one
    stream: every file's events meet in the first file's framer, in time order.

    At each step the file whose next record is the earliest goes first (ties: the
    order given); a nested actor's line waits until the tool call that spawned it
    has been framed, while any other file could still bring it. So a subagent's
    lines are lines of the run it was spawned in, after its spawning call, and the
    result is written when every file is over. Memory stays flat: one record's
    events wait per file. A file that cannot be read is said through ``on_error``
    (its path, why) and left out; the others go on."""
    if len(inputs) == 1:
        convert_stream(inputs[0].stream, inputs[0].path, write, totals, source, None, clock,
                       session_id, encoder, max_line, redact)
        return
    main = Translation(inputs[0].path, write, totals, source, clock, session_id, encoder, redact)
    parts = [_Part(inputs[0].path, read_parsed(inputs[0].stream, inputs[0].path,
                                               max_line=max_line), main, 0)]
    for rank, given in enumerate(inputs[1:], 1):
        other = Translation(given.path, write, totals, source, clock, session_id, encoder,
                            redact)
        parts.append(_Part(given.path, read_parsed(given.stream, given.path, max_line=max_line),
                           other, rank))
    for part in parts:
        part.translation.events_to = part.batch
    seen_tools: set[str] = set()
    live = [p for p in parts if _advance(p, on_error)]
    try:
        while live:
            part = _pick(live, seen_tools)
            batch = list(part.batch)
            part.batch.clear()
            for event in batch:
                if type(event) is Message:
                    for block in event.content:
                        if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                            seen_tools.add(block["id"])
            main.frame(batch)
            if not _advance(part, on_error):
                live.remove(part)
    except Interrupted:
        with contextlib.suppress(InputError):
            main.close_framing()
        raise
    finally:
        for part in parts:
            totals.lines_in += part.translation.lines
    main.close_framing()


def _advance(part: _Part, on_error: Callable[[str, str], None] | None) -> bool:
    """Read the part's records until one makes events (or its end, where its
    adapter's last events come): False when it has nothing more."""
    translation = part.translation
    try:
        while not part.batch and not part.ended:
            parsed = next(part.lines, None)
            if parsed is None:
                part.ended = True
                if not part.any_text:
                    raise InputError("empty input: no lines to convert")
                translation.finish_input()
                break
            if parsed.records or parsed.damage:
                part.any_text = True
            translation.feed(parsed)
    except InputError as exc:
        part.ended = True
        part.batch.clear()
        translation.totals.failed_inputs += 1
        if on_error is not None:
            on_error(part.path, str(exc))
        return False
    for event in part.batch:
        ts = getattr(event, "ts", None)
        if isinstance(ts, str):
            part.key = ts
            break
    return bool(part.batch)


def _pick(live: list[_Part], seen_tools: set[str]) -> _Part:
    """The part whose next events go now: the earliest, among those not waiting
    for the tool call that spawned them (all of them, when every one waits)."""
    ready = [p for p in live if not _waits(p, seen_tools)] if len(live) > 1 else live
    return min(ready or live, key=lambda p: (p.key, p.rank))


def _waits(part: _Part, seen_tools: set[str]) -> bool:
    for event in part.batch:
        parent = getattr(event, "parent_tool_use_id", None)
        if parent is not None and parent not in seen_tools:
            return True
    return False
