"""The tail daemon at a heavy user's scale: 10,000 session files (issue #23 item 4).

A real `streamv1 tail` follows ``--files`` session files (copies of a real capture,
each with its own session id, 100 to a project folder). Once it has caught up:

1. idle: its CPU use over ``--idle-seconds`` with nothing happening, from
   /proc/<pid>/stat (target: under 1 % of one core);
2. memory: its resident set (VmRSS, and the peak VmHWM) once caught up and after the
   appends (target: under 100 MiB);
3. appends: ``--appends`` new turns, each to a random file, ``--gap`` seconds apart;
   for each, the time from the write to its line in the output (target: p99 under
   100 ms), and the bytes the daemon wrote to disk meanwhile (/proc/<pid>/io
   ``write_bytes``, the output's own growth taken off): what its checkpoints cost per
   append. The baseline measured in the same run is the bench's own detection loop
   on a file it appends to itself, and the output bytes per append.

Usage: .venv/bin/python bench/tail_scale.py [--files 10000] [--appends 100] [--gap 0.2]
           [--idle-seconds 20]
Exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "testdata" / "claude-session" / "print_mode_bash.jsonl"
SAMPLE_ID = b"5eccd76e-a2bd-46d3-9ac7-285807858239"
sys.path.insert(0, str(Path(__file__).resolve().parent))
from tail_latency import Watcher, percentile, tail_daemon  # noqa: E402  (the same loop)

P99_MS, IDLE_PCT, RSS_MIB = 100.0, 1.0, 100.0


def turn(session: str, k: int) -> bytes:
    """A new prompt and its answer: one new run, its text marked ``lat-<k>-end``."""
    common = {
        "sessionId": session,
        "cwd": "/bench",
        "parentUuid": None,
        "timestamp": "2026-11-30T11:00:00.000Z",
    }
    prompt = {
        **common,
        "type": "user",
        "uuid": f"u-{k}",
        "message": {"role": "user", "content": f"again {k}"},
    }
    answer = {
        **common,
        "type": "assistant",
        "uuid": f"a-{k}",
        "message": {
            "id": f"msg_{k}",
            "role": "assistant",
            "model": "m",
            "content": [{"type": "text", "text": f"lat-{k}-end"}],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }
    return b"".join(json.dumps(r).encode() + b"\n" for r in (prompt, answer))


def proc(pid: int, name: str) -> str:
    return Path(f"/proc/{pid}/{name}").read_text()


def cpu_seconds(pid: int) -> float:
    fields = proc(pid, "stat").rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def status_kib(pid: int, key: str) -> int:
    for line in proc(pid, "status").splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1])
    return 0


def written(pid: int) -> int:
    for line in proc(pid, "io").splitlines():
        if line.startswith("write_bytes:"):
            return int(line.split()[1])
    return 0


def settle(out: Path, state: Path, quiet: float = 3.0, limit: float = 600.0) -> float:
    """Waits until neither the output nor the state has changed for ``quiet`` s."""
    t0 = time.monotonic()
    last: tuple[int, float] = (-1, 0.0)
    since = time.monotonic()
    while time.monotonic() - t0 < limit:
        try:
            sig = (
                out.stat().st_size,
                max(
                    p.stat().st_mtime
                    for p in state.parent.iterdir()
                    if p.name.startswith(state.name)
                ),
            )
        except (FileNotFoundError, ValueError):
            sig = (-1, 0.0)
        if sig != last:
            last, since = sig, time.monotonic()
        elif time.monotonic() - since >= quiet:
            return time.monotonic() - t0 - quiet
        time.sleep(0.2)
    raise SystemExit(f"the daemon did not settle within {limit:.0f} s")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--appends", type=int, default=100)
    ap.add_argument("--gap", type=float, default=0.2)
    ap.add_argument("--idle-seconds", type=float, default=20.0)
    a = ap.parse_args()
    sample = SAMPLE.read_bytes()
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        paths = []
        for i in range(a.files):
            folder = t / "projects" / f"-bench-p{i // 100}"
            folder.mkdir(parents=True, exist_ok=True)
            sid = f"00000000-0000-4000-8000-{i:012d}"
            path = folder / f"{sid}.jsonl"
            path.write_bytes(sample.replace(SAMPLE_ID, sid.encode()))
            paths.append(path)
        out, state = t / "out.jsonl", t / "state.json"
        t0 = time.monotonic()
        daemon = tail_daemon(t, out, "--idle-close", "100000")
        try:
            caught = settle(out, state)
            print(
                f"{a.files} files: caught up in {caught:.1f} s "
                f"(start to last write; {time.monotonic() - t0:.1f} s with the wait)"
            )
            state_size = sum(p.stat().st_size for p in t.iterdir() if p.name.startswith("state"))
            print(f"  state on disk: {state_size / 1e6:.1f} MB")
            rss0 = status_kib(daemon.pid, "VmRSS") / 1024
            c0, w0 = cpu_seconds(daemon.pid), time.monotonic()
            time.sleep(a.idle_seconds)
            idle = (cpu_seconds(daemon.pid) - c0) / (time.monotonic() - w0) * 100
            watcher = Watcher(out)
            watcher.start()
            out0, io0 = out.stat().st_size, written(daemon.pid)
            sent: dict[int, float] = {}
            for k in range(a.appends):
                path = rng.choice(paths)
                with path.open("ab") as fh:
                    sent[k] = time.perf_counter()
                    fh.write(turn(path.stem, k))
                time.sleep(a.gap)
            deadline = time.perf_counter() + 10
            while len(watcher.seen) < a.appends and time.perf_counter() < deadline:
                time.sleep(0.01)
            time.sleep(1.0)  # the last commits
            watcher.stop = True
            out_grew = out.stat().st_size - out0
            disk = written(daemon.pid) - io0
            rss1 = status_kib(daemon.pid, "VmRSS") / 1024
            hwm = status_kib(daemon.pid, "VmHWM") / 1024
        finally:
            daemon.send_signal(signal.SIGTERM)
            daemon.wait(timeout=60)
        # Baseline: the same detection loop with no daemon between.
        base_out = t / "self.jsonl"
        base_out.write_bytes(b"")
        base_watch = Watcher(base_out)
        base_watch.start()
        base_sent: dict[int, float] = {}
        for k in range(min(a.appends, 100)):
            with base_out.open("ab") as fh:
                base_sent[k] = time.perf_counter()
                fh.write(turn("self", k))
            time.sleep(0.005)
        time.sleep(0.5)
        base_watch.stop = True
    lat = [(watcher.seen[k] - sent[k]) * 1000 for k in sorted(watcher.seen)]
    base = [(base_watch.seen[k] - base_sent[k]) * 1000 for k in sorted(base_watch.seen)]
    missing = a.appends - len(lat)
    p50, p99 = percentile(lat, 0.5), percentile(lat, 0.99)
    print(f"  idle CPU: {idle:.2f}% of one core ({idle / IDLE_PCT:.2f}x the {IDLE_PCT:g}% target)")
    print(
        f"  RSS: {rss0:.0f} MiB caught up, {rss1:.0f} MiB after the appends, peak {hwm:.0f} MiB "
        f"({max(rss0, rss1) / RSS_MIB:.2f}x the {RSS_MIB:g} MiB target)"
    )
    print(
        f"  {len(lat)} appends{f' ({missing} never arrived)' if missing else ''}: "
        f"p50 {p50:.1f} ms, p99 {p99:.1f} ms ({p99 / P99_MS:.2f}x the {P99_MS:g} ms target); "
        f"baseline loop p50 {percentile(base, 0.5):.2f} ms, p99 {percentile(base, 0.99):.2f} ms"
    )
    per = (disk - out_grew) / max(1, a.appends)
    print(
        f"  disk writes besides the output: {(disk - out_grew) / 1e6:.2f} MB, "
        f"{per / 1e3:.1f} KB per append (the output grew "
        f"{out_grew / max(1, a.appends) / 1e3:.2f} KB per append)"
    )
    ok = not missing and p99 < P99_MS and idle < IDLE_PCT and max(rss0, rss1) < RSS_MIB
    print("targets met" if ok else "a target is missed")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
