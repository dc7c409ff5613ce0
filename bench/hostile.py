"""Memory and time of ``streamv1 convert`` on the big hostile inputs of issue #14,
point 8, at their real sizes (the tests prove the same code paths on small ones):

  joined     one 50 MB line of real records joined with no newline (``}{``)
  tiny       one 50 MB line of small records joined (the most records a byte)
  nul        a 2 GB file of NUL bytes (sparse: what a preallocated, never-written
             file is)
  long       one 200 MB line (over the 64 MiB limit) and a record after it

Each runs in a process of its own; its peak RSS comes from getrusage. The inputs
are written to a temp folder and removed after.

    .venv/bin/python bench/hostile.py [joined|tiny|nul|long|all] [--bin STREAMV1]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIN = str(Path(sys.executable).parent / "streamv1")
MB = 1_000_000


def joined(path: Path) -> None:
    records = [
        line
        for case in sorted((ROOT / "testdata" / "claude-session").glob("*.jsonl"))
        if not case.name.endswith(".expected.jsonl")
        for line in case.read_bytes().splitlines()
        if line.startswith(b"{")
    ]
    one = b"".join(records)
    path.write_bytes(one * (50 * MB // len(one) + 1) + b"\n")


def tiny(path: Path) -> None:
    path.write_bytes(b'{"type":"text","text":"a"}' * (50 * MB // 26) + b"\n")


def nul(path: Path) -> None:
    with path.open("wb") as fh:
        fh.truncate(2 << 30)


def long(path: Path) -> None:
    record = (ROOT / "testdata" / "claude-session" / "print_mode_bash.jsonl").read_bytes()
    with path.open("wb") as fh:
        fh.write(b'{"type":"user","message":{"role":"user","content":"')
        block = b"x" * MB
        for _ in range(200):
            fh.write(block)
        fh.write(b'"}}\n' + record)


CASES: dict[str, Callable[[Path], None]] = {
    "joined": joined,
    "tiny": tiny,
    "nul": nul,
    "long": long,
}


def measure(bin_: str, path: Path) -> tuple[float, float, int, str]:
    """(seconds, peak RSS in MiB, exit status, first error line) of one conversion."""
    probe = (
        "import resource, subprocess, sys, time\n"
        "t = time.monotonic()\n"
        "p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)\n"
        "dt = time.monotonic() - t\n"
        "rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "err = [l for l in p.stderr.decode(errors='replace').splitlines() if ': error: ' in l]\n"
        "print(dt, rss, p.returncode, (err or [''])[0][:160], sep='\\t')\n"
    )
    out = (
        subprocess.run(
            [sys.executable, "-c", probe, bin_, "convert", "--source", "auto", str(path)],
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.rstrip("\n")
        .split("\t")
    )
    seconds, rss_kib, status, first = float(out[0]), int(out[1]), int(out[2]), out[3]
    return seconds, rss_kib / 1024, status, first


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("case", nargs="?", default="all", choices=[*CASES, "all"])
    ap.add_argument("--bin", default=BIN, help="the streamv1 command to measure")
    a = ap.parse_args()
    names = list(CASES) if a.case == "all" else [a.case]
    with tempfile.TemporaryDirectory(prefix="streamv1-hostile-") as tmp:
        for name in names:
            path = Path(tmp) / f"{name}.jsonl"
            CASES[name](path)
            size = os.path.getsize(path)
            seconds, rss, status, first = measure(a.bin, path)
            print(
                f"{name:7s} {size / MB:8.0f} MB  {seconds:6.2f} s  peak RSS {rss:7.1f} MiB  "
                f"exit {status}  {first}"
            )
            path.unlink()


if __name__ == "__main__":
    main()
