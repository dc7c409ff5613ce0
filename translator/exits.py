"""How a command ends early: raised anywhere (a command, the daemon's serve), said
and turned into an exit status in one place, the CLI's ``run``
(:mod:`streamv1.translator.cli.app`). Nothing else calls ``sys.exit``.

All three (Exit, Failure, Interrupted) are BaseExceptions, as SystemExit and
KeyboardInterrupt are: an ``except Exception`` on the way up (a cleanup that reports
its own failure, an adapter's bug turned into system/error) must not swallow the end
of the command.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streamv1.translator.translate.translation import Totals

#: A command whose stdout's reader went away ends as the shell's SIGPIPE status.
EXIT_PIPE = 128 + 13


class Exit(BaseException):
    """End the command with ``status``; whatever there was to say is said."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


class Interrupted(BaseException):
    """SIGINT or SIGTERM reached a conversion: stop now, ending what is open.

    A BaseException, as KeyboardInterrupt is: raised by a signal handler wherever
    the main thread happens to be, it must not land in an ``except Exception`` that
    turns a failure into a note and goes on. Seen: a Ctrl-C 1.5 s into a serial
    convert of 685 MB landed in an adapter's ``feed``, whose exceptions become
    system/error lines; the conversion ran to its end with status 1 (1 try of 5)."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"signal {signum}")
        self.signum = signum
        #: What was converted by then (many_inputs.run fills it in on the way out):
        #: the summary an interrupted conversion still says.
        self.totals: Totals | None = None


#: The signals a conversion's handler took (cli.shared.signals_interrupt), in order.
#: The handler raises Interrupted at once; this note is for a raise that was lost
#: below it all the same (seen: a Ctrl-C 0.2 s into a 4,000-file convert --jobs 2,
#: its handler run inside io.open while the inputs were grouped, its raise never
#: arriving, even as a BaseException; the conversion ran to its end with status 0,
#: 1 try in 40). The long loops look at it between inputs.
NOTED: list[int] = []


def stop_if_interrupted() -> None:
    """Raise Interrupted for a signal taken earlier, if one was."""
    if NOTED:
        raise Interrupted(NOTED[0])


class Failure(Exit):
    """End the command with one error line: a fixed event and its fields (as every
    log event: ``path``, ``reason``, ``hint``, ...), then ``status`` (1 by default)."""

    def __init__(self, event: str, status: int = 1, **fields: Any) -> None:
        super().__init__(status)
        self.event = event
        self.fields = fields


def stdout_to_devnull() -> None:
    """stdout's reader went away: point it at /dev/null, so nothing more reaches the
    closed pipe, not even the interpreter's flush at exit (the CLI and the daemon's
    serve both end so)."""
    with contextlib.suppress(OSError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
