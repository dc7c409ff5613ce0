"""Helpers for the tail daemon's tests: the fixture sessions and where they are
written, a daemon in process (driven by tick()) or as a real command, and the
comparisons with what ``convert`` makes of the same files."""

from __future__ import annotations

import random
import re
import shutil
import signal
import subprocess
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
from conftest import ROOT
from helpers import FIXED_NOW, convert_session_files

from streamv1.translator.tail.daemon import TailDaemon
from streamv1.translator.tail.output import OutputSink

SESSION = ROOT / "testdata" / "claude-session"
LAYOUT = SESSION / "subagent_layout"
NESTED = ROOT / "testdata" / "captures" / "x_subagent_nested" / "projects" / "-home-user-project"
SID = "7ab05073-03bd-480e-bfab-7ae89322bf51"


class Clock:
    """Injected monotonic time: tests move it, never sleep."""

    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def fixed() -> str:
    return FIXED_NOW


_ORIGIN = re.compile(rb',"_meta":\{"origin":"transcript"\}\}$', re.MULTILINE)


def tail_output(path: Path) -> bytes:
    """The daemon's output, each line's origin mark checked and taken off: what is
    left is what ``convert`` writes for the same files."""
    data = path.read_bytes()
    stripped, marked = _ORIGIN.subn(b"}", data)
    assert marked == data.count(b"\n"), "every tail line carries _meta.origin"
    return stripped


_SEQ = re.compile(rb',"seq":\d+')


def by_actor(data: bytes) -> dict[tuple[str, str | None], list[bytes]]:
    """Lines per session and actor (the main thread, or one nested actor), their
    seq left out: the daemon may interleave two actors' lines of one run otherwise
    than convert (it frames what each file brought by then), never one actor's."""
    groups: dict[tuple[str, str | None], list[bytes]] = defaultdict(list)
    for raw in data.splitlines():
        line = orjson.loads(raw)
        groups[(line["session_id"], line.get("parent_tool_use_id"))].append(
            _SEQ.sub(b"", raw, count=1)
        )
    return dict(groups)


def first_mismatch(got: dict[Any, list[bytes]], want: dict[Any, list[bytes]]) -> str:
    """Where two by_actor() maps first differ, shortly (for an assertion message)."""
    for key in sorted(set(got) | set(want), key=str):
        a, b = got.get(key, []), want.get(key, [])
        for i in range(max(len(a), len(b))):
            x = a[i] if i < len(a) else b"<none>"
            y = b[i] if i < len(b) else b"<none>"
            if x != y:
                return f"{key} line {i} of {len(a)}/{len(b)}:\n got  {x[:400]!r}\n want {y[:400]!r}"
    return "same"


def expected(files: list[Path]) -> dict[tuple[str, str | None], list[bytes]]:
    """What ``convert`` writes for these files, together (one stream a session)."""
    return by_actor(convert_session_files(files, source="claude-session")[0])


def made(
    tmp: Path,
    clock: Clock,
    sink: OutputSink | None = None,
    state: Path | None = None,
    **kw: Any,
) -> TailDaemon:
    """A daemon over ``tmp/projects`` on the tests' clocks, not started: its output
    ``tmp/out.jsonl`` and its checkpoints ``tmp/state.json`` unless given, a
    checkpoint at every tick unless ``commit_every`` says otherwise."""
    kw.setdefault("commit_every", 0)
    return TailDaemon(
        [tmp / "projects"],
        sink or OutputSink(tmp / "out.jsonl"),
        state or tmp / "state.json",
        clock=fixed,
        now=clock,
        **kw,
    )


def daemon(tmp: Path, clock: Clock, **kw: Any) -> TailDaemon:
    """:func:`made`, started."""
    d = made(tmp, clock, **kw)
    d.start()
    return d


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [orjson.loads(x) for x in tail_output(path).splitlines()]


OTHER_SID = "0b5e0000-1111-4222-8333-444455556666"  # the layout again, as another session
LAYOUT_AGENT = "agent-a4ecf0489c6080106"
LAYOUT_TOOL = "toolu_01Ol0AGLKlFXti4j8cFdnOcj"
#: (source file, where it goes below projects/, its session id there, its sidecar?)
WRITES: list[tuple[Path, str, str | None, bool]] = [
    (SESSION / "print_mode_bash.jsonl", "p/print_mode_bash.jsonl", None, False),
    (SESSION / "thinking.jsonl", "p/thinking.jsonl", None, False),
    (SESSION / "interactive_four_turns.jsonl", "p/interactive_four_turns.jsonl", None, False),
    (LAYOUT / f"{SID}.jsonl", f"q/{SID}.jsonl", None, False),
    (
        LAYOUT / SID / "subagents" / f"{LAYOUT_AGENT}.jsonl",
        f"q/{SID}/subagents/{LAYOUT_AGENT}.jsonl",
        None,
        True,
    ),
    # A subagent with no sidecar: it finds its parent only when the parent names it.
    (LAYOUT / f"{SID}.jsonl", f"r/{OTHER_SID}.jsonl", OTHER_SID, False),
    (
        LAYOUT / SID / "subagents" / f"{LAYOUT_AGENT}.jsonl",
        f"r/{OTHER_SID}/subagents/{LAYOUT_AGENT}.jsonl",
        OTHER_SID,
        False,
    ),
    # A subagent that spawns its own (a tree two deep), and a turn the source ends
    # with max_turns_reached and a cost-state (no idle-close needed).
    *[
        (p, "n/" + str(p.relative_to(NESTED)), None, p.name.startswith("agent-"))
        for p in sorted(NESTED.rglob("*.jsonl"))
    ],
    (SESSION / "max_turns.jsonl", "p/max_turns.jsonl", None, False),
]
#: (parent, its subagent, the spawning call): the subagent's file begins after the
#: call is written and is whole before the parent answers it.
SPAWNS = [
    (3, 4, LAYOUT_TOOL),
    (5, 6, LAYOUT_TOOL),
    *[
        (
            next(
                i
                for i, w in enumerate(WRITES)
                if f'"id":"{tool}"'.encode() in w[0].read_bytes() and w[0] != agent
            ),
            k,
            tool,
        )
        for k, (agent, _, _, meta) in enumerate(WRITES)
        if meta and k not in (4, 6)
        for tool in [
            orjson.loads(agent.with_name(agent.stem + ".meta.json").read_bytes())["toolUseId"]
        ]
    ],
]
CRASHES = 22


def _source_bytes(k: int) -> bytes:
    src, _, sid, _ = WRITES[k]
    data = src.read_bytes()
    return data.replace(SID.encode(), sid.encode()) if sid else data


def prepare(tmp: Path) -> list[Path]:
    """Where WRITES go under ``tmp/projects`` (folders and sidecars made)."""
    targets = [tmp / "projects" / rel for _, rel, _, _ in WRITES]
    for (src, _, _, meta), dst in zip(WRITES, targets, strict=True):
        dst.parent.mkdir(parents=True, exist_ok=True)
        if meta:
            name = src.name.replace(".jsonl", ".meta.json")
            shutil.copy(src.with_name(name), dst.with_name(name))
    return targets


def plan_chunks(rng: random.Random) -> list[tuple[int, bytes]]:
    """Every file of WRITES in random chunk sizes (partial lines included),
    interleaved across files, as Claude Code writes them: a subagent's file begins
    after the call that spawns it is written, and is whole before its parent's
    tool_result for it."""
    data = [_source_bytes(k) for k in range(len(WRITES))]
    pos = [0] * len(WRITES)
    chunks: list[tuple[int, bytes]] = []
    answers: dict[int, list[tuple[int, int]]] = defaultdict(list)
    spawned = {}
    for parent, agent, tool in SPAWNS:
        at = data[parent].index(f'"tool_use_id":"{tool}"'.encode())
        answers[parent].append((agent, data[parent].rindex(b"\n", 0, at) + 1))
        call = data[parent].index(f'"id":"{tool}"'.encode())
        spawned[agent] = (parent, data[parent].index(b"\n", call) + 1)

    def room(k: int) -> int:
        if k in spawned:
            parent, at = spawned[k]
            if pos[parent] < at:
                return 0  # the CLI spawns a subagent after writing the call that spawns it
        limit = len(data[k])
        for agent, at in answers.get(k, ()):
            if pos[agent] < len(data[agent]):
                limit = min(limit, at)
        return limit - pos[k]

    while any(p < len(d) for p, d in zip(pos, data, strict=True)):
        i = rng.choice([k for k in range(len(data)) if room(k) > 0])
        n = min(rng.randint(1, 2500), room(i))
        chunks.append((i, data[i][pos[i] : pos[i] + n]))
        pos[i] += n
    return chunks


def write_with_kills(
    targets: list[Path],
    chunks: list[tuple[int, bytes]],
    kills: set[int],
    rng: random.Random,
    proc: subprocess.Popen[bytes],
    start: Callable[[], subprocess.Popen[bytes]],
) -> tuple[subprocess.Popen[bytes], int]:
    """Write ``chunks``, SIGKILLing the daemon after each chunk numbered in ``kills``
    (anywhere: mid-read, mid-write, mid-commit) and starting it again. Returns the
    daemon running at the end and how many kills there were."""
    crashes = 0
    for k, (i, chunk) in enumerate(chunks):
        with targets[i].open("ab") as fh:
            fh.write(chunk)
        time.sleep(rng.uniform(0, 0.02))
        if k in kills:
            time.sleep(rng.uniform(0, 0.3))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            crashes += 1
            proc = start()
            time.sleep(rng.uniform(0, 0.5))
    return proc, crashes


def settle(out: Path, quiet: float = 6.0, limit: float = 40.0) -> None:
    """Wait until the output has not grown for ``quiet`` seconds: idle-close has
    ended the runs that have no end marker (as batch does at EOF)."""
    deadline = time.monotonic() + limit
    last, stable_since = -1, time.monotonic()
    while time.monotonic() < deadline:
        size = out.stat().st_size if out.exists() else 0
        if size != last:
            last, stable_since = size, time.monotonic()
        elif time.monotonic() - stable_since > quiet:
            return
        time.sleep(0.2)


#: Every daemon or subscriber a test started: one a failing test left running is
#: killed after it (conftest's fixture; a test that stopped on an exception once
#: left three for hours).
STARTED: list[subprocess.Popen[bytes]] = []


def started(proc: subprocess.Popen[bytes]) -> subprocess.Popen[bytes]:
    """``proc``, noted to be killed after the test if it still runs then."""
    STARTED.append(proc)
    return proc


def kill_started() -> None:
    while STARTED:
        proc = STARTED.pop()
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def start(bin_: str, tmp: Path, *extra: str) -> subprocess.Popen[bytes]:
    """A real ``streamv1 tail`` of ``tmp/projects`` (JSON logs in tmp/daemon.log)."""
    log = tmp / "daemon.log"
    at = log.stat().st_size if log.exists() else 0
    proc = _spawn(bin_, tmp, *extra)
    _LOG_AT[proc.pid] = at
    return started(proc)


#: Where each daemon's own lines begin in its daemon.log (by pid).
_LOG_AT: dict[int, int] = {}


def wait_started(tmp: Path, proc: subprocess.Popen[bytes], limit: float = 30.0) -> None:
    """Until the daemon ``proc`` has said it is tailing (its start's recovery and
    first checkpoint done), or has ended."""
    log = tmp / "daemon.log"
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        with log.open("rb") as fh:
            fh.seek(_LOG_AT.get(proc.pid, 0))
            if b'"tailing"' in fh.read():
                return
        time.sleep(0.05)


def _spawn(bin_: str, tmp: Path, *extra: str) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            bin_,
            "tail",
            str(tmp / "projects"),
            "--output",
            str(tmp / "out.jsonl"),
            "--state",
            str(tmp / "state.json"),
            "--idle-close",
            "4",
            "--rescan-every",
            "1",
            "--commit-every",
            "0.05",
            "--log-format",
            "json",
            "--ingest-socket",
            str(tmp / "ingest.sock"),
            *extra,
        ],
        stdout=subprocess.DEVNULL,
        stderr=open(tmp / "daemon.log", "ab"),
    )


def lost_and_doubled(got: dict[Any, list[bytes]], want: dict[Any, list[bytes]]) -> tuple[int, int]:
    """Lines ``convert`` makes that the daemon's output lacks, and lines it holds more
    often than ``convert`` makes them, over all sessions and actors."""
    lost = doubled = 0
    for key in set(got) | set(want):
        have, need = Counter(got.get(key, [])), Counter(want.get(key, []))
        lost += sum((need - have).values())
        doubled += sum((have - need).values())
    return lost, doubled
