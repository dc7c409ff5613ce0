"""The installed command's entry point, importing nothing of its own first: a
Ctrl-C while the command's modules load (the first ~0.1 s) ends it with the
shell's status for SIGINT instead of a KeyboardInterrupt traceback."""

import sys


def run() -> None:
    try:
        from streamv1.translator.cli import run as command
    except KeyboardInterrupt:
        sys.exit(128 + 2)
    command()
