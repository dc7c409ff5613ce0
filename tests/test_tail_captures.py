"""Live = batch on every real capture: the durable files of each scenario written
as Claude Code wrote them (in time order across the main file and its subagents'
files, each line in random pieces), followed by the daemon round by round, give
per session and per actor what ``convert`` gives for the same files, once quiet,
and with no idle-close for the runs the source marks as ended. Skipped where
../shared is absent (our own captures in testdata/captures always run). The same
for our Codex captures in testdata/codex: their rollouts laid out as a sessions
tree, a parent and its children written in time order; and Gemini CLI's chat
files, in their own section below."""

from __future__ import annotations

import contextlib
import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import ROOT, SHARED
from corpora import durable_files, scenario_dir, scenario_ids
from helpers import convert_session_files, framing_violations, tree_violations
from tailing import Clock, by_actor, first_mismatch, fixed, tail_output

from streamv1.translator.tail.daemon import TailDaemon
from streamv1.translator.tail.output import OutputSink
from streamv1.translator.timefmt import normalize_ts


def _pieces(
    files: list[bytes], time_of: Callable[[Any], str | None], rng: random.Random
) -> list[tuple[int, bytes]]:
    """Every line of every file (by index), each file in its own order, the files
    merged by the times of their next records (``time_of`` a record; a line with
    none goes with the line before it in its file), each line cut in one to three
    pieces: the appends the CLI made, roughly. The three sources' tests share it."""
    queues: list[list[tuple[str, bytes]]] = []
    for data in files:
        last, lines = "", []
        for raw in data.splitlines(keepends=True):
            with contextlib.suppress(orjson.JSONDecodeError):
                last = time_of(orjson.loads(raw)) or last
            lines.append((last, raw))
        queues.append(lines)
    out: list[tuple[int, bytes]] = []
    heads = [0] * len(queues)
    while live := [k for k in range(len(queues)) if heads[k] < len(queues[k])]:
        k = min(live, key=lambda i: (queues[i][heads[i]][0], i))
        raw = queues[k][heads[k]][1]
        heads[k] += 1
        cuts = sorted(rng.sample(range(1, len(raw)), min(len(raw) - 1, rng.randint(0, 2))))
        out += [(k, raw[a:b]) for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True)]
    return out


def _timestamp(record: Any) -> str | None:
    """A Claude Code or Codex record's time: its ``timestamp``."""
    return normalize_ts(record.get("timestamp")) if isinstance(record, dict) else None


def _writes(files: list[Path], root: Path, rng: random.Random) -> list[tuple[Path, bytes]]:
    """:func:`_pieces` of a Claude capture's durable files, at their places below ``root``."""
    targets = [root / src.relative_to(_projects(src)) for src in files]
    pieces = _pieces([src.read_bytes() for src in files], _timestamp, rng)
    return [(targets[k], piece) for k, piece in pieces]


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
    _tail_equals_convert(tmp_path, scenario, restarts=False)


def _unlinked_agents(scenario: str) -> bool:
    """Has the capture an agent file with no sidecar (its lines held live until its
    parent names it, or till they are decided no run's: 2.0.x Warmup files)?"""
    return any(
        f.name.startswith("agent-") and not f.with_name(f.stem + ".meta.json").exists()
        for f in durable_files(scenario_dir(scenario))
    )


@pytest.mark.parametrize("scenario", [s for s in _with_durable() if _unlinked_agents(s)])
@pytest.mark.parametrize("seed", range(3))
def test_held_lines_come_once_across_restarts(tmp_path: Path, scenario: str, seed: int) -> None:
    """The same, the daemon stopped (or killed: no last checkpoint) and started
    again at random rounds: what a file held, or decided while held, comes once."""
    _tail_equals_convert(tmp_path, scenario, restarts=True, seed=seed)


def _tail_equals_convert(tmp_path: Path, scenario: str, restarts: bool, seed: int = 0) -> None:
    files = durable_files(scenario_dir(scenario))
    root = tmp_path / "projects"
    rng = random.Random(scenario if not restarts else f"{scenario}/{seed}")
    writes = _writes(files, root, rng)
    for dst, _ in writes:
        dst.parent.mkdir(parents=True, exist_ok=True)
    for src in files:
        meta = src.with_name(src.name.removesuffix(".jsonl") + ".meta.json")
        if meta.exists():
            dst = root / meta.relative_to(_projects(meta))
            dst.write_bytes(meta.read_bytes())
    clock = Clock()

    def started() -> TailDaemon:
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
        return daemon

    daemon = started()
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
            if restarts and rng.random() < 0.3:
                if rng.random() < 0.5:
                    daemon.stop()
                else:  # killed: the kernel closes its files (and their locks)
                    daemon.lock.release()
                    daemon.sink.close()
                    daemon.store.close()
                daemon = started()
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


# -- Codex CLI: our captures in testdata/codex ------------------------------------------

CODEX = ROOT / "testdata" / "codex"


def _codex_cases() -> list[str]:
    """Every Codex case kept here with rollouts of 0.171.0 (a ``<case>/sessions`` tree
    or one ``<case>.rollout.jsonl``) and its exec --json stdout."""
    return sorted(
        p.name[: -len(".exec.jsonl")]
        for p in CODEX.glob("*.exec.jsonl")
        if (CODEX / p.name.replace(".exec.", ".rollout.")).exists()
        or (CODEX / p.name[: -len(".exec.jsonl")]).is_dir()
    )


def _codex_layout(case: str, day: Path) -> dict[Path, bytes]:
    """The case's rollouts where Codex lays them: ``sessions/YYYY/MM/DD/rollout-<start>-
    <thread>.jsonl`` (a lone ``<case>.rollout.jsonl`` is named from its session_meta)."""
    tree = CODEX / case / "sessions"
    if tree.is_dir():
        return {
            day / p.name: p.read_bytes()
            for p in sorted(tree.rglob("rollout-*.jsonl"))
            if ".expected." not in p.name
        }
    data = (CODEX / f"{case}.rollout.jsonl").read_bytes()
    meta = orjson.loads(data.splitlines()[0])["payload"]
    return {day / f"rollout-2026-12-05T00-00-00-{meta['id']}.jsonl": data}


@pytest.mark.parametrize("case", _codex_cases())
def test_tail_equals_convert_on_our_codex_captures(tmp_path: Path, case: str) -> None:
    """The daemon following a sessions tree where the case's rollouts are written in
    time order, in pieces, gives per session and actor what convert gives, once its
    open runs are closed (a killed run's end is convert's at EOF, the daemon's at
    idle-close)."""
    root = tmp_path / "sessions"
    day = root / "2026" / "12" / "05"
    day.mkdir(parents=True)
    files = _codex_layout(case, day)
    rng = random.Random(case)
    queues = []
    for dst, data in files.items():
        last, lines = "", []
        for raw in data.splitlines(keepends=True):
            rec = orjson.loads(raw)
            last = normalize_ts(rec.get("timestamp")) or last
            lines.append((last, raw))
        queues.append((dst, lines))
    heads = [0] * len(queues)
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
    while True:
        live = [k for k in range(len(queues)) if heads[k] < len(queues[k][1])]
        if not live:
            break
        k = min(live, key=lambda i: (queues[i][1][heads[i]][0], i))
        dst, raw = queues[k][0], queues[k][1][heads[k]][1]
        heads[k] += 1
        cuts = sorted(rng.sample(range(1, len(raw)), min(len(raw) - 1, rng.randint(0, 2))))
        for a, b in zip([0, *cuts], [*cuts, len(raw)], strict=True):
            with dst.open("ab") as fh:
                fh.write(raw[a:b])
            changed.add(str(dst))
            changed.add(str(dst.parent))
            if rng.random() < 0.3:
                daemon.tick(changed=changed)
                changed = set()
    daemon.tick(changed=changed)
    daemon.tick(rescan=True)
    want = by_actor(convert_session_files(sorted(files), source="codex")[0])
    # Quiet, no idle-close yet: all but the ends convert makes at EOF for runs no
    # task_complete closed (those wait for more, live).
    still_open = {
        k: [x for x in v if not x.startswith(b'{"type":"result","subtype":"interrupted"')]
        for k, v in want.items()
    }
    got = by_actor(tail_output(tmp_path / "out.jsonl"))
    assert got == still_open, first_mismatch(got, still_open)
    clock.t += 601
    daemon.tick()
    daemon.stop()
    data = tail_output(tmp_path / "out.jsonl")
    got = by_actor(data)
    assert got == want, first_mismatch(got, want)
    assert framing_violations(data) == []
    assert tree_violations([orjson.loads(x) for x in data.splitlines()]) == []


# -- Gemini CLI: every chat capture, live = batch ----------------------------------------
# The chat files of testdata/gemini (and of ../shared's gemini-0.61.0 corpus, when
# present) laid out where Gemini CLI writes them, written record by record in time
# order (across a main file and its subagent's), each record in random pieces, as
# the CLI appends them (its `$set` rewrites and re-written messages are appends
# too): per session and actor the daemon gives what ``convert`` gives for the
# same files, once quiet.

GEMINI_DATA = ROOT / "testdata" / "gemini"
GEMINI_CORPUS = SHARED / "corpus" / "gemini-0.61.0"
#: Where Gemini CLI keeps a project's chats, below HOME.
_GEMINI_CHATS = Path(".gemini") / "tmp" / "project" / "chats"


def _gemini_chats(folder: Path) -> list[Path]:
    """The chat files below a ``chats/`` folder (a subagent's in its session's
    folder), the goldens left out."""
    return sorted(p for p in folder.rglob("*.jsonl") if not p.name.endswith(".expected.jsonl"))


def _gemini_cases() -> dict[str, list[tuple[Path, Path]]]:
    """Each capture: its files and where each goes below ``.gemini/tmp/project/chats``.
    A kept ``chat_<case>.jsonl`` gets the name Gemini CLI gives a session's file,
    ``session-<its startTime's minute>-<session id[:8]>.jsonl`` (the corpus's names)."""
    cases: dict[str, list[tuple[Path, Path]]] = {}
    for src in sorted(GEMINI_DATA.glob("chat_*.jsonl")):
        if src.name.endswith(".expected.jsonl"):
            continue
        head = orjson.loads(src.read_bytes().split(b"\n", 1)[0])
        minute = str(head["startTime"])[:16].replace(":", "-")
        cases[f"ours/{src.stem}"] = [(src, Path(f"session-{minute}-{head['sessionId'][:8]}.jsonl"))]
    sub = GEMINI_DATA / "subagent" / "chats"
    cases["ours/subagent"] = [(p, p.relative_to(sub)) for p in _gemini_chats(sub)]
    if GEMINI_CORPUS.exists():
        for scenario in sorted(GEMINI_CORPUS.iterdir()):
            chats = scenario / "durable" / _GEMINI_CHATS
            if chats.is_dir() and _gemini_chats(chats):
                cases[f"gemini-0.61.0/{scenario.name}"] = [
                    (p, p.relative_to(chats)) for p in _gemini_chats(chats)
                ]
    return cases


_GEMINI_CASES = _gemini_cases()


def _gemini_time(record: object) -> str | None:
    """When Gemini CLI wrote a chat record: a message's ``timestamp``, a header's
    ``startTime``, a ``$set``'s ``lastUpdated`` (a ``$set`` with none has no time)."""
    if not isinstance(record, dict):
        return None
    update = record.get("$set")
    when = record.get("timestamp") or record.get("startTime")
    if when is None and isinstance(update, dict):
        when = update.get("lastUpdated")
    return normalize_ts(when) if isinstance(when, str) else None


def _gemini_writes(files: list[tuple[Path, Path]], rng: random.Random) -> list[tuple[int, bytes]]:
    """:func:`_pieces` of a case's chat files, by the records' Gemini times."""
    return _pieces([src.read_bytes() for src, _ in files], _gemini_time, rng)


def _last_may_change(src: Path) -> bool:
    """Whether a chat file's last message may still be rewritten: Gemini CLI
    upserts messages by id (a gemini record that calls tools is first written
    without its calls), so the last one is final only once a record other than a
    ``$set`` of ``lastUpdated`` alone follows it."""
    for raw in reversed(src.read_bytes().splitlines()):
        rec = orjson.loads(raw)
        if not isinstance(rec, dict) or "id" in rec:
            return True
        if rec.keys() != {"$set"} or not isinstance(rec["$set"], dict):
            return False
        if not rec["$set"].keys() <= {"lastUpdated"}:
            return False
    return False


def _quiet_violations(
    got: dict[tuple[str, str | None], list[bytes]],
    want: dict[tuple[str, str | None], list[bytes]],
    files: list[tuple[Path, Path]],
) -> list[str]:
    """Quiet, before idle-close: per actor, the daemon's lines are the first of
    convert's, all but a tail of the actor's last run, and only where its file's
    last message may still change (it waits for a next record, or idle-close,
    and the run's end with it: docs/live.md)."""
    open_main = any(_last_may_change(src) for src, rel in files if len(rel.parts) == 1)
    open_nested = any(_last_may_change(src) for src, rel in files if len(rel.parts) > 1)
    found = []
    for key in sorted(set(got) | set(want), key=str):
        have, need = got.get(key, []), want.get(key, [])
        if have != need[: len(have)]:
            found.append(f"{key}: not a prefix: {first_mismatch({key: have}, {key: need})}")
            continue
        missing = need[len(have) :]
        if not missing:
            continue
        if not (open_nested if key[1] else open_main):
            found.append(f"{key}: {len(missing)} lines held though the source ended them")
        inits = [
            i for i, x in enumerate(need) if x.startswith(b'{"type":"system","subtype":"init"')
        ]
        if inits and len(have) < inits[-1]:
            found.append(f"{key}: lines held before its last run ({len(have)} < {inits[-1]})")
    return found


def _gemini_params() -> list[object]:
    params: list[object] = list(_GEMINI_CASES)
    if not GEMINI_CORPUS.exists():
        params.append(
            pytest.param("gemini-0.61.0", marks=pytest.mark.skip(reason=f"{GEMINI_CORPUS} absent"))
        )
    return params


@pytest.mark.parametrize("case", _gemini_params())
def test_tail_equals_convert_on_every_gemini_capture(tmp_path: Path, case: str) -> None:
    files = _GEMINI_CASES[case]
    tmp = tmp_path / ".gemini" / "tmp"
    targets = [tmp_path / _GEMINI_CHATS / rel for _, rel in files]
    rng = random.Random(case)
    writes = _gemini_writes(files, rng)
    (tmp_path / _GEMINI_CHATS).mkdir(parents=True)
    clock = Clock()
    daemon = TailDaemon(
        [tmp],
        OutputSink(tmp_path / "out.jsonl"),
        tmp_path / "state.json",
        clock=fixed,
        now=clock,
        commit_every=0,
        idle_close=600,
    )
    daemon.start()
    changed: set[str] = set()
    for k, piece in writes:
        dst = targets[k]
        if not dst.parent.exists():  # a subagent's folder, made as it begins
            dst.parent.mkdir(parents=True)
            changed.add(str(dst.parent.parent))
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
    out = convert_session_files(targets)[0]
    want = by_actor(out)
    got = by_actor(tail_output(tmp_path / "out.jsonl"))
    # Quiet, no idle-close yet: all but what waits for a last message that may
    # still change.
    assert _quiet_violations(got, want, files) == []
    clock.t += 601
    daemon.tick()
    daemon.stop()
    data = tail_output(tmp_path / "out.jsonl")
    got = by_actor(data)
    assert got == want, first_mismatch(got, want)
    assert framing_violations(data) == []
    assert tree_violations([orjson.loads(x) for x in data.splitlines()]) == []
    # Each file was followed: the main thread, and each subagent as its own actor.
    nested = sum(len(rel.parts) > 1 for _, rel in files)
    assert any(actor is None for _, actor in got)
    assert sum(actor is not None for _, actor in got) == nested
