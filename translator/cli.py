"""The ``streamv1`` command: convert and validate.

Exit status: 0 fine; 1 bad input or violations (``--lenient`` forgives records that
do not fit, never unreadable inputs); 2 usage errors. Errors are one line on stderr
naming the file (and line); never a traceback.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import gc
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from contextlib import ExitStack, nullcontext
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, NoReturn, TypeVar, cast

import click

from streamv1.translator import batch, logs
from streamv1.translator.bus import (
    ACK_WINDOW,
    FETCH,
    BusConfig,
    BusError,
    bus_options,
    check_token,
    temp_output,
)
from streamv1.translator.bus import config as configured_bus
from streamv1.translator.discover import walk_paths
from streamv1.translator.pipeline import Interrupted, Totals
from streamv1.translator.reader import MAX_LINE_BYTES
from streamv1.translator.shapes import DEFAULT, shapes
from streamv1.translator.sources import Source, homes, sources
from streamv1.translator.timefmt import normalize_ts

log = logs.get()

SAMPLE = "samples/claude-session-sample.jsonl"


def _source_choice(name: str) -> Source | None:
    if name == "auto":
        return None
    known = sources()
    if name not in known:
        names = ", ".join(["auto", *known])
        raise click.UsageError(f"source {name!r} is not available in this version (known: {names})")
    return known[name]


if TYPE_CHECKING:
    from streamv1.translator import ledger

    _StrChoice = click.Choice[str]
else:
    _StrChoice = click.Choice  # (not subscriptable before click 8.4)


class ShapeChoice(_StrChoice):
    """``--to``'s choices: the shapes :func:`translator.shapes.shapes` finds, looked
    up when the option is used (a shape module is all a new shape takes)."""

    def __init__(self) -> None:
        super().__init__(())

    @property
    def choices(self) -> tuple[str, ...]:
        return tuple(shapes())

    @choices.setter
    def choices(self, value: object) -> None:
        pass  # made from the table each time


class _ShapeOption(click.Option):
    """``--to``, its help made from the table when it is shown."""

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        named = "; ".join(f"{s.name}: {s.description}" for s in shapes().values())
        self.help = f"Output shape ({named})."
        return super().get_help_record(ctx)


def output_shape_options(command: Any) -> Any:
    """--to, --claude-extra-types and --no-redact, shared by convert and tail."""
    command = click.option(
        "--no-redact",
        "no_redact",
        is_flag=True,
        help="Keep secrets (API keys, tokens, private keys, URL passwords) as they are; "
        "by default each is replaced with [REDACTED:<kind>].",
    )(command)
    command = click.option(
        "--claude-extra-types",
        is_flag=True,
        help="With --to claude: also newer message types (rate_limit_event, records of "
        "unknown types) that older consumers crash on.",
    )(command)
    return click.option(
        "--to",
        "to",
        cls=_ShapeOption,
        type=ShapeChoice(),
        default=DEFAULT,
        show_default=True,
    )(command)


def selection_options(what: str, when: str = "active") -> Callable[[Any], Any]:
    """--since, --until, --project, --agent and --session, declared once: which
    sessions (``sessions``) or runs (``convert``) are shown."""

    def add(command: Any) -> Any:
        for option in reversed(
            [
                click.option(
                    "--since",
                    metavar="WHEN",
                    help=f"{what} {when} at or after WHEN: a date or time (2026-12-01, "
                    "2026-12-01T10:00Z), today, yesterday, or a span ago (30m, 2h, 3d, "
                    "1w).",
                ),
                click.option(
                    "--until", metavar="WHEN", help=f"{what} {when} at or before WHEN (as --since)."
                ),
                click.option(
                    "--project",
                    metavar="TEXT",
                    help=f"{what} whose project folder (cwd) holds TEXT.",
                ),
                click.option(
                    "--agent",
                    metavar="NAME",
                    help=f"{what} of this agent: claude-code, codex, gemini-cli, stella, ...",
                ),
                click.option(
                    "--session",
                    "session_prefix",
                    metavar="ID",
                    help=f"{what} whose session id begins with ID.",
                ),
            ]
        ):
            command = option(command)
        return command

    return add


def _selection(
    since: str | None,
    until: str | None,
    project: str | None,
    agent: str | None,
    session_prefix: str | None,
) -> ledger.Filter | None:
    """The filter the selection options ask for; None when none is given."""
    if not any((since, until, project, agent, session_prefix)):
        return None
    try:
        from streamv1.translator import ledger  # (its price table: only when asked)

        return ledger.Filter(
            since=ledger.parse_when(since) if since else None,
            until=ledger.parse_when(until) if until else None,
            project=project,
            agent=agent,
            session=session_prefix,
        )
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None


#: --source, for the commands that read inputs (convert, sessions).
_SOURCE_OPTION = click.option(
    "--source",
    "source_name",
    type=click.Choice(["auto", *sources()]),
    default="auto",
    show_default=True,
    help="Input format: auto (sniffed from the first records), or one of these.",
)

#: --format, for the commands that print stream_v1 on stdout (convert, subscribe).
_FORMAT_OPTION = click.option(
    "--format",
    "view_format",
    type=click.Choice(["auto", "json", "pretty"]),
    default="auto",
    show_default=True,
    help="stdout as stream_v1 JSON lines, or as one short line per event for people "
    "(pretty: prompts, text, tool calls, errors, results with tokens and cost; a colour "
    "per session). auto: pretty when stdout is a terminal.",
)


def _stdout_for(view_format: str) -> IO[bytes]:
    """Where a command's stream_v1 lines go: stdout's bytes, or, for people at a
    terminal (--format pretty / auto), the view that shows them (translator.view)."""
    if view_format == "pretty" or (view_format == "auto" and sys.stdout.isatty()):
        from streamv1.translator.view import PrettyWriter

        return cast(IO[bytes], PrettyWriter(sys.stdout))
    return sys.stdout.buffer


F = TypeVar("F", bound=Callable[..., Any])

#: A reader that went away (``| head -1``): the shell's status for SIGPIPE.
EXIT_PIPE = 128 + 13
#: An exception no command handles (sysexits' EX_SOFTWARE).
EXIT_INTERNAL = 70


def quiet_on_closed_stdout(command: F) -> F:
    """A closed stdout ends the command quietly with 141, as a SIGPIPE would: not
    1 (damaged input), and no traceback. (Not the daemon's way: its sockets must
    survive a reader going away, so SIGPIPE stays ignored and this is per command.)"""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except BrokenPipeError:
            # Nothing more may reach the closed pipe, not even at exit's flush.
            with contextlib.suppress(OSError):
                devnull = os.open(os.devnull, os.O_WRONLY)
                os.dup2(devnull, sys.stdout.fileno())
            sys.exit(EXIT_PIPE)

    return wrapper  # type: ignore[return-value]


_MAX_LINE_OPTION = click.option(
    "--max-line-bytes",
    type=click.IntRange(min=1),
    default=MAX_LINE_BYTES,
    show_default=True,
    metavar="N",
    help="A longer line is reported (file:line and its length) and skipped, never held.",
)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="streamv1")
@click.option(
    "--log-level",
    type=click.Choice(["debug", "info", "warning", "error"]),
    default="info",
    show_default=True,
    help="Least severe log event written to stderr.",
)
def main(log_level: str) -> None:
    """Translate AI coding agents' transcripts and streams into stream_v1 JSONL."""
    logs.configure(log_level)


def run() -> None:
    """Entry point: a reader that goes away (``| head``) ends the command quietly."""
    # Records are trees, never cycles, yet each one allocates dozens of containers:
    # with the default threshold (700) the cycle collector would run every few
    # records for nothing. Objects made at start-up are frozen out of its scans.
    gc.freeze()
    gc.set_threshold(100_000, 50, 100)
    _refuse_dash_paths(sys.argv[1:])
    sys.argv[1:] = _global_options_first(sys.argv[1:])
    try:
        # Not click's standalone mode: it turns a Ctrl-C into "Aborted!" and exit 1.
        code = main(standalone_mode=False)
    except (KeyboardInterrupt, click.exceptions.Abort):
        sys.exit(128 + 2)  # Ctrl-C anywhere else: no traceback, the shell's status
    except click.ClickException as exc:
        exc.show()  # a usage error: what standalone mode prints, and its status
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        # Point stdout at /dev/null so the interpreter's final flush cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        sys.exit(EXIT_PIPE)
    except Exception as exc:
        # A bug of ours (or a library's exception we did not know of: nats-py's
        # fetch raising asyncio's TimeoutError, #23): one line, not a traceback,
        # with the way to get it for a report. 70 is sysexits' EX_SOFTWARE.
        if os.environ.get("STREAMV1_TRACEBACK"):
            raise
        log.error(
            "internal error",
            reason=f"{type(exc).__name__}: {exc}",
            hint="a bug: please report it; STREAMV1_TRACEBACK=1 shows where",
        )
        sys.exit(EXIT_INTERNAL)
    if isinstance(code, int) and code:
        sys.exit(code)  # ctx.exit(n), --help's 0 aside


def _global_options_first(args: list[str]) -> list[str]:
    """``--log-level`` is the group's, yet people write it after the subcommand
    (``streamv1 convert --log-level error x``): move it in front (before ``--``)."""
    if "relay" in args[:3]:
        return args  # a relayed command's own options are its own
    front: list[str] = []
    rest: list[str] = []
    k = 0
    while k < len(args):
        arg = args[k]
        if arg == "--":
            rest += args[k:]
            break
        if arg == "--log-level" and k + 1 < len(args):
            front += args[k : k + 2]
            k += 2
            continue
        if arg.startswith("--log-level="):
            front.append(arg)
        else:
            rest.append(arg)
        k += 1
    return front + rest


def _refuse_dash_paths(args: list[str]) -> None:
    """Claude Code's project folders are named like ``-home-user-proj``: given as
    they are, they read as options (``-h`` would even print the help and exit 0).
    A word before ``--`` that starts with ``-`` and names an existing file or folder
    is refused with the two ways to say it."""
    for arg in args:
        if arg == "--":
            return
        if (
            arg.startswith("-")
            and not arg.startswith("--")
            and len(arg) > 2
            and (os.path.lexists(arg))
        ):
            _fail(
                "a name that starts with '-' reads as options",
                path=arg,
                hint=f"write ./{arg}, or put -- before it (streamv1 convert -- {arg})",
            )


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path, allow_dash=True))
@_SOURCE_OPTION
@click.option(
    "-o",
    "--output",
    type=click.Path(path_type=Path, allow_dash=True),
    help="Write all output to this file instead of stdout.",
)
@click.option(
    "--out-dir",
    type=click.Path(path_type=Path, file_okay=False),
    help="Write one output file per input, mirroring relative paths.",
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
@_MAX_LINE_OPTION
@click.option("-q", "--quiet", is_flag=True, help="Only errors on stderr (no summary).")
@selection_options("Runs", "begun")
@_FORMAT_OPTION
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
) -> None:
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
    source = _source_choice(source_name)
    if output is not None and out_dir is not None:
        raise click.UsageError("-o/--output and --out-dir cannot be used together")
    if fixed_now is not None and normalize_ts(fixed_now) is None:
        raise click.UsageError(f"--now {fixed_now!r} is not an RFC 3339 timestamp")
    if jobs is not None and jobs < 1:
        raise click.UsageError("--jobs takes a whole number from 1")
    if claude_extra_types and to != "claude":
        raise click.UsageError("--claude-extra-types shapes --to claude output; add --to claude")
    bus_config = _publishing(publish, bus, to, out_dir)
    spool = None
    stopped: int | None = None  # the status a signal ended the conversion with
    if bus_config is not None and output is None:
        output = spool = temp_output()  # what is sent; removed after
    options = batch.Options(
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
    keep = _selection(since, until, project, agent, session_prefix)
    if keep is not None and out_dir is not None:
        raise click.UsageError(
            "--since, --until, --project, --agent and --session select runs "
            "of one stream: use them with stdout or -o, not --out-dir"
        )
    try:
        totals = _convert(paths, output, out_dir, options, jobs, log, pretty, keep)
        if bus_config is not None and output is not None:
            try:
                from streamv1.translator import fleet  # asyncio, nats: only to publish

                sent = fleet.publish_file(output, bus_config)
            except BusError as exc:
                log.error("not published", reason=str(exc))
                sys.exit(1)
            log.info("published", stream=bus_config.stream, **sent)
            if sent["too_large"]:
                log.error(
                    "lines larger than the servers' max_payload not published",
                    lines=sent["too_large"],
                )
                sys.exit(1)
    except Interrupted as exc:
        # Ctrl-C or SIGTERM: the open run was ended (stdout), -o left as it was (its
        # temp file removed), the spool gone with its folder; the summary, and the
        # shell's status for the signal.
        part = getattr(exc, "totals", None) or Totals()
        log.info("interrupted", **batch.describe(part))
        stopped = 128 + exc.signum
    finally:
        if spool is not None:
            spool.unlink(missing_ok=True)
    if stopped is not None:
        _exit_now(stopped)
    log.info("summary", **batch.describe(totals))
    if totals.framing.dropped:
        log.debug(
            "dropped record kinds",
            kinds=", ".join(f"{kind} {n}" for kind, n in sorted(totals.framing.dropped.items())),
        )
    if totals.framing.unrecognized:
        log.debug("unrecognized record types", **dict(totals.framing.unrecognized))
    fatal = totals.failed_inputs or (totals.framing.errors and not lenient)
    sys.exit(1 if fatal else 0)


def _publishing(
    urls: str | None, bus: dict[str, Any], to: str, out_dir: Path | None
) -> BusConfig | None:
    """The bus to publish to, if asked (the fleet stream is stream_v1, one stream)."""
    if urls is None:
        return None
    if to != "stream_v1":
        raise click.UsageError(f"--publish sends stream_v1 lines; it cannot be used with --to {to}")
    if out_dir is not None:
        raise click.UsageError(
            "--publish sends one stream: use it with -o FILE or alone, not with --out-dir"
        )
    check_token("--host", bus["host_name"])
    return configured_bus(urls, bus)


def _convert(
    paths: tuple[Path, ...],
    output: Path | None,
    out_dir: Path | None,
    options: batch.Options,
    jobs: int | None,
    log: logs.Logger,
    pretty: bool = False,
    keep: ledger.Filter | None = None,
) -> Totals:
    """The inputs, checked, through ``batch.run`` into the chosen sink."""
    failed = 0
    with ExitStack() as stack:
        work: list[batch.Job] = []
        for path, rel in _inputs(paths, log, stack, out_dir):
            if path is None:
                failed += 1
            elif path == "-":
                if out_dir is not None:
                    raise click.UsageError("--out-dir needs file or directory paths, not stdin")
                work.append(batch.Job("-"))
            else:
                target = str(out_dir / rel) if out_dir is not None else None
                work.append(batch.Job(str(path), target))
        if output is not None and str(output) != "-":
            _refuse_output_among_inputs(output, work)
        if out_dir is not None:
            _check_out_dir(out_dir)
            _refuse_clashing_targets(work)
        shared: batch.Writer | None = None
        if pretty:
            from streamv1.translator.view import PrettyWriter

            shared = PrettyWriter(sys.stdout)  # read by a person: one process is enough
            jobs = 1
        elif out_dir is None:
            try:
                shared = stack.enter_context(batch.output_sink(output))
            except batch.OutputError as exc:
                _fail("cannot open the output", path=exc.where, reason=exc.reason)
        selected = None
        if keep is not None and shared is not None:
            from streamv1.translator.select import RunFilter

            shared = selected = RunFilter(shared, keep)
            jobs = 1  # the parallel path copies its spools straight to the output
        workers = jobs if jobs is not None else batch.default_workers(work)
        try:
            with _signals_interrupt():
                view = getattr(shared if selected is None else selected.inner, "console", None)
                on_stdout = output is None and out_dir is None and view is None
                try:
                    totals = batch.run(
                        work,
                        shared,
                        options,
                        workers,
                        progress=_progress_wanted(json_on_stdout=on_stdout),
                        console=view if _stdout_is_stderr() else None,
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
        except batch.OutputWriteError as exc:
            log.error(
                "cannot write the output",
                path=exc.where,
                reason=exc.reason,
                hint="the inputs are fine",
            )
            sys.exit(1)
        except OSError as exc:
            if exc.errno == errno.EPIPE:
                raise
            where = output if output is not None else out_dir
            log.error(
                "cannot write the output", path=str(where or "-"), reason=exc.strerror or str(exc)
            )
            sys.exit(1)
    totals.failed_inputs += failed
    return totals


@contextlib.contextmanager
def _signals_interrupt() -> Iterator[None]:
    """SIGINT and SIGTERM raise Interrupted in the main process while converting."""
    import signal

    def interrupt(signum: int, _frame: Any) -> None:
        raise Interrupted(signum)

    old = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _refuse_output_among_inputs(output: Path, work: list[batch.Job]) -> None:
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
                _fail(
                    "the output is also an input; write the output elsewhere",
                    path=str(output),
                    input=job.path,
                )


def _refuse_clashing_targets(work: list[batch.Job]) -> None:
    """Two inputs whose outputs would have one name (``d1/a.jsonl d2/a.jsonl``):
    one would overwrite the other, so neither is written."""
    seen: dict[str, str] = {}
    for job in work:
        if job.target is None:
            continue
        target = os.path.normpath(job.target)
        if target in seen and os.path.realpath(seen[target]) != os.path.realpath(job.path):
            _fail(
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
        _fail("cannot use as --out-dir", path=str(out_dir), reason=exc.strerror or str(exc))


def _fail(event: str, **fields: Any) -> NoReturn:
    log.error(event, **fields)
    sys.exit(1)


def _inputs(
    paths: tuple[Path, ...], log: logs.Logger, stack: ExitStack, out_dir: Path | None = None
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
            files, skipped = _walk(root, log)
            if out_dir is not None:
                files = _outside(files, out_dir, root, log)
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


def _outside(files: list[str], out_dir: Path, root: str, log: logs.Logger) -> list[str]:
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


def _walk(root: str, log: logs.Logger) -> tuple[list[str], int]:
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


_SOURCE_WORDS = {
    "claude-session": "a Claude Code transcript (a session file)",
    "claude-stream": "a Claude Code print-mode stream",
    "stella": "stella agent events",
}


def _not_stream_v1(stream: IO[bytes]) -> str | None:
    """What the input is when its first record is plainly another source's (read
    from its first 64 KiB, then rewound): one clear line instead of an error for
    every line."""
    from streamv1.translator.sources import DECISIVE, sniff

    try:
        head = stream.read(1 << 16)
        stream.seek(0)
    except (OSError, ValueError):
        return None
    record = batch.first_record(head)
    own = sources().get("stream_v1")
    if record is None or (own is not None and own.sniff(record) >= DECISIVE):
        return None  # stream_v1 (a print-mode stream's lines may look alike)
    best, score = sniff(record)
    if best is not None and best.name in _SOURCE_WORDS and score >= DECISIVE:
        return _SOURCE_WORDS[best.name]
    return None


def _exit_now(status: int) -> None:
    """End a conversion a signal stopped, its summary said: at once, without the
    interpreter's exit handlers, which join a killed process pool's threads (they
    may write to a pipe its workers' deaths closed: a traceback about a bad file
    descriptor, 1 run in 10). What had to be tidied (-o's temp file, the spool)
    already was, on the way here."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)


def _progress_wanted(json_on_stdout: bool) -> bool:
    """A progress line only on a terminal (stderr), and not one showing JSON lines
    too (it would be mixed into them). The view for people may share its terminal
    with it: drawn on the view's console, the view scrolls above it."""
    return sys.stderr.isatty() and not (json_on_stdout and _stdout_is_stderr())


def _stdout_is_stderr() -> bool:
    """stdout and stderr are the same file (one terminal, usually)."""
    try:
        out, err = os.fstat(sys.stdout.fileno()), os.fstat(sys.stderr.fileno())
    except (OSError, ValueError):
        return False
    return (out.st_dev, out.st_ino, out.st_rdev) == (err.st_dev, err.st_ino, err.st_rdev)


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


@main.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path, allow_dash=True))
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="One JSON object per session (session_id, agent, project, started, ended, "
    "runs, turns, tool_calls, errors, usage, cost_usd, cost_source), not a table.",
)
@selection_options("Sessions")
@_SOURCE_OPTION
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1),
    metavar="N",
    help="Read N inputs at a time (default: one per core once the inputs hold 24 MB or more).",
)
@quiet_on_closed_stdout
def sessions(
    paths: tuple[Path, ...],
    as_json: bool,
    since: str | None,
    until: str | None,
    project: str | None,
    agent: str | None,
    session_prefix: str | None,
    source_name: str,
    jobs: int | None,
) -> None:
    """One row per session of PATHs: agent, project, start, duration, runs, turns,
    tool calls, errors, tokens and cost.

    PATHs are what convert reads (every agent's home when none is given, stdin
    when it is a pipe), or stream_v1 files such as the tail's output. Tokens are
    every actor's API messages once each; the cost is the one the source states
    (print mode's total_cost_usd), none yet where it states none.

    \b
    Examples:
      streamv1 sessions                          every agent's sessions, a table
      streamv1 sessions --since yesterday        what ran since yesterday's midnight
      streamv1 sessions ~/.codex/sessions --json one JSON object per session
      streamv1 sessions tail.jsonl --agent gemini-cli --project myrepo
    """
    import tempfile

    import orjson

    from streamv1.translator import ledger

    keep = _selection(since, until, project, agent, session_prefix) or ledger.Filter()
    source = _source_choice(source_name)
    options = batch.Options(source.name if source else None)
    book = ledger.Ledger()
    with tempfile.TemporaryDirectory(prefix="streamv1-sessions-") as spool:
        stream = Path(spool) / "stream.jsonl"
        totals = _convert(paths, stream, None, options, jobs, log)
        with stream.open("rb") as fh:
            for raw in fh:
                book.feed(orjson.loads(raw))
    rows = [row for row in book.rows.values() if keep.keeps(row)]
    if as_json:
        out = sys.stdout.buffer
        for row in sorted(rows, key=lambda r: r.started or ""):
            out.write(orjson.dumps(row.as_json()) + b"\n")
        out.flush()
    else:
        click.echo("\n".join(ledger.table(rows)))
    sys.exit(1 if totals.failed_inputs else 0)


@main.command()
@click.argument("files", nargs=-1, type=click.Path(path_type=Path, allow_dash=True))
@click.option("--quiet", "-q", is_flag=True, help="Print nothing; the exit status tells.")
@click.option(
    "--allow-open",
    is_flag=True,
    help="Accept runs still open at the end (a live stream, e.g. tail's output).",
)
@_MAX_LINE_OPTION
@quiet_on_closed_stdout
def validate(files: tuple[Path, ...], quiet: bool, allow_open: bool, max_line_bytes: int) -> None:
    """Check stream_v1 FILEs (or - / stdin) against the schema and the framing rules.

    Prints each violation as file:line: reason; exits 1 if there is any.
    """
    from streamv1.translator.validate import validate_stream

    targets: list[Any] = []
    for given in files or (Path("-"),):
        if str(given) != "-" and given.is_dir():
            found = walk_paths(str(given))  # the folder as convert walks it
            if not found:
                log.error("directory holds no *.jsonl files", path=str(given))
            targets += found
        else:
            targets.append(given)
    bad = 0
    checked = 0
    for target in targets:
        name = "-" if str(target) == "-" else str(target)
        try:
            stream = sys.stdin.buffer if name == "-" else open(target, "rb")
        except OSError as exc:
            log.error("cannot read the input", path=name, reason=exc.strerror or str(exc))
            bad += 1
            continue
        with stream if name != "-" else nullcontext(stream):
            if name != "-" and (kind := _not_stream_v1(stream)):
                log.error(
                    "this is not stream_v1: convert it first",
                    path=name,
                    looks_like=kind,
                    hint=f"streamv1 convert {name}",
                )
                bad += 1
                checked += 1
                continue
            for violation in validate_stream(stream, name, allow_open, max_line_bytes):
                bad += 1
                if not quiet:
                    click.echo(str(violation))
        checked += 1
    if not quiet:
        log.info("validated", files=checked, violations=bad)
    sys.exit(1 if bad else 0)


@main.command()
@click.argument("dirs", nargs=-1, type=click.Path(path_type=Path, file_okay=False))
@click.option(
    "-o",
    "--output",
    "output",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Append the stream to this file (exactly once across crashes); "
    "default stdout (at least once).",
)
@click.option(
    "--from",
    "start_from",
    type=click.Choice(["start", "end"]),
    default="start",
    show_default=True,
    help="Where to begin in files never seen before.",
)
@click.option(
    "--state",
    "state_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Checkpoint file (default: $XDG_STATE_HOME/streamv1/tail-<hash>.json).",
)
@click.option(
    "--idle-close",
    type=float,
    default=600.0,
    show_default=True,
    metavar="SECONDS",
    help="End a run silent this long, as batch conversion does at the end of a file (0: never).",
)
@click.option(
    "--log-format",
    type=click.Choice(["auto", "json", "console"]),
    default="auto",
    show_default=True,
    help="auto: JSON when stderr is not a terminal.",
)
@click.option(
    "--rescan-every",
    type=float,
    default=30.0,
    show_default=True,
    metavar="SECONDS",
    help="Full rescan for files whose events were missed.",
)
@output_shape_options
@click.option(
    "--socket",
    "--ingest-socket",
    "ingest_socket",
    type=click.Path(path_type=Path, dir_okay=False),
    help="Unix socket for relays, subscribers and status "
    "(default: $XDG_RUNTIME_DIR/streamv1/ingest.sock).",
)
@click.option("--no-ingest", is_flag=True, help="Listen on no socket: transcripts only.")
@click.option(
    "--follow-symlinks",
    is_flag=True,
    help="Follow symlinked files that lead out of the watched folders (default: skip them).",
)
@click.option(
    "--stats-every",
    type=float,
    default=60.0,
    show_default=True,
    metavar="SECONDS",
    help="Log the counters this often (0: never).",
)
@click.option(
    "--commit-every",
    type=float,
    default=0.5,
    show_default=True,
    metavar="SECONDS",
    help="Least time between two checkpoints.",
)
@click.option(
    "--publish",
    metavar="nats://HOST:PORT[,...]",
    help="Also send every line to this NATS JetStream (needs -o FILE: the file is the "
    "buffer while the bus is down; docs/fleet.md).",
)
@selection_options("Runs", "begun")
@_FORMAT_OPTION
@bus_options(publishing=True)
@click.pass_context
def tail(
    ctx: click.Context,
    /,
    dirs: tuple[Path, ...],
    output: Path | None,
    start_from: str,
    state_path: Path | None,
    idle_close: float,
    log_format: str,
    rescan_every: float,
    commit_every: float,
    to: str,
    claude_extra_types: bool,
    no_redact: bool,
    ingest_socket: Path | None,
    no_ingest: bool,
    follow_symlinks: bool,
    stats_every: float,
    publish: str | None,
    since: str | None,
    until: str | None,
    project: str | None,
    agent: str | None,
    session_prefix: str | None,
    view_format: str,
    **bus: Any,
) -> None:
    """Follow agents' session files (default: every agent's home, e.g.
    ${CLAUDE_CONFIG_DIR:-~/.claude}/projects) and write one stream_v1 stream of all
    sessions as they happen.

    --since/--until/--project/--agent/--session write only the runs they keep
    (whole runs, as convert's do); the files are read all the same.

    \b
      streamv1 tail -o ~/agents.jsonl                # every agent, from the start
      streamv1 tail --from end --project myrepo       # what happens from now, one repo
      streamv1 tail --since today --agent codex -o codex-today.jsonl
    """
    from streamv1.translator.shapes import encoder_for
    from streamv1.translator.tail import serve

    if claude_extra_types and to != "claude":
        raise click.UsageError("--claude-extra-types shapes --to claude output; add --to claude")
    missing = [d for d in dirs if not d.exists()]
    if dirs and len(missing) == len(dirs):
        # Named folders, none there: a typo, most likely. (A default folder may not
        # exist yet on a machine where its agent has not run: those are waited for.)
        raise click.UsageError(
            f"{', '.join(map(str, missing))}: no such folder; name one "
            "that exists (a folder made later is found if one named does)"
        )
    bus_config = _publishing(publish, bus, to, None)
    published: tuple[Path, BusConfig] | None = None  # the file sent, and where
    if bus_config is not None:
        if output is None:
            raise click.UsageError(
                "--publish needs -o/--output FILE: the file is what is "
                "sent, and holds the lines while the bus is down"
            )
        published = (output.resolve(), bus_config)
    level = ctx.parent.params.get("log_level", "info") if ctx.parent else "info"
    if log_format == "auto":
        log_format = "console" if sys.stderr.isatty() else "json"
    logs.configure(level, log_format)
    pretty = (
        output is None
        and to == DEFAULT
        and (view_format == "pretty" or (view_format == "auto" and sys.stdout.isatty()))
    )
    if view_format == "pretty" and not pretty:
        raise click.UsageError(
            "--format pretty is for stream_v1 on stdout: not with -o or --to claude"
        )
    view = None
    if pretty:
        from streamv1.translator.view import PrettyWriter

        view = PrettyWriter(sys.stdout)
    catch_up_view = None
    if _progress_wanted(json_on_stdout=output is None and view is None):
        from streamv1.translator.progress import ProgressLine

        console = view.console if view is not None and _stdout_is_stderr() else None
        catch_up_view = functools.partial(ProgressLine, "catch-up", console=console)
    roots = serve.watched_roots(dirs)
    serve.serve(
        roots,
        output,
        state_path or serve.default_state_path(roots, output, defaults=not dirs),
        published,
        encoder=lambda: encoder_for(to, claude_extra_types),
        redact=not no_redact,
        start_at_end=start_from == "end",
        idle_close=idle_close,
        rescan_every=rescan_every,
        commit_every=commit_every,
        ingest_socket=serve.ingest_socket_for(ingest_socket, no_ingest),
        stats_every=stats_every,
        follow_symlinks=follow_symlinks,
        defaults=not dirs,
        selection=_selection(since, until, project, agent, session_prefix),
        stdout=cast(IO[bytes], view) if view is not None else None,
        catch_up_view=catch_up_view,
    )


_SOCKET_OPTION = click.option(
    "--socket",
    "socket_path",
    type=click.Path(path_type=Path, dir_okay=False),
    help="The daemon's socket (default: $XDG_RUNTIME_DIR/streamv1/ingest.sock).",
)


@main.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@_SOCKET_OPTION
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def relay(socket_path: Path | None, command: tuple[str, ...]) -> None:
    """Run COMMAND (or read stdin), pass its stdout through unchanged, and hand each
    line to the tail daemon as a live stream. Never slowed by the daemon; exits
    with COMMAND's status.

    \b
      streamv1 relay -- claude -p --output-format stream-json --verbose "..."
    """
    from streamv1.translator.tail import protocol
    from streamv1.translator.tail.relay import relay as run_relay

    sys.exit(run_relay(list(command), socket_path or protocol.default_socket()))


@main.command()
@_SOCKET_OPTION
@click.option(
    "--from",
    "source_url",
    metavar="nats://HOST:PORT[,...]",
    help="Read the fleet's stream from NATS JetStream instead of the local daemon.",
)
@click.option(
    "--durable",
    metavar="NAME",
    help="With --from: a durable consumer; a restart goes on where it stopped.",
)
@click.option("--host", "host_filter", metavar="HOST", help="With --from: only this host's lines.")
@selection_options("Runs", "begun")
@click.option(
    "--catch-up", is_flag=True, help="With --from: print what the stream holds now, then exit."
)
@click.option(
    "--ack-window",
    type=click.IntRange(1, FETCH),
    default=ACK_WINDOW,
    show_default=True,
    metavar="N",
    help="With --from: lines printed between two confirmed acks. A killed "
    "subscriber's next run prints at most N lines again; each confirmation "
    "is a round trip, so a larger N is faster over a slow link.",
)
@_FORMAT_OPTION
@bus_options(publishing=False)
@quiet_on_closed_stdout
def subscribe(
    socket_path: Path | None,
    source_url: str | None,
    durable: str | None,
    host_filter: str | None,
    since: str | None,
    until: str | None,
    project: str | None,
    agent: str | None,
    session_prefix: str | None,
    catch_up: bool,
    ack_window: int,
    view_format: str,
    **bus: Any,
) -> None:
    """Print the daemon's unified stream live, until it stops. A reader too slow
    for it loses lines (counted; a system/warning line says how many).

    With --from nats://…, print the fleet's stream from JetStream instead, in stream
    order, each line acked after it is written (a durable consumer resumes there;
    after a kill, at most --ack-window lines are printed again).

    --since/--until/--project/--agent/--session keep whole runs, as convert's do;
    a run under way when subscribe began is shown only when --session alone is
    asked (its init, which says the rest, was not seen). With --from, --since is
    also where the stream is read from, and a whole session id (a UUID) is also
    the subject asked for, so the server sends only what is kept.

    \b
      streamv1 subscribe                              # the local daemon, live
      streamv1 subscribe --project myrepo --agent codex
      streamv1 subscribe --from nats://bus:4222 --since 2h --catch-up > today.jsonl
    """
    if source_url is None and (durable or host_filter or catch_up or ack_window != ACK_WINDOW):
        raise click.UsageError(
            "--durable, --host, --catch-up and --ack-window go with --from nats://…"
        )
    keep = _selection(since, until, project, agent, session_prefix)
    out = _stdout_for(view_format)
    if keep is not None:
        from streamv1.translator.select import RunFilter

        out = cast(IO[bytes], RunFilter(out, keep))
    if source_url is None:
        _subscribe_local(socket_path, out)
        return
    from streamv1.translator import fleet  # asyncio, nats: only to subscribe

    bus_config = configured_bus(source_url, bus, host="-")
    whole = session_prefix if session_prefix and _WHOLE_ID.fullmatch(session_prefix) else None
    try:
        with _signals_interrupt():
            fleet.subscribe(
                bus_config,
                out,
                host=host_filter,
                session=whole,
                durable=durable,
                since=keep.since if keep else None,
                catch_up=catch_up,
                ack_window=ack_window,
            )
    except Interrupted as exc:
        sys.exit(128 + exc.signum)
    except BusError as exc:
        log.error("bus unusable", reason=str(exc))
        sys.exit(1)


#: A whole session id (every agent we read names sessions by UUID): with --from it
#: is the stream's subject for the session, so the server filters (a prefix cannot be
#: a subject, so a shorter --session is matched here, on every line of the stream).
_WHOLE_ID = re.compile(
    r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
    r"[0-9a-fA-F]{12}"
)


def _subscribe_local(socket_path: Path | None, out: IO[bytes]) -> None:
    from streamv1.translator.tail import client, protocol

    path = socket_path or protocol.default_socket()
    try:
        client.subscribe(path, out)
    except client.NoDaemon as exc:
        log.error("no daemon", path=str(path), reason=str(exc))
        sys.exit(1)
    except KeyboardInterrupt:
        sys.exit(128 + 2)  # the shell's status for Ctrl-C


@main.command()
@_SOCKET_OPTION
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="One JSON object even at a terminal (piped, it is always JSON).",
)
def status(socket_path: Path | None, as_json: bool) -> None:
    """The daemon's counters: at a terminal a readable summary (files followed,
    bytes behind, output, lines per origin, live streams, subscribers, publisher,
    what needs attention, the last error); piped or with --json one JSON object
    (items per origin, suppressed, stream_dropped, stream_parse_errors, ambiguous,
    subscriber drops, claims, behind_bytes, last_error, ...)."""
    import orjson

    from streamv1.translator.tail import client, protocol

    path = socket_path or protocol.default_socket()
    try:
        value = client.status(path)
    except client.NoDaemon as exc:
        log.error("no daemon", path=str(path), reason=str(exc))
        sys.exit(1)
    except (OSError, ValueError) as exc:
        log.error("no status from the daemon", path=str(path), reason=str(exc))
        sys.exit(1)
    if not as_json and sys.stdout.isatty():
        from streamv1.translator.view import status_lines

        click.echo("\n".join(status_lines(value)))
        return
    sys.stdout.buffer.write(orjson.dumps(value) + b"\n")


@main.command()
@click.argument("action", type=click.Choice(["install", "print"]))
@click.option("--force", is_flag=True, help="Replace a unit file that is there already.")
def service(action: str, force: bool) -> None:
    """The systemd user unit for ``streamv1 tail``, with the absolute path of this
    streamv1: ``print`` shows it, ``install`` writes it to
    ~/.config/systemd/user/streamv1.service."""
    import shutil
    from importlib import resources

    exe = shutil.which("streamv1", path=os.path.dirname(sys.argv[0]) or None)
    exe = os.path.realpath(exe or sys.argv[0])
    shipped = resources.files("streamv1.translator").joinpath("systemd/streamv1.service")
    template = shipped.read_text()
    unit = for_systemd(template.replace("@STREAMV1@", exe), _systemd_version())
    if action == "print":
        sys.stdout.write(unit)
        return
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    target = Path(config) / "systemd" / "user" / "streamv1.service"
    if target.exists() and not force and target.read_text() != unit:
        _fail("a different unit is there already; --force replaces it", path=str(target))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(unit)
    except OSError as exc:
        _fail("cannot write the unit", path=str(target), reason=exc.strerror or str(exc))
    log.info("unit written", path=str(target), exec=exe)
    sys.stderr.write(
        "next:\n  systemctl --user daemon-reload && systemctl --user enable --now streamv1\n"
        '  loginctl enable-linger "$USER"   # keep it running while you are logged out\n'
    )


#: Unit keys newer than some systemd still in use (Debian 12 has 252): the version
#: that knows each. An older systemd warns of each at every load and ignores it.
_NEWER_KEYS = {"RestartSteps": 254, "RestartMaxDelaySec": 254}


def for_systemd(unit: str, version: int | None) -> str:
    """The unit as this machine's systemd reads it: a key it does not know is left
    as a comment saying why (the restart wait stays the flat RestartSec there)."""
    if version is None:
        return unit
    out = []
    for line in unit.splitlines(keepends=True):
        key = line.split("=", 1)[0].strip()
        needs = _NEWER_KEYS.get(key)
        if needs is not None and version < needs:
            line = f"# (systemd {version} has no {key}: needs {needs}) {line}"
        out.append(line)
    return "".join(out)


def _systemd_version() -> int | None:
    """The version of the systemd here (``systemctl --version``), None if none."""
    import subprocess

    try:
        proc = subprocess.run(
            ["systemctl", "--version"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    words = proc.stdout.split()
    return (
        int(words[1]) if len(words) > 1 and words[0] == "systemd" and words[1].isdigit() else None
    )


#: Each command's --help ends with the two or three commands people run.
EXAMPLES = {
    "convert": """Examples:

\b
  streamv1 convert ~/.claude/projects/-home-me-proj -o proj.jsonl
  claude -p --output-format stream-json --verbose "fix it" | streamv1 convert
  streamv1 convert --to claude --out-dir converted/ archive/
  streamv1 convert -- -home-me-proj      (a folder whose name starts with -)
  streamv1 convert archive/ --publish nats://bus:4222""",
    "validate": """Examples:

\b
  streamv1 validate out.jsonl
  streamv1 validate --allow-open ~/.local/state/streamv1/stream.jsonl""",
    "tail": """Examples:

\b
  streamv1 tail -o ~/.local/state/streamv1/stream.jsonl
  streamv1 tail --from end | jq .
  streamv1 tail ~/.claude/projects --no-ingest -o stream.jsonl
  streamv1 tail -o stream.jsonl --publish nats://bus:4222 --nats-creds host.creds""",
    "relay": """Examples:

\b
  streamv1 relay -- claude -p --output-format stream-json --verbose "fix the tests"
  some-agent --json | streamv1 relay""",
    "subscribe": """Examples:

\b
  streamv1 subscribe | jq 'select(.type=="result")'
  streamv1 subscribe --from nats://bus:4222 --durable dash --host alice-laptop
  streamv1 subscribe --from nats://bus:4222 --since 2h --catch-up > last-2h.jsonl""",
    "service": """Examples:

\b
  streamv1 service print
  streamv1 service install && systemctl --user enable --now streamv1""",
    "status": """Examples:

\b
  streamv1 status | jq .claims""",
}
for _name, _text in EXAMPLES.items():
    if _name in main.commands:
        main.commands[_name].epilog = _text


# ``python -m streamv1.translator.cli`` is the same command as ``streamv1`` (where
# the console script is not on PATH); tests/test_cli.py holds it to that.
if __name__ == "__main__":  # pragma: no cover - run in a child process by the test
    run()
