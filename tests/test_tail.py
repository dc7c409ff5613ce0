"""The tail daemon: nothing lost, nothing twice — across SIGKILLs, truncation,
replacement, deletion and files that appear mid-run."""

from __future__ import annotations

import contextlib
import json
import os
import random
import shutil
import signal
import subprocess
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers import convert_file, framing_violations, state_doc
from tailing import (
    CRASHES,
    LAYOUT,
    LAYOUT_TOOL,
    OTHER_SID,
    SESSION,
    SID,
    WRITES,
    Clock,
    by_actor,
    daemon,
    expected,
    first_mismatch,
    fixed,
    lines_of,
    lost_and_doubled,
    made,
    plan_chunks,
    prepare,
    settle,
    start,
    tail_output,
    wait_started,
    write_with_kills,
)

from streamv1.translator.tail.daemon import TailDaemon
from streamv1.translator.tail.output import OutputSink

# -- in-process: the daemon's logic, driven by tick() ------------------------------------


def test_partial_lines_wait_and_restart_goes_on_mid_turn(tmp_path: Path) -> None:
    target = tmp_path / "projects" / "p" / "5eccd76e-a2bd-46d3-9ac7-285807858239.jsonl"
    target.parent.mkdir(parents=True)
    src = (SESSION / "print_mode_bash.jsonl").read_bytes()
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    half = src.index(b'"type":"user","message":{"role":"user","content":[{"tool_use_id"')
    target.write_bytes(src[: half + 40])  # ends inside a line
    d.tick(changed={str(target.parent), str(target)})
    d.stop()
    first = tail_output(tmp_path / "out.jsonl")
    assert first and b'"type":"result"' not in first  # the run is open mid-turn
    d2 = daemon(tmp_path, clock, idle_close=0)
    with target.open("ab") as fh:
        fh.write(src[half + 40 :])
    d2.tick(changed={str(target)})
    d2.stop()
    assert tail_output(tmp_path / "out.jsonl") == convert_file(target, "claude-session")[0]


def test_idle_close_ends_a_run_as_batch_does_at_eof(tmp_path: Path) -> None:
    agent_dir = tmp_path / "projects" / "p" / SID / "subagents"
    agent_dir.mkdir(parents=True)
    for f in (LAYOUT / SID / "subagents").iterdir():
        if ".expected." not in f.name:
            shutil.copy(f, agent_dir / f.name)
    agent = next(agent_dir.glob("agent-*.jsonl"))
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=30)
    d.tick()
    assert b'"type":"result"' not in tail_output(tmp_path / "out.jsonl")
    clock.t += 31
    d.tick()
    d.stop()
    assert tail_output(tmp_path / "out.jsonl") == convert_file(agent, "claude-session")[0]


def test_new_subagent_file_mid_run(tmp_path: Path) -> None:
    """A subagent's file that appears while its parent's run is open (after the
    spawning call, before its answer, as Claude Code writes them) feeds that run."""
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    main = proj / f"{SID}.jsonl"
    src = (LAYOUT / f"{SID}.jsonl").read_bytes().splitlines(keepends=True)
    cut = next(
        i for i, x in enumerate(src) if b'"type":"tool_result"' in x and b'"toolUseResult"' in x
    )
    main.write_bytes(b"".join(src[:cut]))
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=5)
    d.tick()
    (proj / SID / "subagents").mkdir(parents=True)
    for f in (LAYOUT / SID / "subagents").iterdir():
        if ".expected." not in f.name:
            shutil.copy(f, proj / SID / "subagents" / f.name)
    with main.open("ab") as fh:
        fh.write(b"".join(src[cut:]))
    new = {str(p) for p in (proj / SID / "subagents").glob("*.jsonl")} | {str(main)}
    d.tick(changed=new)
    clock.t += 6
    d.tick()
    d.stop()
    got = by_actor(tail_output(tmp_path / "out.jsonl"))
    want = expected([main, *sorted((proj / SID / "subagents").glob("*.jsonl"))])
    assert got == want
    assert ("7ab05073-03bd-480e-bfab-7ae89322bf51", "toolu_01Ol0AGLKlFXti4j8cFdnOcj") in got
    assert framing_violations(tail_output(tmp_path / "out.jsonl")) == []


def test_truncated_and_replaced_files_are_followed_anew(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    a = proj / "5eccd76e-a2bd-46d3-9ac7-285807858239.jsonl"
    bash = (SESSION / "print_mode_bash.jsonl").read_bytes()
    thinking = (SESSION / "thinking.jsonl").read_bytes()
    a.write_bytes(bash)
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    d.tick(changed={str(a)})
    once = tail_output(tmp_path / "out.jsonl")
    assert once == convert_file(a, "claude-session")[0]
    # truncated in place, then rewritten with other (shorter) content
    with a.open("r+b") as fh:
        fh.truncate(0)
    a.write_bytes(thinking)  # shorter than what was read: noticed as a truncation
    d.tick(changed={str(a)})
    after_trunc = tail_output(tmp_path / "out.jsonl")[len(once) :]
    assert b'"subtype":"init"' in after_trunc
    # replaced: a new file renamed over the old name
    repl = proj / "tmp.new"
    repl.write_bytes(bash)
    os.replace(repl, a)
    d.tick(changed={str(a)})
    d.stop()
    out = tail_output(tmp_path / "out.jsonl")
    assert out.endswith(once)  # the replacement was read from its start, whole
    assert framing_violations(out) == []


def test_a_deleted_file_is_forgotten_after_its_last_lines(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    a = proj / "5eccd76e-a2bd-46d3-9ac7-285807858239.jsonl"
    src = (SESSION / "print_mode_bash.jsonl").read_bytes().splitlines(keepends=True)
    a.write_bytes(b"".join(src[:18]))
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    d.tick(changed={str(a)})
    with a.open("ab") as fh:
        fh.write(b"".join(src[18:]))
    a.unlink()  # deleted before the daemon read the rest
    d.tick(changed={str(a)})
    d.stop()
    full = tmp_path / "full.jsonl"
    full.write_bytes(b"".join(src))
    assert by_actor(tail_output(tmp_path / "out.jsonl")) == by_actor(
        convert_file(full, "claude-session")[0]
    )
    state = state_doc(tmp_path / "state.json")
    assert state["files"] == {}


def test_from_end_skips_what_files_already_hold(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    a = proj / "5eccd76e-a2bd-46d3-9ac7-285807858239.jsonl"
    src = (SESSION / "resumed_two_invocations.jsonl").read_bytes()
    cut = src.index(b'"operation":"enqueue"', 100)
    cut = src.rindex(b"\n", 0, cut) + 1  # the second invocation starts here
    a.write_bytes(src[:cut])
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0, start_at_end=True)
    d.tick(changed={str(a)})
    assert tail_output(tmp_path / "out.jsonl") == b""
    with a.open("ab") as fh:
        fh.write(src[cut:])
    d.tick(changed={str(a)})
    d.stop()
    lines = lines_of(tmp_path / "out.jsonl")
    assert lines[0]["type"] == "system" and lines[-1]["type"] == "result"
    assert lines[-1]["result"].startswith("Yes, this is the second turn")


# -- end to end: a real daemon, SIGKILLed at random points ---------------------------------


@pytest.mark.parametrize(
    "seed", [int(s) for s in os.environ.get("STREAMV1_SOAK_SEEDS", "1,2").split(",")]
)
def test_sigkill_at_random_points_loses_nothing_and_repeats_nothing(
    streamv1_bin: str, tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    targets = prepare(tmp_path)
    chunks = plan_chunks(rng)
    kills = set(rng.sample(range(1, len(chunks)), min(CRASHES // 2 + 1, len(chunks) - 1)))
    proc = start(streamv1_bin, tmp_path)
    time.sleep(rng.uniform(0, 0.6))  # a first kill may come before the first checkpoint
    proc, crashes = write_with_kills(
        targets, chunks, kills, rng, proc, lambda: start(streamv1_bin, tmp_path)
    )
    assert crashes >= CRASHES // 2
    out = tmp_path / "out.jsonl"
    settle(out)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    got = by_actor(tail_output(out))
    want = expected(targets)
    lost, doubled = lost_and_doubled(got, want)
    report = os.environ.get("STREAMV1_SOAK_REPORT")
    if report:
        with open(report, "a") as fh:
            made = sum(map(len, want.values()))
            fh.write(
                json.dumps(
                    {
                        "seed": seed,
                        "kills": crashes,
                        "lines": made,
                        "lost": lost,
                        "doubled": doubled,
                    }
                )
                + "\n"
            )
    assert set(got) == set(want)
    assert (lost, doubled) == (0, 0), [k for k in want if got[k] != want[k]]
    for key in want:
        assert got[key] == want[key], key
    assert (OTHER_SID, LAYOUT_TOOL) in got  # the sidecar-less subagent found its parent
    # the subagent's own subagent, inside the same run, under its own spawner
    assert ("54fd602b-6561-4899-960b-6885839060a8", "toolu_01bW1e6ZEwaXimnk6ikQPMfd") in got
    assert framing_violations(tail_output(out)) == []


def test_a_quiet_round_waits_only_until_written_lines_are_due_a_checkpoint(tmp_path: Path) -> None:
    """Lines written just after a checkpoint are checkpointed (and so published by
    ``--publish``) when their commit falls due, not a quiet second later."""
    clock = Clock()
    d = made(tmp_path, clock, commit_every=0.5)
    d.start()
    assert d._quiet_wait() == 1.0  # nothing waits: the old pace
    target = tmp_path / "projects" / "p" / "s.jsonl"
    target.parent.mkdir(parents=True)
    target.write_bytes((SESSION / "print_mode_bash.jsonl").read_bytes())
    clock.t += 0.1
    d.tick(rescan=True)
    clock.t += 0.1
    wait = d._quiet_wait()
    assert 0 < wait <= 0.5 and d.sink.length  # lines written, their commit due soon
    clock.t += wait
    d.tick()
    assert d._quiet_wait() == 1.0  # committed
    d.stop()


@pytest.mark.parametrize("reader", ["head -c 100", "sleep 1"])
def test_tail_to_stdout_ends_when_its_reader_goes(
    streamv1_bin: str, tmp_path: Path, reader: str
) -> None:
    """#23 item 14: ``tail ... | head -c 100``, or a reader that quits without
    reading while the daemon is quiet: a closed stdout is the end of the job, exit
    141 as a SIGPIPE would, no traceback, not a retry with backoff for ever."""
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    for name in ("print_mode_bash.jsonl", "thinking.jsonl", "interactive_four_turns.jsonl"):
        shutil.copy(SESSION / name, proj / name)
    script = (
        f"{streamv1_bin} tail {tmp_path / 'projects'} --state {tmp_path / 'state.json'} "
        f"--no-ingest 2>{tmp_path / 'err'}; echo $? > {tmp_path / 'rc'}"
    )
    started = time.monotonic()
    subprocess.run(["bash", "-c", f"({script}) | {reader} > /dev/null"], timeout=30, check=False)
    while not (tmp_path / "rc").exists() and time.monotonic() - started < 20:
        time.sleep(0.1)
    assert (tmp_path / "rc").read_text().strip() == "141"
    assert time.monotonic() - started < 15
    assert "Traceback" not in (tmp_path / "err").read_text()


def test_two_daemons_on_one_output_the_second_is_refused(streamv1_bin: str, tmp_path: Path) -> None:
    """#23 item 1: two tails with different state files (the default when their
    folders differ) and one --output: the output is locked, the second refused in
    one line, the first writes on and keeps every line."""
    a, b = tmp_path / "a" / "p", tmp_path / "b" / "p"
    for folder in (a, b):
        folder.mkdir(parents=True)
    out = tmp_path / "out.jsonl"
    first = subprocess.Popen(
        [
            streamv1_bin,
            "tail",
            str(a.parent),
            "-o",
            str(out),
            "--state",
            str(tmp_path / "a.json"),
            "--no-ingest",
            "--commit-every",
            "0.05",
        ],
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 10
        while not (tmp_path / "a.json").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        second = subprocess.run(
            [
                streamv1_bin,
                "tail",
                str(b.parent),
                "-o",
                str(out),
                "--state",
                str(tmp_path / "b.json"),
                "--no-ingest",
            ],
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert second.returncode == 1
        err = second.stderr.decode().strip().splitlines()
        assert len(err) == 1 and "another streamv1 tail writes this output" in err[0]
        shutil.copy(SESSION / "print_mode_bash.jsonl", a / "print_mode_bash.jsonl")
        deadline = time.monotonic() + 10
        while b'"type":"result"' not in (out.read_bytes() if out.exists() else b""):
            assert time.monotonic() < deadline
            time.sleep(0.05)
    finally:
        first.send_signal(signal.SIGTERM)
        first.wait(timeout=20)
    assert tail_output(out) == convert_file(a / "print_mode_bash.jsonl", "claude-session")[0]


def test_an_output_inside_a_watched_folder_is_never_read_back(tmp_path: Path) -> None:
    """#23 item 9: ``tail DIR -o DIR/stream.jsonl`` read its own output back as
    input and appended it again (101 MB in 15 s). The output is never an input,
    under any spelling of its path; said once."""
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    shutil.copy(SESSION / "print_mode_bash.jsonl", proj / "print_mode_bash.jsonl")
    out = tmp_path / "projects" / "stream.jsonl"
    clock = Clock()
    d = TailDaemon(
        [tmp_path / "projects" / "."],
        OutputSink(out),
        tmp_path / "state.json",
        clock=fixed,
        now=clock,
        commit_every=0,
        idle_close=0,
    )
    d.start()
    for _ in range(5):
        d.tick(rescan=True)
        d.tick(changed={str(out), str(tmp_path / "projects" / "." / "stream.jsonl")})
    d.stop()
    assert str(out) not in d.followers
    assert tail_output(out) == convert_file(proj / "print_mode_bash.jsonl", "claude-session")[0]


def test_a_file_name_that_is_not_utf8_is_followed_and_said(
    streamv1_bin: str, tmp_path: Path
) -> None:
    """#23 item 10: a non-UTF-8 file name anywhere in the tree made tail exit 1 with
    a traceback at every start (its log line could not be encoded), and the file
    watcher's thread died on its events. Now the file is followed, its name shown
    with the bytes escaped, and events keep coming (a rescan where the watcher
    cannot decode a name)."""
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    bad = os.path.join(os.fsencode(proj), b"bad\xff.jsonl")
    shutil.copy(SESSION / "thinking.jsonl", bad)
    out = tmp_path / "out.jsonl"
    proc = subprocess.Popen(
        [
            streamv1_bin,
            "tail",
            str(tmp_path / "projects"),
            "-o",
            str(out),
            "--state",
            str(tmp_path / "state.json"),
            "--no-ingest",
            "--commit-every",
            "0.05",
            "--rescan-every",
            "600",
            "--log-format",
            "json",
        ],
        stderr=subprocess.PIPE,
    )
    try:
        time.sleep(1.5)
        shutil.copy(SESSION / "print_mode_bash.jsonl", proj / "later.jsonl")
        shutil.copy(SESSION / "max_turns.jsonl", os.path.join(os.fsencode(proj), b"b\xfe.jsonl"))
        deadline = time.monotonic() + 15
        while (out.read_bytes().count(b'"type":"result"') if out.exists() else 0) < 3:
            assert time.monotonic() < deadline, out.read_bytes()[-300:]
            time.sleep(0.1)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    assert proc.returncode == 0
    assert b"Traceback" not in err
    assert b"b\\\\xfe.jsonl" in err  # the later file's name, its undecodable byte escaped


def test_a_new_users_small_traps(streamv1_bin: str, tmp_path: Path) -> None:
    """#23 item 20: tail on folders none of which exist is a usage error (a typo),
    not a daemon running for ever with a warning; --claude-extra-types without
    --to claude is refused, not silently accepted; start-up says one summary line
    for all files (details at debug), and stdout is named 'stdout', not 'None'."""
    gone = subprocess.run(
        [streamv1_bin, "tail", str(tmp_path / "does" / "not" / "exist")],
        capture_output=True,
        timeout=30,
        check=False,
    )
    assert gone.returncode == 2 and b"no such folder" in gone.stderr
    for cmd in (["convert", str(SESSION / "thinking.jsonl")], ["tail", str(tmp_path)]):
        proc = subprocess.run(
            [streamv1_bin, *cmd, "--claude-extra-types"],
            capture_output=True,
            timeout=30,
            check=False,
        )
        assert proc.returncode == 2 and b"add --to claude" in proc.stderr, cmd
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    for k in range(30):
        shutil.copy(SESSION / "thinking.jsonl", proj / f"s{k}.jsonl")
    proc = subprocess.Popen(
        [
            streamv1_bin,
            "tail",
            str(tmp_path / "projects"),
            "--state",
            str(tmp_path / "state.json"),
            "--no-ingest",
            "--log-format",
            "json",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    time.sleep(2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=20)
    events = [json.loads(x) for x in err.splitlines()]
    assert not [e for e in events if e["event"] == "file discovered"]
    summary = [e for e in events if e["event"] == "files discovered"]
    assert len(summary) == 1 and summary[0]["files"] == 30
    assert not [e for e in events if e.get("path") in ("None", "-")]


def test_an_output_deleted_while_running_goes_on_in_a_new_file(tmp_path: Path) -> None:
    """#23 item 8: the output deleted while the daemon runs: it wrote on into the
    unlinked file and said nothing (0 of 5 later answers survived a restart). Now
    it notices, says so, and the later lines are in a new file at that path, also
    after a restart."""
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    src = (SESSION / "print_mode_bash.jsonl").read_bytes().splitlines(keepends=True)
    target = proj / "print_mode_bash.jsonl"
    target.write_bytes(b"".join(src[:8]))
    out = tmp_path / "out.jsonl"
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    assert out.stat().st_size > 0
    first = tail_output(out)
    out.unlink()
    with target.open("ab") as fh:
        fh.write(b"".join(src[8:]))
    d.tick(changed={str(target)})
    d.stop()
    later = tail_output(out)
    assert later and first + later == convert_file(target, "claude-session")[0]
    d = daemon(tmp_path, clock, idle_close=0)  # a restart: the new file is the output now
    d.stop()
    assert tail_output(out) == later


def _big_session(path: Path, size: int) -> None:
    src = (SESSION / "interactive_four_turns.jsonl").read_bytes()
    path.write_bytes(src * (size // len(src) + 1))


def _peak_rss_kb(cmd: list[str]) -> int:
    """A child's own peak RSS in KiB: its VmHWM, read until it ends (wait4's
    ru_maxrss would count the pages it had before exec, copied from this
    process at fork: pytest's hundred MB)."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak = 0
    status = Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        with contextlib.suppress(OSError, StopIteration):
            line = next(x for x in status.read_text().splitlines() if x.startswith("VmHWM:"))
            peak = max(peak, int(line.split()[1]))
        time.sleep(0.005)
    assert proc.returncode == 0, cmd
    return peak


def test_a_catch_up_stops_at_once_and_goes_on_from_inside_the_file(
    streamv1_bin: str, tmp_path: Path
) -> None:
    """#23 item 3: SIGTERM during the catch-up of a big file waited until the file
    was read to its end, with no checkpoint inside it. Now the read stops between
    two chunks (under a second, whatever the size), the checkpoint is inside the
    file, and a restart goes on from there: exactly once, as convert writes it."""
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    big = proj / "big.jsonl"
    _big_session(big, 60_000_000)
    out, state = tmp_path / "out.jsonl", tmp_path / "state.json"
    cmd = [
        streamv1_bin,
        "tail",
        str(tmp_path / "projects"),
        "-o",
        str(out),
        "--state",
        str(state),
        "--no-ingest",
        "--idle-close",
        "1",
    ]
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while not (out.exists() and out.stat().st_size > 0):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    assert time.monotonic() - sent < 1.0
    offset = next(iter(state_doc(state)["files"].values()))["offset"]
    assert 0 < offset < big.stat().st_size  # checkpointed inside the file
    proc = subprocess.Popen(cmd, stderr=subprocess.DEVNULL)
    try:
        settle(out, quiet=3.0)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
    want = subprocess.run(
        [streamv1_bin, "convert", str(big)], capture_output=True, check=True
    ).stdout
    assert tail_output(out) == want


def test_a_catch_up_holds_no_more_memory_than_convert(streamv1_bin: str, tmp_path: Path) -> None:
    """#23 item 2: catching up one file held its whole output in memory (735 MiB
    RSS for 72 MB). Its lines now go out each chunk: the daemon's peak RSS over a
    40 MB catch-up is within 1.5x of convert's for the same file (measured in the
    same run; bench/ has the 200 MB figure)."""
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    big = proj / "big.jsonl"
    _big_session(big, 40_000_000)
    convert_kb = _peak_rss_kb([streamv1_bin, "convert", str(big), "-o", str(tmp_path / "c.jsonl")])
    out = tmp_path / "out.jsonl"
    proc = subprocess.Popen(
        [
            streamv1_bin,
            "tail",
            str(tmp_path / "projects"),
            "-o",
            str(out),
            "--state",
            str(tmp_path / "state.json"),
            "--no-ingest",
            "--idle-close",
            "1",
        ],
        stderr=subprocess.DEVNULL,
    )
    settle(out, quiet=3.0)
    peak = int(
        next(
            x
            for x in Path(f"/proc/{proc.pid}/status").read_text().splitlines()
            if x.startswith("VmHWM:")
        ).split()[1]
    )
    proc.send_signal(signal.SIGTERM)
    proc.wait(timeout=20)
    assert tail_output(out) == (tmp_path / "c.jsonl").read_bytes()
    assert peak <= 1.5 * convert_kb, (peak, convert_kb)


@pytest.mark.parametrize("when", ["live", "down"])
def test_a_renamed_project_folder_is_the_same_files(tmp_path: Path, when: str) -> None:
    """#23 item 6: a project folder renamed (live, or while the daemon is down)
    read every file again from byte 0: every turn twice (14 lines became 29). A
    file moved within the watched tree is the same file: followed on from where
    it was, its session with it."""
    old = tmp_path / "projects" / "p"
    (old / SID / "subagents").mkdir(parents=True)
    src = (LAYOUT / f"{SID}.jsonl").read_bytes().splitlines(keepends=True)
    cut = next(i for i, x in enumerate(src) if b'"toolUseResult"' in x)
    (old / f"{SID}.jsonl").write_bytes(b"".join(src[:cut]))
    for f in (LAYOUT / SID / "subagents").iterdir():
        if ".expected." not in f.name:
            shutil.copy(f, old / SID / "subagents" / f.name)
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    if when == "down":
        d.stop()
    new = tmp_path / "projects" / "renamed"
    old.rename(new)
    with (new / f"{SID}.jsonl").open("ab") as fh:
        fh.write(b"".join(src[cut:]))
    if when == "down":
        d = daemon(tmp_path, clock, idle_close=0)
    d.tick(changed={str(new), str(new / f"{SID}.jsonl"), str(old / f"{SID}.jsonl")})
    d.stop()
    files = [new / f"{SID}.jsonl", *sorted((new / SID / "subagents").glob("*.jsonl"))]
    got, want = by_actor(tail_output(tmp_path / "out.jsonl")), expected(files)
    assert got == want, first_mismatch(got, want)
    assert framing_violations(tail_output(tmp_path / "out.jsonl")) == []


@pytest.mark.parametrize("descriptor", ["held", "given back"])
def test_a_file_seen_gone_before_its_new_path_is_the_same_file(
    tmp_path: Path, descriptor: str
) -> None:
    """The model test's find (#23): a file moved while the daemon was busy, and the
    daemon looked at its old path (gone) before it heard of the new one: it was
    forgotten there and read again from byte 0 at the new path, its lines twice.
    Gone, a file is looked for first (its descriptor's path, else a walk for its
    inode) and followed on from where it was."""
    old = tmp_path / "projects" / "p" / "s.jsonl"
    old.parent.mkdir(parents=True)
    src = (SESSION / "print_mode_bash.jsonl").read_bytes().splitlines(keepends=True)
    old.write_bytes(b"".join(src[:8]))
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    follower = d.followers[str(old)]
    if descriptor == "given back":
        d.fds.give_back(follower)
        assert follower.fd is None
    new = tmp_path / "projects" / "pf" / "s.jsonl"
    new.parent.mkdir()
    old.rename(new)
    with new.open("ab") as fh:
        fh.write(b"".join(src[8:]))
    d.tick(changed={str(old)})  # the old path first
    d.tick(changed={str(new)})
    d.stop()
    assert tail_output(tmp_path / "out.jsonl") == convert_file(new, "claude-session")[0]


@pytest.mark.parametrize("at", [0, 1, 2])
def test_a_folder_renamed_while_the_daemon_starts_is_the_same_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at: int
) -> None:
    """The model test's find, under load (seed 3: 10 lines twice): a project folder
    renamed while the daemon starts, after its scan listed the folder and before
    (or while) it resumed the files from their marks. A file gone at its old path
    had its open run closed and its mark dropped; at its new path it was read from
    byte 0. Its mark now stays for its new path (found by inode), and the end of
    the first scan looks for a missing file's inode before closing its run."""
    from streamv1.translator.tail import follower as follower_mod

    old, new = tmp_path / "projects" / "p", tmp_path / "projects" / "pm"
    old.mkdir(parents=True)
    names = ["print_mode_bash.jsonl", "thinking.jsonl", "interactive_four_turns.jsonl"]
    srcs = {n: (SESSION / n).read_bytes().splitlines(keepends=True) for n in names}
    for n in names:
        (old / n).write_bytes(b"".join(srcs[n][: len(srcs[n]) // 2]))
    clock = Clock()
    daemon(tmp_path, clock, idle_close=0).stop()
    resumes = 0
    real = follower_mod.FileFollower.resume

    def resume(self: follower_mod.FileFollower, mark: Any, replay: bool = True) -> str:
        nonlocal resumes
        if resumes == at and old.exists():
            old.rename(new)  # between the scan's listing and this file's resume
        resumes += 1
        return real(self, mark, replay)

    monkeypatch.setattr(follower_mod.FileFollower, "resume", resume)
    d = daemon(tmp_path, clock, idle_close=0)
    assert not old.exists()
    for n in names:
        with (new / n).open("ab") as fh:
            fh.write(b"".join(srcs[n][len(srcs[n]) // 2 :]))
    d.tick(changed={str(new), *(str(new / n) for n in names), *(str(old / n) for n in names)})
    d.tick(rescan=True)
    d.stop()
    got, want = by_actor(tail_output(tmp_path / "out.jsonl")), expected([new / n for n in names])
    assert lost_and_doubled(got, want) == (0, 0), first_mismatch(got, want)
    assert got == want, first_mismatch(got, want)


def test_folders_inotify_does_not_watch_are_said_and_polled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#23 item 5: when inotify's watches ran out, folders went unwatched in silence
    and their appends waited for the 30 s rescan. What the kernel watches is read
    from /proc (watches.watched); a folder it does not is said once with what to do,
    counted (status unwatched_folders) and its files polled every second."""
    from streamv1.translator.tail import watching as watching_mod

    a, b = tmp_path / "projects" / "a", tmp_path / "projects" / "b"
    a.mkdir(parents=True)
    b.mkdir()
    src = (SESSION / "print_mode_bash.jsonl").read_bytes().splitlines(keepends=True)
    (a / "one.jsonl").write_bytes(b"".join(src[:6]))
    (b / "two.jsonl").write_bytes(b"".join(src[:6]))
    st = os.stat(a)
    watched = {
        (st.st_dev, st.st_ino),
        (os.stat(tmp_path / "projects").st_dev, os.stat(tmp_path / "projects").st_ino),
    }
    monkeypatch.setattr(watching_mod.watches, "watched", lambda: set(watched))  # b is not
    clock = Clock()
    d = made(tmp_path, clock, idle_close=0, rescan_every=1e9)
    d.events.watcher = object()  # watching (the kernel's answer is the patched one)
    d.start()
    assert d.status()["unwatched_folders"] == 1
    with (b / "two.jsonl").open("ab") as fh:  # no event comes for b: it is polled
        fh.write(b"".join(src[6:]))
    (b / "three.jsonl").write_bytes((SESSION / "thinking.jsonl").read_bytes())
    clock.t += 1.1
    d.tick()
    d.stop()
    want = b"".join(convert_file(p, "claude-session")[0] for p in (b / "three.jsonl",))
    got = tail_output(tmp_path / "out.jsonl")
    assert got.count(b'"type":"result"') >= 2 and want.splitlines()[-1] in got


def _rename_in(targets: list[Path], old: Path, new: Path) -> None:
    """Paths under ``old`` are under ``new`` now."""
    for i, t in enumerate(targets):
        if t == old or old in t.parents:
            targets[i] = new / t.relative_to(old)


@pytest.mark.parametrize(
    "seed", [int(s) for s in os.environ.get("STREAMV1_MODEL_SEEDS", "1,2").split(",")]
)
def test_random_operations_end_as_convert_does(
    streamv1_bin: str, tmp_path: Path, seed: int
) -> None:
    """The model test (Vector's way: random operations, the result checked against
    a model), #23: the session files written in random chunks, and between them at
    random: SIGKILL or SIGTERM and a restart; a project folder renamed (live, or
    while the daemon is down); a standalone session file renamed or moved to a new
    folder; the output renamed away or deleted while the daemon writes it
    (logrotate's create mode, no SIGHUP: a kill before the daemon checkpointed its
    last lines printed them twice, #23 CI), or copied and truncated (logrotate's
    copytruncate) while it is down or while it writes. Every session in the outputs,
    taken in order, is what convert makes of the final files: nothing lost,
    nothing doubled. (A relayed run cut by a restart is
    test_live.test_a_run_a_stream_leaves_unfinished_is_finished_from_the_transcript.)"""
    rng = random.Random(seed)
    targets = prepare(tmp_path)
    chunks = plan_chunks(rng)
    out = tmp_path / "out.jsonl"
    parts: list[Path] = []
    standalone = [i for i, (_, rel, _, meta) in enumerate(WRITES) if rel.startswith("p/")]
    proc = start(streamv1_bin, tmp_path)
    done: Counter[str] = Counter()
    journal: list[str] = []  # chunk, operation, output size: what a failure ran

    def restart(how: str) -> subprocess.Popen[bytes]:
        proc.send_signal(signal.SIGKILL if how == "kill" else signal.SIGTERM)
        proc.wait(timeout=20)
        return start(streamv1_bin, tmp_path)

    def rotate_part(name: str) -> Path:
        # Named as a rotation names it (the output's name, a suffix): the restart
        # after a kill cuts a rotated file back to its checkpoint by that name.
        part = tmp_path / f"out.jsonl.{len(parts)}.{name}"
        parts.append(part)
        return part

    ops = [
        "kill",
        "term",
        "folder",
        "folder_down",
        "file",
        "rotate_output",
        "delete_output",
        "copytruncate",
        "truncate_live",
    ]
    for k, (i, chunk) in enumerate(chunks):
        with targets[i].open("ab") as fh:
            fh.write(chunk)
        time.sleep(rng.uniform(0, 0.02))
        if k == 0 or rng.random() > 0.12:
            continue
        op = rng.choice(ops)
        done[op] += 1
        journal.append(f"{k} {op} {out.stat().st_size if out.exists() else '-'}")
        (tmp_path / "journal.txt").write_text("\n".join(journal))
        if op in ("kill", "term"):
            time.sleep(rng.uniform(0, 0.3))
            proc = restart(op)
        elif op in ("folder", "folder_down"):
            projects = tmp_path / "projects"
            old = rng.choice(sorted(p for p in projects.iterdir() if p.is_dir()))
            new = old.with_name(old.name + "m")
            if op == "folder_down":
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=20)
            old.rename(new)
            _rename_in(targets, old, new)
            if op == "folder_down":
                proc = start(streamv1_bin, tmp_path)
        elif op == "file":
            written = [j for j in standalone if targets[j].exists()]
            if not written:
                continue
            j = rng.choice(written)
            old = targets[j]
            new = (
                old.parent.with_name(old.parent.name + "f") / old.name
                if rng.random() < 0.5
                else old.with_name(old.stem + "-r.jsonl")
            )
            new.parent.mkdir(exist_ok=True)
            old.rename(new)
            targets[j] = new
        elif op in ("rotate_output", "delete_output"):
            time.sleep(rng.uniform(0, 0.2))
            if out.exists() and op == "rotate_output":  # logrotate's create, no SIGHUP
                out.rename(rotate_part("rotated"))
            elif out.exists():  # what the deletion took, kept by a link to compare
                os.link(out, rotate_part("deleted"))
                out.unlink()
        elif op == "truncate_live":
            # logrotate's copytruncate while the daemon writes, the daemon paused
            # for the copy (copytruncate's own race, lines written between the copy
            # and the truncation, aside). Once the daemon is up: a copy taken after a
            # crash and before the restart's recovery holds lines the restart makes
            # again, and when the last checkpoint's output was empty nothing tells
            # that copy from any other file (docs/live.md; seed 1 under load).
            wait_started(tmp_path, proc)
            if out.exists():
                proc.send_signal(signal.SIGSTOP)
                shutil.copy(out, rotate_part("truncated"))
                with out.open("r+b") as fh:
                    fh.truncate(0)
                proc.send_signal(signal.SIGCONT)
        else:  # copytruncate, with the daemon down (copytruncate's own race aside)
            wait_started(tmp_path, proc)  # a SIGTERM before its handler is a kill
            proc.send_signal(signal.SIGTERM)
            proc.wait(timeout=20)
            if out.exists():
                shutil.copy(out, rotate_part("copied"))
                with out.open("r+b") as fh:
                    fh.truncate(0)
            proc = start(streamv1_bin, tmp_path)
    settle(out)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0, (tmp_path / "daemon.log").read_text()[-2000:]
    data = b"".join(tail_output(p) for p in [*parts, out] if p.exists())
    got, want = by_actor(data), expected(targets)
    lost, doubled = lost_and_doubled(got, want)
    on_disk = sorted(p for p in (tmp_path / "projects").rglob("*.jsonl"))
    assert sorted(targets) == on_disk, (journal, targets)  # the model knows the files
    assert (lost, doubled) == (0, 0), (journal, first_mismatch(got, want))
    assert got == want, first_mismatch(got, want)
    assert framing_violations(data) == []
    assert sum(done.values()) >= 5, done
    print(dict(done))
