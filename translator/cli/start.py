"""The installed command's entry point, importing nothing of its own first: a
Ctrl-C while the command's modules load (the first ~0.1 s) ends it with the
shell's status for SIGINT instead of a KeyboardInterrupt traceback.

SIGINT is held back (blocked) while they load, and taken once they are there: a
KeyboardInterrupt raised inside an extension module's initialisation crashed the
process (orjson 3.13: a segmentation fault, 1 start in ~250 under CI's Ctrl-C
test), and a blocked signal is delivered, not lost, when it is let through.
``_signal`` is the interpreter's own, already loaded: holding it costs nothing."""

import _signal  # type: ignore[import-not-found]  # (typeshed has no stub: `signal` re-exports it)
import sys


def run() -> None:
    held = {_signal.SIGINT}
    try:
        _signal.pthread_sigmask(_signal.SIG_BLOCK, held)
        try:
            from streamv1.translator.cli.app import run as command
        finally:
            _signal.pthread_sigmask(_signal.SIG_UNBLOCK, held)  # a held Ctrl-C: raised here
    except KeyboardInterrupt:
        sys.exit(128 + 2)
    command()
