"""Tail daemon latency and idle cost, measured against a real `streamv1 tail`.

1. Latency: 1,000 appends spread over 50 session files, one complete record each;
   for each, the time from the write to the moment its stream_v1 line is in the
   daemon's --output file. Prints p50/p99 and their ratio to the targets (p50 100 ms,
   p99 500 ms), and, as the baseline measured in the same run, the same figures for
   the bench's own detection loop reading a file it appends to itself (what the
   measurement costs with no daemon in between).
2. Idle: the daemon's CPU use watching 2,000 session files with nothing happening
   (target: under 1% of one core), from /proc/<pid>/stat over 20 s.

Usage: .venv/bin/python bench/tail_latency.py [--appends 1000] [--files 50] [--idle-files 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "testdata" / "claude-session" / "print_mode_bash.jsonl"
BIN = str(Path(sys.executable).parent / "streamv1")


def tail_daemon(t: Path, out: Path, *extra: str) -> subprocess.Popen[bytes]:
    """``streamv1 tail`` over ``t/projects`` into ``out``, its state ``t/state.json``
    (warnings only on stderr, dropped): the daemon every tail bench measures."""
    command = [BIN, "--log-level", "warning", "tail", str(t / "projects"), "--output", str(out)]
    return subprocess.Popen(
        [*command, "--state", str(t / "state.json"), *extra], stderr=subprocess.DEVNULL
    )


def prompt(session: str) -> bytes:
    return (
        json.dumps(
            {
                "type": "user",
                "sessionId": session,
                "uuid": f"u-{session}",
                "parentUuid": None,
                "timestamp": "2026-11-30T10:00:00.000Z",
                "cwd": "/bench",
                "message": {"role": "user", "content": "go"},
            }
        ).encode()
        + b"\n"
    )


def assistant(session: str, k: int) -> bytes:
    return (
        json.dumps(
            {
                "type": "assistant",
                "sessionId": session,
                "uuid": f"a-{k}",
                "parentUuid": None,
                "timestamp": "2026-11-30T10:00:01.000Z",
                "message": {
                    "id": f"msg_{k}",
                    "role": "assistant",
                    "model": "m",
                    "content": [{"type": "text", "text": f"lat-{k}-end"}],
                    "stop_reason": "tool_use",
                    "usage": {"input_tokens": 1, "output_tokens": 1},
                },
            }
        ).encode()
        + b"\n"
    )


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


class Watcher(threading.Thread):
    """Reads a growing file and notes when each marker appears."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path = path
        self.seen: dict[int, float] = {}
        self.stop = False
        self.pos = path.stat().st_size if path.exists() else 0  # new lines only

    def run(self) -> None:
        buf = b""
        while not self.stop:
            try:
                with self.path.open("rb") as fh:
                    fh.seek(self.pos)
                    data = fh.read()
            except FileNotFoundError:
                data = b""
            if data:
                now = time.perf_counter()
                self.pos += len(data)
                buf += data
                *lines, buf = buf.split(b"\n")
                for line in lines:
                    i = line.find(b"lat-")
                    if i >= 0:
                        k = int(line[i + 4 : line.index(b"-end", i)])
                        self.seen.setdefault(k, now)
            else:
                time.sleep(0.0005)


def measure(appends: int, files: int, target_for: callable, sleep: float) -> list[float]:
    out = target_for.out  # type: ignore[attr-defined]
    watcher = Watcher(out)
    watcher.start()
    sent: dict[int, float] = {}
    for k in range(appends):
        path = target_for(k % files)
        with path.open("ab") as fh:
            sent[k] = time.perf_counter()
            fh.write(assistant(path.stem, k))
        time.sleep(sleep)
    deadline = time.perf_counter() + 10
    while len(watcher.seen) < appends and time.perf_counter() < deadline:
        time.sleep(0.01)
    watcher.stop = True
    missing = appends - len(watcher.seen)
    if missing:
        print(f"  {missing} appends never showed up")
    return [(watcher.seen[k] - sent[k]) * 1000 for k in sorted(watcher.seen)]


def latency(appends: int, files: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        proj = t / "projects" / "bench"
        proj.mkdir(parents=True)
        paths = [proj / f"00000000-0000-4000-8000-{i:012d}.jsonl" for i in range(files)]
        for p in paths:
            p.write_bytes(prompt(p.stem))
        out = t / "out.jsonl"
        daemon = tail_daemon(t, out, "--log-format", "json")
        time.sleep(2.0)

        def via_daemon(i: int) -> Path:
            return paths[i]

        via_daemon.out = out  # type: ignore[attr-defined]
        got = measure(appends, files, via_daemon, 0.01)
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=20)

        # Baseline: the same loop with no daemon: the bench appends to the file it reads.
        base_out = t / "self.jsonl"
        base_out.write_bytes(b"")

        def direct(i: int) -> Path:
            return base_out

        direct.out = base_out  # type: ignore[attr-defined]
        base = measure(min(appends, 300), 1, direct, 0.005)
    p50, p99 = percentile(got, 0.5), percentile(got, 0.99)
    b50, b99 = percentile(base, 0.5), percentile(base, 0.99)
    print(f"latency over {len(got)} appends across {files} files:")
    print(f"  p50 {p50:7.1f} ms  ({p50 / 100:.2f}x the 100 ms target)")
    print(f"  p99 {p99:7.1f} ms  ({p99 / 500:.2f}x the 500 ms target)")
    print(f"  baseline (measurement loop alone): p50 {b50:.2f} ms, p99 {b99:.2f} ms")


def idle(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        t = Path(tmp)
        for i in range(n):
            d = t / "projects" / f"p{i // 100}"
            d.mkdir(parents=True, exist_ok=True)
            shutil.copy(SAMPLE, d / f"00000000-0000-4000-8000-{i:012d}.jsonl")
        daemon = tail_daemon(t, t / "out.jsonl", "--log-format", "json")
        # let it read everything and write its first checkpoints
        time.sleep(15)
        tick = os.sysconf("SC_CLK_TCK")

        def cpu() -> float:
            fields = Path(f"/proc/{daemon.pid}/stat").read_text().rsplit(")", 1)[1].split()
            return (int(fields[11]) + int(fields[12])) / tick

        c0, w0 = cpu(), time.monotonic()
        time.sleep(20)
        c1, w1 = cpu(), time.monotonic()
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=60)
    share = (c1 - c0) / (w1 - w0) * 100
    print(
        f"idle, watching {n} session files: {share:.2f}% of one core "
        f"({share / 1.0:.2f}x the 1% target)"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--appends", type=int, default=1000)
    ap.add_argument("--files", type=int, default=50)
    ap.add_argument("--idle-files", type=int, default=2000)
    a = ap.parse_args()
    latency(a.appends, a.files)
    idle(a.idle_files)


if __name__ == "__main__":
    main()
