"""Batch conversion of one input: bytes → lines → records → the translation → sink.

Reads as a stream: memory stays flat whatever the input size, and when the input
is a pipe each output line is written and flushed as soon as the input line that
makes it has arrived.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import IO

from streamv1.translator.pipeline import InputError, Interrupted, Totals, Translation
from streamv1.translator.reader import MAX_LINE_BYTES, read_parsed
from streamv1.translator.shapes import Encoder
from streamv1.translator.sources import Source
from streamv1.translator.timefmt import now_ts

__all__ = ["InputError", "Interrupted", "Totals", "convert_stream"]


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
