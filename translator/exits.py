"""How a command ends early: raised anywhere (a command, the daemon's serve), said
and turned into an exit status in one place, the CLI's ``run``
(:mod:`streamv1.translator.cli.app`). Nothing else calls ``sys.exit``.

Both are BaseExceptions, as SystemExit is: an ``except Exception`` on the way up
(a cleanup that reports its own failure) must not swallow the end of the command.
"""

from __future__ import annotations

import contextlib
import os
import sys
from typing import Any

#: A command whose stdout's reader went away ends as the shell's SIGPIPE status.
EXIT_PIPE = 128 + 13


class Exit(BaseException):
    """End the command with ``status``; whatever there was to say is said."""

    def __init__(self, status: int) -> None:
        super().__init__(status)
        self.status = status


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
