"""What the follower's in-place-rewrite check costs (issue #13, defect 2).

Before reading what a file gained, the follower compares the 4 KiB just before its
offset with what it read there (one pread): a file truncated and rewritten in place
with the same head is then read from its start, not from the middle of a line.
This times a follower polling a file that gains one record per poll, with the
check (as shipped) and without it (the baseline, in the same run), and prints the
per-poll cost of each and their ratio.

Usage: .venv/bin/python bench/tail_identity.py [--polls 5000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from streamv1.translator.tail.follower import FileFollower
from streamv1.translator.translate.translation import Totals

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "testdata" / "claude-session" / "print_mode_bash.jsonl"


class Unchecked(FileFollower):
    """The baseline: a follower that keeps no tail, so it never checks one."""

    def _keep_tail(self, fd: int, chunk: bytes, at: int, before: int) -> None:
        pass


def run(polls: int, check: bool) -> float:
    lines = SAMPLE.read_bytes().splitlines(keepends=True)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "5eccd76e-a2bd-46d3-9ac7-285807858239.jsonl"
        path.write_bytes(b"".join(lines[:12]))
        kind = FileFollower if check else Unchecked
        f = kind(str(path), Totals(), lambda: "2026-01-01T00:00:00.000Z")
        f.poll()
        record = lines[14]  # an assistant record of the open run (~1.3 KB)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        start = time.perf_counter()
        for _ in range(polls):
            os.write(fd, record)
            f.poll()
            f.out.clear()
        took = time.perf_counter() - start
        os.close(fd)
        f.close_fd()
    return took / polls


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--polls", type=int, default=5000)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    with_check, without = [], []
    for _ in range(args.repeat):  # alternated, so drift hits both alike
        without.append(run(args.polls, check=False))
        with_check.append(run(args.polls, check=True))
    a, b = statistics.median(with_check), statistics.median(without)
    print(
        f"poll + append of one record: {a * 1e6:.1f} us with the rewrite check, "
        f"{b * 1e6:.1f} us without (baseline); ratio {a / b:.3f}x, "
        f"cost {max(0.0, a - b) * 1e6:.1f} us a poll"
    )


if __name__ == "__main__":
    main()
