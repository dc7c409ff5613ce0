"""``streamv1 tail``: the daemon's options checked and handed to
:func:`translator.tail.serve.serve`, whose status is the command's.
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any, cast

import click

from streamv1.translator import logs
from streamv1.translator.cli.options import (
    FILE,
    FOLDER,
    FORMAT_OPTION,
    output_shape_options,
    publishing,
    selection,
    selection_options,
)
from streamv1.translator.cli.shared import progress_wanted, stdout_is_stderr
from streamv1.translator.fleet.bus import (
    BusConfig,
    bus_options,
)
from streamv1.translator.output.shapes import DEFAULT


def seconds_option(name: str, default: float, text: str) -> Callable[[Any], Any]:
    """One of the daemon's periods, in seconds (each says what 0 means, where it means
    something)."""
    return click.option(
        name, type=float, default=default, show_default=True, metavar="SECONDS", help=text
    )


@click.command()
@click.argument("dirs", nargs=-1, type=FOLDER)
@click.option(
    "-o",
    "--output",
    "output",
    type=FILE,
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
    type=FILE,
    help="Checkpoint file (default: $XDG_STATE_HOME/streamv1/tail-<hash>.json).",
)
@seconds_option(
    "--idle-close",
    600.0,
    "End a run silent this long, as batch conversion does at the end of a file (0: never).",
)
@click.option(
    "--log-format",
    type=click.Choice(["auto", "json", "console"]),
    default="auto",
    show_default=True,
    help="auto: JSON when stderr is not a terminal.",
)
@seconds_option("--rescan-every", 30.0, "Full rescan for files whose events were missed.")
@output_shape_options
@click.option(
    "--socket",
    "--ingest-socket",
    "ingest_socket",
    type=FILE,
    help="Unix socket for relays, subscribers and status "
    "(default: $XDG_RUNTIME_DIR/streamv1/ingest.sock).",
)
@click.option("--no-ingest", is_flag=True, help="Listen on no socket: transcripts only.")
@click.option(
    "--follow-symlinks",
    is_flag=True,
    help="Follow symlinked files that lead out of the watched folders (default: skip them).",
)
@seconds_option("--stats-every", 60.0, "Log the counters this often (0: never).")
@seconds_option("--commit-every", 0.5, "Least time between two checkpoints.")
@click.option(
    "--publish",
    metavar="nats://HOST:PORT[,...]",
    help="Also send every line to this NATS JetStream (needs -o FILE: the file is the "
    "buffer while the bus is down; docs/fleet.md).",
)
@selection_options("Runs", "begun")
@FORMAT_OPTION
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
) -> int:
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
    from streamv1.translator.output.shapes import encoder_for
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
    bus_config = publishing(publish, bus, to, None)
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
        from streamv1.translator.views.pretty import PrettyWriter

        view = PrettyWriter(sys.stdout)
    catch_up_view = None
    if progress_wanted(json_on_stdout=output is None and view is None):
        from streamv1.translator.progress import ProgressLine

        console = view.console if view is not None and stdout_is_stderr() else None
        catch_up_view = functools.partial(ProgressLine, "catch-up", console=console)
    roots = serve.watched_roots(dirs)
    return serve.serve(
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
        selection=selection(since, until, project, agent, session_prefix),
        stdout=cast(IO[bytes], view) if view is not None else None,
        catch_up_view=catch_up_view,
    )
