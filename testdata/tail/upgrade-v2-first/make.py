"""Make the upgrade-v2-first fixture: five Claude Code sessions cut part way,
followed by the first release whose checkpoint held JSON state (commit 3eb8d41),
its ``streamv1 tail`` stopped with runs open. Usage (see README.md):

    python make.py OLD_STREAMV1 OUT_DIR

OLD_STREAMV1 is that release's installed command; the session files come from
this checkout's testdata/claude-session (listed in sources.json).
"""

import json
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TESTDATA = HERE.parent.parent
old, out = sys.argv[1], Path(sys.argv[2]).resolve()
sources = json.loads((HERE / "sources.json").read_text())
shutil.rmtree(out / "projects", ignore_errors=True)
for name in ("out.jsonl", "state.json"):
    (out / name).unlink(missing_ok=True)
for rel, (src, frac) in sources.items():
    data = (TESTDATA / src).read_bytes()
    n = len(data) if frac >= 1 else data.index(b"\n", int(len(data) * frac)) + 1
    target = out / "projects" / rel
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(data[:n])
state = out / "state.json"
cmd = [old, "tail", str(out / "projects"), "--output", str(out / "out.jsonl")]
cmd += ["--state", str(state), "--idle-close", "0", "--no-ingest", "--log-format", "json"]
proc = subprocess.Popen(cmd)
last, still = -1, 0
while still < 12:  # 3 s without a new output byte: every file read
    time.sleep(0.25)
    size = (out / "out.jsonl").stat().st_size if (out / "out.jsonl").exists() else 0
    still, last = (still + 1 if size == last else 0), size
proc.send_signal(signal.SIGTERM)
assert proc.wait(30) == 0
for extra in out.glob("state.json?*"):
    extra.unlink()  # its lock file
state.write_text(state.read_text().replace(str(out), "@ROOT@"))
