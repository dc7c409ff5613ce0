"""The tail daemon's state through crashes, upgrades and every file event: one
deterministic test per way it used to lose or double lines (issue #13)."""

from __future__ import annotations

import errno
import json
import os
import resource
import shutil
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT
from helpers import convert_file, framing_violations, state_doc, write_state_doc
from tailing import (
    LAYOUT,
    SESSION,
    SID,
    Clock,
    by_actor,
    daemon,
    expected,
    first_mismatch,
    fixed,
    made,
    tail_output,
)

from streamv1.translator.reading import discover
from streamv1.translator.tail import checkpoint as cp
from streamv1.translator.tail import descriptors as descriptors_mod
from streamv1.translator.tail import inputs as inputs_mod
from streamv1.translator.tail import output as output_mod
from streamv1.translator.tail.daemon import TailDaemon
from streamv1.translator.tail.output import OutputSink

AGENT = "agent-a4ecf0489c6080106"
TOOL = "toolu_01Ol0AGLKlFXti4j8cFdnOcj"
BASH = SESSION / "print_mode_bash.jsonl"
BASH_NAME = "5eccd76e-a2bd-46d3-9ac7-285807858239.jsonl"


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def layout(proj: Path, main_lines: int | None = None, meta: bool = True) -> tuple[Path, Path]:
    """The session with a subagent under ``proj``: (main file, agent file)."""
    agents = proj / SID / "subagents"
    agents.mkdir(parents=True, exist_ok=True)
    main = proj / f"{SID}.jsonl"
    main.write_bytes(b"".join(lines(LAYOUT / f"{SID}.jsonl")[:main_lines]))
    src = LAYOUT / SID / "subagents"
    shutil.copy(src / f"{AGENT}.jsonl", agents / f"{AGENT}.jsonl")
    if meta:
        shutil.copy(src / f"{AGENT}.meta.json", agents / f"{AGENT}.meta.json")
    return main, agents / f"{AGENT}.jsonl"


def same_as_convert(out: Path, files: list[Path]) -> None:
    data = tail_output(out)
    got, want = by_actor(data), expected(files)
    assert got == want, first_mismatch(got, want)
    assert framing_violations(data) == []


# -- 1. killed before the first checkpoint --------------------------------------------------


class Killed(BaseException):
    """Stands for SIGKILL inside a test: nothing after it runs, no stop()."""


def test_killed_before_the_first_checkpoint_repeats_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    (proj / BASH_NAME).write_bytes(BASH.read_bytes())
    out = tmp_path / "out.jsonl"
    real_commit = cp.Store.commit

    def commit_then_die(store: cp.Store, head: cp.Checkpoint, changed: Any, gone: Any) -> None:
        if out.exists() and out.stat().st_size > 0:
            raise Killed  # the first checkpoint after lines were written: never made
        real_commit(store, head, changed, gone)

    monkeypatch.setattr(cp.Store, "commit", commit_then_die)
    clock = Clock()
    doomed = made(tmp_path, clock, sink=OutputSink(out), idle_close=0)
    with pytest.raises(Killed):
        doomed.start()
    lock = getattr(doomed, "lock", None)
    if lock is not None:
        lock.release()  # what the kernel does for a killed process
    doomed.sink.close()
    doomed.store.close()
    assert out.stat().st_size > 0  # lines were written before the kill
    monkeypatch.setattr(cp.Store, "commit", real_commit)
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    assert tail_output(out) == convert_file(proj / BASH_NAME, "claude-session")[0]


@pytest.mark.parametrize("at", ["rows written", "committed"])
def test_killed_while_writing_a_checkpoint_repeats_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at: str
) -> None:
    """A kill inside the checkpoint's transaction, its rows written but not
    committed (the old checkpoint stands), or just after the commit (the new one
    does): either is whole."""
    proj = tmp_path / "projects" / "p"
    main, agent = layout(proj, main_lines=10)
    out = tmp_path / "out.jsonl"
    clock = Clock()
    doomed = made(tmp_path, clock, sink=OutputSink(out), idle_close=5)
    doomed.start()
    real_write = cp.Store._write

    def write_then_die(
        store: cp.Store, db: Any, head: cp.Checkpoint, changed: Any, gone: Any
    ) -> None:
        if at == "committed":
            real_write(store, db, head, changed, gone)
            raise Killed
        # The rows, then the kill before COMMIT: the process is gone, and with it the
        # transaction (what closing the connection unfinished does here).
        db.execute("BEGIN IMMEDIATE")
        db.execute("DELETE FROM files")
        db.execute("DELETE FROM meta")
        raise Killed

    monkeypatch.setattr(cp.Store, "_write", write_then_die)
    with main.open("ab") as fh:
        fh.write(b"".join(lines(LAYOUT / f"{SID}.jsonl")[10:]))
    with pytest.raises(Killed):
        doomed.tick(changed={str(main)})
    doomed.lock.release()  # what the kernel does for a killed process
    doomed.sink.close()
    doomed.store.close()  # (the kernel's part: its uncommitted transaction is gone)
    monkeypatch.setattr(cp.Store, "_write", real_write)
    d = daemon(tmp_path, clock, idle_close=5)
    clock.t += 6
    d.tick()
    d.stop()
    same_as_convert(out, [main, agent])


# -- 2. truncated and rewritten in place, same head, grown past the old offset ---------------


def test_rewritten_in_place_past_the_old_offset_is_read_from_its_start(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    target = proj / BASH_NAME
    src = lines(BASH)
    first = b"".join(src[:12])
    target.write_bytes(first)
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    d.tick(changed={str(target)})
    before = tail_output(tmp_path / "out.jsonl")
    # Same inode, same first KiB (and more), other lines after: longer than before,
    # with the old offset falling inside a line.
    rewrite = b"".join(src[:4] + src[6:])
    assert rewrite[:1024] == first[:1024] and len(rewrite) > len(first)
    with target.open("r+b") as fh:
        fh.truncate(0)
        fh.write(rewrite)
    d.tick(changed={str(target)})
    d.stop()
    after = tail_output(tmp_path / "out.jsonl")[len(before) :]
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(rewrite)
    assert after.endswith(convert_file(whole, "claude-session")[0])
    assert b'"subtype":"error"' not in after
    assert framing_violations(tail_output(tmp_path / "out.jsonl")) == []


# -- 3. deleted or replaced while the daemon is down ----------------------------------------


@pytest.mark.parametrize("how", ["deleted", "replaced", "truncated"])
def test_a_file_gone_while_down_gets_its_run_closed(tmp_path: Path, how: str) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    target = proj / BASH_NAME
    partial = b"".join(lines(BASH)[:10])
    target.write_bytes(partial)
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    assert b'"type":"result"' not in tail_output(tmp_path / "out.jsonl")
    other = (SESSION / "thinking.jsonl").read_bytes()
    if how == "deleted":
        target.unlink()
    elif how == "replaced":
        (proj / "new").write_bytes(other)
        os.replace(proj / "new", target)
    else:
        with target.open("r+b") as fh:
            fh.truncate(0)
            fh.write(other[:100])  # same inode, shorter than the offset
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    was = tmp_path / "was.jsonl"
    was.write_bytes(partial)
    got = tail_output(tmp_path / "out.jsonl")
    # The old run ends as batch conversion ends the file it read (at its end).
    assert got.startswith(convert_file(was, "claude-session")[0])
    if how == "replaced":
        assert got == convert_file(was, "claude-session")[0] + convert_file(target)[0]
    assert framing_violations(got) == []
    if how == "deleted":
        assert state_doc(tmp_path / "state.json")["files"] == {}


# -- 4. out of file descriptors -------------------------------------------------------------


def _limit_fds(n: int) -> Any:
    def set_limit() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (n, n))

    return set_limit


def _sessions(proj: Path, n: int) -> list[Path]:
    """``n`` distinct sessions (the bash session under new ids)."""
    data = BASH.read_bytes()
    old = BASH_NAME[: -len(".jsonl")].encode()
    out = []
    for k in range(n):
        sid = str(uuid.UUID(int=k + 1)).encode()
        folder = proj / f"p{k % 7}"
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{sid.decode()}.jsonl"
        path.write_bytes(data.replace(old, sid))
        out.append(path)
    return out


def test_out_of_descriptors_is_not_a_file_gone(streamv1_bin: str, tmp_path: Path) -> None:
    """More files than ``ulimit -n`` with ``--from start``: every file once, whole."""
    files = _sessions(tmp_path / "projects", 150)
    out = tmp_path / "out.jsonl"
    want = expected(files)
    size = sum(len(b"".join(v)) for v in want.values())
    proc = subprocess.Popen(
        [
            streamv1_bin,
            "tail",
            str(tmp_path / "projects"),
            "--output",
            str(out),
            "--state",
            str(tmp_path / "state.json"),
            "--no-ingest",
            "--idle-close",
            "2",
            "--rescan-every",
            "1",
            "--log-format",
            "json",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        preexec_fn=_limit_fds(40),
    )
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if out.exists() and len(tail_output(out)) >= size:
            break
        time.sleep(0.2)
    time.sleep(1.5)  # anything more (a repeat) would come now
    proc.terminate()
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 0, err.decode()[-2000:]
    assert b"file gone" not in err
    assert by_actor(tail_output(out)) == want


def test_emfile_from_open_backs_off_and_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """In process: files read part way, their descriptors given back (idle), then
    open() fails with EMFILE for a while as they grow: nothing lost or repeated."""
    files = _sessions(tmp_path / "projects", 6)
    whole = {f: f.read_bytes() for f in files}
    for f in files:
        f.write_bytes(b"".join(lines(f)[:14]))
    failing = {"left": 0}
    real_open = os.open

    def flaky_open(path: Any, flags: int, *args: Any) -> int:
        if "projects" in str(path) and failing["left"] > 0:
            failing["left"] -= 1
            raise OSError(errno.EMFILE, "Too many open files")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", flaky_open)
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    clock.t += descriptors_mod.FD_IDLE_SECONDS + 1
    d.tick()  # idle: every descriptor given back
    for f, data in whole.items():
        f.write_bytes(data)
    failing["left"] = 9
    for _ in range(12):
        d.tick(rescan=True)
    d.stop()
    assert failing["left"] == 0
    assert by_actor(tail_output(tmp_path / "out.jsonl")) == expected(files)


# -- 6. a subagent without its sidecar finds its parent as the parent grows -----------------


def test_a_subagent_without_sidecar_is_linked_when_its_parent_names_it(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    main, agent = layout(proj, main_lines=17, meta=False)  # no tool_result for it yet
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=600)
    d.tick()
    with main.open("ab") as fh:
        fh.write(b"".join(lines(LAYOUT / f"{SID}.jsonl")[17:]))
    d.tick(changed={str(main)})
    got = by_actor(tail_output(tmp_path / "out.jsonl"))
    assert (SID, TOOL) in got  # linked, and ended, without waiting for idle-close
    clock.t += 601
    d.tick()
    d.stop()
    same_as_convert(tmp_path / "out.jsonl", [main, agent])


# -- 7. output disk full ---------------------------------------------------------------------


@pytest.fixture
def small_disk(tmp_path: Path) -> Any:
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("needs root to mount a small tmpfs (the disk-full case)")
    mnt = tmp_path / "disk"
    mnt.mkdir()
    proc = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(mnt)],
        capture_output=True,
        check=False,
    )
    if proc.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {proc.stderr.decode().strip()}")
    yield mnt
    subprocess.run(["umount", "-l", str(mnt)], check=False)


def _fill(mnt: Path, leave: int) -> Path:
    """Fill the disk but ``leave`` bytes (or so: tmpfs counts whole pages)."""
    filler = mnt / "filler"
    free = os.statvfs(mnt).f_bavail * os.statvfs(mnt).f_frsize
    filler.write_bytes(b"\0" * max(0, free - leave))
    return filler


@pytest.mark.parametrize("restart", [False, True], ids=["in-process", "restart"])
def test_disk_full_loses_nothing_and_recovers(
    small_disk: Path, tmp_path: Path, restart: bool
) -> None:
    proj = tmp_path / "projects" / "p"
    main, agent = layout(proj)
    out = small_disk / "out.jsonl"
    state = tmp_path / "state.json"
    filler = _fill(small_disk, 8192)
    clock = Clock()

    def start() -> TailDaemon:
        d = made(tmp_path, clock, sink=OutputSink(out), state=state, idle_close=5)
        d.start()
        return d

    d = start()
    assert d._blocked is not None  # the output filled up part way
    held = out.read_bytes()
    assert not held or held.endswith(b"\n")  # whole lines: the failed write was cut back
    saved = cp.load(state)
    assert saved is not None and saved.output_length is not None
    assert saved.output_length <= len(held)  # the checkpoint never ahead of the output
    if restart:
        d.stop()
        assert d.failed  # exits non-zero: systemd restarts it
        filler.unlink()
        d = start()
    else:
        clock.t += 1
        d.tick()
        assert d._blocked is not None  # still full: held, retried with backoff
        filler.unlink()
        clock.t += 60
        d.tick()
        assert d._blocked is None
    clock.t += 6
    d.tick()
    d.stop()
    assert not d.failed
    same_as_convert(out, [main, agent])


# -- 8. watching starts before the first scan ------------------------------------------------


def test_a_write_during_the_first_scan_is_seen_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    late = proj / BASH_NAME
    real_walk = inputs_mod.walk_paths

    def walk_then_write(root: str, follow_symlinks: bool = False, *rest: Any) -> list[str]:
        found = real_walk(root, follow_symlinks, *rest)
        if not late.exists():
            late.write_bytes(BASH.read_bytes())  # written just after the scan looked
        return found

    monkeypatch.setattr(inputs_mod, "walk_paths", walk_then_write)
    stop = threading.Event()
    d = TailDaemon(
        [tmp_path / "projects"],
        OutputSink(tmp_path / "out.jsonl"),
        tmp_path / "state.json",
        clock=fixed,
        rescan_every=3600,
        idle_close=0,
    )
    d.start(stop)
    loop = threading.Thread(target=d.run, args=(stop,))
    loop.start()
    deadline = time.monotonic() + 10
    want = convert_file(late, "claude-session")[0]
    while time.monotonic() < deadline and tail_output(tmp_path / "out.jsonl") != want:
        time.sleep(0.05)
    stop.set()
    d.wake()
    loop.join()
    d.stop()
    assert tail_output(tmp_path / "out.jsonl") == want


# -- 9. two daemons on one state file ----------------------------------------------------------


def test_a_second_daemon_on_the_same_state_says_so_and_exits_1(
    streamv1_bin: str, tmp_path: Path
) -> None:
    (tmp_path / "projects").mkdir()
    args = [
        streamv1_bin,
        "tail",
        str(tmp_path / "projects"),
        "--state",
        str(tmp_path / "state.json"),
        "--no-ingest",
        "--log-format",
        "json",
    ]
    first = subprocess.Popen(
        [*args, "--output", str(tmp_path / "a.jsonl")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 20
        while not (tmp_path / "state.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        second = subprocess.run(
            [*args, "--output", str(tmp_path / "b.jsonl")],
            capture_output=True,
            timeout=20,
            check=False,
        )
    finally:
        first.terminate()
        assert first.wait(timeout=20) == 0
    assert second.returncode == 1
    err = second.stderr.decode().strip().splitlines()
    assert len(err) == 1 and "another streamv1 tail uses this state file" in err[0]
    assert f"pid {first.pid}" in err[0]
    assert "Traceback" not in second.stderr.decode()


# -- 10. a subagent's run ends with its parent's tool_result -----------------------------------


def test_a_subagent_run_ends_when_its_parent_answers(tmp_path: Path) -> None:
    """A subagent's lines are lines of its parent's run; the parent's answer to it
    (its task_notification, then the tool result) and the run's end come as batch
    conversion writes them, with no idle-close."""
    proj = tmp_path / "projects" / "p"
    main, agent = layout(proj, main_lines=17)
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=600)
    d.tick()
    got = by_actor(tail_output(tmp_path / "out.jsonl"))
    assert b'"type":"result"' not in b"".join(got[(SID, None)])  # the parent's run is open
    assert not any(b'"subtype":"init"' in x for x in got[(SID, TOOL)])  # no run of its own
    with main.open("ab") as fh:
        fh.write(b"".join(lines(LAYOUT / f"{SID}.jsonl")[17:]))
    d.tick(changed={str(main)})
    same_as_convert(tmp_path / "out.jsonl", [main, agent])
    d.stop()


# -- 11. one rule for which files count -------------------------------------------------------


def test_the_daemon_and_convert_take_the_same_files(tmp_path: Path) -> None:
    root = tmp_path / "projects"
    names = [
        "p/a.jsonl",
        "p/workflows/w.jsonl",
        "p/s/subagents/agent-1.jsonl",
        "p/s/subagents/workflows/agent-2.jsonl",
        "p/tool-results/t.jsonl",
        "p/journal.jsonl",
        "p/x.json",
        "p/.git/g.jsonl",
        "workflows/a/b.jsonl",
    ]
    for name in names:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_bytes(BASH.read_bytes())
    listed = set(discover.walk_paths(str(root)))
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    for name in names:
        path = str(root / name)
        assert d._wanted(path) == (path in listed), name
    d.tick(changed={str(root / n) for n in names})
    assert set(d.followers) == listed
    d.stop()
    assert listed == {
        str(root / n)
        for n in (
            "p/a.jsonl",
            "p/s/subagents/agent-1.jsonl",
            "p/s/subagents/workflows/agent-2.jsonl",
        )
    }


# -- found in review -----------------------------------------------------------------------


def test_a_subagent_whose_parent_never_names_it_comes_out_at_idle_close(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    main, agent = layout(proj, main_lines=17, meta=False)  # the parent never answers
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=30)
    clock.t += 31
    d.tick()
    d.stop()
    same_as_convert(tmp_path / "out.jsonl", [main, agent])


def test_a_file_deferred_for_descriptors_keeps_its_mark(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _sessions(tmp_path / "projects", 4)
    for f in files:
        f.write_bytes(b"".join(lines(f)[:14]))
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    before = tail_output(tmp_path / "out.jsonl")
    real_open = os.open

    def no_fds(path: Any, flags: int, *args: Any) -> int:
        if "projects" in str(path) and str(path).endswith(".jsonl"):
            raise OSError(errno.EMFILE, "Too many open files")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", no_fds)
    d = daemon(tmp_path, clock, idle_close=0)  # every file deferred
    d.stop()
    monkeypatch.setattr(os, "open", real_open)
    state = state_doc(tmp_path / "state.json")
    assert set(state["files"]) == {str(f) for f in files}
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    assert tail_output(tmp_path / "out.jsonl") == before


def test_an_output_truncated_by_someone_else_is_appended_to_not_padded(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    target = proj / BASH_NAME
    src = lines(BASH)
    target.write_bytes(b"".join(src[:14]))
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    out = tmp_path / "out.jsonl"
    with out.open("r+b") as fh:
        fh.truncate(0)  # logrotate's copytruncate
    with target.open("ab") as fh:
        fh.write(b"".join(src[14:]))
    d.tick(changed={str(target)})
    d.stop()
    data = out.read_bytes()
    assert data and b"\0" not in data and data.startswith(b'{"type"')


def test_runs_of_followers_over_the_descriptor_budget_still_idle_close(tmp_path: Path) -> None:
    files = _sessions(tmp_path / "projects", 40)
    for f in files:
        f.write_bytes(b"".join(lines(f)[:14]))  # every run open
    clock = Clock()
    d = made(tmp_path, clock, idle_close=60, max_fds=16)
    d.start()
    assert sum(f.fd is not None for f in d.followers.values()) <= 16
    clock.t += 61
    d.tick()
    d.stop()
    out = tail_output(tmp_path / "out.jsonl")
    assert out.count(b'"type":"result"') == 40
    assert framing_violations(out) == []


def test_a_watched_folder_missing_at_restart_keeps_its_marks(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    (proj / BASH_NAME).write_bytes(b"".join(lines(BASH)[:14]))
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    before = tail_output(tmp_path / "out.jsonl")
    (tmp_path / "projects").rename(tmp_path / "away")  # an unmounted disk, say
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    (tmp_path / "away").rename(tmp_path / "projects")
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    assert tail_output(tmp_path / "out.jsonl") == before


def test_no_file_watching_is_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import watchfiles._rust_notify as rn

    def broken(*args: Any) -> None:
        raise rn.WatchfilesRustInternalError("OS file watch limit reached.")

    monkeypatch.setattr(rn, "RustNotify", broken)
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    (proj / BASH_NAME).write_bytes(BASH.read_bytes())
    d = TailDaemon(
        [tmp_path / "projects"],
        OutputSink(tmp_path / "out.jsonl"),
        tmp_path / "state.json",
        clock=fixed,
        idle_close=0,
    )
    d.start(threading.Event())  # logs, goes on with rescans
    d.stop()
    assert (
        tail_output(tmp_path / "out.jsonl") == convert_file(proj / BASH_NAME, "claude-session")[0]
    )


def test_a_file_no_source_reads_is_left_alone(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    (proj / "notes.jsonl").write_bytes(b'{"x": 1}\n' * 60)
    (proj / BASH_NAME).write_bytes(BASH.read_bytes())
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    with (proj / "notes.jsonl").open("ab") as fh:
        fh.write(b'{"x": 2}\n')
    d.tick(rescan=True)
    d.stop()
    assert (
        tail_output(tmp_path / "out.jsonl") == convert_file(proj / BASH_NAME, "claude-session")[0]
    )


def test_a_failed_fsync_stops_without_a_checkpoint_past_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    target = proj / BASH_NAME
    src = lines(BASH)
    target.write_bytes(b"".join(src[:14]))
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    saved = state_doc(tmp_path / "state.json")

    def eio(fd: int) -> None:
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(output_mod.os, "fsync", eio)
    with target.open("ab") as fh:
        fh.write(b"".join(src[14:]))
    with pytest.raises(output_mod.OutputFailed):
        d.tick(changed={str(target)})
    d.stop()
    assert d.failed and state_doc(tmp_path / "state.json") == saved
    monkeypatch.undo()
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    assert tail_output(tmp_path / "out.jsonl") == convert_file(target, "claude-session")[0]


def test_a_prompt_never_answered_is_ended_at_idle_close(tmp_path: Path) -> None:
    """The CLI killed right after the prompt: its run is held for the model's first
    record; idle-close ends it as batch conversion ends the file."""
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    target = proj / BASH_NAME
    target.write_bytes(b"".join(lines(BASH)[:5]))
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=30)
    clock.t += 31
    d.tick()
    d.stop()
    assert tail_output(tmp_path / "out.jsonl") == convert_file(target, "claude-session")[0]


def test_copytruncate_then_a_crash_never_cuts_a_line(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    target = proj / BASH_NAME
    src = lines(BASH)
    target.write_bytes(b"".join(src[:14]))
    out = tmp_path / "out.jsonl"
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    copied = tail_output(out)  # what copytruncate's copy keeps
    doomed = made(tmp_path, clock, sink=OutputSink(out), commit_every=1e9, idle_close=0)
    doomed.start()
    with out.open("r+b") as fh:
        fh.truncate(0)  # rotated
    with target.open("ab") as fh:
        fh.write(b"".join(src[14:]))
    doomed.tick(changed={str(target)})  # more than the old length, no checkpoint since
    doomed.lock.release()  # killed: the kernel closes its files (and their locks)
    doomed.sink.close()
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    for raw in out.read_bytes().splitlines():
        json.loads(raw)  # whole lines only
    # The copy and the file the daemon went on in hold, together, what convert makes
    # of the session: the lines the killed daemon wrote past its checkpoint were cut
    # back whole and made again, none lost, none twice.
    now = tail_output(out)
    assert now, "the lines after the truncation are in the output"
    got, want = by_actor(copied + now), expected([target])
    assert got == want, first_mismatch(got, want)


def test_an_empty_mount_point_keeps_the_marks(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    (proj / BASH_NAME).write_bytes(b"".join(lines(BASH)[:14]))
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    before = tail_output(tmp_path / "out.jsonl")
    (tmp_path / "projects").rename(tmp_path / "disk")
    (tmp_path / "projects").mkdir()  # the mount point, nothing mounted on it
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    (tmp_path / "projects").rmdir()
    (tmp_path / "disk").rename(tmp_path / "projects")
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    assert tail_output(tmp_path / "out.jsonl") == before


def test_from_end_then_a_replay_drops_only_what_it_wrote(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    target = proj / BASH_NAME
    src = lines(BASH)
    target.write_bytes(b"".join(src[:12]))  # there before: skipped
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0, start_at_end=True)
    with target.open("ab") as fh:
        fh.write(b"".join(src[12:16]))
    d.tick(changed={str(target)})
    d.stop()
    state = state_doc(tmp_path / "state.json")
    for mark in state["files"].values():
        mark["state"]["framer"]["version"] = 999  # a later release's layout: replay
    write_state_doc(tmp_path / "state.json", state)
    d = daemon(tmp_path, clock, idle_close=0, start_at_end=True)
    with target.open("ab") as fh:
        fh.write(b"".join(src[16:]))
    d.tick(changed={str(target)})
    d.stop()
    got = tail_output(tmp_path / "out.jsonl")
    # The same writes, one daemon throughout: what the restart must not change.
    (tmp_path / "again").mkdir()
    (tmp_path / "again" / "projects" / "p").mkdir(parents=True)
    again = tmp_path / "again" / "projects" / "p" / BASH_NAME
    again.write_bytes(b"".join(src[:12]))
    d = daemon(tmp_path / "again", clock, idle_close=0, start_at_end=True)
    with again.open("ab") as fh:
        fh.write(b"".join(src[12:16]))
    d.tick(changed={str(again)})
    with again.open("ab") as fh:
        fh.write(b"".join(src[16:]))
    d.tick(changed={str(again)})
    d.stop()
    assert got == tail_output(tmp_path / "again" / "out.jsonl")


def test_a_run_a_replay_releases_is_written(tmp_path: Path) -> None:
    """Held at the checkpoint (a subagent waiting for its parent to name it), the
    parent answering while the daemon is down, then an upgrade (replay): the run
    comes out whole, linked."""
    proj = tmp_path / "projects" / "p"
    main, agent = layout(proj, main_lines=17, meta=False)
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=600)
    d.stop()
    with main.open("ab") as fh:
        fh.write(b"".join(lines(LAYOUT / f"{SID}.jsonl")[17:]))
    state = state_doc(tmp_path / "state.json")
    for mark in state["files"].values():
        mark["state"]["adapter"]["version"] = 999
    write_state_doc(tmp_path / "state.json", state)
    d = daemon(tmp_path, clock, idle_close=600)
    d.stop()
    got = by_actor(tail_output(tmp_path / "out.jsonl"))
    assert got[(SID, TOOL)] == expected([main, agent])[(SID, TOOL)]


# -- state as data: versioned, replayed when unknown, upgraded from the old release -----------


def test_a_state_of_an_unknown_version_is_replayed_not_reread(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    main, agent = layout(proj, main_lines=12)
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    state = state_doc(tmp_path / "state.json")
    for mark in state["files"].values():
        mark["state"]["adapter"]["version"] = 999  # written by a later release
    write_state_doc(tmp_path / "state.json", state)
    d = daemon(tmp_path, clock, idle_close=5)
    with main.open("ab") as fh:
        fh.write(b"".join(lines(LAYOUT / f"{SID}.jsonl")[12:]))
    d.tick(changed={str(main)})
    clock.t += 6
    d.tick()
    d.stop()
    same_as_convert(tmp_path / "out.jsonl", [main, agent])


def test_a_crafted_state_builds_nothing_and_is_replayed(tmp_path: Path) -> None:
    """A state naming a type that is not ours (what a pickle would have run), of
    the wrong shape, or nested past sense: refused, the file replayed, nothing
    lost or doubled."""
    proj = tmp_path / "projects" / "p"
    main, agent = layout(proj, main_lines=12)
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    d.stop()
    state = state_doc(tmp_path / "state.json")
    for k, mark in enumerate(state["files"].values()):
        mark["state"]["adapter"]["state"] = (
            {"$o": "os.system", "i": 0, "f": {}} if k % 2 == 0 else {"$t": [1]}
        )
        mark["state"]["held"] = "DEEP"
    deep = "[" * 600 + "]" * 600  # JSON reads it; the state loader refuses it
    write_state_doc(tmp_path / "state.json", state)
    (tmp_path / "state.json").write_text(json.dumps(state).replace('"DEEP"', deep))
    d = daemon(tmp_path, clock, idle_close=5)
    with main.open("ab") as fh:
        fh.write(b"".join(lines(LAYOUT / f"{SID}.jsonl")[12:]))
    d.tick(changed={str(main)})
    clock.t += 6
    d.tick()
    d.stop()
    same_as_convert(tmp_path / "out.jsonl", [main, agent])


def test_a_damaged_checkpoint_is_one_line_and_exit_1(streamv1_bin: str, tmp_path: Path) -> None:
    (tmp_path / "projects").mkdir()
    state = tmp_path / "state.json"
    for bad in (
        "{not json",
        '{"version": 9}',
        '{"version": 2, "files": {"x": {"offset": "a"}}}',
        "[" * 100_000,
    ):
        state.write_text(bad)
        proc = subprocess.run(
            [
                streamv1_bin,
                "tail",
                str(tmp_path / "projects"),
                "--state",
                str(state),
                "--output",
                str(tmp_path / "out.jsonl"),
                "--no-ingest",
                "--log-format",
                "json",
            ],
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert proc.returncode == 1, bad
        err = proc.stderr.decode().strip().splitlines()
        assert len(err) == 1 and str(state) in err[0] and "Traceback" not in err[0], err


def test_idle_closes_are_replayed_where_they_happened(tmp_path: Path) -> None:
    """A run the daemon closed for idleness, then a file that went on: a replay
    ends that run at the same place, so the output goes on without a seam."""
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    target = proj / BASH_NAME
    src = lines(BASH)
    target.write_bytes(b"".join(src[:14]))
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=5)
    assert d.followers[str(target)].run_open
    clock.t += 6
    d.tick()  # idle: closed at line 14
    with target.open("ab") as fh:
        fh.write(b"".join(src[14:18]))
    d.tick(changed={str(target)})
    d.stop()
    state = state_doc(tmp_path / "state.json")
    for mark in state["files"].values():
        assert mark["closes"]
        mark["state"] = None  # as from the old release: replay
    write_state_doc(tmp_path / "state.json", state)
    d = daemon(tmp_path, clock, idle_close=5)
    with target.open("ab") as fh:
        fh.write(b"".join(src[18:]))
    d.tick(changed={str(target)})
    clock.t += 6
    d.tick()
    d.stop()
    assert framing_violations(tail_output(tmp_path / "out.jsonl")) == []
    assert tail_output(tmp_path / "out.jsonl").count(b'"subtype":"init"') == 2


@pytest.mark.parametrize("release", ["upgrade-v1", "upgrade-v2"])
def test_going_on_from_an_old_release_checkpoint(tmp_path: Path, release: str) -> None:
    """Committed checkpoints of earlier releases (v1: pickled state, never loaded,
    replayed; v2: JSON state), runs open mid-turn, a subagent's too: today's daemon
    goes on with nothing lost or doubled."""
    old = ROOT / "testdata" / "tail" / release
    shutil.copytree(old / "projects", tmp_path / "projects")
    shutil.copy(old / "out.jsonl", tmp_path / "out.jsonl")
    raw = (old / "state.json").read_text().replace("@ROOT@", str(tmp_path))
    state = json.loads(raw)
    assert state["version"] == int(release[-1])
    for path, mark in state["files"].items():
        mark["ino"] = os.stat(path).st_ino  # the same files, on this machine
    if state["output"].get("ino") is not None:
        state["output"]["ino"] = (tmp_path / "out.jsonl").stat().st_ino
    write_state_doc(tmp_path / "state.json", state)
    full = {
        f"p/{SID}.jsonl": LAYOUT / f"{SID}.jsonl",
        f"p/{SID}/subagents/{AGENT}.jsonl": LAYOUT / SID / "subagents" / f"{AGENT}.jsonl",
        f"p/{BASH_NAME}": BASH,
    }
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=5)
    for rel, src in full.items():
        target = tmp_path / "projects" / rel
        with target.open("ab") as fh:
            fh.write(src.read_bytes()[target.stat().st_size :])
    d.tick(changed={str(tmp_path / "projects" / rel) for rel in full})
    clock.t += 6
    d.tick()
    d.stop()
    # The old release framed each file of a session alone: its runs open at the
    # checkpoint end there (a result each, as it framed them), and from there on a
    # session is one stream. Every message line convert makes is there once, in
    # order, per actor; what follows the old output frames by today's rules.
    data = tail_output(tmp_path / "out.jsonl")
    messages = _messages(by_actor(data))
    assert messages == _messages(expected([tmp_path / "projects" / rel for rel in full]))
    old_lines = (old / "out.jsonl").read_bytes().count(b"\n")
    after = data.splitlines(keepends=True)[old_lines:]
    mine = [x for x in after if SID.encode() in x[:120]]  # the session of two files
    closes = [x for x in mine if b'"type":"result"' in x][:2]
    assert closes and all(b'"subtype":"interrupted"' in x for x in closes)
    rest = [x for x in mine if x not in closes]
    assert framing_violations(b"".join(rest)) == []


def _messages(actors: dict[Any, list[bytes]]) -> dict[Any, list[bytes]]:
    """The assistant and user lines of each actor (what no framing change moves)."""
    return {
        k: [x for x in v if x.startswith((b'{"type":"assistant"', b'{"type":"user"'))]
        for k, v in actors.items()
    }


def test_state_files_are_the_users_own(tmp_path: Path) -> None:
    d = daemon(tmp_path, Clock())
    d.stop()
    assert (tmp_path / "state.json").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "state.json.lock").stat().st_mode & 0o777 == 0o600


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))


def test_rotation_by_rename_then_reopen_is_exactly_once(tmp_path: Path) -> None:
    """logrotate renames the output away, then SIGHUP: the old file ends where the
    new one begins; together they hold every line once."""
    proj = tmp_path / "projects" / "p"
    main, agent = layout(proj, main_lines=10)
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=5)
    (tmp_path / "out.jsonl").rename(tmp_path / "out.jsonl.1")
    d.reopen_output()
    with main.open("ab") as fh:
        fh.write(b"".join(lines(LAYOUT / f"{SID}.jsonl")[10:]))
    d.tick(changed={str(main)})
    d.stop()
    d = daemon(tmp_path, clock, idle_close=5)  # a restart after it changes nothing
    clock.t += 6
    d.tick()
    d.stop()
    old, new = (tmp_path / "out.jsonl.1").read_bytes(), (tmp_path / "out.jsonl").read_bytes()
    assert old and new
    both = tmp_path / "both.jsonl"
    both.write_bytes(old + new)
    same_as_convert(both, [main, agent])


_MARK_FIELDS = [
    "offset",
    "line_no",
    "ino",
    "head_len",
    "head_hash",
    "tail_len",
    "tail_hash",
    "closes",
    "framed",
    "start",
    "start_line",
]
_BAD_VALUES = [-1, 1.5, True, "x", None, [], {}]


@pytest.mark.parametrize(
    "field",
    [
        *_MARK_FIELDS,
        "output.length",
        "output.ino",
        "output.reopened",
        "output.path",
        "output.tail_len",
        "scanned",
        "files",
    ],
)
def test_a_checkpoint_with_a_wrong_value_is_one_clear_error(tmp_path: Path, field: str) -> None:
    """#23 item 13: wrong-typed or negative checkpoint values (9 of 32 mutations
    tried made a traceback): each either reads as a value it may be, or is a
    CheckpointError naming the file and what to do, never another exception."""
    proj = tmp_path / "projects" / "p"
    layout(proj, main_lines=12)
    clock = Clock()
    daemon(tmp_path, clock, idle_close=0).stop()
    good = state_doc(tmp_path / "state.json")
    for value in _BAD_VALUES:
        state = json.loads(json.dumps(good))
        if field.startswith("output."):
            state["output"][field.split(".")[1]] = value
        elif field in ("scanned", "files"):
            state[field] = value
        else:
            for mark in state["files"].values():
                mark[field] = value
        write_state_doc(tmp_path / "state.json", state)
        d = made(tmp_path, clock)
        try:
            d.start()
        except cp.CheckpointError as exc:
            assert "state.json: damaged checkpoint entry" in str(exc), (field, value)
            assert "move it aside" in str(exc)
            d.lock.release()
        else:
            d.stop()
        d.sink.close()


def test_a_damaged_checkpoint_is_one_line_at_start(streamv1_bin: str, tmp_path: Path) -> None:
    state = tmp_path / "state.json"
    (tmp_path / "projects").mkdir()
    state.write_text(json.dumps({"version": 2, "files": {"/x.jsonl": {"offset": -1}}}))
    proc = subprocess.run(
        [
            streamv1_bin,
            "tail",
            str(tmp_path / "projects"),
            "--state",
            str(state),
            "--no-ingest",
            "--log-format",
            "console",
        ],
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert proc.returncode == 1
    err = proc.stderr.decode().strip().splitlines()
    assert len(err) == 1 and "damaged checkpoint entry" in err[0] and "Traceback" not in err[0]


def _checkpointed_start(tmp_path: Path, n: int) -> tuple[Path, list[bytes], Path, Clock]:
    """A session file holding its first ``n`` lines, converted by a daemon that
    stopped (its lines checkpointed): (the file, all its lines, the output, the
    clock)."""
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    target = proj / BASH_NAME
    src = lines(BASH)
    target.write_bytes(b"".join(src[:n]))
    clock = Clock()
    daemon(tmp_path, clock, idle_close=0).stop()
    return target, src, tmp_path / "out.jsonl", clock


def _doomed(tmp_path: Path, clock: Clock, sink: OutputSink | None = None) -> TailDaemon:
    """A daemon that never checkpoints after its start (until killed by _kill)."""
    d = made(
        tmp_path,
        clock,
        sink=sink,
        commit_every=1e9,
        idle_close=0,
    )
    d.start()
    return d


def _kill(d: TailDaemon) -> None:
    d.lock.release()  # SIGKILL: the kernel closes its files (and their locks)
    d.sink.close()
    d.store.close()


@pytest.mark.parametrize("kept", ["renamed", "linked", "copied", "deleted"])
def test_output_rotated_then_a_kill_before_the_checkpoint_is_exactly_once(
    tmp_path: Path, kept: str
) -> None:
    """The model test's find (#23, CI): lines written, the output renamed away
    (logrotate's create mode, or kept as a hard link), copied and truncated
    (copytruncate), or deleted, the daemon killed before it checkpointed them or
    saw the move. The restart made them
    again in a new file, so the rotated one and the new one held them twice (13
    lines). Now the rotated file is cut back to the checkpoint: together the
    files hold every line once; a deleted one took only its own lines along."""
    target, src, out, clock = _checkpointed_start(tmp_path, 8)
    checkpointed, before = out.read_bytes(), tail_output(out)
    doomed = _doomed(tmp_path, clock)
    with target.open("ab") as fh:
        fh.write(b"".join(src[8:]))
    doomed.tick(changed={str(target)})
    assert len(out.read_bytes()) > len(checkpointed)  # lines past the checkpoint
    rotated = tmp_path / "out.jsonl.1"
    if kept == "renamed":
        out.rename(rotated)
    elif kept == "linked":
        os.link(out, rotated)
        out.unlink()
    elif kept == "copied":  # logrotate's copytruncate
        shutil.copy(out, rotated)
        with out.open("r+b") as fh:
            fh.truncate(0)
    else:
        out.unlink()
    _kill(doomed)
    daemon(tmp_path, clock, idle_close=0).stop()
    want = convert_file(target, "claude-session")[0]
    if kept == "deleted":
        assert before + tail_output(out) == want
    else:
        assert rotated.read_bytes() == checkpointed
        assert tail_output(rotated) + tail_output(out) == want


class _MovedMidRound(OutputSink):
    """The output renamed away between the round's start and its write: the second
    look (the write's) is the first to see it."""

    looks = 0

    def moved(self) -> bool:
        self.looks += 1
        if self.looks == 2 and self.path is not None:
            self.path.rename(self.path.with_name(self.path.name + ".1"))
        return super().moved()


def test_output_moved_mid_round_then_a_kill_is_exactly_once(tmp_path: Path) -> None:
    """The daemon sees the move at its write, opens a new file and writes into it,
    and is killed before its next checkpoint (which would name the new file): the
    checkpoint was told of the new file first, so the restart cuts it back to what
    it held when opened (empty), and the rotated one to the checkpoint."""
    target, src, out, clock = _checkpointed_start(tmp_path, 8)
    checkpointed = out.read_bytes()
    sink = _MovedMidRound(out)
    doomed = _doomed(tmp_path, clock, sink)
    sink.looks = 0
    with target.open("ab") as fh:
        fh.write(b"".join(src[8:]))
    doomed.tick(changed={str(target)})
    rotated = tmp_path / "out.jsonl.1"
    assert rotated.read_bytes() == checkpointed and out.stat().st_size > 0
    assert cp.load(tmp_path / "state.json").output_reopened == [(out.stat().st_ino, 0)]
    _kill(doomed)
    daemon(tmp_path, clock, idle_close=0).stop()
    assert rotated.read_bytes() == checkpointed
    assert tail_output(rotated) + tail_output(out) == convert_file(target, "claude-session")[0]
    assert cp.load(tmp_path / "state.json").output_reopened == []  # a checkpoint since


def test_a_reused_inode_under_another_name_is_never_cut(tmp_path: Path) -> None:
    """Only a file named as a rotation names it (the output's name plus a suffix)
    is taken for the rotated output: another file with that inode is left whole."""
    target, src, out, clock = _checkpointed_start(tmp_path, 8)
    doomed = _doomed(tmp_path, clock)
    with target.open("ab") as fh:
        fh.write(b"".join(src[8:]))
    doomed.tick(changed={str(target)})
    other = tmp_path / "notes.txt"
    os.link(out, other)
    out.unlink()
    kept = other.read_bytes()
    _kill(doomed)
    daemon(tmp_path, clock, idle_close=0).stop()
    assert other.read_bytes() == kept


def test_a_copy_is_not_told_without_checkpointed_bytes(tmp_path: Path) -> None:
    """A checkpoint of an empty output has no bytes to compare: a copy cannot be
    told from any other file of a rotation's name, so none is cut (older
    rotations stay whole) and a warning says lines may come twice."""
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    target = proj / BASH_NAME
    out = tmp_path / "out.jsonl"
    clock = Clock()
    daemon(tmp_path, clock, idle_close=0).stop()  # nothing to read: an empty output
    older = tmp_path / "out.jsonl.2"
    older.write_bytes(b'{"an":"older rotation"}\n')
    doomed = _doomed(tmp_path, clock)
    target.write_bytes(b"".join(lines(BASH)))
    doomed.tick(changed={str(target)})
    shutil.copy(out, tmp_path / "out.jsonl.1")
    with out.open("r+b") as fh:
        fh.truncate(0)
    _kill(doomed)
    daemon(tmp_path, clock, idle_close=0).stop()
    assert older.read_bytes() == b'{"an":"older rotation"}\n'
    assert (tmp_path / "out.jsonl.1").stat().st_size > 0


def test_copytruncate_while_running_then_a_kill_is_exactly_once(tmp_path: Path) -> None:
    """copytruncate while the daemon writes (paused for the copy: logrotate's own
    race aside), the daemon writing on into the truncated file, then killed before
    its next checkpoint: the copy holds lines after the checkpoint, the truncated
    file more. The checkpoint was told where the output began anew, so the restart
    cuts the file back there and the copy to the checkpoint: every line once."""
    target, src, out, clock = _checkpointed_start(tmp_path, len(lines(BASH)) // 3)
    third = len(src) // 3
    checkpointed = out.read_bytes()
    doomed = _doomed(tmp_path, clock)
    with target.open("ab") as fh:
        fh.write(b"".join(src[third : 2 * third]))
    doomed.tick(changed={str(target)})
    copy = tmp_path / "out.jsonl.1"
    shutil.copy(out, copy)
    with out.open("r+b") as fh:
        fh.truncate(0)
    with target.open("ab") as fh:
        fh.write(b"".join(src[2 * third :]))
    doomed.tick(changed={str(target)})
    assert copy.stat().st_size > len(checkpointed) and out.stat().st_size > 0
    _kill(doomed)
    daemon(tmp_path, clock, idle_close=0).stop()
    assert copy.read_bytes() == checkpointed
    assert tail_output(copy) + tail_output(out) == convert_file(target, "claude-session")[0]


class _DiesAfterWriting(OutputSink):
    """Killed right after its first write: the lines are in the file, no
    checkpoint after them."""

    def write(self, data: bytes) -> None:
        super().write(data)
        if data:
            raise Killed


@pytest.mark.parametrize("rotated", [True, False])
def test_a_new_output_is_named_before_a_line_goes_in(tmp_path: Path, rotated: bool) -> None:
    """The model test's find (#23): the output rotated away (or deleted) while the
    daemon was down; the restart made a new file at the path, wrote its catch-up
    into it and was killed before a checkpoint named that file. The next restart
    kept those lines (the checkpoint described the rotated file only) and made
    them again: every line twice. A start whose output the checkpoint does not
    describe now names it in a checkpoint before writing."""
    target, src, out, clock = _checkpointed_start(tmp_path, 8)
    before = tail_output(out)
    kept = tmp_path / "out.jsonl.1"
    if rotated:
        out.rename(kept)
    else:
        out.unlink()
    with target.open("ab") as fh:
        fh.write(b"".join(src[8:]))
    doomed = made(tmp_path, clock, sink=_DiesAfterWriting(out), commit_every=1e9, idle_close=0)
    with pytest.raises(Killed):
        doomed.start()
    _kill(doomed)
    assert out.stat().st_size > 0
    daemon(tmp_path, clock, idle_close=0).stop()
    want = convert_file(target, "claude-session")[0]
    if rotated:
        assert tail_output(kept) == before
    assert before + tail_output(out) == want


@pytest.mark.parametrize("made", ["meta only", "both tables", "empty file"])
def test_a_state_database_never_committed_to_is_no_checkpoint(tmp_path: Path, made: str) -> None:
    """A daemon killed while it made its state file (the model test: killed
    between the two CREATEs, "no such table: files" at every restart after) left
    a database with no checkpoint in it: the next start reads the files from
    their start, as with no state file. (The schema is made in one transaction
    now; a file an earlier release left is read as it is.)"""
    import sqlite3

    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    target = proj / BASH_NAME
    target.write_bytes(BASH.read_bytes())
    state = tmp_path / "state.json"
    if made == "empty file":
        state.write_bytes(b"")
    else:
        db = sqlite3.connect(state)
        db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        if made == "both tables":
            db.execute("CREATE TABLE files (path BLOB PRIMARY KEY, mark TEXT NOT NULL)")
        db.commit()
        db.close()
    daemon(tmp_path, Clock(), idle_close=0).stop()
    assert tail_output(tmp_path / "out.jsonl") == convert_file(target, "claude-session")[0]
