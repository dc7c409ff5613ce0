"""Batch conversion of one input, or of one session's files: bytes → lines → records
→ the translation → sink.

Reads as a stream: memory stays flat whatever the input size, and when the input
is a pipe each output line is written and flushed as soon as the input line that
makes it has arrived.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO

from streamv1.translator.exits import Interrupted
from streamv1.translator.output.shapes import Encoder
from streamv1.translator.reading.reader import MAX_LINE_BYTES, ParsedLine, read_parsed
from streamv1.translator.reading.sources import Source
from streamv1.translator.timefmt import now_ts
from streamv1.translator.translate.session import Part, SessionMerge
from streamv1.translator.translate.sinks import OutputWriteError
from streamv1.translator.translate.translation import (
    GATHER,
    InputError,
    Totals,
    Translation,
)

#: What a conversion passes on to its caller rather than ends the session for: an
#: input that cannot be converted at all or read (one line there), and an output
#: that cannot be written (never an input's fault).
PASSED_ON = (InputError, OSError, OutputWriteError)

__all__ = [
    "InputError",
    "SessionInput",
    "Settings",
    "Totals",
    "convert_session",
    "convert_stream",
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
    # A live input (``flush`` given) writes each line as it is framed; a file's
    # lines are gathered and scrubbed and written a buffer at a time.
    gather = GATHER if flush is None else 0
    translation = Translation(
        path, write, totals, source, clock, session_id, encoder, redact, gather
    )
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
        translation.flush_output()
        if flush is not None:
            flush()
        totals.lines_in += translation.lines
        raise
    except PASSED_ON:
        translation.flush_output()  # what was framed before a read failed is kept
        raise
    except Exception as exc:
        # What no finer net caught: this input's run ends with it said, the
        # conversion goes on with the next input.
        ended_by_failure(translation, exc)
        totals.lines_in += translation.lines
        return
    except BaseException:
        translation.flush_output()
        raise
    totals.lines_in += translation.lines
    if not any_text:
        raise InputError("empty input: no lines to convert")
    try:
        translation.finish()
    except PASSED_ON:
        raise
    except Exception as exc:
        ended_by_failure(translation, exc)
    if flush is not None:
        flush()


def ended_by_failure(translation: Translation, exc: Exception) -> None:
    """An input (a session's files, through its main translation) that failed
    where no finer net caught it: its open run ends with the failure said
    (:meth:`Translation.fail`), and the input is read no further, since the reader
    or the merge that failed cannot be trusted to go on; the next input goes on."""
    translation.fail(exc, "translating the input")
    translation.close_framing()


@dataclass(slots=True)
class SessionInput:
    """One file of a session: its stream and the name errors give it."""

    stream: IO[bytes]
    path: str


@dataclass(slots=True, frozen=True)
class Settings:
    """How a session's lines are made, the same for each of its files: what
    :func:`convert_stream` takes one by one, as one value for :func:`convert_session`."""

    source: Source | None = None
    clock: Callable[[], str] = now_ts
    session_id: str | None = None
    encoder: Encoder | None = None
    max_line: int = MAX_LINE_BYTES
    redact: bool = True


def convert_session(
    inputs: list[SessionInput],
    write: Callable[[bytes], object],
    totals: Totals,
    settings: Settings,
    on_error: Callable[[str, str], None] | None = None,
) -> None:
    """Convert the files of one session (the first is its main file) into one
    stream (:class:`translator.translate.session.SessionMerge`): records are read one at a
    time from the file whose next batch is due, so memory stays flat, and a nested
    actor's batch waits for its spawning call while a file not read to its end
    could still bring it. The result is written when every file is over. A file
    that cannot be read is said through ``on_error`` (its path, why) and left out;
    the others go on."""
    if len(inputs) == 1:
        convert_stream(
            inputs[0].stream,
            inputs[0].path,
            write,
            totals,
            settings.source,
            None,
            settings.clock,
            settings.session_id,
            settings.encoder,
            settings.max_line,
            settings.redact,
        )
        return
    translations = [
        Translation(
            given.path,
            write,
            totals,
            settings.source,
            settings.clock,
            settings.session_id,
            settings.encoder,
            settings.redact,
            GATHER,
        )
        for given in inputs
    ]
    merge = SessionMerge(translations[0])
    for translation in translations[1:]:
        merge.join(translation)
    readers = {
        id(part): _Reader(read_parsed(given.stream, given.path, max_line=settings.max_line))
        for part, given in zip(merge.parts, inputs, strict=True)
    }

    def may_bring(part: Part) -> bool:
        return not readers[id(part)].ended

    try:
        for part in merge.parts:
            _advance(part, readers[id(part)], on_error)
        while merge.step(may_bring):
            for part in merge.parts:
                if not part.batches:
                    _advance(part, readers[id(part)], on_error)
    except Interrupted:
        with contextlib.suppress(InputError):
            translations[0].close_framing()
        translations[0].flush_output()
        raise
    except PASSED_ON:
        for translation in translations:
            translation.flush_output()  # what was framed before a failure is kept
        raise
    except Exception as exc:
        for translation in translations[1:]:
            translation.flush_output()
        ended_by_failure(translations[0], exc)
        return
    except BaseException:
        for translation in translations:
            translation.flush_output()
        raise
    finally:
        for translation in translations:
            totals.lines_in += translation.lines
    translations[0].close_framing()


@dataclass(slots=True)
class _Reader:
    lines: Iterator[ParsedLine]
    ended: bool = False
    any_text: bool = False


def _advance(part: Part, reader: _Reader, on_error: Callable[[str, str], None] | None) -> None:
    """Read the part's records until one makes events (or its end, where its
    adapter's last events come)."""
    translation = part.translation
    try:
        while not part.batches and not reader.ended:
            parsed = next(reader.lines, None)
            if parsed is None:
                reader.ended = True
                if not reader.any_text:
                    raise InputError("empty input: no lines to convert")
                translation.finish_input()
                break
            if parsed.records or parsed.damage:
                reader.any_text = True
            translation.feed(parsed)
    except InputError as exc:
        reader.ended = True
        part.batches.clear()
        translation.totals.failed_inputs += 1
        if on_error is not None:
            on_error(translation.path, str(exc))
