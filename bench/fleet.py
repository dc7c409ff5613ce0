"""Tail daemon publishing to NATS JetStream (`tail --publish`), measured against a real
`streamv1 tail` and a real nats-server on a loopback port, each figure next to a
baseline measured in the same run (machines here are noisy: absolute times mean little).

1. Throughput: a burst of 20,000 assistant records over 20 session files, all written
   before the daemon starts. Baseline: `tail -o` alone, lines/s from the daemon's start
   until its output holds every line. Then `tail -o --publish`: lines/s from the
   daemon's start until the stream holds every line (its message count, from
   stream_info). Three rounds of each, alternated; prints the medians, the ratio
   publish/local, and whether the stream holds each line once (the count a second
   after it was complete).
2. Latency: tail_latency.py's load (1,000 appends spread over 50 session files, one
   complete record each, 10 ms apart); for each, the time from the write to the moment
   its line reaches a JetStream consumer (an ordered push consumer on `streamv1.>` in
   this process), and, as the baseline for the same appends, to the moment it is in the
   daemon's --output file. The publisher sends only what the daemon has checkpointed,
   so the figure is dominated by --commit-every: measured at the default (0.5 s) and
   at 0.05 s. Prints p50/p99/max of both, of the difference per append (what the bus
   adds past the output file), and the last append's figures (no write after it to
   wake the daemon).

A line that never reaches the stream is reported with what the stream lacks and the
publisher's checkpoint.

3. convert --publish: one session of 10,000 records, `convert -o FILE` against
   `convert --publish` (lines/s; goal >= 20,000), and the stream's count after each.

Usage: .venv/bin/python bench/fleet.py [--lines 20000] [--files 20] [--rounds 3]
           [--appends 1000] [--latency-files 50] [--commit-every 0.5,0.05]
           [--only convert|tail|latency]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(ROOT / "tests"))

import natsserver  # noqa: E402
import tail_latency  # noqa: E402
from tail_latency import BIN, Watcher, assistant, percentile, prompt  # noqa: E402

STREAM = "STREAMV1"
PREFIX = "streamv1"
HOST = "bench"
#: Markers from here up are the latency runs' warm-up records (not measured).
WARM_UP = 10_000_000


def session_paths(root: Path, files: int) -> list[Path]:
    proj = root / "projects" / "bench"
    proj.mkdir(parents=True)
    return [proj / f"00000000-0000-4000-8000-{i:012d}.jsonl" for i in range(files)]


def marker(line: bytes) -> int | None:
    """The k of an assistant record's ``lat-<k>-end`` (as tail_latency's Watcher)."""
    i = line.find(b"lat-")
    if i < 0:
        return None
    return int(line[i + 4 : line.index(b"-end", i)])


class Bus:
    """A nats-py client on a thread of its own: the stream's message count on demand,
    and an ordered push consumer on ``streamv1.>`` noting when each marker arrives."""

    def __init__(self, url: str) -> None:
        import nats

        self.url = url
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.nc = self.call(nats.connect(servers=[url], connect_timeout=2))
        self.js = self.nc.jetstream(timeout=5)
        self.seen: dict[int, float] = {}
        self.received = 0
        self.sub: Any = None

    def call(self, coro: Coroutine[Any, Any, Any], timeout: float = 15.0) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def messages(self) -> int | None:
        """How many messages the stream holds; None while there is no stream."""
        from nats.js.errors import NotFoundError

        async def info() -> int | None:
            try:
                return int((await self.js.stream_info(STREAM)).state.messages)
            except NotFoundError:
                return None

        return self.call(info())

    def drop_stream(self) -> None:
        """A fresh stream for the next run (its duplicate window goes with it)."""
        from nats.js.errors import NotFoundError

        async def drop() -> None:
            with contextlib.suppress(NotFoundError):
                await self.js.delete_stream(STREAM)

        self.call(drop())

    def watch(self) -> None:
        self.seen.clear()
        self.received = 0

        async def on_msg(msg: Any) -> None:
            now = time.perf_counter()
            self.received += 1
            k = marker(msg.data)
            if k is not None:
                self.seen.setdefault(k, now)

        async def subscribe() -> Any:
            return await self.js.subscribe(
                f"{PREFIX}.>", stream=STREAM, cb=on_msg, ordered_consumer=True
            )

        self.sub = self.call(subscribe())

    def unwatch(self) -> None:
        if self.sub is not None:
            with contextlib.suppress(Exception):
                self.call(self.sub.unsubscribe(), 5)
            self.sub = None

    def stored(self, limit: float = 20.0) -> list[bytes]:
        """Every message body the stream holds (for the report of what is missing)."""
        total = self.messages() or 0
        got: list[bytes] = []
        done = threading.Event()

        async def on_msg(msg: Any) -> None:
            got.append(msg.data)
            if len(got) >= total:
                done.set()

        async def subscribe() -> Any:
            return await self.js.subscribe(
                f"{PREFIX}.>", stream=STREAM, cb=on_msg, ordered_consumer=True
            )

        if total:
            sub = self.call(subscribe())
            done.wait(limit)
            with contextlib.suppress(Exception):
                self.call(sub.unsubscribe(), 5)
        return list(got)

    def close(self) -> None:
        try:
            self.unwatch()
            with contextlib.suppress(Exception):
                self.call(self.nc.close(), 5)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(5)


class Daemon:
    """One `streamv1 tail` over ``root``/projects, its stderr kept in ``root``/daemon.log."""

    def __init__(self, root: Path, url: str | None, commit_every: float = 0.5) -> None:
        self.root = root
        self.out = root / "out.jsonl"
        self.state = root / "state.json"
        self.log = root / "daemon.log"
        args = [
            BIN,
            "--log-level",
            "warning",
            "tail",
            str(root / "projects"),
            "-o",
            str(self.out),
            "--state",
            str(self.state),
            "--no-ingest",
            "--log-format",
            "json",
            "--commit-every",
            str(commit_every),
        ]
        if url is not None:
            args += ["--publish", url, "--host", HOST]
        with self.log.open("ab") as err:
            self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=err)

    def alive(self) -> bool:
        return self.proc.poll() is None

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=10)
                return None
        return self.proc.returncode

    def said(self) -> str:
        try:
            text = self.log.read_text(errors="replace").strip()
        except FileNotFoundError:
            return ""
        return "\n".join("    " + line for line in text.splitlines()[-10:])


class LineCounter:
    """Newlines in a growing file, read incrementally."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.pos = 0
        self.lines = 0

    def count(self) -> int:
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return 0
        try:
            while True:
                data = os.pread(fd, 1 << 20, self.pos)
                if not data:
                    break
                self.pos += len(data)
                self.lines += data.count(b"\n")
        finally:
            os.close(fd)
        return self.lines


# -- 1. throughput ---------------------------------------------------------------------------


def burst(root: Path, lines: int, files: int) -> int:
    """``lines`` assistant records over ``files`` sessions; returns the output lines due
    (one per record, and one per session for its prompt)."""
    paths = session_paths(root, files)
    for i, path in enumerate(paths):
        records = [assistant(path.stem, k) for k in range(i, lines, files)]
        path.write_bytes(prompt(path.stem) + b"".join(records))
    return lines + files


def throughput_run(
    root: Path, bus: Bus | None, url: str | None, lines: int, files: int, limit: float
) -> dict[str, Any]:
    due = burst(root, lines, files)
    if bus is not None:
        bus.drop_stream()
    counter = LineCounter(root / "out.jsonl")
    result: dict[str, Any] = {"due": due, "out": None, "bus": None}
    t0 = time.perf_counter()
    daemon = Daemon(root, url)
    try:
        deadline = t0 + limit
        next_info = t0
        while time.perf_counter() < deadline and daemon.alive():
            now = time.perf_counter()
            if result["out"] is None and counter.count() >= due:
                result["out"] = now - t0
            if bus is not None and result["bus"] is None and now >= next_info:
                next_info = now + 0.05
                if (bus.messages() or 0) >= due:
                    result["bus"] = time.perf_counter() - t0
            if result["out"] is not None and (bus is None or result["bus"] is not None):
                break
            time.sleep(0.01)
        result["out_lines"] = counter.count()
        if bus is not None:
            time.sleep(1.0)  # a line sent twice would show by now
            result["stored"] = bus.messages() or 0
            if result["stored"] != due:
                result["missing"] = what_is_missing(bus, daemon.out)
    finally:
        result["rc"] = daemon.stop()
        result["said"] = daemon.said()
        result["published"] = read_publish_checkpoint(daemon.state)
        result["output_bytes"] = daemon.out.stat().st_size if daemon.out.exists() else 0
    return result


def read_publish_checkpoint(state: Path) -> str:
    path = state.with_name(state.name + ".publish.json")
    try:
        return path.read_text()
    except FileNotFoundError:
        return "(none)"


def what_is_missing(bus: Bus, out: Path) -> str:
    """The output lines the stream lacks (and holds twice), as session/seq."""
    import json
    from collections import Counter

    stored = Counter(bus.stored())
    lines = [x for x in out.read_bytes().splitlines() if x]
    lacking = [x for x in lines if stored[x] == 0]
    doubled = sum(n - 1 for n in stored.values() if n > 1)
    foreign = sum(1 for x in stored if x not in set(lines))
    where = []
    for x in lacking[:5]:
        obj = json.loads(x)
        where.append(f"{obj.get('session_id', '?')[-4:]}#{obj.get('seq')}")
    return (
        f"{len(lacking)} output lines not in the stream (first: {', '.join(where) or '-'}), "
        f"{doubled} stored twice, {foreign} stored that the output lacks"
    )


def throughput(
    tmp: Path,
    server: natsserver.Server,
    bus: Bus,
    lines: int,
    files: int,
    limit: float,
    rounds: int,
) -> None:
    """``rounds`` of each, alternated; the medians are what is printed."""
    due = lines + files
    print(
        f"throughput, a burst of {lines} records over {files} session files "
        f"({due} output lines), median of {rounds} alternated rounds:"
    )
    local_s: list[float] = []
    pub_out_s: list[float] = []
    pub_s: list[float] = []
    once = True
    for r in range(rounds):
        local = throughput_run(tmp / f"tput-local-{r}", None, None, lines, files, limit)
        if local["out"] is None:
            print(
                f"  -o only: output incomplete after {limit:.0f} s "
                f"({local['out_lines']}/{due} lines; exit {local['rc']})"
            )
            print(local["said"])
            return
        local_s.append(local["out"])
        pub = throughput_run(tmp / f"tput-publish-{r}", bus, server.url, lines, files, limit)
        if pub["bus"] is None:
            print(
                f"  -o --publish, stream: INCOMPLETE after {limit:.0f} s: "
                f"{pub['stored']}/{due} messages; exit {pub['rc']}"
            )
            print(f"    {pub.get('missing', '')}")
            print(f"    output {pub['output_bytes']} bytes; publish checkpoint {pub['published']}")
            print(pub["said"])
            return
        if pub["stored"] != due:
            once = False
            print(
                f"  round {r + 1}: the stream holds {pub['stored']} messages a second "
                f"after it was complete, not {due}: {pub.get('missing', '')}"
            )
        if pub["rc"] != 0 or local["rc"] != 0:
            print(f"  round {r + 1}: exit codes: local {local['rc']}, publish {pub['rc']}")
            print(pub["said"])
        pub_s.append(pub["bus"])
        if pub["out"] is not None:
            pub_out_s.append(pub["out"])
    base = due / statistics.median(local_s)
    rate = due / statistics.median(pub_s)
    print(
        f"  -o only (baseline):        {base:8.0f} lines/s  (output complete "
        f"{statistics.median(local_s):.2f} s after the daemon's start)"
    )
    if pub_out_s:
        out_rate = due / statistics.median(pub_out_s)
        print(
            f"  -o --publish, output file: {out_rate:8.0f} lines/s  "
            f"({out_rate / base:.2f}x the baseline)"
        )
    print(
        f"  -o --publish, stream:      {rate:8.0f} lines/s  (stream complete "
        f"{statistics.median(pub_s):.2f} s after the start)"
    )
    ratios = ", ".join(f"{lo / pu:.2f}" for lo, pu in zip(local_s, pub_s, strict=True))
    said = "each line stored once" if once else "NOT each line once: see above"
    print(f"  ratio publish/local: {rate / base:.2f}x  (rounds: {ratios}; {said})")


# -- 2. latency ------------------------------------------------------------------------------


def latency_run(
    root: Path, bus: Bus, url: str, appends: int, files: int, commit_every: float
) -> dict[str, Any]:
    paths = session_paths(root, files)
    # Each session begins with its prompt and one record (not measured): the daemon
    # writes a session's first line once the model is known, and the publisher asks each
    # subject's last message on its first send; both are over before the measurement.
    for i, p in enumerate(paths):
        p.write_bytes(prompt(p.stem) + assistant(p.stem, WARM_UP + i))
    bus.drop_stream()
    daemon = Daemon(root, url, commit_every)
    watcher = Watcher(daemon.out)
    result: dict[str, Any] = {}
    try:
        deadline = time.perf_counter() + 30
        while time.perf_counter() < deadline and (bus.messages() or 0) < 2 * files:
            if not daemon.alive():
                raise RuntimeError(f"the daemon stopped:\n{daemon.said()}")
            time.sleep(0.05)
        warm = bus.messages() or 0
        if warm < 2 * files:
            print(f"    (warm-up: the stream holds {warm} of {2 * files} lines after 30 s)")
        time.sleep(0.5)
        bus.watch()
        watcher.start()
        sent: dict[int, float] = {}
        for k in range(appends):
            path = paths[k % files]
            with path.open("ab") as fh:
                sent[k] = time.perf_counter()
                fh.write(assistant(path.stem, k))
            time.sleep(0.01)
        deadline = time.perf_counter() + 10
        while time.perf_counter() < deadline and not all(
            all(k in seen for k in sent) for seen in (watcher.seen, bus.seen)
        ):
            time.sleep(0.05)
        time.sleep(0.5)
        watcher.stop = True
        bus.unwatch()
        file_seen = {k: t for k, t in watcher.seen.items() if k in sent}
        bus_seen = {k: t for k, t in bus.seen.items() if k in sent}
        last = appends - 1
        result["last"] = {
            name: (seen[last] - sent[last]) * 1000
            for name, seen in (("file", file_seen), ("bus", bus_seen))
            if last in seen
        }
        result["file"] = [(file_seen[k] - sent[k]) * 1000 for k in sorted(file_seen)]
        result["bus"] = [(bus_seen[k] - sent[k]) * 1000 for k in sorted(bus_seen)]
        result["delta"] = [
            (bus_seen[k] - file_seen[k]) * 1000 for k in sorted(bus_seen) if k in file_seen
        ]
        result["file_missing"] = sorted(set(sent) - set(file_seen))
        result["bus_missing"] = sorted(set(sent) - set(bus_seen))
        result["received"] = bus.received
        result["stored"] = bus.messages() or 0
        if result["bus_missing"]:
            result["missing"] = what_is_missing(bus, daemon.out)
    finally:
        watcher.stop = True
        bus.unwatch()
        result["rc"] = daemon.stop()
        result["said"] = daemon.said()
        result["published"] = read_publish_checkpoint(daemon.state)
    return result


def latency(
    tmp: Path, server: natsserver.Server, bus: Bus, appends: int, files: int, commits: list[float]
) -> None:
    print(
        f"latency over {appends} appends across {files} files, 10 ms apart "
        "(write -> output file: the baseline; write -> JetStream consumer):"
    )
    for commit_every in commits:
        r = latency_run(tmp / f"lat-{commit_every}", bus, server.url, appends, files, commit_every)
        print(f"  --commit-every {commit_every:g}:")

        def show(name: str, values: list[float]) -> None:
            if not values:
                print(f"    {name}: nothing arrived")
                return
            p50, p99 = percentile(values, 0.5), percentile(values, 0.99)
            print(
                f"    {name}: p50 {p50:7.1f} ms  p99 {p99:7.1f} ms  "
                f"max {max(values):7.1f} ms  (n={len(values)})"
            )

        show("-> output file (baseline)", r["file"])
        show("-> consumer              ", r["bus"])
        show("consumer - output file   ", r["delta"])
        if r["file"] and r["bus"]:
            b50 = percentile(r["file"], 0.5)
            b99 = percentile(r["file"], 0.99)
            print(
                f"    ratio consumer/output: p50 {percentile(r['bus'], 0.5) / b50:.1f}x, "
                f"p99 {percentile(r['bus'], 0.99) / b99:.1f}x"
            )
        if r["last"]:
            print(
                "    the last append (no write after it): "
                + ", ".join(
                    f"-> {'output file' if k == 'file' else 'consumer'} {v:.0f} ms"
                    for k, v in r["last"].items()
                )
            )
        for side in ("file", "bus"):
            lost = r[f"{side}_missing"]
            if lost:
                print(
                    f"    {len(lost)} appends never reached the {side} "
                    f"(k = {', '.join(map(str, lost[:10]))})"
                )
        if r.get("missing"):
            print(f"    stream: {r['missing']}")
            print(f"    publish checkpoint {r['published']}")
        if r["rc"] != 0:
            print(f"    daemon exit {r['rc']}")
            print(r["said"])


# -- 3. convert --publish ---------------------------------------------------------------------


def convert_publish(tmp: Path, bus: Bus, lines: int, rounds: int) -> None:
    """One session of ``lines`` assistant records: `convert -o FILE` (the baseline)
    against `convert --publish` into a fresh stream, lines/s each (medians of the
    alternated rounds), and whether the stream holds every line once. Goal:
    >= 20,000 lines/s published (#26)."""
    root = tmp / "convert"
    root.mkdir()
    burst(root, lines, 1)
    (path,) = (root / "projects" / "bench").iterdir()
    out = root / "out.jsonl"
    subprocess.run([BIN, "--log-level", "error", "convert", str(path), "-o", str(out)], check=True)
    due = out.read_bytes().count(b"\n")  # the lines convert writes: what is published
    local: list[float] = []
    published: list[float] = []
    held: list[int | None] = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        subprocess.run(
            [BIN, "--log-level", "error", "convert", str(path), "-o", str(out)], check=True
        )
        local.append(due / (time.perf_counter() - t0))
        bus.drop_stream()
        t0 = time.perf_counter()
        subprocess.run(
            [
                BIN,
                "--log-level",
                "error",
                "convert",
                str(path),
                "--publish",
                bus.url,
                "--host",
                HOST,
            ],
            check=True,
        )
        published.append(due / (time.perf_counter() - t0))
        held.append(bus.messages())
    base, rate = statistics.median(local), statistics.median(published)
    print(f"convert --publish, one session of {due} lines ({rounds} rounds, medians):")
    print(f"  convert -o FILE (baseline): {base:8.0f} lines/s")
    print(
        f"  convert --publish:          {rate:8.0f} lines/s  (goal >= 20,000; "
        f"{rate / base:.2f}x the file's)"
    )
    print(
        f"  the stream held {held} messages after each round ({due} due: "
        f"{'each once' if all(h == due for h in held) else 'NOT each once'})"
    )


def stop_server(server: natsserver.Server) -> None:
    proc = server.proc
    try:
        server.stop()
    except subprocess.TimeoutExpired:
        if proc is not None:
            proc.kill()
            proc.wait(timeout=10)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=20000)
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument(
        "--rounds",
        type=int,
        default=3,
        help="throughput rounds of each (alternated; medians printed)",
    )
    ap.add_argument("--appends", type=int, default=1000)
    ap.add_argument("--latency-files", type=int, default=50)
    ap.add_argument(
        "--commit-every",
        default="0.5,0.05",
        help="the --commit-every values the latency is measured at",
    )
    ap.add_argument(
        "--limit",
        type=float,
        default=90.0,
        help="seconds a throughput run may take before it is called incomplete",
    )
    ap.add_argument(
        "--only",
        choices=["convert", "tail", "latency"],
        help="one figure: convert --publish, tail --publish's throughput, or the latency",
    )
    a = ap.parse_args()
    commits = [float(x) for x in a.commit_every.split(",") if x]
    started = time.perf_counter()
    # A SIGTERM unwinds like Ctrl-C: the daemons, the server and the temp dir go too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="bench-fleet-")))
        server = natsserver.Server(tmp / "nats").start()
        stack.callback(stop_server, server)
        bus = Bus(server.url)
        stack.callback(bus.close)
        if a.only in (None, "convert"):
            convert_publish(tmp, bus, 10_000, a.rounds)
        if a.only in (None, "tail"):
            throughput(tmp, server, bus, a.lines, a.files, a.limit, a.rounds)
        if a.only in (None, "latency"):
            latency(tmp, server, bus, a.appends, a.latency_files, commits)
    print(
        f"(nats-server {natsserver.binary()}; {time.perf_counter() - started:.0f} s in all; "
        f"load as in {Path(tail_latency.__file__).name})"
    )


if __name__ == "__main__":
    main()
