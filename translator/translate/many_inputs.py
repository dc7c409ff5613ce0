"""Batch conversion of many inputs, serially or in worker processes.

Output order is deterministic whatever ``--jobs`` is: per input, in input order.
Workers write each input's lines to a temp file (or straight to its ``--out-dir``
file); the parent copies the temp files to the shared output in input order, so
memory stays flat however large an input is.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import stat
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

import orjson

from streamv1.translator import logs
from streamv1.translator.output.shapes import encoder_for
from streamv1.translator.progress import ONE_FILE_SHOWN
from streamv1.translator.reading.reader import MAX_LINE_BYTES
from streamv1.translator.reading.sources import (
    Source,
    first_time,
    input_clock,
    session_place,
    sources,
)
from streamv1.translator.timefmt import normalize_ts, now_ts
from streamv1.translator.translate.one_input import (
    InputError,
    Interrupted,
    SessionInput,
    Totals,
    convert_session,
    convert_stream,
)

log = logs.get()

if TYPE_CHECKING:
    from concurrent.futures import Future

    from streamv1.translator.progress import ProgressLine

_BINARY_PROBE = 8192
OUT_BUFFER = 1 << 20  # bytes an output file is written in
#: Seconds an input's end may leave its lines in the output buffer (Sink.settle).
SETTLE_AFTER = 0.2
GROUP_BYTES = 16_000_000
GROUP_FILES = 64
_PRINTABLE = bytes([9, 10, 13, *range(0x20, 0x100)])


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
        return now_ts if path == "-" else input_clock(path, now_ts, _FIRST_TIMES.get(path) or None)

    def source_obj(self) -> Source | None:
        return sources()[self.source] if self.source else None


class Writer(Protocol):
    """Where lines go: an output file, or a :class:`Sink` around one."""

    def write(self, data: bytes, /) -> int: ...

    def flush(self) -> None: ...

    def fileno(self) -> int: ...


def settle(sink: Writer) -> None:
    """An input is over: a :class:`Sink` (or a writer that passes it on) flushes
    soon (:meth:`Sink.settle`); any other writer now."""
    getattr(sink, "settle", sink.flush)()


def _regular(path: str) -> bool:
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except OSError:
        return True  # the open says what is wrong


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
            if not _regular(job.path):
                sink.flush()  # a FIFO's open, or its reads, may wait: not the output
            stream = open(job.path, "rb")
            live = not stat.S_ISREG(os.fstat(stream.fileno()).st_mode)
            if not live:
                head = _refuse_binary(stream)
                if read is not None:
                    stream = _Counted(stream, read)  # type: ignore[assignment]
                named = options.source_obj()
                if named is not None and _looks_like_another(head, named, job.path):
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
                head = _refuse_binary(stream)
                named = options.source_obj()
                if named is not None and _looks_like_another(head, named, job.path):
                    totals.source_mismatch += 1
                if read is not None:
                    stream = _Counted(stream, read)  # type: ignore[assignment]
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

        convert_session(
            inputs,
            sink.write,
            totals,
            source=options.source_obj(),
            clock=options.clock(inputs[0].path),
            session_id=options.session_id,
            encoder=encoder_for(options.to, options.extra_types),
            max_line=options.max_line,
            redact=options.redact,
            on_error=failed,
        )
    settle(sink)


def sessions(jobs: list[Job]) -> list[list[Job]]:
    """The inputs grouped by session, each group in the order it is merged (its
    main file first), the groups in time order: a session is the unit of framing
    (a subagent's file is lines of its parent's run), and the output is the same
    whatever order the files were named or listed in. stdin and files no source
    places in a session stay alone; ``-`` keeps its place first."""
    keyed: dict[str, list[tuple[bool, Job]]] = {}
    alone: list[list[Job]] = []
    for job in jobs:
        place = session_place(job.path) if job.path != "-" else None
        if place is None:
            alone.append([job])
        else:
            keyed.setdefault(place[0], []).append((place[1], job))
    groups = alone + [
        [job for _, job in sorted(g, key=lambda m: (not m[0], m[1].path))] for g in keyed.values()
    ]
    stdin = [g for g in groups if g[0].path == "-"]
    files = [g for g in groups if g[0].path != "-"]
    for group in files:
        _FIRST_TIMES[group[0].path] = first_time(group[0].path)
    files.sort(key=lambda g: (_FIRST_TIMES[g[0].path], g[0].path))
    return stdin + files


#: Each session's first time, as :func:`sessions` read it to order them: the clock
#: of its lines with no time of their own (Options.clock) reads no file again for
#: it. ("" is not taken: a file still being written may have one by then.)
_FIRST_TIMES: dict[str, str] = {}


class _Counted:
    """A file that tells ``read`` how many bytes each read took (the reader reads
    1 MiB at a time, so this costs one call a megabyte)."""

    def __init__(self, raw: IO[bytes], read: Callable[[int], None]) -> None:
        self._raw, self._read = raw, read

    def read1(self, n: int = -1) -> bytes:
        data = self._raw.read1(n)  # type: ignore[attr-defined]
        self._read(len(data))
        return bytes(data)

    def read(self, n: int = -1) -> bytes:
        data = self._raw.read(n)
        self._read(len(data))
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)


def _refuse_binary(stream: IO[bytes]) -> bytes:
    """The input's first bytes, after refusing what is plainly not JSON lines."""
    head = stream.read(_BINARY_PROBE)
    stream.seek(0)
    if not head:
        return head
    text = head.replace(b"\x00", b"")
    if not text.strip():
        return head  # only NULs: the reader reports them per line
    unprintable = len(text.translate(None, _PRINTABLE))
    if unprintable > 0.15 * len(text):
        raise InputError("binary data, not a JSONL transcript")
    if b"{" not in text and b"[" not in text:
        raise InputError("plain text, not JSON lines (each line must be one JSON object)")
    return head


def first_record(head: bytes) -> dict[str, Any] | None:
    """The first JSON object among an input's first lines (what a sniff looks at)."""
    for raw in head.splitlines()[:5]:
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict):
            return record
    return None


def _looks_like_another(head: bytes, named: Source, path: str) -> bool:
    """``--source`` names one source and the first record is plainly another's
    (decisive for it, nothing for the named one): said once, counted; the input is
    still converted as named (the user may know better)."""
    from streamv1.translator.reading.sources import DECISIVE, sniff

    record = first_record(head)
    if record is None:
        return False
    best, score = sniff(record)
    if best is None or best is named or score < DECISIVE or named.sniff(record):
        return False
    log.warning(
        "these records look like another source's; converting them as the one named",
        path=path,
        hint="--source auto tells by itself",
        source=named.name,
        looks_like=best.name,
    )
    return True


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


def _groups(units: list[list[Job]], workers: int) -> list[list[list[Job]]]:
    """Consecutive sessions in groups of about GROUP_BYTES, and enough groups to
    keep every worker busy to the end (a session is never split: it is one stream)."""
    sizes = [sum(_size(j.path) for j in unit) for unit in units]  # one stat an input
    target = max(1, min(GROUP_BYTES, sum(sizes) // (workers * 16) or 1))
    groups: list[list[list[Job]]] = []
    current: list[list[Job]] = []
    size = 0
    for unit, unit_size in zip(units, sizes, strict=True):
        current.append(unit)
        size += unit_size
        if size >= target or len(current) >= GROUP_FILES:
            groups.append(current)
            current, size = [], 0
    if current:
        groups.append(current)
    return groups


def merge(into: Totals, other: Totals) -> None:
    into.files += other.files
    into.lines_in += other.lines_in
    into.records += other.records
    into.failed_inputs += other.failed_inputs
    into.source_mismatch += other.source_mismatch
    into.sources.update(other.sources)
    f, g = into.framing, other.framing
    f.runs += g.runs
    f.lines_out += g.lines_out
    f.synthetic_inits += g.synthetic_inits
    f.synthetic_results += g.synthetic_results
    f.errors += g.errors
    f.tolerated += g.tolerated
    f.dropped.update(g.dropped)
    f.unrecognized.update(g.unrecognized)
    f.usage.add(g.usage)
    f.stated_cost_usd += g.stated_cost_usd
    f.costed_runs += g.costed_runs


#: One input this big is waited for long enough (seconds) to show progress inside it.
PROGRESS_ONE_FILE = ONE_FILE_SHOWN

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
        total += _size(job.path)
        if total >= PARALLEL_FROM:
            return cores
    return 1


class Progress:
    """files, MB, rate and ETA on one stderr line, for a terminal only
    (translator.progress draws it)."""

    def __init__(self, jobs: list[Job], enabled: bool, console: Any = None) -> None:
        self.enabled = enabled and (
            len(jobs) > 1 or (bool(jobs) and _size(jobs[0].path) > PROGRESS_ONE_FILE)
        )
        self.total_files = len(jobs)
        # Sizes only for a display that shows them: a stat an input otherwise wasted.
        self._sizes = {j: _size(j.path) for j in jobs} if self.enabled else {}
        self.total_bytes = sum(self._sizes[j] for j in jobs) if self.enabled else 0
        self.files = 0
        self.bytes = 0
        self._inside = 0  # bytes read of the file in hand
        self._line: ProgressLine | None = None
        if self.enabled:
            from streamv1.translator.progress import ProgressLine

            self._line = ProgressLine("convert", self.total_files, self.total_bytes, console)

    def read(self, n: int) -> None:
        """Bytes read inside a file: a single large input shows progress too."""
        self._inside += n
        if self._line is not None:
            self._line.update(self.files, self.bytes + self._inside)

    def done(self, job: Job) -> None:
        if self._line is None:
            return
        self.files += 1
        self.bytes += self._sizes.get(job, 0)
        self._inside = 0
        self._line.update(self.files, self.bytes)

    def close(self) -> None:
        if self._line is not None:
            self._line.close(self.files, self.bytes)
            self._line = None


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size if path != "-" else 0
    except OSError:
        return 0


def run(
    jobs: list[Job],
    shared: Writer | None,
    options: Options,
    workers: int,
    progress: bool,
    console: Any = None,
) -> Totals:
    """Convert every job; output per session (:func:`sessions`), sessions in time
    order, whatever ``workers`` is."""
    totals = Totals()
    bar = Progress(jobs, progress, console)
    try:
        return _run(jobs, shared, options, workers, totals, bar)
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
        try:
            for unit in units:
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
        except Interrupted as exc:
            exc.totals = totals  # the summary's so far
            raise
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
            queue: Iterable[list[list[Job]]] = iter(_groups(units, workers))
            for group in queue:
                pending.append((group, pool.submit(_worker, group, options, spool)))
                if len(pending) >= window:
                    _drain_first(pending, shared, totals, bar)
            while pending:
                _drain_first(pending, shared, totals, bar)
        except BaseException as exc:
            # Interrupted (or failing): stop the workers now, not after their
            # current inputs (tens of seconds); the spool folder goes with the with.
            if isinstance(exc, Interrupted):
                exc.totals = totals
            for proc in list(getattr(pool, "_processes", {}).values()):
                proc.kill()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        pool.shutdown(wait=True)
    return totals


#: sendfile's answers for an output it cannot write to (a terminal, a socket of
#: some kinds): copied in user space instead. Any other error is the output's.
_NO_SENDFILE = frozenset({errno.EINVAL, errno.ENOSYS, errno.EOPNOTSUPP, errno.EBADF})


def _append(spooled: str, shared: Writer) -> None:
    """Copy a spool file to the output in the kernel where it can (no user copy)."""
    shared.flush()
    with open(spooled, "rb") as fh:
        size = os.fstat(fh.fileno()).st_size
        sent = 0
        try:
            out_fd = shared.fileno()
            while sent < size:
                n = os.sendfile(out_fd, fh.fileno(), sent, size - sent)
                if n == 0:
                    break
                sent += n
            if sent == size:
                return
        except (ValueError, AttributeError, io.UnsupportedOperation):
            pass  # not a file descriptor: copy in user space
        except BrokenPipeError:
            raise
        except OSError as exc:
            if exc.errno not in _NO_SENDFILE:
                raise OutputWriteError(getattr(shared, "where", "the output"), exc) from exc
        fh.seek(sent)  # from where sendfile stopped: nothing twice
        while chunk := fh.read(1 << 20):
            shared.write(chunk)


def _drain_first(
    pending: list[tuple[list[list[Job]], Future[tuple[Totals, str | None]]]],
    shared: Writer | None,
    totals: Totals,
    bar: Progress,
) -> None:
    group, future = pending.pop(0)
    part, spooled = future.result()
    merge(totals, part)
    if spooled is not None:
        assert shared is not None
        _append(spooled, shared)
        os.unlink(spooled)
        shared.flush()
    for unit in group:
        for job in unit:
            bar.done(job)


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


class OutputError(Exception):
    """The output cannot be opened: ``where`` names it, ``reason`` says why."""

    def __init__(self, where: str, reason: str) -> None:
        super().__init__(f"{where}: {reason}")
        self.where = where
        self.reason = reason


class OutputWriteError(Exception):
    """Writing the output failed (a full disk, an I/O error): never an input's
    fault, so no input is blamed; one line naming the output (``where``)."""

    def __init__(self, where: str, exc: OSError) -> None:
        super().__init__(f"{where}: {exc.strerror or exc}")
        self.where = where
        self.reason = exc.strerror or str(exc)


class Sink:
    """An output file whose write and flush failures are :class:`OutputWriteError`,
    told apart from the input's read errors (a closed pipe stays BrokenPipeError:
    the reader went away, the job is over)."""

    def __init__(self, raw: IO[bytes], where: str) -> None:
        self.raw, self.where = raw, where
        self._flushed = time.monotonic()

    def settle(self) -> None:
        """An input is over: its lines go out now if the last flush is
        :data:`SETTLE_AFTER` old, so a reader of the output sees each input soon
        after it is converted, and an archive of small files is not one write per
        file (3,925 files of ~8 KB: 8% of the conversion)."""
        now = time.monotonic()
        if now - self._flushed >= SETTLE_AFTER:
            self.flush()

    def write(self, data: bytes) -> int:
        try:
            return self.raw.write(data)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputWriteError(self.where, exc) from exc

    def flush(self) -> None:
        self._flushed = time.monotonic()
        try:
            self.raw.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OutputWriteError(self.where, exc) from exc

    def fileno(self) -> int:
        return self.raw.fileno()


@contextlib.contextmanager
def output_sink(output: Path | None) -> Iterator[Sink]:
    """Where ``convert`` writes one stream of all its inputs: stdout (no FILE, or
    ``-``), or ``-o FILE``, written whole or not at all. Off a terminal, stdout is
    written whole megabytes a write, not 8 KiB: lines are flushed at an input's end
    when the last flush is :data:`SETTLE_AFTER` old, before an input that may wait
    (stdin, a FIFO), and after each line of a live pipe. A failed write is an
    :class:`OutputWriteError`, raised once (closing after it says nothing more)."""
    if output is not None and str(output) != "-":
        with _atomic_output(output) as fh:
            yield Sink(fh, str(output))
        return
    if sys.stdout.isatty():
        yield Sink(sys.stdout.buffer, "stdout")
        return
    sys.stdout.flush()
    fh = open(sys.stdout.fileno(), "wb", buffering=OUT_BUFFER, closefd=False)
    sink = Sink(fh, "stdout")
    try:
        yield sink
        sink.flush()
    finally:
        with contextlib.suppress(OSError):  # a failure is said once, where it happened
            fh.close()


@contextlib.contextmanager
def _atomic_output(output: Path) -> Iterator[IO[bytes]]:
    """``-o FILE``, written whole or not at all: a temp file in the same folder,
    fsynced and renamed over FILE when the conversion ends, removed when it is
    interrupted or fails. A device or FIFO (``/dev/null``, a pipe) is written as is."""
    if output.is_dir():
        raise OutputError(str(output), "a directory; -o takes a file (or use --out-dir)")
    try:
        special = not stat.S_ISREG(os.stat(output).st_mode)
    except OSError:
        special = False  # not there yet: a file is made
    if special:
        try:
            fh = open(output, "wb", buffering=OUT_BUFFER)
        except OSError as exc:
            raise OutputError(str(output), exc.strerror or str(exc)) from exc
        try:
            yield fh
        finally:
            with contextlib.suppress(OSError):  # already said: the write failed
                fh.close()
        return
    import tempfile

    folder = output.parent if str(output.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{output.name}.", suffix=".part", dir=folder)
    except OSError as exc:
        raise OutputError(
            str(output), f"no file can be made there ({exc.strerror or exc})"
        ) from exc
    done = False
    fh = open(fd, "wb", buffering=OUT_BUFFER)
    try:
        try:
            yield fh
            try:
                fh.flush()
                os.fsync(fh.fileno())
            except OSError as exc:
                raise OutputWriteError(str(output), exc) from exc
        finally:
            with contextlib.suppress(OSError):  # a failure is said once, where it happened
                fh.close()
        with contextlib.suppress(OSError):
            os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, output)
        done = True
    finally:
        if not done:
            with contextlib.suppress(OSError):
                os.unlink(tmp)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask
