"""Two installs of streamv1 side by side: `convert` of the same archive, piped to
/dev/null, alternated run by run (A B A B ...), medians. For "this change costs
nothing": a ratio measured in one run on one machine, never an absolute time.

Usage: .venv/bin/python bench/ab.py BASE_STREAMV1 [NEW_STREAMV1] [--only claude|public|...]
           [--size-mb 60] [--repeat 7] [--jobs 1]
NEW_STREAMV1 defaults to this checkout's .venv/bin/streamv1. The archives are
throughput.py's (the corpora from ../shared when there, else testdata/).
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from throughput import BIN, CORPORA, build_archive


def timed(binary: str, folder: Path, jobs: int) -> float:
    start = time.perf_counter()
    subprocess.run(
        [binary, "--log-level", "error", "convert", "--jobs", str(jobs), "--lenient", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    return time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("base")
    ap.add_argument("new", nargs="?", default=BIN)
    ap.add_argument("--only", choices=list(CORPORA), action="append")
    ap.add_argument("--size-mb", type=int, default=60)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--jobs", type=int, default=1)
    args = ap.parse_args()
    for kind in args.only or ["claude", "public"]:
        with tempfile.TemporaryDirectory(prefix="streamv1-ab-") as tmp:
            folder = Path(tmp)
            build_archive(kind, folder, args.size_mb)
            timed(args.new, folder, args.jobs)  # the page cache warm for both
            base: list[float] = []
            new: list[float] = []
            for _ in range(args.repeat):
                base.append(timed(args.base, folder, args.jobs))
                new.append(timed(args.new, folder, args.jobs))
            b, n = statistics.median(base), statistics.median(new)
            print(
                f"{CORPORA[kind]}: base {b:.2f} s, new {n:.2f} s (medians of "
                f"{args.repeat}); new runs at {b / n:.3f}x the base's throughput"
            )


if __name__ == "__main__":
    main()
