"""What more than one command does at run time: where stdout's lines go (the view
for people, or bytes), a closed stdout as the shell's SIGPIPE status, Ctrl-C and
SIGTERM while converting, the terminal checks behind a progress line.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys
from collections.abc import Callable, Iterator
from typing import IO, Any, TypeVar, cast

from streamv1.translator import exits
from streamv1.translator.exits import EXIT_PIPE, Exit, Interrupted, stdout_to_devnull

F = TypeVar("F", bound=Callable[..., Any])


#: A reader that went away (``| head -1``): the shell's status for SIGPIPE.


def stdout_for(view_format: str) -> IO[bytes]:
    """Where a command's stream_v1 lines go: stdout's bytes, or, for people at a
    terminal (--format pretty / auto), the view that shows them (translator.views.pretty)."""
    if view_format == "pretty" or (view_format == "auto" and sys.stdout.isatty()):
        from streamv1.translator.views.pretty import PrettyWriter

        return cast(IO[bytes], PrettyWriter(sys.stdout))
    return sys.stdout.buffer


def quiet_on_closed_stdout(command: F) -> F:
    """A closed stdout ends the command quietly with 141, as a SIGPIPE would: not
    1 (damaged input), and no traceback. (Not the daemon's way: its sockets must
    survive a reader going away, so SIGPIPE stays ignored and this is per command.)"""

    @functools.wraps(command)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return command(*args, **kwargs)
        except BrokenPipeError:
            stdout_to_devnull()
            raise Exit(EXIT_PIPE) from None

    return wrapper  # type: ignore[return-value]


@contextlib.contextmanager
def signals_interrupt() -> Iterator[None]:
    """SIGINT and SIGTERM raise Interrupted in the main process while converting,
    and are noted (exits.NOTED): a raise something below swallowed is raised again
    at the conversion's next input, or here at its end."""
    import signal

    def interrupt(signum: int, _frame: Any) -> None:
        exits.NOTED.append(signum)
        raise Interrupted(signum)

    exits.NOTED.clear()
    old = {sig: signal.signal(sig, interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
        exits.stop_if_interrupted()  # (taken, and its raise lost on the way)
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)
        exits.NOTED.clear()  # a note is of this conversion only


def progress_wanted(json_on_stdout: bool) -> bool:
    """A progress line only on a terminal (stderr), and not one showing JSON lines
    too (it would be mixed into them). The view for people may share its terminal
    with it: drawn on the view's console, the view scrolls above it."""
    return sys.stderr.isatty() and not (json_on_stdout and stdout_is_stderr())


def stdout_is_stderr() -> bool:
    """stdout and stderr are the same file (one terminal, usually)."""
    try:
        out, err = os.fstat(sys.stdout.fileno()), os.fstat(sys.stderr.fileno())
    except (OSError, ValueError):
        return False
    return (out.st_dev, out.st_ino, out.st_rdev) == (err.st_dev, err.st_ino, err.st_rdev)


def exit_now(status: int) -> None:
    """End a conversion a signal stopped, its summary said: at once, without the
    interpreter's exit handlers, which join a killed process pool's threads (they
    may write to a pipe its workers' deaths closed: a traceback about a bad file
    descriptor, 1 run in 10). What had to be tidied (-o's temp file, the spool)
    already was, on the way here."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(status)
