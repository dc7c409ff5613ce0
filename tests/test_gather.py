"""Batch conversion gathers encoded lines and scrubs and writes them a buffer at a
time (pipeline.GATHER); the bytes must be those of writing each line as it is framed,
and a failure part-way must not lose what was framed before it."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamv1.translator.output.scrub import WHOLE_AFTER, scrubber
from streamv1.translator.reading.reader import read_parsed
from streamv1.translator.reading.sources import sources
from streamv1.translator.translate.one_input import convert_stream
from streamv1.translator.translate.translation import Totals, Translation

ROOT = Path(__file__).resolve().parent.parent
CLOCK = "2026-01-01T00:00:00.000Z"
INPUTS = sorted(
    p for p in (ROOT / "testdata").glob("*/*.jsonl") if not p.name.endswith(".expected.jsonl")
)


def line_by_line(path: Path, gather: int) -> bytes:
    out = io.BytesIO()
    translation = Translation(str(path), out.write, Totals(), clock=lambda: CLOCK, gather=gather)
    with open(path, "rb") as fh:
        for parsed in read_parsed(fh, str(path)):
            translation.feed(parsed)
    translation.finish()
    return out.getvalue()


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_gathered_output_is_the_line_by_line_output(path: Path) -> None:
    # The fixtures hold planted secrets and ANSI escapes (claude-*/secrets.jsonl, ...):
    # a buffer that hits is masked line by line, as each line alone would be.
    each = line_by_line(path, 0)
    assert line_by_line(path, 1 << 16) == each
    assert line_by_line(path, 1) == each  # every line its own buffer
    assert line_by_line(path, 300) == each  # buffers of a few lines


def test_the_secrets_fixture_is_masked_when_gathered() -> None:
    path = ROOT / "testdata" / "claude-session" / "secrets.jsonl"
    out = io.BytesIO()
    with open(path, "rb") as fh:
        convert_stream(fh, str(path), out.write, Totals(), clock=lambda: CLOCK)
    assert b"REDACTED" in out.getvalue()
    assert out.getvalue() == line_by_line(path, 0)


@pytest.mark.parametrize("clean_run", [0, WHOLE_AFTER - 3, WHOLE_AFTER])
@pytest.mark.parametrize(
    "name",
    ["claude-session/secrets.jsonl", "claude-stream/secrets.jsonl", "stella/basic_turn.jsonl"],
)
def test_lines_scrubbed_one_by_one_or_with_their_buffer_are_the_same(
    name: str, clean_run: int
) -> None:
    # Which way a gathered line is scrubbed follows the process's hint (how many
    # clean lines in a row came last): never what comes out.
    each = line_by_line(ROOT / "testdata" / name, 0)
    scrub = scrubber(True)
    before = scrub.clean_run
    try:
        scrub.clean_run = clean_run
        assert line_by_line(ROOT / "testdata" / name, 1 << 16) == each
        scrub.clean_run = clean_run
        assert line_by_line(ROOT / "testdata" / name, 500) == each
    finally:
        scrub.clean_run = before


def test_a_secret_after_the_lines_scrubbed_one_by_one_is_masked() -> None:
    # A buffer whose first lines were scrubbed as they came (the hint said hits
    # were common) and whose later lines were not: the later ones are scanned too.
    clean = [
        f'{{"ts":{1796036400000 + i},"type":"text","text":"line {i}"}}\n'.encode()
        for i in range(12)
    ]
    secret = (
        '{"ts":1796036400099,"type":"text","text":"key sk-ant-api03-Zq8vR2mK7xT4pL9wN3bH6'
        'cJ1dF5gS0aE2yU8iO4kM7nB3vC9xZ1qW5eR7tY2uI6oP0aS4dF8gH3jK1lZ9xC-AbCdEfGhAA"}\n'
    )
    scrub = scrubber(True)
    before = scrub.clean_run
    out = io.BytesIO()
    translation = Translation(
        "p.jsonl", out.write, Totals(), sources()["stella"], clock=lambda: CLOCK, gather=1 << 16
    )
    try:
        scrub.clean_run = 0  # lines one by one ...
        for parsed in read_parsed(io.BytesIO(b"".join(clean)), "p.jsonl"):
            translation.feed(parsed)
        assert translation._scrubbed > 0
        scrub.clean_run = WHOLE_AFTER  # ... then the rest with the buffer
        for parsed in read_parsed(io.BytesIO(secret.encode() + b"".join(clean)), "p.jsonl"):
            translation.feed(parsed)
        translation.finish()
    finally:
        scrub.clean_run = before
    assert out.getvalue().count(b"\n") > 24
    assert b"sk-ant-api03-Zq8v" not in out.getvalue()


@settings(max_examples=40, deadline=None)
@given(st.integers(min_value=1, max_value=4000))
def test_any_gather_size_gives_the_same_bytes(gather: int) -> None:
    path = ROOT / "testdata" / "claude-stream" / "secrets.jsonl"
    assert line_by_line(path, gather) == line_by_line(path, 0)


class FailingRead(io.RawIOBase):
    """The first ``good`` bytes of ``data``, then an I/O error (a disk going away)."""

    def __init__(self, data: bytes, good: int) -> None:
        self.data, self.good, self.at = data, good, 0

    def readable(self) -> bool:
        return True

    def readinto(self, buf: bytearray | memoryview) -> int:  # type: ignore[override]
        if self.at >= self.good:
            if self.good >= len(self.data):
                return 0  # the end
            raise OSError(5, "Input/output error")
        n = min(len(buf), self.good - self.at, 4096)
        buf[:n] = self.data[self.at : self.at + n]
        self.at += n
        return n


def test_a_read_failure_keeps_the_lines_framed_before_it() -> None:
    path = ROOT / "testdata" / "stella" / "journal_two_runs.jsonl"
    data = path.read_bytes()
    cut = data.rfind(b"\n", 0, len(data) * 2 // 3) + 1
    whole = io.BytesIO()
    with io.BufferedReader(FailingRead(data[:cut], cut)) as fh:
        convert_stream(fh, "p", whole.write, Totals(), clock=lambda: CLOCK)
    out = io.BytesIO()
    with io.BufferedReader(FailingRead(data, cut)) as fh, pytest.raises(OSError):
        convert_stream(fh, "p", out.write, Totals(), clock=lambda: CLOCK)
    kept = out.getvalue()
    # Everything framed from the lines read (the whole input cut there, less the
    # end its finish writes) is in the output, not held back in a buffer.
    assert kept, "nothing was written before the read failed"
    assert whole.getvalue().startswith(kept)
    assert kept.count(b"\n") >= data[:cut].count(b"\n") - 1


class Recorded(io.BytesIO):
    def __init__(self) -> None:
        super().__init__()
        self.flushes = 0

    def flush(self) -> None:
        self.flushes += 1


def test_an_input_end_flushes_only_when_the_last_flush_is_old(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # An archive of small files is not one write per file, but a reader of the
    # output still gets each input within SETTLE_AFTER of its conversion.
    from streamv1.translator.translate import sinks

    now = [100.0]
    monkeypatch.setattr(sinks.time, "monotonic", lambda: now[0])
    raw = Recorded()
    sink = sinks.Sink(raw, "out")
    sinks.settle(sink)
    assert raw.flushes == 0
    now[0] = 100.0 + sinks.SETTLE_AFTER / 2
    sinks.settle(sink)
    assert raw.flushes == 0
    now[0] = 100.0 + sinks.SETTLE_AFTER
    sinks.settle(sink)
    assert raw.flushes == 1
    sinks.settle(sink)
    assert raw.flushes == 1  # just flushed
    sink.flush()
    assert raw.flushes == 2
    other = Recorded()
    sinks.settle(other)  # a writer with no settle of its own flushes now
    assert other.flushes == 1


def test_lines_go_out_before_an_input_that_may_wait(tmp_path: Path) -> None:
    """A FIFO (or stdin) may wait for its writer: what earlier inputs made is
    flushed before it is opened, not left in the buffer while it waits."""
    import os
    import threading

    from streamv1.translator.translate import many_inputs, sinks

    raw = Recorded()
    sink = sinks.Sink(raw, "out")
    options = many_inputs.Options(source="stella", fixed_now=CLOCK)
    first = ROOT / "testdata" / "stella" / "journal_two_runs.jsonl"
    many_inputs.convert_one(many_inputs.Job(str(first)), sink, options, Totals())
    assert raw.flushes == 0  # a regular file's end: not yet (SETTLE_AFTER)
    fifo = tmp_path / "live.jsonl"
    os.mkfifo(fifo)
    seen: list[int] = []

    def writer() -> None:
        with open(fifo, "wb") as fh:  # opens once the reader has
            seen.append(raw.flushes)
            fh.write(b'{"type":"text","ts":1,"text":"x"}\n')

    thread = threading.Thread(target=writer)
    thread.start()
    many_inputs.convert_one(many_inputs.Job(str(fifo)), sink, options, Totals())
    thread.join(timeout=30)
    assert seen and seen[0] >= 1, "the first input's lines waited in the buffer"
