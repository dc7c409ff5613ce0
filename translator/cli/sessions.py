"""``streamv1 sessions``: one row per session of what convert reads, from the
converted stream (translator.views.ledger).
"""

from __future__ import annotations

import sys
from pathlib import Path

import click

from streamv1.translator import logs
from streamv1.translator.cli.convert import convert_inputs
from streamv1.translator.cli.options import (
    PATH_OR_DASH,
    SOURCE_OPTION,
    selection,
    selection_options,
    source_choice,
)
from streamv1.translator.cli.shared import quiet_on_closed_stdout
from streamv1.translator.translate import many_inputs

log = logs.get()


@click.command()
@click.argument("paths", nargs=-1, type=PATH_OR_DASH)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="One JSON object per session (session_id, agent, project, started, ended, "
    "runs, turns, tool_calls, errors, usage, cost_usd, cost_source), not a table.",
)
@selection_options("Sessions")
@SOURCE_OPTION
@click.option(
    "--jobs",
    "-j",
    type=click.IntRange(1),
    metavar="N",
    help="Read N inputs at a time (default: one per core once the inputs hold 24 MB or more).",
)
@quiet_on_closed_stdout
def sessions(
    paths: tuple[Path, ...],
    as_json: bool,
    since: str | None,
    until: str | None,
    project: str | None,
    agent: str | None,
    session_prefix: str | None,
    source_name: str,
    jobs: int | None,
) -> int:
    """One row per session of PATHs: agent, project, start, duration, runs, turns,
    tool calls, errors, tokens and cost.

    PATHs are what convert reads (every agent's home when none is given, stdin
    when it is a pipe), or stream_v1 files such as the tail's output. Tokens are
    every actor's API messages once each; the cost is the one the source states
    (print mode's total_cost_usd), none yet where it states none.

    \b
    Examples:
      streamv1 sessions                          every agent's sessions, a table
      streamv1 sessions --since yesterday        what ran since yesterday's midnight
      streamv1 sessions ~/.codex/sessions --json one JSON object per session
      streamv1 sessions tail.jsonl --agent gemini-cli --project myrepo
    """
    import tempfile

    import orjson

    from streamv1.translator.views import ledger

    keep = selection(since, until, project, agent, session_prefix) or ledger.Filter()
    source = source_choice(source_name)
    options = many_inputs.Options(source.name if source else None)
    book = ledger.Ledger()
    with tempfile.TemporaryDirectory(prefix="streamv1-sessions-") as spool:
        stream = Path(spool) / "stream.jsonl"
        totals = convert_inputs(paths, stream, None, options, jobs)
        failed = 0
        with stream.open("rb") as fh:
            for number, raw in enumerate(fh, 1):
                try:
                    book.feed(orjson.loads(raw))
                except Exception as exc:  # a bug: that line's row is short of it, no more
                    failed += 1
                    log.error(
                        "a converted line could not be counted",
                        line=number,
                        error=type(exc).__name__,
                    )
    rows = [row for row in book.rows.values() if keep.keeps(row)]
    if as_json:
        out = sys.stdout.buffer
        for row in sorted(rows, key=lambda r: r.started or ""):
            out.write(orjson.dumps(row.as_json()) + b"\n")
        out.flush()
    else:
        click.echo("\n".join(ledger.table(rows)))
    # Damaged input still makes its row (status 0, as before); an input not read,
    # or a session whose translation failed (its error line), makes the status 1.
    return 1 if totals.failed_inputs or totals.framing.failures or failed else 0
