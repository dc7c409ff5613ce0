"""The ``streamv1`` command group, and the one place where a command's end becomes
an exit status.

Exit status: 0 fine; 1 bad input or violations (``--lenient`` forgives records that
do not fit, never unreadable inputs); 2 usage errors; 70 a bug of ours; 128+N a
signal (130 Ctrl-C, 141 a reader that went away). Errors are one line on stderr
naming the file (and line); never a traceback.

A command returns its status (or None for 0), or raises
:class:`~streamv1.translator.exits.Exit` / ``Failure`` from however deep it is;
``Streamv1.invoke`` says a Failure's line and hands the status to click, and
``run`` turns what is left (Ctrl-C, usage errors, a closed stdout, a bug) into its
line and status. Nothing else in the package ends the process.
"""

from __future__ import annotations

import gc
import importlib
import os
import signal
import sys
from typing import Any

import click

from streamv1.translator import logs
from streamv1.translator.exits import EXIT_PIPE, Exit, Failure, Interrupted, stdout_to_devnull

log = logs.get()


#: An exception no command handles (sysexits' EX_SOFTWARE).
EXIT_INTERNAL = 70


#: The commands, each the same name in its module of this package. A command's
#: module is imported when it runs or is listed (pip's commands_dict does the same):
#: ``convert`` does not load the daemon's, the fleet's and the others' options.
COMMANDS = ("convert", "sessions", "validate", "tail", "relay", "subscribe", "status", "service")


class Streamv1(click.Group):
    """The group: a command's status, returned or raised, goes to click as its exit
    (so ``run`` and click's own test runner see the same status)."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in COMMANDS:
            return None
        # SIGINT held while the command's modules load, as start.py holds it for
        # these: a KeyboardInterrupt inside an extension's initialisation (orjson's)
        # crashed the process; held, it is raised here, once they are loaded.
        held = {signal.SIGINT}
        signal.pthread_sigmask(signal.SIG_BLOCK, held)
        try:
            module = importlib.import_module(f"streamv1.translator.cli.{cmd_name}")
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, held)
        command: click.Command = getattr(module, cmd_name)
        command.epilog = EXAMPLES.get(cmd_name, command.epilog)
        return command

    def invoke(self, ctx: click.Context) -> Any:
        try:
            status = super().invoke(ctx)
        except Exit as end:
            ctx.exit(_said(end))
        except Interrupted as stop:
            # A command that says no summary of its own (sessions) ends as Ctrl-C does.
            ctx.exit(128 + stop.signum)
        if isinstance(status, int) and status:
            ctx.exit(status)
        return None


def _said(end: Exit) -> int:
    """A raised end's status, a Failure's line said first."""
    if isinstance(end, Failure):
        log.error(end.event, **end.fields)
    return end.status


@click.group(cls=Streamv1, context_settings={"help_option_names": ["-h", "--help"]})
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
    try:
        _refuse_dash_paths(sys.argv[1:])
        sys.argv[1:] = _global_options_first(sys.argv[1:])
        # Not click's standalone mode: it turns a Ctrl-C into "Aborted!" and exit 1.
        code = main(standalone_mode=False)
    except Exit as end:  # raised before a command ran (the group's invoke says the rest)
        sys.exit(_said(end))
    except (KeyboardInterrupt, click.exceptions.Abort):
        sys.exit(128 + 2)  # Ctrl-C anywhere else: no traceback, the shell's status
    except click.ClickException as exc:
        exc.show()  # a usage error: what standalone mode prints, and its status
        sys.exit(exc.exit_code)
    except BrokenPipeError:
        stdout_to_devnull()
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
            raise Failure(
                "a name that starts with '-' reads as options",
                path=arg,
                hint=f"write ./{arg}, or put -- before it (streamv1 convert -- {arg})",
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
