"""One command follows every agent (#24): ``streamv1 tail`` with no folder, in a
HOME holding Claude Code's, Codex's and Gemini CLI's trees written in random chunks
(partial lines included), SIGKILLed at random points and started again: per
session and actor, the output is what ``convert`` makes of the final files."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import orjson
import pytest
from conftest import ROOT
from helpers import convert_session_files, framing_violations
from tailing import (
    by_actor,
    first_mismatch,
    lost_and_doubled,
    settle,
    started,
    tail_output,
)

DATA = ROOT / "testdata"
GEMINI_SUB = DATA / "gemini" / "subagent" / "chats"
GEMINI_SID = "6cf9178a-33e2-4c83-98d0-c2921fb5f629"


@dataclass(frozen=True)
class Write:
    """A fixture file, where it goes below HOME, and (for a nested actor's file)
    the bytes of its parent's file that come before it begins, and the ones its
    parent writes only once it is whole."""

    src: Path
    dest: str
    parent: int | None = None
    marker: bytes = b""


def _gemini_child(parent: int) -> Write:
    child = next(p for p in (GEMINI_SUB / GEMINI_SID).glob("*.jsonl") if ".expected." not in p.name)
    return Write(
        child,
        f".gemini/tmp/project/chats/{GEMINI_SID}/{child.name}",
        parent=parent,
        marker=f'"agentId":"{child.stem}"'.encode(),
    )


CODEX_DAY = DATA / "codex" / "c10_subagent" / "sessions" / "2026" / "12" / "01"
CODEX_PARENT = "rollout-2026-12-01T19-48-31-01a23326-cfd4-7841-af24-666d4bd89e35.jsonl"
CODEX_CHILD = "rollout-2026-12-01T19-48-31-01a23326-d17a-7f81-8719-cf28a17540f3.jsonl"
CODEX_SID = "01a23326-cfd4-7841-af24-666d4bd89e35"

CLAUDE_SUB = DATA / "claude-session" / "subagent_layout"
CLAUDE_SID = "7ab05073-03bd-480e-bfab-7ae89322bf51"

WRITES: list[Write] = [
    Write(CODEX_DAY / CODEX_PARENT, f".codex/sessions/2026/12/01/{CODEX_PARENT}"),
    # The child rollout is written while its parent waits before its spawn
    # call's output (or, ``late``, just after it: the daemon waits for it then).
    Write(
        CODEX_DAY / CODEX_CHILD,
        f".codex/sessions/2026/12/01/{CODEX_CHILD}",
        parent=0,
        marker=b'"function_call_output"',
    ),
    # A new day's folder, made while the daemon runs.
    Write(
        DATA / "codex" / "c2_shell.rollout.jsonl",
        ".codex/sessions/2026/12/02/rollout-2026-12-02T09-00-00-c2.jsonl",
    ),
    Write(
        GEMINI_SUB / "session-2026-12-01T19-50-6cf9178a.jsonl",
        ".gemini/tmp/project/chats/session-2026-12-01T19-50-6cf9178a.jsonl",
    ),
    _gemini_child(3),
    Write(
        DATA / "gemini" / "chat_shell.jsonl",
        ".gemini/tmp/other/chats/session-2026-12-01T19-47-9d89fbee.jsonl",
    ),
    Write(CLAUDE_SUB / f"{CLAUDE_SID}.jsonl", f".claude/projects/-home-u-q/{CLAUDE_SID}.jsonl"),
    Write(
        CLAUDE_SUB / CLAUDE_SID / "subagents" / "agent-a4ecf0489c6080106.jsonl",
        f".claude/projects/-home-u-q/{CLAUDE_SID}/subagents/agent-a4ecf0489c6080106.jsonl",
        parent=6,
        marker=b'"agentId":"a4ecf0489c6080106"',
    ),
    Write(
        DATA / "claude-session" / "print_mode_bash.jsonl",
        ".claude/projects/-home-u-p/print_mode_bash.jsonl",
    ),
    Write(DATA / "claude-session" / "thinking.jsonl", ".claude/projects/-home-u-p/thinking.jsonl"),
]


def plan(rng: random.Random, late: bool = False) -> list[tuple[int, bytes]]:
    """Every file in random chunks, interleaved; a nested actor's file is written
    whole while its parent waits just before the line that names it (its spawning
    call's answer, in Gemini's file), or, ``late``, just after that line: read
    after its parent's answer, the actor's start still comes before it, as in
    ``convert`` (translator.translate.session: the daemon waits for the actor's file)."""
    data = [w.src.read_bytes() for w in WRITES]
    pos = [0] * len(data)
    hold = {}  # parent -> (child, offset its parent may not pass before the child is whole)
    for k, w in enumerate(WRITES):
        if w.parent is not None:
            at = data[w.parent].index(w.marker)
            cut = (
                data[w.parent].index(b"\n", at) if late else data[w.parent].rindex(b"\n", 0, at)
            ) + 1
            hold[w.parent] = (k, cut)

    def room(k: int) -> int:
        w = WRITES[k]
        if w.parent is not None and pos[w.parent] < hold[w.parent][1]:
            return 0
        limit = len(data[k])
        if k in hold and pos[hold[k][0]] < len(data[hold[k][0]]):
            limit = hold[k][1]
        return limit - pos[k]

    chunks: list[tuple[int, bytes]] = []
    while any(p < len(d) for p, d in zip(pos, data, strict=True)):
        i = rng.choice([k for k in range(len(data)) if room(k) > 0])
        n = min(rng.randint(1, 2500), room(i))
        chunks.append((i, data[i][pos[i] : pos[i] + n]))
        pos[i] += n
    return chunks


def _env(tmp: Path) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME")
    }
    env.update(
        HOME=str(tmp / "home"), XDG_STATE_HOME=str(tmp / "state"), XDG_RUNTIME_DIR=str(tmp / "run")
    )
    return env


def _start(bin_: str, tmp: Path) -> subprocess.Popen[bytes]:
    return started(_spawn(bin_, tmp))


def _spawn(bin_: str, tmp: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [
            bin_,
            "tail",
            "--output",
            str(tmp / "out.jsonl"),
            "--idle-close",
            "4",
            "--rescan-every",
            "1",
            "--commit-every",
            "0.05",
            "--log-format",
            "json",
            "--no-ingest",
        ],
        env=_env(tmp),
        stdout=subprocess.DEVNULL,
        stderr=open(tmp / "daemon.log", "ab"),
    )


@pytest.mark.parametrize("late", [False, True], ids=["actors_in_time", "actors_late"])
@pytest.mark.parametrize(
    "seed", [int(s) for s in os.environ.get("STREAMV1_AGENTS_SEEDS", "1").split(",")]
)
def test_tail_with_no_folder_follows_every_agent(
    streamv1_bin: str, tmp_path: Path, seed: int, late: bool
) -> None:
    rng = random.Random(seed)
    home = tmp_path / "home"
    (tmp_path / "run").mkdir(mode=0o700)
    targets = [home / w.dest for w in WRITES]
    for t in targets:
        if "2026/12/02" not in str(t):  # that day's folder comes while it runs
            t.parent.mkdir(parents=True, exist_ok=True)
    # Claude Code writes a subagent's sidecar as the agent begins (its spawning call).
    sidecar = f"{CLAUDE_SID}/subagents/agent-a4ecf0489c6080106.meta.json"
    (home / ".claude/projects/-home-u-q" / sidecar).parent.mkdir(parents=True, exist_ok=True)
    (home / ".claude/projects/-home-u-q" / sidecar).write_bytes((CLAUDE_SUB / sidecar).read_bytes())
    chunks = plan(rng, late)
    kills = set(rng.sample(range(1, len(chunks)), min(8, len(chunks) - 1)))
    proc = _start(streamv1_bin, tmp_path)
    time.sleep(3)  # the first start compiles the secret scanner for this HOME
    crashes = 0
    for k, (i, chunk) in enumerate(chunks):
        targets[i].parent.mkdir(parents=True, exist_ok=True)
        with targets[i].open("ab") as fh:
            fh.write(chunk)
        time.sleep(rng.uniform(0, 0.02))
        if k in kills:
            time.sleep(rng.uniform(0, 0.3))
            proc.send_signal(signal.SIGKILL)
            proc.wait()
            crashes += 1
            proc = _start(streamv1_bin, tmp_path)
            time.sleep(rng.uniform(0, 0.5))
    out = tmp_path / "out.jsonl"
    settle(out)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0, (tmp_path / "daemon.log").read_text()[-2000:]
    data = tail_output(out)
    got = by_actor(data)
    want = by_actor(convert_session_files(targets)[0])
    assert crashes >= 4
    assert (lost_and_doubled(got, want)) == (0, 0), first_mismatch(got, want)
    assert got == want, first_mismatch(got, want)
    assert framing_violations(data) == []
    agents = {
        orjson.loads(x)["agent"]["name"] for x in data.splitlines() if b'"subtype":"init"' in x
    }
    assert agents == {"claude-code", "codex", "gemini-cli"}
    for sid in (GEMINI_SID, CODEX_SID, CLAUDE_SID):  # each subagent inside its parent's
        assert (sid, None) in got and any(k[0] == sid and k[1] for k in got), sid
