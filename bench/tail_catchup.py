"""The daemon catching up one big file (#23 items 2 and 3), next to convert of the
same file in the same run: peak RSS (the ratio is the figure: within 1.5x), and how
long a SIGTERM takes at random points of the catch-up (under a second), with the
output exactly convert's once the daemon, restarted, has gone on.

    python bench/tail_catchup.py [MB] [STOPS]      # defaults: 200 MB, 5 stops
"""

from __future__ import annotations

import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE = ROOT / "testdata" / "claude-session" / "interactive_four_turns.jsonl"
BIN = shutil.which("streamv1", path=str(Path(sys.executable).parent)) or "streamv1"


def peak_kb(cmd: list[str]) -> tuple[int, float]:
    """A child's own peak RSS (KiB: its VmHWM, read until it ends; wait4's
    ru_maxrss would count the pages copied from this process at fork) and its
    wall time."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    peak, status = 0, Path(f"/proc/{proc.pid}/status")
    while proc.poll() is None:
        try:
            line = next(x for x in status.read_text().splitlines() if x.startswith("VmHWM:"))
            peak = max(peak, int(line.split()[1]))
        except (OSError, StopIteration):
            pass
        time.sleep(0.005)
    return peak, time.monotonic() - start


def tail_cmd(tmp: Path) -> list[str]:
    return [
        BIN,
        "tail",
        str(tmp / "projects"),
        "-o",
        str(tmp / "out.jsonl"),
        "--state",
        str(tmp / "state.json"),
        "--no-ingest",
        "--idle-close",
        "1",
    ]


def until_quiet(out: Path, quiet: float = 3.0) -> None:
    """Until the output has grown and then not for ``quiet`` seconds."""
    last, since = -1, time.monotonic()
    while True:
        size = out.stat().st_size if out.exists() else 0
        if size != last:
            last, since = size, time.monotonic()
        elif size and time.monotonic() - since > quiet:
            return
        time.sleep(0.1)


def main() -> None:
    mb = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    stops = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    rng = random.Random(1)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        (tmp / "projects" / "p").mkdir(parents=True)
        big = tmp / "projects" / "p" / "big.jsonl"
        src = SAMPLE.read_bytes()
        big.write_bytes(src * (mb * 1_000_000 // len(src) + 1))
        conv_kb, conv_s = peak_kb([BIN, "convert", str(big), "-o", str(tmp / "c.jsonl")])
        print(f"file: {big.stat().st_size / 1e6:.0f} MB")
        print(f"convert: peak RSS {conv_kb / 1024:.0f} MiB, {conv_s:.1f} s")
        proc = subprocess.Popen(tail_cmd(tmp), stderr=subprocess.DEVNULL)
        start = time.monotonic()
        until_quiet(tmp / "out.jsonl")
        status = Path(f"/proc/{proc.pid}/status").read_text().splitlines()
        hwm = int(next(x for x in status if x.startswith("VmHWM:")).split()[1])
        proc.send_signal(signal.SIGTERM)
        proc.wait()
        print(
            f"tail catch-up: peak RSS {hwm / 1024:.0f} MiB "
            f"({hwm / conv_kb:.2f}x convert), {time.monotonic() - start - 3:.1f} s"
        )
        # Stops at random points of a fresh catch-up, each restart going on.
        for path in (tmp / "out.jsonl", tmp / "state.json"):
            path.unlink()
        took = []
        for _ in range(stops):
            proc = subprocess.Popen(tail_cmd(tmp), stderr=subprocess.DEVNULL)
            time.sleep(rng.uniform(0.2, 1.5))
            sent = time.monotonic()
            proc.send_signal(signal.SIGTERM)
            proc.wait()
            took.append(time.monotonic() - sent)
        proc = subprocess.Popen(tail_cmd(tmp), stderr=subprocess.DEVNULL)
        until_quiet(tmp / "out.jsonl")
        proc.send_signal(signal.SIGTERM)
        proc.wait()
        got = (tmp / "out.jsonl").read_bytes().replace(b',"_meta":{"origin":"transcript"}}', b"}")
        same = got == (tmp / "c.jsonl").read_bytes()
        print(
            f"SIGTERM during catch-up: {len(took)} stops, max {max(took) * 1000:.0f} ms; "
            f"output after the restarts {'is' if same else 'is NOT'} convert's, byte for byte"
        )


if __name__ == "__main__":
    main()
