"""What masking secrets costs: ``convert`` vs ``convert --no-redact``, side by side.

Every figure is a ratio of two wall times measured in the same run, alternated
(median of ``--repeat``): the machine is noisy, a ratio much less so. Inputs:

* the corpora: each ``testdata/<source>`` folder's inputs (and ``../shared``'s
  public corpus when it is there), copied until they weigh ``--corpus-mb``;
* adversarial lines: a prefix or a near-secret repeated to 100 KB, 1 MB and 4 MB
  inside one JSON string of one stream_v1 line (``sk-``, ``eyJ``, ``AKIA``,
  ``://a:``, ``password=``, …; every kind's own prefix; every kind's example,
  back to back: a line that is nothing but secrets to mask). gitleaks' kinds
  (translator/secrets/gitleaks.py) come along: their prefixes, names and examples.

Redaction may cost at most 3x ``--no-redact`` on any input (issue #14): the
script prints each ratio and exits 1 if one is above that.

Usage: .venv/bin/python bench/redact.py [--repeat 3] [--sizes 100000,1000000,4000000]
           [--only SUBSTRING] [--corpus-mb 20] [--no-corpora]
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from throughput import compile_package  # noqa: E402

from streamv1.translator.secrets import redact  # noqa: E402

BIN = str(Path(sys.executable).parent / "streamv1")
LIMIT = 3.0
SOURCES = ("claude-session", "claude-stream", "stella", "stream_v1")
PUBLIC = ROOT.parent / "shared" / "corpus" / "public"

#: The issue's list, and the shapes each kind's pattern has to reject fast.
ADVERSARIAL = [
    "sk-",
    "eyJ",
    "AKIA",
    "ghp_",
    "://a:",
    "-----BEGIN ",
    "password=",
    "sk-ant-",
    "-eyJ",
    ".eyJ",
    "eyJhbGciOiJIUzI1NiJ9.",
    "xoxb-",
    "glpat-",
    "AIza",
    "Bearer ",
    "password= ",
    "password: field ",
    '"password":"',
    '\\"password\\": \\"',
    "DB_PASSWORD=",
    "token=",
    "api_key: ",
    "secret=",
    "-u a:",
    "--user a:b ",
    "mysql ",
    "mysql -p",
    # the space form (#39): a word per candidate, a name read to where it ends
    "--password ",
    "--db-password x1y2 ",
    "--a-",
    "--a--a",
    "-a ",
    "--token ",
    "--no-password 1234 ",
    "-Password ",
    '\\"--password\\", \\"x1y2\\", ',
    "config ",
    "config set a.token ",
    "configure set aws_secret_access_key x ",
    "docker login ",
    "docker login -p ",
    "login -p x ",
    "://",
    "a://b:",
    "a://b:c@d ",
    "@",
    "://aaaaaaaaaaaaaaaaaaaaaaaa@",
    "PRIVATE KEY",
    "-----BEGIN RSA PRIVATE KEY-----",
    "Private-Lines: 1\n",
    "Authorization: Basic ",
    "AccountKey=",
    "&sig=",
    "0Q~",
    "1:AA",
    "hf_",
    "SG.",
    "MTA5NzY1NDMyMTA5ODc2NTQz.",
    "sk-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa ",
    "a\\n",
    "\\u001b[31m",
]


def prefixes() -> list[str]:
    """Every kind's literal start, as the kinds define it (new kinds come along):
    its secret's, and a name's where a name comes first (``twitter=``)."""
    out = []
    for kind in redact.KINDS:
        m = kind.exact.search(kind.probe)
        if m is None:
            continue
        for group in ("keep", "secret"):
            if group in kind.exact.groupindex and m[group][:8]:
                out.append(m[group][:8].decode())
    return out


def adversarial() -> dict[str, str]:
    cases = {f"repeat {p!r}": p for p in ADVERSARIAL}
    for p in prefixes():
        cases.setdefault(f"repeat {p!r}", p)
    for kind in redact.KINDS:
        cases.setdefault(f"examples {kind.name} {kind.example[:16]!r}", kind.example + " ")
    return cases


def stream_v1(text: str) -> bytes:
    """One run whose assistant message is ``text``."""
    lines = [
        {
            "type": "system",
            "subtype": "init",
            "session_id": "bench",
            "seq": 0,
            "ts": "2026-01-01T00:00:00.000Z",
            "cwd": "/bench",
            "tools": [],
            "mcp_servers": [],
            "agent": {"name": "bench", "provider": "bench", "model": "bench", "role": "primary"},
        },
        {
            "type": "assistant",
            "session_id": "bench",
            "seq": 1,
            "ts": "2026-01-01T00:00:01.000Z",
            "message": {
                "id": "m1",
                "role": "assistant",
                "content": [{"type": "text", "text": text}],
            },
        },
        {
            "type": "result",
            "subtype": "success",
            "session_id": "bench",
            "seq": 2,
            "ts": "2026-01-01T00:00:02.000Z",
            "is_error": False,
            "duration_ms": 1,
            "num_turns": 1,
            "result": "done",
        },
    ]
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def timed(cmd: list[str]) -> float:
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"failed: {' '.join(cmd)}: {proc.stderr.decode()[-500:]}")
    return elapsed


def compare(args: list[str], repeat: int) -> tuple[float, float]:
    """Median wall time with redaction and with --no-redact, alternated."""
    base = [BIN, "--log-level", "error", "convert", "--jobs", "1", "-o", "/dev/null", *args]
    on, off = [], []
    for _ in range(repeat):
        off.append(timed([*base, "--no-redact"]))
        on.append(timed(base))
    return statistics.median(on), statistics.median(off)


def corpora(tmp: Path, size_mb: float) -> dict[str, list[str]]:
    """Each source's testdata inputs (and the public corpus), copied up to size_mb."""
    sets: dict[str, tuple[str, Path, list[Path]]] = {}
    for source in SOURCES:
        base = ROOT / "testdata" / source
        files = sorted(p for p in base.rglob("*.jsonl") if ".expected." not in p.name)
        sets[f"testdata/{source}"] = (source, base, files)
    if PUBLIC.exists():
        files = sorted(
            p
            for p in PUBLIC.rglob("*")
            if p.suffix in (".jsonl", ".ndjson") and "scoutme__milk" not in p.parts
        )
        sets["../shared public corpus"] = ("auto", PUBLIC, files)
    out: dict[str, list[str]] = {}
    for label, (source, base, files) in sets.items():
        if not files:
            continue
        target = tmp / label.replace("/", "_").replace(" ", "_")
        total, copy = 0, 0
        while total < size_mb * 1_000_000:
            for f in files:  # each copy in its own folder, the corpus' layout kept
                dest = target / f"copy{copy:04d}" / f.relative_to(base)
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, dest)
                meta = f.with_name(f.name.replace(".jsonl", ".meta.json"))
                if meta.exists():
                    shutil.copyfile(meta, dest.with_name(meta.name))
                total += f.stat().st_size
            copy += 1
        out[f"{label} ({total / 1e6:.0f} MB)"] = ["--source", source, str(target)]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--sizes", default="100000,1000000,4000000")
    ap.add_argument("--only", help="only the inputs whose label holds this")
    ap.add_argument("--corpus-mb", type=float, default=20)
    ap.add_argument("--no-corpora", action="store_true")
    a = ap.parse_args()
    compile_package()  # measured as installed
    sizes = [int(s) for s in a.sizes.split(",")]
    worst = 0.0
    over: list[str] = []
    print(f"{'input':58} {'redact':>8} {'--no-redact':>11} {'ratio':>6}")

    def report(label: str, on: float, off: float) -> None:
        nonlocal worst
        ratio = on / off
        worst = max(worst, ratio)
        flag = "  > 3x" if ratio > LIMIT else ""
        if flag:
            over.append(label)
        print(f"{label[:58]:58} {on:7.3f}s {off:10.3f}s {ratio:5.2f}x{flag}", flush=True)

    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        if not a.no_corpora:
            for label, args in corpora(tmp, a.corpus_mb).items():
                if a.only and a.only not in label:
                    continue
                report(label, *compare(args, a.repeat))
        for label, piece in adversarial().items():
            if a.only and a.only not in label:
                continue
            for size in sizes:
                path = tmp / "adversarial.jsonl"
                path.write_bytes(stream_v1((piece * (size // len(piece) + 1))[:size]))
                name = f"{label} x {size // 1000} KB"
                report(name, *compare(["--source", "stream_v1", str(path)], a.repeat))
    print(
        f"worst ratio {worst:.2f}x (limit {LIMIT:.0f}x); "
        f"{len(over)} over the limit{': ' + ', '.join(over) if over else ''}"
    )
    print(orjson.dumps({"python": sys.version.split()[0], "cores": os.cpu_count()}).decode())
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
