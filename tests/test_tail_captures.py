"""Live = batch on every real capture: the durable files of each scenario written
as Claude Code wrote them (in time order across the main file and its subagents'
files, each line in random pieces), followed by the daemon round by round, give
per session and per actor what ``convert`` gives for the same files, once quiet,
and with no idle-close for the runs the source marks as ended. Skipped where
../shared is absent (our own captures in testdata/captures always run)."""

from __future__ import annotations

import random
from pathlib import Path

import orjson
import pytest
from corpora import durable_files, scenario_dir, scenario_ids
from helpers import convert_session_files, framing_violations, tree_violations
from tailing import Clock, by_actor, first_mismatch, fixed, tail_output

from streamv1.translator.tail.daemon import TailDaemon
from streamv1.translator.tail.output import OutputSink
from streamv1.translator.timefmt import normalize_ts


def _writes(files: list[Path], root: Path, rng: random.Random) -> list[tuple[Path, bytes]]:
    """Every line of every file, each file in its own order, the files merged by
    the times of their next records (a line with no time goes with the line before
    it in its file), each line cut in one to three pieces: the appends the CLI
    made, roughly."""
    queues: list[list[tuple[str, bytes]]] = []
    targets: list[Path] = []
    for src in files:
        targets.append(root / src.relative_to(_projects(src)))
        last, lines = "", []
        for raw in src.read_bytes().splitlines(keepends=True):
            try:
                rec = orjson.loads(raw)
            except orjson.JSONDecodeError:
                rec = None
            ts = normalize_ts(rec.get("timestamp")) if isinstance(rec, dict) else None
            last = ts or last
            lines.append((last, raw))
        queues.append(lines)
    out: list[tuple[Path, bytes]] = []
    heads = [0] * len(queues)
    while True:
        live = [k for k in range(len(queues)) if heads[k] < len(queues[k])]
        if not live:
            return out
        k = min(live, key=lambda i: (queues[i][heads[i]][0], i))
        raw = queues[k][heads[k]][1]
        heads[k] += 1
        cuts = sorted(rng.sample(range(1, len(raw)), min(len(raw) - 1, rng.randint(0, 2))))
        for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True):
            out.append((targets[k], raw[a:b]))


def _projects(path: Path) -> Path:
    return next(p for p in path.parents if p.name == "projects")


def _with_durable() -> list[str]:
    return [s for s in scenario_ids() if durable_files(scenario_dir(s))]


#: Runs whose end the source leaves undecided until a next record that never
#: came in the capture: they wait for it live (or idle-close), as docs/live.md says.
_UNDECIDED = {
    # A cost-state while the CLI waited for the model's first reply: a CLI stopped
    # by SIGINT writes one just before its interrupt marker (x_interrupt), so the
    # run's end waits for the next record; here none comes (a pause_turn reply
    # with no content has no record).
    "ours/x_pause_turn_end",
}
#: Sources that write no end mark for a turn (Claude Code 2.1.29's TUI: no
#: turn_duration, no cost-state): each run ends at the next prompt, and the file's
#: last run (the /exit command's) only at the file's end, or live at idle-close.
_LAST_RUN_UNMARKED = {"ours/x_prompt_suggestion_tui"}


def _ended_by_eof(line: bytes, scenario: str) -> bool:
    """A result convert makes at the end of a file for a run left open."""
    if not line.startswith(b'{"type":"result"'):
        return False
    return b'"cut_off":true' in line or scenario in _UNDECIDED


@pytest.mark.parametrize("scenario", _with_durable())
def test_tail_equals_convert_on_every_capture(tmp_path: Path, scenario: str) -> None:
    files = durable_files(scenario_dir(scenario))
    root = tmp_path / "projects"
    rng = random.Random(scenario)
    writes = _writes(files, root, rng)
    for dst, _ in writes:
        dst.parent.mkdir(parents=True, exist_ok=True)
    for src in files:
        meta = src.with_name(src.name.removesuffix(".jsonl") + ".meta.json")
        if meta.exists():
            dst = root / meta.relative_to(_projects(meta))
            dst.write_bytes(meta.read_bytes())
    clock = Clock()
    daemon = TailDaemon(
        [root],
        OutputSink(tmp_path / "out.jsonl"),
        tmp_path / "state.json",
        clock=fixed,
        now=clock,
        commit_every=0,
        idle_close=600,
    )
    daemon.start()
    changed: set[str] = set()
    for dst, piece in writes:
        new = not dst.exists()
        with dst.open("ab") as fh:
            fh.write(piece)
        changed.add(str(dst))
        if new:
            changed.add(str(dst.parent))
        if rng.random() < 0.3:
            daemon.tick(changed=changed)
            changed = set()
    daemon.tick(changed=changed)
    daemon.tick(rescan=True)
    want = by_actor(convert_session_files(files, source="claude-session")[0])
    got = by_actor(tail_output(tmp_path / "out.jsonl"))
    # Quiet, no idle-close yet: all but the ends convert makes at EOF for runs the
    # source left open (those wait for more, live).
    still_open = {k: [x for x in v if not _ended_by_eof(x, scenario)] for k, v in want.items()}
    if scenario in _LAST_RUN_UNMARKED:
        main = next(k for k in still_open if k[1] is None)
        assert still_open[main][-1].startswith(b'{"type":"result"')
        still_open[main] = still_open[main][:-1]
    assert got == still_open, first_mismatch(got, still_open)
    clock.t += 601
    daemon.tick()
    daemon.stop()
    data = tail_output(tmp_path / "out.jsonl")
    got = by_actor(data)
    assert got == want, first_mismatch(got, want)
    assert framing_violations(data) == []
    assert tree_violations([orjson.loads(x) for x in data.splitlines()]) == []
