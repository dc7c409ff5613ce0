"""``streamv1 status``: the daemon's counters, for a person or as JSON."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from streamv1.translator.cli.options import SOCKET_OPTION
from streamv1.translator.exits import Failure


@click.command()
@SOCKET_OPTION
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
        raise Failure("no daemon", path=str(path), reason=str(exc)) from None
    except (OSError, ValueError) as exc:
        raise Failure("no status from the daemon", path=str(path), reason=str(exc)) from None
    if not as_json and sys.stdout.isatty():
        from streamv1.translator.views.pretty import status_lines

        click.echo("\n".join(status_lines(value)))
        return
    sys.stdout.buffer.write(orjson.dumps(value) + b"\n")
