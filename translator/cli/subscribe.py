"""``streamv1 subscribe``: the daemon's live stream, or the fleet's from JetStream."""

from __future__ import annotations

import re
from pathlib import Path
from typing import IO, Any, cast

import click

from streamv1.translator.cli.options import (
    FORMAT_OPTION,
    SOCKET_OPTION,
    selection,
    selection_options,
)
from streamv1.translator.cli.shared import quiet_on_closed_stdout, signals_interrupt, stdout_for
from streamv1.translator.exits import Exit, Failure, Interrupted
from streamv1.translator.fleet.bus import (
    ACK_WINDOW,
    FETCH,
    BusError,
    bus_options,
)
from streamv1.translator.fleet.bus import config as configured_bus


@click.command()
@SOCKET_OPTION
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
@FORMAT_OPTION
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
    after a kill, at most --ack-window lines are printed again). Only a stream_v1
    line whose session and host are its subject's is printed, encoded again, with
    its host as extension.fleet_host; anything else is counted per kind on stderr,
    never printed (docs/fleet.md, "What is printed, and what is not").

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
    keep = selection(since, until, project, agent, session_prefix)
    out = stdout_for(view_format)
    if keep is not None:
        from streamv1.translator.translate.select import RunFilter

        out = cast(IO[bytes], RunFilter(out, keep))
    if source_url is None:
        _subscribe_local(socket_path, out)
        return
    from streamv1.translator.fleet import transfer  # asyncio, nats: only to subscribe

    bus_config = configured_bus(source_url, bus, host="-")
    whole = session_prefix if session_prefix and _WHOLE_ID.fullmatch(session_prefix) else None
    try:
        with signals_interrupt():
            transfer.subscribe(
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
        raise Exit(128 + exc.signum) from None
    except BusError as exc:
        raise Failure("bus unusable", reason=str(exc)) from None


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
        raise Failure("no daemon", path=str(path), reason=str(exc)) from None
    except KeyboardInterrupt:
        raise Exit(128 + 2) from None  # the shell's status for Ctrl-C
