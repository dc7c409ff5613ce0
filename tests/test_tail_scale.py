"""The daemon's cost follows what changed, not how many files it follows (#23
item 4). No timing here (machines are noisy): what a commit writes, what a round
reads, what a follower holds, counted. bench/tail_scale.py measures the figures at
10,000 files (append → output p99, idle CPU, RSS)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from helpers import state_doc
from tailing import SESSION, Clock, made, tail_output

from streamv1.translator.tail import checkpoint as cp
from streamv1.translator.tail import follower as follower_mod
from streamv1.translator.tail.daemon import TailDaemon

SAMPLE = SESSION / "print_mode_bash.jsonl"
SAMPLE_ID = b"5eccd76e-a2bd-46d3-9ac7-285807858239"


def archive(root: Path, n: int) -> list[Path]:
    paths = []
    for i in range(n):
        folder = root / f"-p{i // 50}"
        folder.mkdir(parents=True, exist_ok=True)
        sid = f"00000000-0000-4000-8000-{i:012d}"
        path = folder / f"{sid}.jsonl"
        path.write_bytes(SAMPLE.read_bytes().replace(SAMPLE_ID, sid.encode()))
        paths.append(path)
    return paths


def turn(path: Path, k: int) -> bytes:
    return (
        b'{"type":"user","sessionId":"%s","uuid":"u-%d","parentUuid":null,'
        b'"timestamp":"2026-11-30T11:00:00.000Z","message":{"role":"user",'
        b'"content":"again %d"}}\n' % (path.stem.encode(), k, k)
    )


def wal_bytes(state: Path) -> int:
    wal = state.with_name(state.name + "-wal")
    return wal.stat().st_size if wal.exists() else 0


def start(tmp: Path, n: int, clock: Clock, **kw: Any) -> tuple[TailDaemon, list[Path]]:
    paths = archive(tmp / "projects", n)
    d = made(tmp, clock, idle_close=0, **kw)
    d.start()
    return d, paths


def test_a_commit_writes_the_files_that_changed_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    commits: list[tuple[int, int]] = []
    real = cp.Store.commit

    def counted(store: cp.Store, head: cp.Checkpoint, changed: Any, gone: Any) -> None:
        commits.append((len(changed), len(set(gone))))
        real(store, head, changed, gone)

    monkeypatch.setattr(cp.Store, "commit", counted)
    clock = Clock()
    d, paths = start(tmp_path, 120, clock)
    assert sum(c[0] for c in commits) == 120  # after the scan: every file's mark, once
    for k, path in enumerate(paths[::40]):
        with path.open("ab") as fh:
            fh.write(turn(path, k))
        clock.t += 1
        d.tick(changed={str(path)})
        assert commits[-1] == (1, 0), commits[-1]
    os.unlink(paths[1])
    clock.t += 1
    d.tick(changed={str(paths[1])})
    assert commits[-1] == (0, 1)
    d.stop()
    saved = state_doc(tmp_path / "state.json")
    assert saved is not None and len(saved["files"]) == 119 and str(paths[1]) not in saved["files"]


@pytest.mark.parametrize("n", [20, 400])
def test_what_an_append_writes_to_the_state_does_not_grow_with_the_files(
    tmp_path: Path, n: int
) -> None:
    """The database's log grows by the pages of one row and the output's: the
    same few KB whether 20 or 400 files are followed (the JSON checkpoint
    rewrote all of them: ~1.3 KB per file per commit)."""
    clock = Clock()
    d, paths = start(tmp_path, n, clock)
    state = tmp_path / "state.json"
    db = sqlite3.connect(state)
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the scan's rows, folded in
    db.close()
    before = wal_bytes(state)
    for k in range(10):
        with paths[k].open("ab") as fh:
            fh.write(turn(paths[k], k))
        clock.t += 1
        d.tick(changed={str(paths[k])})
    per_append = (wal_bytes(state) - before) / 10
    d.stop()
    assert 0 < per_append < 40_000, per_append


def test_a_json_checkpoint_becomes_the_database_in_place(tmp_path: Path) -> None:
    clock = Clock()
    d, _ = start(tmp_path, 5, clock)
    d.stop()
    doc = state_doc(tmp_path / "state.json")
    assert doc is not None
    doc["version"] = 2  # the previous release's document
    for stale in tmp_path.glob("state.json-*"):
        stale.unlink()
    (tmp_path / "state.json").write_text(__import__("json").dumps(doc))
    out_before = tail_output(tmp_path / "out.jsonl")
    d = made(tmp_path, clock, idle_close=0)
    d.start()
    d.stop()
    assert (tmp_path / "state.json").read_bytes().startswith(cp.SQLITE_MAGIC)
    assert (tmp_path / "state.json").stat().st_mode & 0o777 == 0o600
    again = state_doc(tmp_path / "state.json")
    assert again is not None and again["files"] == doc["files"]
    assert tail_output(tmp_path / "out.jsonl") == out_before  # nothing read twice


def test_a_damaged_database_is_one_clear_error(tmp_path: Path) -> None:
    clock = Clock()
    d, _ = start(tmp_path, 3, clock)
    d.stop()
    db = sqlite3.connect(tmp_path / "state.json")
    db.execute("UPDATE files SET mark = '{\"offset\": -3}'")
    db.commit()
    db.close()
    d = made(tmp_path, clock, commit_every=0.5)  # (the daemon's own default, as before)
    with pytest.raises(cp.CheckpointError, match=r"state\.json: damaged checkpoint entry"):
        d.start()
    d.lock.release()
    data = bytearray((tmp_path / "state.json").read_bytes())
    data[100:4000] = b"\xff" * 3900  # its pages torn
    (tmp_path / "state.json").write_bytes(bytes(data))
    with pytest.raises(cp.CheckpointError, match=r"state\.json: "):
        cp.load(tmp_path / "state.json")


def test_every_file_is_polled_once_a_rescan_interval_in_slices(tmp_path: Path) -> None:
    """The net under missed events (every file looked at once a rescan_every),
    spread over the rounds: no round polls all of them."""
    clock = Clock()
    d, paths = start(tmp_path, 90, clock, rescan_every=30.0)
    polled: list[set[str]] = []
    real = follower_mod.FileFollower.poll

    def poll(self: follower_mod.FileFollower) -> follower_mod.Change:
        polled[-1].add(self.path)
        return real(self)

    follower_mod.FileFollower.poll = poll  # type: ignore[method-assign]
    try:
        for _ in range(31):
            polled.append(set())
            clock.t += 1
            d.tick()
    finally:
        follower_mod.FileFollower.poll = real  # type: ignore[method-assign]
    assert set().union(*polled) == {str(p) for p in paths}
    assert max(len(x) for x in polled) <= 90 // 30 + 1
    # A change no event told of is found by the sweep within the interval.
    with paths[7].open("ab") as fh:
        fh.write(turn(paths[7], 7))
    for _ in range(31):
        clock.t += 1
        d.tick()
    d.stop()
    assert b"again 7" in tail_output(tmp_path / "out.jsonl")


def test_a_caught_up_finished_file_holds_no_descriptor(tmp_path: Path) -> None:
    clock = Clock()
    d, paths = start(tmp_path, 30, clock)
    assert sum(f.fd is not None for f in d.followers.values()) == 0
    with paths[3].open("ab") as fh:
        fh.write(turn(paths[3], 3))
    clock.t += 1
    d.tick(changed={str(paths[3])})
    assert [f.path for f in d.followers.values() if f.fd is not None] == [str(paths[3])]
    d.stop()


def test_a_follower_keeps_no_copy_of_the_bytes_it_read(tmp_path: Path) -> None:
    """What a follower holds does not grow with what it read (its tail is a hash)."""
    clock = Clock()
    d, _ = start(tmp_path, 2, clock)
    for f in d.followers.values():
        assert not hasattr(f, "__dict__")  # slots: one follower per file, 10,000 of them
        assert all(not isinstance(getattr(f, a), bytes) for a in type(f).__slots__ if hasattr(f, a))
    d.stop()
