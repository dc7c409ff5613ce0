"""Batch throughput, parallel speed-up and peak memory, as ratios measured side by
side in the same run (machines here are noisy: absolute times mean little).

Figures (each its own command; `all` runs them in turn):

  ratio    `streamv1 convert` vs a bare orjson.loads + orjson.dumps pass over the same
           bytes (one process each, alternated, median of --repeat), on
           (a) the Claude Code 2.1.332 captures repeated to ~100 MB,
           (b) the public corpus repeated to ~100 MB,
           (c) stella events (the testdata runs repeated to ~100 MB),
           (d) Gemini CLI 0.61 chat files (each a long session: the corpus' turns one
               after another, ~2 MB a file) and stream-json (the runs one after another).
           (e) Codex CLI 0.171.0 rollouts and exec --json streams repeated to ~100 MB,
           (f) the captures' durable session files, (g) their print-mode streams,
           (h) those with partial messages, (i) convert's own output re-framed.
           Each printed next to its goal (#26: GOALS).
  floor    stella events through the least any Python translator does (parse, pick the
           type, build the stream_v1 line with seq and ts, encode, write 64 KiB at a
           time; no reader, adapter, neutral events, framer or scrubber) next to the
           bare pass and streamv1: how much of the gap is the layered data path.
  startup  converting one small file vs a bare python+orjson process (goal <= 2.0x).
  redact   what masking secrets costs: convert vs convert --no-redact (public corpus).
  jobs     `--jobs 2` vs `--jobs 1` on an archive of >= 200 session files (the public
           corpus repeated to ~300 MB, ~900 files). Target >= 1.8x; and what two
           independent processes reach on the same halves (goal: >= 95 % of it).
  jobs-scale
           the default `--jobs` vs `--jobs 1` from 1 file to 10,000. Goal >= 1.00x.
  rss      peak RSS converting one 1 GB session file, next to a 100 MB one (both
           generated from the corpus). Target < 100 MB, not growing with size.
  instructions
           the ratio figure for (a) and (b) in instructions counted by valgrind
           (callgrind) on ~25 MB: no noise, so it is what a change is judged by
           (docs/performance.md). Not part of `all` (minutes under valgrind).

Usage: .venv/bin/python bench/throughput.py [ratio|floor|redact|jobs|rss|instructions|all]
           [--size-mb 100] [--repeat 5]
The corpora come from ../shared when it is there, else from testdata/ (smaller mix).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared" / "corpus"
BIN = str(Path(sys.executable).parent / "streamv1")
CORPORA = {
    "claude": "(a) 2.1.332 captures",
    "public": "(b) public corpus",
    "stella": "(c) stella events",
    "gemini": "(d) Gemini CLI chat files and stream-json",
    "codex": "(e) Codex 0.171.0 rollouts + exec --json",
    "durable": "(f) 2.1.332 durable session files",
    "stream": "(g) 2.1.332 print-mode streams",
    "partial": "(h) 2.1.332 print-mode streams with partial messages",
    "reframe": "(i) stream_v1 re-framed (convert's own output of the captures)",
}
#: #26's goals, as ratios to the bare pass (the README's table).
GOALS = {
    "claude": 0.8,
    "durable": 0.8,
    "public": 0.6,
    "reframe": 0.6,
    "stream": 0.5,
    "partial": 0.5,
    "stella": 0.3,
    "gemini": 0.5,
    "codex": 0.5,
}

BARE = r"""
import os, sys, orjson
out = open("/dev/null", "wb")
names = sorted(os.path.join(d, f) for d, _, fs in os.walk(sys.argv[1]) for f in fs
               if f.endswith(".jsonl"))
for name in names:
    with open(name, "rb") as fh:
        for line in fh:
            if line.strip():
                out.write(orjson.dumps(orjson.loads(line)) + b"\n")
"""


def corpus_files(kind: str) -> list[Path]:
    if kind == "claude":
        base = SHARED / "claude-code-2.1.332"
        if base.exists():
            return sorted(p for p in base.rglob("*.jsonl") if p.name != "requests.jsonl")
        return sorted((ROOT / "testdata").glob("claude-*/**/*[!d].jsonl"))
    if kind in ("durable", "stream", "partial", "reframe"):
        base = SHARED / "claude-code-2.1.332"
        if not base.exists():
            return sorted(
                (ROOT / "testdata").glob(
                    "claude-session/*[!d].jsonl"
                    if kind in ("durable", "reframe")
                    else "claude-stream/*[!d].jsonl"
                )
            )
        if kind in ("durable", "reframe"):
            return sorted(base.glob("*/projects/**/*.jsonl"))
        streams = sorted(base.glob("*/stream*.jsonl"))
        return [p for p in streams if p.parent.name.startswith("s9_partial") == (kind == "partial")]
    if kind == "public":
        base = SHARED / "public"
        if base.exists():
            return sorted(
                p
                for p in base.rglob("*")
                if p.suffix in (".jsonl", ".ndjson") and "scoutme__milk" not in p.parts
            )
        return sorted((ROOT / "testdata").glob("claude-session/*[!d].jsonl"))
    if kind == "gemini":
        base = SHARED / "gemini-0.61.0"
        if base.exists():  # the CLI's own bytes (testdata's trim the session context)
            chats = sorted(
                p
                for p in base.glob("*/durable/.gemini/tmp/*/chats/session-*.jsonl")
                if "g8_" not in str(p)
            )
            streams = sorted(p for p in base.glob("*/stdout*.jsonl") if "g8_" not in str(p))
            return chats + streams
        return sorted(
            p
            for p in (ROOT / "testdata" / "gemini").glob("*.jsonl")
            if ".expected." not in p.name and "killed" not in p.name and "document" not in p.name
        )
    if kind == "codex":
        base = SHARED / "codex-0.171.0"
        if base.exists():
            return sorted(p for p in base.rglob("*.jsonl") if p.name != "requests.jsonl")
        return sorted(
            p for p in (ROOT / "testdata" / "codex").rglob("*.jsonl") if ".expected." not in p.name
        )
    return sorted(
        p
        for p in (ROOT / "testdata" / "stella").glob("*.jsonl")
        if ".expected." not in p.name and "bad_body" not in p.name and "killed" not in p.name
    )


def build_archive(kind: str, target: Path, size_mb: int) -> list[Path]:
    """Copies of the corpus files, each copy in its own folder, up to size_mb."""
    files = [f for f in corpus_files(kind) if ".expected." not in f.name]
    if kind == "reframe":
        with tempfile.TemporaryDirectory() as converted:
            return _copies(kind, _converted(files, Path(converted)), target, size_mb)
    if kind == "stella":
        return _stella_journals(files, target, size_mb)
    if kind == "gemini":
        return _gemini_sessions(files, target, size_mb)
    return _copies(kind, files, target, size_mb)


def _copies(kind: str, files: list[Path], target: Path, size_mb: int) -> list[Path]:
    out: list[Path] = []
    total = 0
    copy = 0
    while total < size_mb * 1_000_000:
        for f in files:
            rel = f.name
            if kind == "codex" and f.name.startswith("stdout"):
                rel = f"{f.parent.name}-{f.name}"  # one scenario's stdout beside another's
            dest = target / f"copy{copy:04d}" / rel
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(f, dest)
            meta = f.with_name(f.name.replace(".jsonl", ".meta.json"))
            if meta.exists():
                shutil.copyfile(meta, dest.with_name(meta.name))
            out.append(dest)
            total += f.stat().st_size
        copy += 1
    return out


def _converted(files: list[Path], folder: Path) -> list[Path]:
    """Each file converted to stream_v1 (one file each): the input of re-framing."""
    out = []
    for i, f in enumerate(files):
        dest = folder / f"{i:04d}-{f.stem}.jsonl"
        dest.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [BIN, "--log-level", "error", "convert", "--lenient", str(f), "-o", str(dest)],
            check=True,
        )
        out.append(dest)
    return out


def _stella_journals(files: list[Path], target: Path, size_mb: int) -> list[Path]:
    """stella journals of ~2 MB each: the fixture runs, one after another."""
    runs = b"".join(f.read_bytes() for f in files if "newer" not in f.name)
    out: list[Path] = []
    total = 0
    while total < size_mb * 1_000_000:
        path = target / f"run{len(out):04d}" / "stella-events.jsonl"
        path.parent.mkdir(parents=True)
        blob = runs * max(1, 2_000_000 // len(runs))
        path.write_bytes(blob)
        out.append(path)
        total += len(blob)
    return out


def _gemini_sessions(files: list[Path], target: Path, size_mb: int) -> list[Path]:
    """Gemini chat files of ~2 MB each (one metadata line, then the fixtures' turns
    one after another) and stream-json files (the fixtures' runs one after another)."""
    chat, stream = b"", b""
    head = b""
    for f in files:
        lines = f.read_bytes().splitlines(keepends=True)
        if f.name.startswith(("chat_", "session-")):
            head = head or lines[0] + lines[1]
            chat += b"".join(x for x in lines if not x.startswith(b'{"sessionId"'))
        else:
            stream += b"".join(lines)
    out: list[Path] = []
    total = 0
    while total < size_mb * 1_000_000:
        n = len(out)
        name = f"session-2026-12-01T19-47-{n:08x}.jsonl" if n % 2 == 0 else "stdout.jsonl"
        path = target / f"run{n:04d}" / name
        path.parent.mkdir(parents=True)
        body = chat if n % 2 == 0 else stream
        blob = (head if n % 2 == 0 else b"") + body * max(1, 2_000_000 // len(body))
        path.write_bytes(blob)
        out.append(path)
        total += len(blob)
    return out


def timed(cmd: list[str]) -> tuple[float, int]:
    """Wall time and the child's peak RSS (KiB) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    start = time.perf_counter()
    proc = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(f"failed: {' '.join(cmd[:4])}…: {proc.stderr.decode()[-500:]}")
    return elapsed, max(before, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def ratio(size_mb: int, repeat: int, only: str | None = None) -> None:
    for kind, label in CORPORA.items():
        if only and kind != only:
            continue
        with tempfile.TemporaryDirectory() as tmp:
            files = build_archive(kind, Path(tmp), size_mb)
            mb = sum(f.stat().st_size for f in files) / 1e6
            ours, bare = [], []
            for _ in range(repeat):
                bare.append(timed([sys.executable, "-c", BARE, tmp])[0])
                ours.append(
                    timed(
                        [
                            BIN,
                            "--log-level",
                            "error",
                            "convert",
                            "--jobs",
                            "1",
                            "-o",
                            "/dev/null",
                            tmp,
                        ]
                    )[0]
                )
            b, o = statistics.median(bare), statistics.median(ours)
            target = f"goal >= {GOALS[kind]}x" if kind in GOALS else "no goal"
            print(
                f"{label}: {mb:.0f} MB in {len(files)} files: bare orjson {mb / b:.0f} MB/s, "
                f"streamv1 convert {mb / o:.0f} MB/s -> {b / o:.2f}x the bare pass "
                f"({target})"
            )


def redact_cost(size_mb: int, repeat: int) -> None:
    """What masking secrets costs: convert vs convert --no-redact, public corpus."""
    with tempfile.TemporaryDirectory() as tmp:
        build_archive("public", Path(tmp), size_mb)
        on, off = [], []
        base = [BIN, "--log-level", "error", "convert", "--jobs", "1", "-o", "/dev/null"]
        for _ in range(repeat):
            off.append(timed([*base, "--no-redact", tmp])[0])
            on.append(timed([*base, tmp])[0])
        a, b = statistics.median(off), statistics.median(on)
        print(
            f"redaction on vs --no-redact, public corpus: {b:.2f}s vs {a:.2f}s -> "
            f"{a / b:.2f}x the throughput ({(b / a - 1) * 100:+.1f}% time)"
        )


def jobs(repeat: int, size_mb: int = 300) -> None:
    """Real session files (the public corpus) repeated: hundreds of files, ~300 MB,
    so the fixed cost of starting a process weighs as it does on a real archive.

    Next to it, what the machine itself allows: the same archive converted as two
    independent halves side by side (two processes, no pool, no spooling) against
    the one-process run. That is the most any way of sharing the work can reach here
    (noisy neighbours and shared caches included); all three are measured in turn,
    in the same loop."""
    with tempfile.TemporaryDirectory() as tmp:
        files = build_archive("public", Path(tmp), size_mb)
        cmd = [BIN, "--log-level", "error", "convert", "-o", "/dev/null"]
        dirs = sorted(str(d) for d in Path(tmp).iterdir())
        halves = [dirs[: len(dirs) // 2], dirs[len(dirs) // 2 :]]
        t1, t2, par = [], [], []
        for _ in range(repeat):
            t1.append(timed([*cmd, "--jobs", "1", tmp])[0])
            t2.append(timed([*cmd, "--jobs", "2", tmp])[0])
            start = time.perf_counter()
            procs = [
                subprocess.Popen([*cmd, "--jobs", "1", *half], stderr=subprocess.DEVNULL)
                for half in halves
            ]
            for proc in procs:
                proc.wait()
            par.append(time.perf_counter() - start)
        a, b, c = (statistics.median(t) for t in (t1, t2, par))
        print(
            f"--jobs 2 vs --jobs 1 on {len(files)} files: {a:.2f}s vs {b:.2f}s -> "
            f"{a / b:.2f}x (target 1.8x; {os.cpu_count()} cores)"
        )
        print(
            f"  the machine's own ceiling (two independent halves side by side vs the "
            f"one-process run): {a / c:.2f}x; --jobs 2 reaches {c / b:.0%} of it"
        )


#: The floor for stella events (see ``floor``): what every Python translation of
#: them does at the least, with none of the data path's stages.
FLOOR = r"""
import os, sys, time, orjson
loads, dumps = orjson.loads, orjson.dumps
out = open("/dev/null", "wb")
names = sorted(os.path.join(d, f) for d, _, fs in os.walk(sys.argv[1]) for f in fs
               if f.endswith(".jsonl"))
seconds = {}
def iso(ms):
    s, m = divmod(ms, 1000)
    p = seconds.get(s)
    if p is None:
        p = seconds[s] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(s))
    return f"{p}.{m:03d}Z"
def main():
    for name in names:
        buf, seq, sid = bytearray(), 0, None
        with open(name, "rb") as fh:
            for line in fh:
                if not line.strip():
                    continue
                d = loads(line)
                t, ts = d.get("type"), d.get("ts")
                ts = iso(ts) if type(ts) is int else None
                if sid is None:
                    sid = d.get("session_id")
                if t == "text_delta":
                    o = {"type": "stream_event", "session_id": sid, "seq": seq, "ts": ts,
                         "event": {"type": "content_block_delta", "index": 0,
                                   "delta": {"type": "text_delta", "text": d.get("delta")}}}
                elif t == "text":
                    o = {"type": "assistant", "session_id": sid, "seq": seq, "ts": ts,
                         "message": {"role": "assistant",
                                     "content": [{"type": "text", "text": d.get("text")}]}}
                else:
                    o = {"type": "system", "subtype": t, "session_id": sid, "seq": seq,
                         "ts": ts, "extension": d}
                seq += 1
                buf += dumps(o)
                buf += b"\n"
                if len(buf) >= 65536:
                    out.write(buf)
                    buf.clear()
        out.write(buf)
main()
"""


def floor(size_mb: int, repeat: int) -> None:
    """stella events: the bare pass, the floor (FLOOR) and streamv1, alternated."""
    with tempfile.TemporaryDirectory() as tmp:
        files = build_archive("stella", Path(tmp), size_mb)
        mb = sum(f.stat().st_size for f in files) / 1e6
        bare, least, ours = [], [], []
        for _ in range(repeat):
            bare.append(timed([sys.executable, "-c", BARE, tmp])[0])
            least.append(timed([sys.executable, "-c", FLOOR, tmp])[0])
            ours.append(
                timed(
                    [BIN, "--log-level", "error", "convert", "--jobs", "1", "-o", "/dev/null", tmp]
                )[0]
            )
        b, f, o = (statistics.median(t) for t in (bare, least, ours))
        print(
            f"stella events, {mb:.0f} MB: the floor (no data-path stages) {b / f:.2f}x the "
            f"bare pass, streamv1 convert {b / o:.2f}x (goal >= {GOALS['stella']}x)"
        )


def startup(repeat: int) -> None:
    """Converting one small file against a bare python+orjson process over the same
    file (what any Python translator pays to start): medians of alternated runs.
    Goal (#26): <= 2.0x."""
    small = ROOT / "testdata" / "claude-session" / "print_mode_bash.jsonl"
    bare_cmd = [
        sys.executable,
        "-c",
        "import orjson, sys\nfor line in open(sys.argv[1], 'rb'): orjson.dumps(orjson.loads(line))",
        str(small),
    ]
    ours_cmd = [BIN, "--log-level", "error", "convert", str(small), "-o", "/dev/null"]
    bare, ours = [], []
    for _ in range(max(repeat, 21)):
        bare.append(timed(bare_cmd)[0])
        ours.append(timed(ours_cmd)[0])
    b, o = statistics.median(bare), statistics.median(ours)
    print(
        f"start-up, one small file: streamv1 convert {o * 1000:.1f} ms, a bare python+orjson "
        f"pass {b * 1000:.1f} ms -> {o / b:.2f}x (goal <= 2.0x)"
    )


def jobs_scale(repeat: int) -> None:
    """The default --jobs against one process, from 1 file to 10,000 (the 2.1.332
    captures, real sizes, cycled; ~135 MB a thousand files). Goal: never slower
    (>= 1.00x at every size)."""
    files = [f for f in corpus_files("claude") if ".expected." not in f.name]
    for n in (1, 10, 100, 1000, 10000):
        with tempfile.TemporaryDirectory() as tmp:
            for i in range(n):
                folder = Path(tmp) / f"s{i:05d}"
                folder.mkdir()
                shutil.copyfile(files[i % len(files)], folder / files[i % len(files)].name)
            cmd = [BIN, "--log-level", "error", "convert", "--lenient", "-o", "/dev/null"]
            one, default = [], []
            for _ in range(repeat):
                one.append(timed([*cmd, "--jobs", "1", tmp])[0])
                default.append(timed([*cmd, tmp])[0])
            a, b = statistics.median(one), statistics.median(default)
            print(
                f"default --jobs vs --jobs 1, {n} files: {b:.2f}s vs {a:.2f}s -> {a / b:.2f}x "
                "(goal >= 1.00x)"
            )


def instructions(size_mb: int) -> None:
    """The ratio figure counted in instructions (valgrind's callgrind), not seconds:
    the same count for the same code and input whatever else the machine does, so
    a change of a few percent shows where wall time is lost in noise. Not the
    target's measure (instructions are not time: orjson's SIMD work does more per
    instruction than the interpreter), but the one to judge a change by."""
    if shutil.which("valgrind") is None:
        print("instructions: valgrind is not installed; skipped")
        return
    for kind, label in CORPORA.items():
        if kind == "stella":
            continue  # no target to judge by, and ~75-byte lines take long under valgrind
        with tempfile.TemporaryDirectory() as tmp:
            files = build_archive(kind, Path(tmp), size_mb)
            mb = sum(f.stat().st_size for f in files) / 1e6
            bare = _instructions([sys.executable, "-c", BARE, tmp])
            ours = _instructions(
                [BIN, "--log-level", "error", "convert", "--jobs", "1", "-o", "/dev/null", tmp]
            )
            print(
                f"{label}: {mb:.0f} MB: bare orjson {bare / 1e9:.3f} G instructions, "
                f"streamv1 convert {ours / 1e9:.3f} G -> {bare / ours:.3f}x"
            )


def _instructions(cmd: list[str]) -> int:
    proc = subprocess.run(
        ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=False,
    )
    for line in proc.stderr.splitlines():
        if "Collected :" in line:
            return int(line.rsplit(":", 1)[1])
    sys.exit(f"callgrind counted nothing: {proc.stderr[-500:]}")


def big_session(path: Path, size_mb: int) -> None:
    """One long session: the corpus' turns again and again, one session id."""
    base = SHARED / "claude-code-2.1.332"
    srcs = (
        sorted(base.glob("*/projects/*/*.jsonl"))
        if base.exists()
        else sorted((ROOT / "testdata" / "claude-session").glob("*[!d].jsonl"))
    )
    chunk = b"".join(p.read_bytes() for p in srcs)
    with path.open("wb") as fh:
        written = 0
        while written < size_mb * 1_000_000:
            fh.write(chunk)
            written += len(chunk)


def rss() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        results = []
        for size in (100, 1000):
            f = Path(tmp) / f"session-{size}.jsonl"
            big_session(f, size)
            cmd = [
                sys.executable,
                "-c",
                "import resource, subprocess, sys; "
                "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, "
                "stderr=subprocess.DEVNULL); "
                "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)",
                BIN,
                "--log-level",
                "error",
                "convert",
                "--source",
                "claude-session",
                str(f),
            ]
            start = time.perf_counter()
            kib = int(subprocess.run(cmd, capture_output=True, check=True).stdout)
            results.append((size, kib / 1024, time.perf_counter() - start))
            f.unlink()
        for size, mib, secs in results:
            print(
                f"peak RSS converting a {size} MB session file: {mib:.1f} MiB "
                f"({mib / 100:.2f}x the 100 MB target; {size / secs:.0f} MB/s)"
            )
        print(f"growth from 100 MB to 1 GB input: {results[1][1] / results[0][1]:.2f}x")


def compile_package() -> None:
    """Bytecode for streamv1's modules, so it is measured as installed: a wheel
    install has bytecode; an editable one under PYTHONDONTWRITEBYTECODE would
    compile every module on every start."""
    subprocess.run(
        [
            sys.executable,
            "-m",
            "compileall",
            "-q",
            str(ROOT / "translator"),
            str(ROOT / "adapters"),
        ],
        check=True,
        stdout=subprocess.DEVNULL,
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument(
        "figure",
        nargs="?",
        default="all",
        choices=[
            "ratio",
            "floor",
            "startup",
            "redact",
            "jobs",
            "jobs-scale",
            "rss",
            "instructions",
            "all",
        ],
    )
    ap.add_argument(
        "--size-mb", type=int, default=None, help="archive size (default 100; instructions: 25)"
    )
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", choices=list(CORPORA), help="ratio: one corpus only")
    a = ap.parse_args()
    compile_package()
    if a.figure in ("ratio", "all"):
        ratio(a.size_mb or 100, a.repeat, a.only)
    if a.figure in ("floor", "all"):
        floor(a.size_mb or 100, a.repeat)
    if a.figure in ("startup", "all"):
        startup(a.repeat)
    if a.figure in ("redact", "all"):
        redact_cost(a.size_mb or 100, a.repeat)
    if a.figure in ("jobs", "all"):
        jobs(a.repeat)
    if a.figure in ("jobs-scale", "all"):
        jobs_scale(a.repeat)
    if a.figure in ("rss", "all"):
        rss()
    if a.figure == "instructions":  # not in "all": it takes minutes under valgrind
        instructions(a.size_mb or 25)
    print(json.dumps({"python": sys.version.split()[0], "cores": os.cpu_count()}))


if __name__ == "__main__":
    main()
