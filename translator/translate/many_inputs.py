"""Batch conversion of many inputs, serially or in worker processes.

Output order is deterministic whatever ``--jobs`` is: per session (its files
together, :mod:`translator.translate.grouping`), sessions in time order. Workers
write each input's lines to a temp file (or straight to its ``--out-dir`` file);
the parent copies the temp files to the shared output in order, so memory stays
flat however large an input is. Where lines go is :mod:`translator.translate.sinks`;
what an input file is checked for first, :mod:`translator.translate.input_files`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import os
import stat
import sys
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from streamv1.translator import logs
from streamv1.translator.exits import Interrupted, stop_if_interrupted
from streamv1.translator.model.events import Usage
from streamv1.translator.model.framing import FramerStats
from streamv1.translator.output.shapes import encoder_for
from streamv1.translator.reading.reader import MAX_LINE_BYTES
from streamv1.translator.reading.sources import Source, input_clock, sources
from streamv1.translator.timefmt import normalize_ts, now_ts
from streamv1.translator.translate.batch_progress import Counted, Progress
from streamv1.translator.translate.grouping import FIRST_TIMES, sessions, worker_groups
from streamv1.translator.translate.input_files import (
    is_regular,
    looks_like_another,
    refuse_binary,
    size_of,
)
from streamv1.translator.translate.one_input import (
    InputError,
    SessionInput,
    Settings,
    Totals,
    convert_session,
    convert_stream,
)
from streamv1.translator.translate.sinks import (
    OUT_BUFFER,
    OutputWriteError,
    Sink,
    Writer,
    append_file,
    settle,
)

log = logs.get()

if TYPE_CHECKING:
    from concurrent.futures import Future


@dataclass(slots=True, frozen=True)
class Job:
    path: str  # a file, or "-" for stdin
    target: str | None = None  # its own output file (--out-dir), else the shared output


@dataclass(slots=True, frozen=True)
class Options:
    source: str | None = None  # None: auto
    fixed_now: str | None = None
    session_id: str | None = None
    to: str = "stream_v1"  # the output shape (translator.output.shapes): --to
    extra_types: bool = False
    redact: bool = True  # mask secrets (--no-redact turns it off)
    max_line: int = MAX_LINE_BYTES  # longer lines are reported and skipped (--max-line-bytes)

    def clock(self, path: str = "-") -> Callable[[], str]:
        """The time for lines whose source has none: ``--now``, else derived from
        the input file (:func:`sources.input_clock`); the clock only for a pipe."""
        fixed = normalize_ts(self.fixed_now) if self.fixed_now else None
        if fixed is not None:
            return lambda: fixed
        return now_ts if path == "-" else input_clock(path, now_ts, FIRST_TIMES.get(path) or None)

    def source_obj(self) -> Source | None:
        return sources()[self.source] if self.source else None


def convert_one(
    job: Job,
    sink: Writer,
    options: Options,
    totals: Totals,
    read: Callable[[int], None] | None = None,
) -> None:
    """One input into ``sink``; a bad input is one clear log line, never a traceback.
    ``read`` hears how many bytes of the input were read, as they are (progress)."""
    totals.files += 1
    try:
        if job.path == "-":
            sink.flush()  # what earlier inputs made goes out before a wait for stdin
            stream: IO[bytes] = sys.stdin.buffer
            live = True
        else:
            if not is_regular(job.path):
                sink.flush()  # a FIFO's open, or its reads, may wait: not the output
            stream = open(job.path, "rb")
            live = not stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
            if not live:
                head = refuse_binary(stream)
                if read is not None:
                    stream = Counted(stream, read)  # type: ignore[assignment]
                named = options.source_obj()
                if named is not None and looks_like_another(head, named, job.path):
                    totals.source_mismatch += 1
        try:
            convert_stream(
                stream,
                job.path,
                sink.write,
                totals,
                source=options.source_obj(),
                flush=sink.flush if live else None,
                clock=options.clock("-" if live else job.path),
                session_id=options.session_id,
                encoder=encoder_for(options.to, options.extra_types),
                max_line=options.max_line,
                redact=options.redact,
            )
        finally:
            if job.path != "-":
                stream.close()
        settle(sink)
    except InputError as exc:
        totals.failed_inputs += 1
        log.error("input not converted", path=job.path, reason=str(exc))
    except (BrokenPipeError, OutputWriteError):
        raise
    except OSError as exc:
        totals.failed_inputs += 1
        log.error("cannot read the input", path=job.path, reason=exc.strerror or str(exc))


def convert_unit(
    unit: list[Job],
    sink: Writer,
    options: Options,
    totals: Totals,
    read: Callable[[int], None] | None = None,
) -> None:
    """One session's inputs (see :func:`sessions`) into ``sink``: a lone file as
    :func:`convert_one` converts it, several merged into one stream by
    :func:`convert.convert_session`. A file that cannot be read is one log line and
    left out; the session's other files are still converted."""
    if len(unit) == 1:
        convert_one(unit[0], sink, options, totals, read)
        return
    inputs: list[SessionInput] = []
    with contextlib.ExitStack() as stack:
        for job in unit:
            totals.files += 1
            try:
                stream: IO[bytes] = stack.enter_context(open(job.path, "rb"))
                head = refuse_binary(stream)
                named = options.source_obj()
                if named is not None and looks_like_another(head, named, job.path):
                    totals.source_mismatch += 1
                if read is not None:
                    stream = Counted(stream, read)  # type: ignore[assignment]
            except InputError as exc:
                totals.failed_inputs += 1
                log.error("input not converted", path=job.path, reason=str(exc))
                continue
            except OSError as exc:
                totals.failed_inputs += 1
                log.error("cannot read the input", path=job.path, reason=exc.strerror or str(exc))
                continue
            inputs.append(SessionInput(stream, job.path))
        if not inputs:
            return

        def failed(path: str, why: str) -> None:
            log.error("input not converted", path=path, reason=why)

        settings = Settings(
            options.source_obj(),
            options.clock(inputs[0].path),
            options.session_id,
            encoder_for(options.to, options.extra_types),
            options.max_line,
            options.redact,
        )
        convert_session(inputs, sink.write, totals, settings, on_error=failed)
    settle(sink)


def _worker(group: list[list[Job]], options: Options, spool: str) -> tuple[Totals, str | None]:
    """In a worker process: convert a group of inputs, each to its own target or,
    in input order, to the group's one spool file (a group, not one input a task,
    and one spool a group: small files would otherwise cost more in hand-offs and
    file operations than in work)."""
    import signal
    import tempfile

    # A progress line's display replaced the parent's stdout and stderr with its
    # own: a worker logs to the real ones (its copy of the display is stale).
    sys.stdout, sys.stderr = sys.__stdout__, sys.__stderr__
    # The parent alone answers Ctrl-C and SIGTERM (sent to the whole group): it
    # stops the workers itself (SIGKILL), so they never print a traceback of their own.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    totals = Totals()
    name: str | None = None
    spooled: IO[bytes] | None = None
    try:
        for unit in group:
            target = unit[0].target
            if target is not None:
                Path(target).parent.mkdir(parents=True, exist_ok=True)
                with open(target, "wb", buffering=OUT_BUFFER) as sink:
                    convert_unit(unit, Sink(sink, target), options, totals)
                continue
            if spooled is None:
                fd, name = tempfile.mkstemp(dir=spool, suffix=".jsonl")
                spooled = os.fdopen(fd, "wb", buffering=OUT_BUFFER)
            convert_unit(unit, Sink(spooled, f"the spool folder {spool}"), options, totals)
    finally:
        if spooled is not None:
            spooled.close()
    return totals, name


def merge(into: Totals, other: Totals) -> None:
    """A worker's totals into the run's."""
    _add(into, other)


def _add(into: Any, other: Any) -> None:
    """Every count of ``other`` added to ``into``'s, field by field: numbers summed,
    Counters updated, tokens as :meth:`Usage.add` adds them (saturating), and the
    framing's own counts (:class:`FramerStats`) the same way."""
    for name in (f.name for f in dataclasses.fields(into)):
        mine, theirs = getattr(into, name), getattr(other, name)
        if isinstance(mine, FramerStats):
            _add(mine, theirs)
        elif isinstance(mine, Counter):
            mine.update(theirs)
        elif isinstance(mine, Usage):
            mine.add(theirs)
        else:
            setattr(into, name, mine + theirs)


#: Less input than this is converted in one process by default: a pool's start
#: (fork, spool files, copying them out) costs more than a second core gives.
#: Measured (2 cores, medians of 5, --jobs 2 vs 1): 2.1.332 captures 14 MB 0.94x,
#: 41 MB 1.14x; public corpus 4 MB 0.89x, 21 MB 1.12x (docs/performance.md).
PARALLEL_FROM = 24_000_000


def default_workers(jobs: list[Job]) -> int:
    """``--jobs`` when none is given: every core once the inputs hold enough to
    pay for a pool (:data:`PARALLEL_FROM`), else one process. Sizes are summed
    only until the threshold: a stat per file, at most."""
    cores = os.cpu_count() or 1
    if cores < 2 or len(jobs) < 2:
        return 1
    total = 0
    for job in jobs:
        total += size_of(job.path)
        if total >= PARALLEL_FROM:
            return cores
    return 1


def run(
    jobs: list[Job],
    shared: Writer | None,
    options: Options,
    workers: int,
    progress: bool,
    console: Any = None,
) -> Totals:
    """Convert every job; output per session (:func:`grouping.sessions`), sessions
    in time order, whatever ``workers`` is."""
    totals = Totals()
    bar = Progress(jobs, progress, console)
    try:
        _run(jobs, shared, options, workers, totals, bar)
        stop_if_interrupted()  # (a signal whose raise was lost in the last input)
        return totals
    except Interrupted as exc:
        exc.totals = totals  # the summary's so far
        raise
    finally:
        # The one close, whatever ends the run (a signal while the inputs are
        # grouped, an error, the end): the terminal gets its cursor and stderr back.
        bar.close()


def _run(
    jobs: list[Job],
    shared: Writer | None,
    options: Options,
    workers: int,
    totals: Totals,
    bar: Progress,
) -> Totals:
    units = sessions(jobs)
    if workers <= 1 or len(units) <= 1 or any(j.path == "-" for j in jobs):
        for unit in units:
            stop_if_interrupted()
            read = bar.read if bar.enabled else None
            if unit[0].target is not None:
                Path(unit[0].target).parent.mkdir(parents=True, exist_ok=True)
                with open(unit[0].target, "wb", buffering=OUT_BUFFER) as sink:
                    convert_unit(unit, Sink(sink, unit[0].target), options, totals, read)
            else:
                assert shared is not None
                convert_unit(unit, shared, options, totals, read)
            for job in unit:
                bar.done(job)
        return totals
    # Imported here: a serial run should not pay for the process pool or temp files.
    import tempfile
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing import get_context

    sources()  # discover the adapters once, before the workers fork
    # Spool in memory-backed /dev/shm where there is one: the bytes go straight on.
    shm = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None
    with tempfile.TemporaryDirectory(prefix="streamv1-", dir=shm) as spool:
        ctx = get_context("fork")
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx)
        try:
            # A bounded window: spool files never pile up far ahead of the writer.
            window = workers * 8
            pending: list[tuple[list[list[Job]], Future[tuple[Totals, str | None]]]] = []
            queue: Iterable[list[list[Job]]] = iter(worker_groups(units, workers))
            for group in queue:
                stop_if_interrupted()
                pending.append((group, pool.submit(_worker, group, options, spool)))
                if len(pending) >= window:
                    _drain_first(pending, shared, totals, bar)
            while pending:
                stop_if_interrupted()
                _drain_first(pending, shared, totals, bar)
        except BaseException:
            # Interrupted (or failing): stop the workers now, not after their
            # current inputs (tens of seconds); the spool folder goes with the with.
            for proc in list(getattr(pool, "_processes", {}).values()):
                proc.kill()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    return totals


def _drain_first(
    pending: list[tuple[list[list[Job]], Future[tuple[Totals, str | None]]]],
    shared: Writer | None,
    totals: Totals,
    bar: Progress,
) -> None:
    group, future = pending.pop(0)
    part, spooled = future.result()
    if spooled is not None:
        assert shared is not None
        at = _end_of(shared)
        try:
            append_file(spooled, shared)
            shared.flush()
        except Interrupted:
            # A group is written whole or not at all (its runs are whole): an output
            # that is a file is cut back, and the summary leaves the group out.
            if at is not None:
                with contextlib.suppress(OSError, ValueError):
                    os.ftruncate(shared.fileno(), at)
                    os.lseek(shared.fileno(), at, os.SEEK_SET)
            raise
        os.unlink(spooled)
    merge(totals, part)
    for unit in group:
        for job in unit:
            bar.done(job)


def _end_of(shared: Writer) -> int | None:
    """Where a regular file output ends (flushed first), None for any other output
    (a pipe cannot be cut back)."""
    try:
        shared.flush()
        fd = shared.fileno()
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        return os.lseek(fd, 0, os.SEEK_CUR)
    except (OSError, ValueError, AttributeError, io.UnsupportedOperation):
        return None


#: How many dropped kinds the closing summary names (the most frequent first).
SUMMARY_KINDS = 4


def describe(totals: Totals) -> dict[str, Any]:
    """The closing summary's fields: what was read and written, what each count
    counts (the dropped records by kind, where the mapping docs say why), and the
    tokens and stated cost of the runs."""
    f = totals.framing
    fields: dict[str, Any] = {
        "files": totals.files,
        "lines_in": totals.lines_in,
        "lines_out": f.lines_out,
        "runs": f.runs,
        "dropped": sum(f.dropped.values()),
    }
    if f.dropped:
        top = f.dropped.most_common(SUMMARY_KINDS)
        named = ", ".join(f"{kind} {n}" for kind, n in top)
        others = len(f.dropped) - len(top)
        more = f" and {others} more kinds" if others > 0 else ""
        fields["dropped_kinds"] = (
            f"{named}{more} (metadata dropped on purpose, "
            "docs/mapping.md; every kind: --log-level debug)"
        )
    fields |= {
        "unrecognized": sum(f.unrecognized.values()),
        "errors": totals.errors,
        "tolerated": f.tolerated,
    }
    if f.failures:
        fields["failed_sessions"] = f.failures
    if totals.source_mismatch:
        fields["source_mismatch"] = totals.source_mismatch
    u = f.usage
    fields |= {
        "input_tokens": u.input_tokens,
        "output_tokens": u.output_tokens,
        "cache_read": u.cache_read,
        "cache_creation": u.cache_creation,
    }
    if f.costed_runs:
        # The sources' own figure (print mode's total_cost_usd), never computed here.
        fields["stated_cost_usd"] = round(f.stated_cost_usd, 6)
        fields["costed_runs"] = f"{f.costed_runs} of {f.runs}"
    return fields
