"""``streamv1 validate``: stream_v1 files against the schema and the framing rules."""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path
from typing import IO, Any

import click

from streamv1.translator import logs
from streamv1.translator.cli.options import MAX_LINE_OPTION, PATH_OR_DASH
from streamv1.translator.cli.shared import quiet_on_closed_stdout
from streamv1.translator.reading.discover import walk_paths
from streamv1.translator.reading.sources import sources
from streamv1.translator.translate.input_files import first_record

log = logs.get()


_SOURCE_WORDS = {
    "claude-session": "a Claude Code transcript (a session file)",
    "claude-stream": "a Claude Code print-mode stream",
    "stella": "stella agent events",
}


def _not_stream_v1(stream: IO[bytes]) -> str | None:
    """What the input is when its first record is plainly another source's (read
    from its first 64 KiB, then rewound): one clear line instead of an error for
    every line."""
    from streamv1.translator.reading.sources import DECISIVE, sniff

    try:
        head = stream.read(1 << 16)
        stream.seek(0)
    except (OSError, ValueError):
        return None
    record = first_record(head)
    own = sources().get("stream_v1")
    if record is None or (own is not None and own.sniff(record) >= DECISIVE):
        return None  # stream_v1 (a print-mode stream's lines may look alike)
    best, score = sniff(record)
    if best is not None and best.name in _SOURCE_WORDS and score >= DECISIVE:
        return _SOURCE_WORDS[best.name]
    return None


@click.command()
@click.argument("files", nargs=-1, type=PATH_OR_DASH)
@click.option("--quiet", "-q", is_flag=True, help="Print nothing; the exit status tells.")
@click.option(
    "--allow-open",
    is_flag=True,
    help="Accept runs still open at the end (a live stream, e.g. tail's output).",
)
@MAX_LINE_OPTION
@quiet_on_closed_stdout
def validate(files: tuple[Path, ...], quiet: bool, allow_open: bool, max_line_bytes: int) -> int:
    """Check stream_v1 FILEs (or - / stdin) against the schema and the framing rules.

    Prints each violation as file:line: reason; exits 1 if there is any.
    """
    from streamv1.translator.contract.validate import validate_stream

    targets: list[Any] = []
    for given in files or (Path("-"),):
        if str(given) != "-" and given.is_dir():
            found = walk_paths(str(given))  # the folder as convert walks it
            if not found:
                log.error("directory holds no *.jsonl files", path=str(given))
            targets += found
        else:
            targets.append(given)
    bad = 0
    checked = 0
    for target in targets:
        name = "-" if str(target) == "-" else str(target)
        try:
            stream = sys.stdin.buffer if name == "-" else open(target, "rb")
        except OSError as exc:
            log.error("cannot read the input", path=name, reason=exc.strerror or str(exc))
            bad += 1
            continue
        with stream if name != "-" else nullcontext(stream):
            if name != "-" and (kind := _not_stream_v1(stream)):
                log.error(
                    "this is not stream_v1: convert it first",
                    path=name,
                    looks_like=kind,
                    hint=f"streamv1 convert {name}",
                )
                bad += 1
                checked += 1
                continue
            for violation in validate_stream(stream, name, allow_open, max_line_bytes):
                bad += 1
                if not quiet:
                    click.echo(str(violation))
        checked += 1
    if not quiet:
        log.info("validated", files=checked, violations=bad)
    return 1 if bad else 0
