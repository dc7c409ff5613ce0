"""``streamv1 relay``: a command's stdout passed through and handed to the daemon."""

from __future__ import annotations

from pathlib import Path

import click

from streamv1.translator.cli.options import SOCKET_OPTION


@click.command(context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False})
@SOCKET_OPTION
@click.argument("command", nargs=-1, type=click.UNPROCESSED)
def relay(socket_path: Path | None, command: tuple[str, ...]) -> int:
    """Run COMMAND (or read stdin), pass its stdout through unchanged, and hand each
    line to the tail daemon as a live stream. Never slowed by the daemon; exits
    with COMMAND's status.

    \b
      streamv1 relay -- claude -p --output-format stream-json --verbose "..."
    """
    from streamv1.translator.tail import protocol
    from streamv1.translator.tail.relay import relay as run_relay

    return run_relay(list(command), socket_path or protocol.default_socket())
