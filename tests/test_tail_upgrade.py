"""An upgrade goes on from a checkpoint of the first release with JSON state
(testdata/tail/upgrade-v2-first, made by that release's own ``streamv1 tail``):
every run framed, nothing lost, the output a fresh run's where the framing of the
two releases is the same (issue #38 item 4)."""

from __future__ import annotations

import json
import os
import shutil
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson
from conftest import ROOT
from helpers import write_state_doc
from tailing import SID, Clock, by_actor, daemon, expected, tail_output

FIRST = ROOT / "testdata" / "tail" / "upgrade-v2-first"
SOURCES: dict[str, tuple[str, float]] = json.loads((FIRST / "sources.json").read_text())


def _grow(projects: Path) -> list[Path]:
    """Each fixture file written on to its whole source (what happened while the
    daemon was being upgraded); the transcripts, meta files left out."""
    grown = []
    for rel, (src, _) in SOURCES.items():
        target = projects / rel
        data = (ROOT / "testdata" / src).read_bytes()
        target.parent.mkdir(parents=True, exist_ok=True)
        with target.open("ab") as fh:
            fh.write(data[target.stat().st_size if target.exists() else 0 :])
        if rel.endswith(".jsonl"):
            grown.append(target)
    return grown


def _run_to_the_end(tmp: Path, files: list[Path]) -> bytes:
    clock = Clock()
    d = daemon(tmp, clock, idle_close=5)
    d.tick(changed={str(f) for f in files})
    clock.t += 6  # idle: what is still open ends as at a file's end
    d.tick()
    d.stop()
    return tail_output(tmp / "out.jsonl")


def resumed(tmp: Path) -> bytes:
    """Today's daemon on the old release's checkpoint, the files grown meanwhile."""
    shutil.copytree(FIRST / "projects", tmp / "projects")
    shutil.copy(FIRST / "out.jsonl", tmp / "out.jsonl")
    state = json.loads((FIRST / "state.json").read_text().replace("@ROOT@", str(tmp)))
    assert state["version"] == 2 and all("framed" not in m for m in state["files"].values())
    for path, mark in state["files"].items():
        mark["ino"] = os.stat(path).st_ino  # the same files, on this machine
    write_state_doc(tmp / "state.json", state)
    files = _grow(tmp / "projects")
    return _run_to_the_end(tmp, files)


def fresh(tmp: Path) -> bytes:
    (tmp / "projects").mkdir(parents=True)
    return _run_to_the_end(tmp, _grow(tmp / "projects"))


def runs(data: bytes) -> dict[tuple[str, str | None], list[list[dict[str, Any]]]]:
    """Each session's runs, per the actor a run was framed for (the old release
    framed a subagent's file as a run of its own, beside its parent's), in order;
    a line no run is open for is a run of its own without an init."""
    found: dict[tuple[str, str | None], list[list[dict[str, Any]]]] = defaultdict(list)
    open_: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    for raw in data.splitlines():
        line = orjson.loads(raw)
        sid, actor = line["session_id"], line.get("parent_tool_use_id")
        if line["type"] == "system" and line.get("subtype") == "init":
            key = (sid, actor)
            open_[key] = []
            found[key].append(open_[key])
        key = (sid, actor) if (sid, actor) in open_ else (sid, None)
        if key not in open_:
            open_[key] = []
            found[key].append(open_[key])
        open_[key].append(line)
        if line["type"] == "result":
            del open_[key]
    return dict(found)


def test_the_first_json_release_checkpoint_goes_on_with_every_run_framed(tmp_path: Path) -> None:
    """Before: the session whose prompt alone was read at the checkpoint (that
    release held the init back; today's frames it at once) lost its
    ``system/init``, its run's lines written outside any run."""
    data = resumed(tmp_path / "resumed")
    for key, its_runs in runs(data).items():
        for run in its_runs:
            kinds = [(x["type"], x.get("subtype")) for x in run]
            assert kinds[0] == ("system", "init"), (key, kinds)
            assert [k for k in kinds if k[0] == "result"] == [kinds[-1]], (key, kinds)
    # Every message line of every actor is there once, in order (what convert makes).
    files = [tmp_path / "resumed" / "projects" / r for r in SOURCES if r.endswith(".jsonl")]
    want = {k: [x for x in v if b'"type":"result"' not in x] for k, v in expected(files).items()}
    got = by_actor(data)
    for key, lines in want.items():
        messages = [x for x in lines if x.startswith((b'{"type":"assistant"', b'{"type":"user"'))]
        assert [x for x in got[key] if x in messages] == messages, key
    # A session of one file is framed by both releases alike: its lines are those
    # of a daemon that ran from the start, each where it was, byte for byte after
    # the old release's part (whose lines are that release's: it put the model in
    # a durable run's init, which today's leaves out). (The session with a
    # subagent was framed file by file then; its runs open at the checkpoint end
    # there, see test_tail_state.py::test_going_on_from_an_old_release_checkpoint.)
    whole = fresh(tmp_path / "fresh")
    old = (FIRST / "out.jsonl").read_bytes().count(b"\n")
    mine, theirs = _by_session(data), _by_session(whole)
    assert set(mine) == set(theirs)
    for sid in sorted(set(mine) - {SID}):
        assert [_place(x) for x in mine[sid]] == [_place(x) for x in theirs[sid]], sid
        new = [x for at, x in mine[sid] if at >= old]
        assert new == [x for _, x in theirs[sid][len(theirs[sid]) - len(new) :]], sid


def _by_session(data: bytes) -> dict[str, list[tuple[int, bytes]]]:
    """Each session's lines with their place in the output."""
    out: dict[str, list[tuple[int, bytes]]] = defaultdict(list)
    for at, raw in enumerate(data.splitlines()):
        out[orjson.loads(raw)["session_id"]].append((at, raw))
    return dict(out)


def _place(line: tuple[int, bytes]) -> tuple[Any, ...]:
    """What makes a line that line in its run, whichever release encoded it."""
    x = orjson.loads(line[1])
    ext = x.get("extension") or {}
    return (x["type"], x.get("subtype"), x["seq"], x.get("ts"), ext.get("uuid"))
