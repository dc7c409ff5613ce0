"""``streamv1 convert``: inputs (files, folders, stdin, every agent's home, or the
bundled sample) checked and converted into one stream, a file per input, or the bus.
``sessions`` converts through :func:`convert_inputs` too.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
import sys
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from streamv1.translator import logs
from streamv1.translator.cli.options import (
    FOLDER,
    FORMAT_OPTION,
    MAX_LINE_OPTION,
    PATH_OR_DASH,
    SOURCE_OPTION,
    output_shape_options,
    publishing,
    selection,
    selection_options,
    source_choice,
)
from streamv1.translator.cli.shared import (
    exit_now,
    progress_wanted,
    quiet_on_closed_stdout,
    signals_interrupt,
    stdout_is_stderr,
)
from streamv1.translator.exits import Failure, Interrupted
from streamv1.translator.fleet.bus import (
    BusError,
    bus_options,
    temp_output,
)
from streamv1.translator.output.shapes import DEFAULT
from streamv1.translator.reading.discover import walk_paths
from streamv1.translator.reading.sources import homes
from streamv1.translator.timefmt import normalize_ts
from streamv1.translator.translate import many_inputs, sinks
from streamv1.translator.translate.translation import Totals

if TYPE_CHECKING:
    from streamv1.translator.views import ledger

log = logs.get()


SAMPLE = "samples/claude-session-sample.jsonl"


@click.command()
@click.argument("paths", nargs=-1, type=PATH_OR_DASH)
@SOURCE_OPTION
@click.option(
    "-o", "--output", type=PATH_OR_DASH, help="Write all output to this file instead of stdout."
)
@click.option(
    "--out-dir", type=FOLDER, help="Write one output file per input, mirroring relative paths."
)
@click.option(
    "--lenient",
    is_flag=True,
    help="Exit 0 even when records did not fit (they still become system/error).",
)
@click.option(
    "--now",
    "fixed_now",
    metavar="TIMESTAMP",
    help="Use this time for lines whose source has none (reproducible output).",
)
@output_shape_options
@click.option(
    "--jobs",
    "-j",
    type=int,
    metavar="N",
    help="Convert N inputs at a time (default: one per core once the inputs hold 24 MB "
    "or more, where a second process pays for itself); output order stays per input, "
    "in input order.",
)
@click.option(
    "--session-id",
    metavar="ID",
    help="The session id for inputs whose records carry none (default: from the file name).",
)
@MAX_LINE_OPTION
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr (no summary).")
@selection_options("Runs", "begun")
@FORMAT_OPTION
@click.option(
    "--publish",
    metavar="nats://HOST:PORT[,...]",
    help="Send the lines to the NATS JetStream stream (docs/fleet.md) instead of stdout "
    "(with -o: as well). Converting the same input again stores nothing twice.",
)
@bus_options(publishing=True)
@quiet_on_closed_stdout
def convert(
    paths: tuple[Path, ...],
    source_name: str,
    output: Path | None,
    out_dir: Path | None,
    lenient: bool,
    fixed_now: str | None,
    session_id: str | None,
    to: str,
    claude_extra_types: bool,
    no_redact: bool,
    jobs: int | None,
    max_line_bytes: int,
    quiet: bool,
    view_format: str,
    since: str | None,
    until: str | None,
    project: str | None,
    agent: str | None,
    session_prefix: str | None,
    publish: str | None,
    **bus: Any,
) -> int:
    """Convert PATHs (files, directories, or - for stdin) to stream_v1 on stdout.

    With no PATH, reads stdin when it is a pipe or a file with data; at a terminal
    (or with stdin empty, /dev/null) converts every agent's home that holds
    transcripts (${CLAUDE_CONFIG_DIR:-~/.claude}/projects, and each source's own),
    or a bundled sample when none does. At a terminal stdout is a view for people
    and many files show their progress; piped, it is stream_v1 JSON lines.

    \b
      streamv1 convert ~/.claude/projects -o all.jsonl
      streamv1 convert session.jsonl                  # at a terminal: the view
      claude -p --output-format stream-json --verbose "fix it" | streamv1 convert
      streamv1 convert ~/.codex/sessions --since yesterday --project myrepo | jq .type
      streamv1 convert archive/ --out-dir converted/ --jobs 4
    """
    if quiet:
        logs.configure("error")
    source = source_choice(source_name)
    if output is not None and out_dir is not None:
        raise click.UsageError("-o/--output and --out-dir cannot be used together")
    if fixed_now is not None and normalize_ts(fixed_now) is None:
        raise click.UsageError(f"--now {fixed_now!r} is not an RFC 3339 timestamp")
    if jobs is not None and jobs < 1:
        raise click.UsageError("--jobs takes a whole number from 1")
    if claude_extra_types and to != "claude":
        raise click.UsageError("--claude-extra-types shapes --to claude output; add --to claude")
    bus_config = publishing(publish, bus, to, out_dir)
    spool = None
    stopped: int | None = None  # the status a signal ended the conversion with
    if bus_config is not None and output is None:
        output = spool = temp_output()  # what is sent; removed after
    options = many_inputs.Options(
        source.name if source else None,
        fixed_now,
        session_id,
        to,
        claude_extra_types,
        redact=not no_redact,
        max_line=max_line_bytes,
    )
    pretty = view_format == "pretty" or (
        view_format == "auto"
        and output is None
        and out_dir is None
        and to == DEFAULT
        and sys.stdout.isatty()
    )
    if pretty and (output is not None or out_dir is not None):
        raise click.UsageError("--format pretty is for stdout; -o and --out-dir get stream_v1")
    keep = selection(since, until, project, agent, session_prefix)
    if keep is not None and out_dir is not None:
        raise click.UsageError(
            "--since, --until, --project, --agent and --session select runs "
            "of one stream: use them with stdout or -o, not --out-dir"
        )
    try:
        totals = convert_inputs(paths, output, out_dir, options, jobs, pretty, keep)
        if bus_config is not None and output is not None:
            try:
                # (asyncio, nats: only to publish)
                from streamv1.translator.fleet import transfer

                # (lines stepped over are named by session; the spool's name says nothing)
                sent = transfer.publish_file(output, bus_config, "" if spool is not None else None)
            except BusError as exc:
                raise Failure("not published", reason=str(exc)) from None
            log.info("published", stream=bus_config.stream, **sent)
            if sent["too_large"]:
                raise Failure(
                    "lines the server can never take not published (over its "
                    "max_payload or max_control_line; each said above)",
                    lines=sent["too_large"],
                )
    except Interrupted as exc:
        # Ctrl-C or SIGTERM: the open run was ended with an interrupted result, and
        # what was converted kept (stdout, -o: what the summary counts is there), a
        # spool to publish gone; the summary, and the shell's status for the signal.
        part = exc.totals or Totals()
        kept = {}
        if output is not None and spool is None and str(output) != "-":
            kept = {"output": str(output), "kept": "what was converted; open runs interrupted"}
        log.info("interrupted", **kept, **many_inputs.describe(part))
        stopped = 128 + exc.signum
    finally:
        if spool is not None:
            spool.unlink(missing_ok=True)
    if stopped is not None:
        exit_now(stopped)
    log.info("summary", **many_inputs.describe(totals))
    if totals.framing.dropped:
        log.debug(
            "dropped record kinds",
            kinds=", ".join(f"{kind} {n}" for kind, n in sorted(totals.framing.dropped.items())),
        )
    if totals.framing.unrecognized:
        log.debug("unrecognized record types", **dict(totals.framing.unrecognized))
    # A failure of the translation itself is a bug, never damage --lenient forgives.
    failed = totals.failed_inputs or totals.framing.failures
    fatal = failed or (totals.framing.errors and not lenient)
    return 1 if fatal else 0


def convert_inputs(
    paths: tuple[Path, ...],
    output: Path | None,
    out_dir: Path | None,
    options: many_inputs.Options,
    jobs: int | None,
    pretty: bool = False,
    keep: ledger.Filter | None = None,
) -> Totals:
    """The inputs, checked, through ``many_inputs.run`` into the chosen sink."""
    failed = 0
    with ExitStack() as stack:
        work: list[many_inputs.Job] = []
        for path, rel in _inputs(paths, stack, out_dir):
            if path is None:
                failed += 1
            elif path == "-":
                if out_dir is not None:
                    raise click.UsageError("--out-dir needs file or directory paths, not stdin")
                work.append(many_inputs.Job("-"))
            else:
                target = str(out_dir / rel) if out_dir is not None else None
                work.append(many_inputs.Job(str(path), target))
        if output is not None and str(output) != "-":
            _refuse_output_among_inputs(output, work)
        if out_dir is not None:
            _check_out_dir(out_dir)
            _refuse_clashing_targets(work)
        shared: sinks.Writer | None = None
        if pretty:
            from streamv1.translator.views.pretty import PrettyWriter

            shared = PrettyWriter(sys.stdout)  # read by a person: one process is enough
            jobs = 1
        elif out_dir is None:
            try:
                shared = stack.enter_context(sinks.output_sink(output))
            except sinks.OutputError as exc:
                raise Failure("cannot open the output", path=exc.where, reason=exc.reason) from None
        selected = None
        if keep is not None and shared is not None:
            from streamv1.translator.translate.select import RunFilter

            shared = selected = RunFilter(shared, keep)
            jobs = 1  # the parallel path copies its spools straight to the output
        workers = jobs if jobs is not None else many_inputs.default_workers(work)
        try:
            with signals_interrupt():
                view = getattr(shared if selected is None else selected.inner, "console", None)
                on_stdout = output is None and out_dir is None and view is None
                try:
                    totals = many_inputs.run(
                        work,
                        shared,
                        options,
                        workers,
                        progress=progress_wanted(json_on_stdout=on_stdout),
                        console=view if stdout_is_stderr() else None,
                    )
                except Interrupted:
                    if view is not None and shared is not None:
                        with contextlib.suppress(OSError, ValueError):
                            shared.flush()  # the view's last lines, before the exit
                    raise
            if shared is not None:
                shared.flush()
            if selected is not None:
                log.info("runs the selection left out", runs=selected.runs_dropped)
        except sinks.OutputWriteError as exc:
            raise Failure(
                "cannot write the output",
                path=exc.where,
                reason=exc.reason,
                hint="the inputs are fine",
            ) from None
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise
            where = output if output is not None else out_dir
            raise Failure(
                "cannot write the output", path=str(where or "-"), reason=exc.strerror or str(exc)
            ) from None
    totals.failed_inputs += failed
    return totals


def _refuse_output_among_inputs(output: Path, work: list[many_inputs.Job]) -> None:
    """``-o`` naming one of the inputs would empty it before it is read."""
    try:
        out = os.stat(output)
    except OSError:
        return  # not there yet: it cannot be an input
    for job in work:
        if job.path == "-":
            continue
        with contextlib.suppress(OSError):
            st = os.stat(job.path)
            if (st.st_dev, st.st_ino) == (out.st_dev, out.st_ino):
                raise Failure(
                    "the output is also an input; write the output elsewhere",
                    path=str(output),
                    input=job.path,
                )


def _refuse_clashing_targets(work: list[many_inputs.Job]) -> None:
    """Two inputs whose outputs would have one name (``d1/a.jsonl d2/a.jsonl``):
    one would overwrite the other, so neither is written."""
    seen: dict[str, str] = {}
    for job in work:
        if job.target is None:
            continue
        target = os.path.normpath(job.target)
        if target in seen and os.path.realpath(seen[target]) != os.path.realpath(job.path):
            raise Failure(
                "--out-dir: two inputs would be written to one file; convert them into "
                "separate folders",
                path=target,
                inputs=f"{seen[target]} {job.path}",
            )
        seen[target] = job.path


def _check_out_dir(out_dir: Path) -> None:
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise Failure(
            "cannot use as --out-dir", path=str(out_dir), reason=exc.strerror or str(exc)
        ) from None


def _inputs(
    paths: tuple[Path, ...], stack: ExitStack, out_dir: Path | None = None
) -> Iterator[tuple[Any, str]]:
    """(path or "-", relative output name) per input; (None, "") for a bad path.
    A folder's walk leaves out what is under ``out_dir`` (#23 item 18: an
    ``--out-dir`` inside its input folder was read back as input the next run)."""
    if not paths:
        if not sys.stdin.isatty() and not _empty_stdin():
            yield "-", "stdin.jsonl"
            return
        user = os.path.expanduser("~")
        converted = False
        for home in homes():
            found = walk_paths(home) if os.path.isdir(home) else []
            if not found:
                continue
            log.info("no PATH given: converting an agent's home", path=home)
            converted = True
            # Named below the home's own path from the user's folder, so two
            # agents' files never share an --out-dir name.
            tag = (
                os.path.relpath(home, user)
                if home.startswith(os.path.join(user, ""))
                else home.lstrip(os.sep)
            )
            tag = os.path.join(*(part.lstrip(".") or part for part in tag.split(os.sep)))
            for path, rel in _relative(found, home):
                yield path, os.path.join(tag, rel)
        if converted:
            return
        from importlib import resources  # only when the bundled sample is used

        sample = resources.files("streamv1.translator").joinpath(SAMPLE)
        log.info(
            "no PATH given and no agent's home holds transcripts: converting the bundled sample",
            path=str(sample),
        )
        yield Path(str(sample)), Path(SAMPLE).name
        return
    for p in paths:
        if str(p) == "-":
            yield "-", "stdin.jsonl"
        elif p.is_dir():
            root = str(p)
            files, skipped = _walk(root)
            if out_dir is not None:
                files = _outside(files, out_dir, root)
            for _ in range(skipped):
                yield None, ""  # counted as an input that failed: exit 1
            if not files and not skipped:
                log.error("directory holds no transcripts (*.jsonl)", path=root)
                yield None, ""
            yield from _relative(files, root)
        elif p.exists():
            yield p, p.name
        else:
            log.error("no such file or directory", path=str(p))
            yield None, ""


def _outside(files: list[str], out_dir: Path, root: str) -> list[str]:
    """The files not under ``out_dir`` (its own earlier output is not input)."""
    inside = os.path.join(os.path.realpath(out_dir), "")
    kept = [f for f in files if not os.path.realpath(f).startswith(inside)]
    if len(kept) < len(files):
        log.info(
            "--out-dir is inside this folder; what it holds is output, not input",
            path=root,
            skipped=len(files) - len(kept),
        )
    return kept


def _walk(root: str) -> tuple[list[str], int]:
    """A folder's transcripts, and how many of its folders could not be read (each
    said in one line: its sessions are missing, not silently)."""
    skipped = 0

    def unreadable(folder: str, exc: OSError) -> None:
        nonlocal skipped
        skipped += 1
        log.error(
            "cannot read this folder",
            path=folder,
            reason=exc.strerror or str(exc),
            hint="its sessions are not converted",
        )

    return walk_paths(root, unreadable=unreadable), skipped


def _empty_stdin() -> bool:
    """stdin is /dev/null or an empty file: no input on it (a pipe is read, even
    one slow to start: ``claude -p ... | streamv1 convert``)."""
    try:
        st = os.fstat(sys.stdin.fileno())
    except (OSError, ValueError):
        return True  # closed
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISSOCK(st.st_mode):
        return False
    return st.st_size == 0


def _relative(files: list[str], root: str) -> Iterator[tuple[str, str]]:
    """(file, its path below ``root``) for files walk_paths found there. Strings, not
    Path objects: an archive has thousands of files, and pathlib cost ~10 ms a
    thousand before any conversion started."""
    prefix = os.path.join(root, "")
    for name in files:
        inside = name.startswith(prefix)
        yield name, name[len(prefix) :] if inside else os.path.relpath(name, root)
