"""The options more than one command takes, each declared once: the input's source, the
output's shape, the selection of runs or sessions, --format, --max-line-bytes,
the daemon's socket, and the bus a command publishes to.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from streamv1.translator.fleet.bus import (
    BusConfig,
    check_token,
)
from streamv1.translator.fleet.bus import config as configured_bus
from streamv1.translator.output.shapes import DEFAULT, shapes
from streamv1.translator.reading.reader import MAX_LINE_BYTES
from streamv1.translator.reading.sources import Source, sources

#: The path types the commands' options and arguments take (click.Path instances hold no
#: state, so one serves every option).
FILE = click.Path(path_type=Path, dir_okay=False)  # a file written or kept, never a folder
# Inputs are not checked for access here (click's ``readable``, on by default, makes one
# unreadable input a usage error that stops every other): the command opens each and
# says, on one line naming it, why one cannot be read, and goes on with the rest.
FOLDER = click.Path(path_type=Path, file_okay=False, readable=False)
PATH_OR_DASH = click.Path(path_type=Path, allow_dash=True, readable=False)  # "-": stdin or stdout


def source_choice(name: str) -> Source | None:
    if name == "auto":
        return None
    known = sources()
    if name not in known:
        names = ", ".join(["auto", *known])
        raise click.UsageError(f"source {name!r} is not available in this version (known: {names})")
    return known[name]


if TYPE_CHECKING:
    from streamv1.translator.views import ledger

    _StrChoice = click.Choice[str]
else:
    _StrChoice = click.Choice  # (not subscriptable before click 8.4)


class ShapeChoice(_StrChoice):
    """``--to``'s choices: the shapes :func:`translator.output.shapes.shapes` finds, looked
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


def selection(
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
        from streamv1.translator.views import ledger  # (its price table: only when asked)

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
SOURCE_OPTION = click.option(
    "--source",
    "source_name",
    type=click.Choice(["auto", *sources()]),
    default="auto",
    show_default=True,
    help="Input format: auto (sniffed from the first records), or one of these.",
)


#: --format, for the commands that print stream_v1 on stdout (convert, subscribe).
FORMAT_OPTION = click.option(
    "--format",
    "view_format",
    type=click.Choice(["auto", "json", "pretty"]),
    default="auto",
    show_default=True,
    help="stdout as stream_v1 JSON lines, or as one short line per event for people "
    "(pretty: prompts, text, tool calls, errors, results with tokens and cost; a colour "
    "per session). auto: pretty when stdout is a terminal.",
)


MAX_LINE_OPTION = click.option(
    "--max-line-bytes",
    type=click.IntRange(min=1),
    default=MAX_LINE_BYTES,
    show_default=True,
    metavar="N",
    help="A longer line is reported (file:line and its length) and skipped, never held.",
)


SOCKET_OPTION = click.option(
    "--socket",
    "socket_path",
    type=FILE,
    help="The daemon's socket (default: $XDG_RUNTIME_DIR/streamv1/ingest.sock).",
)


def publishing(
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
