"""The tail daemon's parts on their own, with fake clocks and fake followers
(#23 item 21): the output's retry backoff, the descriptor budget, the sweep and
the unwatched folders' fast poll."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from streamv1.translator.tail import watching
from streamv1.translator.tail.descriptors import FD_IDLE_SECONDS, Descriptors
from streamv1.translator.tail.output import RETRY_CAP, RETRY_FIRST, Backoff, OutputBusy, OutputSink


class Log:
    def __init__(self) -> None:
        self.said: list[tuple[str, str, dict[str, Any]]] = []

    def warning(self, msg: str, **kw: Any) -> None:
        self.said.append(("warning", msg, kw))

    def error(self, msg: str, **kw: Any) -> None:
        self.said.append(("error", msg, kw))


class Fake:
    """A follower as the budget sees it."""

    def __init__(self, path: str, last_data: float, run_open: bool = False) -> None:
        self.path, self.last_data, self._open = path, last_data, run_open
        self.fd: int | None = 3

    @property
    def run_open(self) -> bool:
        return self._open

    def close_fd(self) -> None:
        self.fd = None


def test_backoff_doubles_to_its_cap_and_starts_over() -> None:
    b = Backoff()
    b.begin(100.0)
    assert not b.due(100.0) and b.due(100.0 + RETRY_FIRST)
    waits = []
    now = 100.0
    for _ in range(12):
        b.failed(now)
        waits.append(b.wait)
    assert waits[0] == RETRY_FIRST * 2 and waits[-1] == RETRY_CAP
    assert waits == sorted(waits)
    b.begin(500.0)
    assert b.wait == RETRY_FIRST
    b.now()
    assert b.due(0.0)


def test_quiet_files_give_their_descriptor_back_open_runs_keep_theirs() -> None:
    fds = Descriptors(100, Log())
    quiet, busy, running = Fake("/a", 0.0), Fake("/b", 100.0), Fake("/c", 0.0, run_open=True)
    followers = {f.path: f for f in (quiet, busy, running)}
    for f in followers.values():
        fds.opened(f)
    now = FD_IDLE_SECONDS + 1
    for f in fds.to_watch(followers):
        if not f.run_open:
            fds.quiet(f, now)
    assert quiet.fd is None and busy.fd == 3 and running.fd == 3
    assert [f.path for f in fds.to_watch(followers)] == ["/b", "/c"]  # the order they came in


def test_over_budget_the_least_lately_read_give_back_and_their_runs_are_parked() -> None:
    fds = Descriptors(8, Log())
    followers = {f"/f{i}": Fake(f"/f{i}", float(i), run_open=True) for i in range(12)}
    for f in followers.values():
        fds.opened(f)
    fds.trim()
    held = [p for p, f in followers.items() if f.fd is not None]
    assert held == [f"/f{i}" for i in range(6, 12)]  # down to 3/4 of the budget
    assert fds.parked == {f"/f{i}" for i in range(6)}
    watched = [f.path for f in fds.to_watch(followers)]
    assert watched[:6] == held and sorted(watched[6:]) == watched[6:]  # parked: by name


def test_out_of_descriptors_gives_back_all_but_one_says_it_once_and_halves_the_budget() -> None:
    log = Log()
    fds = Descriptors(1000, log)
    followers = {f"/f{i}": Fake(f"/f{i}", 0.0) for i in range(40)}
    keep = followers["/f3"]
    assert fds.out_of_descriptors(followers, keep=keep)
    assert [f.path for f in followers.values() if f.fd is not None] == ["/f3"]
    assert fds.budget == 19 and fds.exhausted == 1
    assert not fds.out_of_descriptors(followers, keep=keep)  # nothing left to free
    assert fds.exhausted == 2 and len(log.said) == 1 and fds.budget == 16


def test_the_sweep_takes_each_file_once_an_interval_in_slices() -> None:
    followed = {f"/f{i}": None for i in range(100)}
    sweep = watching.Sweep(0.0)
    seen: list[str] = []
    sizes = []
    for t in range(1, 31):
        got = sweep.take(float(t), followed, 30.0)
        sizes.append(len(got))
        seen += got
    assert sorted(seen) == sorted(followed) and len(seen) == len(set(seen))
    assert max(sizes) <= 4
    assert sweep.take(30.0, followed, 30.0) == []  # no time passed: nothing due
    assert len(sweep.take(100.0, followed, 30.0)) == 100  # long quiet: the lot (one pass)
    del followed["/f5"]
    assert "/f5" not in sweep.take(200.0, followed, 30.0)


def test_unwatched_folders_are_said_once_and_polled_fast(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    b.mkdir()
    st = os.stat(a)
    monkeypatch.setattr(watching.watches, "watched", lambda: {(st.st_dev, st.st_ino)})
    monkeypatch.setattr(watching.watches, "max_watches", lambda: 8192)
    log = Log()
    un = watching.Unwatched(log)
    un.check([str(a), str(b), str(b)])
    assert un.folders == [str(b)]
    un.check([str(a), str(b)])
    assert len(log.said) == 1 and "inotify watches ran out" in log.said[0][1]
    assert log.said[0][2]["max_user_watches"] == 8192 and log.said[0][2]["folders"] == 1
    assert un.due(10.0) == [str(b)]
    assert un.due(10.0 + watching.FAST_POLL / 2) == []
    assert un.due(10.0 + watching.FAST_POLL) == [str(b)]
    monkeypatch.setattr(watching.watches, "watched", lambda: None)  # not known: as it was
    un.check([str(b)])
    assert un.folders == [str(b)]


def test_one_writer_per_output_file(tmp_path: Path) -> None:
    first = OutputSink(tmp_path / "out.jsonl")
    with pytest.raises(OutputBusy, match="another streamv1 tail writes this output"):
        OutputSink(tmp_path / "out.jsonl")
    first.close()
    OutputSink(tmp_path / "out.jsonl").close()


def test_a_failed_write_leaves_whole_lines_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sink = OutputSink(tmp_path / "out.jsonl")
    sink.write(b'{"a":1}\n')
    real = os.write
    calls = []

    def half(fd: int, data: Any) -> int:
        calls.append(1)
        if len(calls) == 1:
            return real(fd, bytes(data[:3]))
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "write", half)
    with pytest.raises(OSError):
        sink.write(b'{"b":2}\n')
    monkeypatch.undo()
    assert (tmp_path / "out.jsonl").read_bytes() == b'{"a":1}\n' and sink.length == 8
    sink.write(b'{"c":3}\n')
    assert (tmp_path / "out.jsonl").read_bytes() == b'{"a":1}\n{"c":3}\n'
    sink.close()


def test_the_default_job_keeps_its_earlier_state_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """tail with no folder followed Claude Code's projects alone before #24, its
    state file keyed by that folder and the output: now that it follows every
    agent's home, it keeps that state file (an upgrade goes on from its
    checkpoint, not from every file's start). A job naming its folders keys by all."""
    import hashlib

    from streamv1.translator.tail import serve

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(tmp_path / "claude"))
    out = tmp_path / "out.jsonl"
    roots = serve.watched_roots([])
    assert roots[0] == (tmp_path / "claude" / "projects").resolve()
    old_key = "\n".join([str(roots[0]), str(out.resolve())])
    old = (
        tmp_path
        / "state"
        / "streamv1"
        / (f"tail-{hashlib.sha256(old_key.encode()).hexdigest()[:12]}.json")
    )
    assert serve.default_state_path(roots, out, defaults=True) == old
    if len(roots) > 1:
        assert serve.default_state_path(roots, out) != old
