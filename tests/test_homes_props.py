"""Messy homes, converted whole: ``streamv1 convert`` and ``streamv1 sessions``
with no PATH and ``HOME`` set, on homes drawn from real files.

A home holds sessions of several Claude Code versions (the public corpus, the
2.1.332 captures, testdata's), resumed and forked ones, prompt-suggestion side
calls, ``Warmup`` sidechains, Codex rollouts (``~/.codex/sessions/YYYY/MM/DD/``)
and Gemini chats (``~/.gemini/tmp/<project>/chats/``) beside them; then the mess
people's homes hold: odd project and file names (spaces, unicode, 200
characters, leading dashes, a ``.jsonl`` folder), subagents moved into
``subagents/workflows/wf_<id>/`` (a Workflow's agents live there: real subagent
files stand in for them, beside the ``x_workflow`` capture once testdata holds
it), main files gone with their subagents' left, empty, summary-only, truncated,
garbled, BOM-prefixed, NUL-padded, CRLF and unreadable files, FIFOs and symlinks
(inside the home, out of it, dangling, a loop), archived Codex rollouts, and the
bookkeeping the CLIs keep beside sessions. The layouts known to have crashed the
framer run every time as explicit examples.

Property: no internal error (exit 70) and no traceback; exit 0, or 1 with error
lines that each name a file made damaged or unreadable here; every session with a
readable record is in the output (by one of its ids); every line is valid and
framed (init first, one result last, seq +1 per line: the contract's checker).
``--hypothesis-profile=deep`` runs it long and shrinks what fails;
``STREAMV1_HOMES_EXAMPLES=N`` sets the number of examples. Without ../shared it
draws from testdata alone.
"""

from __future__ import annotations

import os
import re
import shutil
import stat
import tempfile
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import homes
import orjson
from conftest import ROOT, SHARED
from helpers import framing_violations
from hypothesis import HealthCheck, Phase, example, given, note, settings
from hypothesis import strategies as st

#: Two commands an example: a handful in the suite's run, the profile's number
#: when run by hand with ``--hypothesis-profile=deep``.
_DEEP = settings.default.max_examples > 100
_EXAMPLES = int(os.environ.get("STREAMV1_HOMES_EXAMPLES", 0)) or (
    settings.default.max_examples if _DEEP else 4
)


@cache
def _material() -> list[homes.Bundle]:
    return homes.material(ROOT, SHARED)


#: Odd names a project folder (Claude's, Gemini's) can have.
_PROJECT_NAMES = [
    None,  # as the CLI named it
    "-home-user-my project",
    "-home-ü-プロジェクト-λ",
    "-home-" + "x" * 200,
    "--",
    "-",
    "archive.jsonl",
]
#: Odd names for a session's own file (its subagents then match no file).
_FILE_NAMES = ["my session ü.jsonl", "-leading.jsonl", "y" * 200 + ".jsonl", "a.b.jsonl"]
_DAMAGE = [
    "truncate",
    "garbage",
    "empty",
    "summary_only",
    "unreadable",
    "crlf",
    "bom",
    "nul_tail",
    "missing",  # gone (cleaned up, deleted by hand): its subagents' files stay
]
#: Kinds of damage an error line may be said for (CRLF line ends and a file of
#: summaries only are whole input).
_HURT = {"truncate", "garbage", "empty", "unreadable", "bom", "nul_tail"}
_JUNK = [
    "jsonl_dir_with_session",
    "fifo",
    "dangling",
    "loop",
    "link_out",
    "link_in",
    "linked_dir",
    "journal",
    "tool_results",
    "workflow_state",
    "codex_history",
    "unreadable_dir",
]


@dataclass
class Pick:
    bundle: int
    project: int  # index in _PROJECT_NAMES
    rename_main: int  # -1: keep, else index in _FILE_NAMES
    workflows: bool  # subagents moved into subagents/workflows/wf_<id>/
    damage: dict[int, str]  # file index → kind
    cut: float  # where a truncation cuts (fraction of the file)


@dataclass
class Plan:
    picks: list[Pick]
    junk: list[str]


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    pool = _material()
    picks: list[Pick] = []
    for _ in range(draw(st.integers(1, 6))):
        index = draw(st.integers(0, len(pool) - 1))
        # A capture's other sessions come with it: a fork's parent, the session a
        # resume began from.
        group = _scenario(pool[index].label)
        together = [k for k, b in enumerate(pool) if group and _scenario(b.label) == group]
        project = draw(st.sampled_from(range(len(_PROJECT_NAMES))) | st.just(0))
        for k in together or [index]:
            picks.append(_pick(draw, pool, k, project))
    junk = draw(st.lists(st.sampled_from(_JUNK), max_size=4, unique=True))
    return Plan(picks, junk)


def _scenario(label: str) -> str | None:
    """A capture's scenario (``captures/x_subagent_fork``), None for a lone file."""
    head = label.split(":", 1)[0]
    return head if ":" in label and head not in ("public", "claude-session") else None


def _pick(draw: st.DrawFn, pool: list[homes.Bundle], index: int, project: int) -> Pick:
    n = len(pool[index].files)
    damage = draw(
        st.dictionaries(st.integers(0, n - 1), st.sampled_from(_DAMAGE), max_size=2) | st.just({})
    )
    return Pick(
        index,
        project,
        draw(st.sampled_from(range(-1, len(_FILE_NAMES))) | st.just(-1)),
        draw(st.booleans()),
        damage,
        draw(st.floats(0.05, 0.95)),
    )


@dataclass
class Expect:
    #: label → the ids the session may go by (only those with a readable record)
    sessions: dict[str, set[str]] = field(default_factory=dict)
    #: paths (relative to HOME) that may be named by an error line
    damaged: set[str] = field(default_factory=set)


def _names(data: bytes, rel: str) -> set[str]:
    """The ids a session file names: its own stem and the UUID in it (Codex's
    ``rollout-<time>-<uuid>``), every ``sessionId`` / ``session_id`` in it
    (Claude, Gemini, Codex's session_meta), read from the bytes so that a line
    damaged around one still tells it."""
    out = {Path(rel).name.removesuffix(".jsonl"), *homes.UUID.findall(rel)}
    ids = _IDS.findall(data)
    for raw in data.splitlines():
        rec = _loads(raw)
        if isinstance(rec, dict) and rec.get("type") == "session_meta":
            meta = rec.get("payload")
            meta = meta if isinstance(meta, dict) else {}
            ids += [v.encode() for k in ("id", "session_id") if isinstance(v := meta.get(k), str)]
    if not ids:
        # No id in the records, none in the name: the converter says "unknown"
        # (its --session-id help promises the file's name; reported on #38).
        out.add("unknown")
    return out | {x.decode("utf-8", "replace") for x in ids}


_IDS = re.compile(rb'"(?:sessionId|session_id)":"([^"]{1,200})"')


def _makes_lines(agent: str, data: bytes) -> bool:
    """A file with a readable record makes a session's lines; a Gemini chat only
    with a prompt in it (docs/mapping.md: a chat with no prompt, the stub a resume
    leaves, gives no lines)."""
    if agent == "gemini":
        return any(
            isinstance(rec := _loads(raw), dict) and rec.get("type") == "user"
            for raw in data.splitlines()
        )
    return _readable(data)


def _readable(data: bytes) -> bool:
    return any(isinstance(_loads(raw), dict) for raw in data.splitlines() if raw.strip())


def _loads(raw: bytes) -> object:
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None


def _damaged(data: bytes, kind: str, cut: float) -> bytes:
    if kind == "truncate":
        return data[: max(1, int(len(data) * cut))]
    if kind == "garbage":
        lines = data.splitlines(keepends=True)
        at = int(len(lines) * cut)
        return b"".join([*lines[:at], b'{"type":"user","message":{"content":\xff\n', *lines[at:]])
    if kind == "empty":
        return b""
    if kind == "crlf":  # a file that went through a Windows editor or git autocrlf
        return data.replace(b"\n", b"\r\n")
    if kind == "bom":
        return b"\xef\xbb\xbf" + data
    if kind == "nul_tail":  # the zeros a crash leaves after a preallocated end
        return data + b"\0" * 4096
    if kind == "summary_only":
        kept = [x for x in data.splitlines(keepends=True) if b'"type":"summary"' in x]
        return b"".join(kept or data.splitlines(keepends=True)[:1])
    return data


def build(home: Path, plan: Plan) -> Expect:
    """The home ``plan`` describes, and what its conversion must show."""
    pool = _material()
    expect = Expect()
    unreadable: list[Path] = []
    placed: list[Path] = []
    for k, pick in enumerate(plan.picks):
        bundle = pool[pick.bundle]
        root = home / homes.ROOTS[bundle.agent]
        names: set[str] = set()
        readable = False
        main_stem = None
        for i, (rel, src) in enumerate(bundle.files):
            parts = rel.split("/")
            if bundle.agent in ("claude", "gemini"):
                name = _PROJECT_NAMES[pick.project]
                parts[0] = f"{name}{k}" if name and name.endswith("-") else (name or parts[0])
            if bundle.agent == "codex" and pick.project % 2:
                # Archived (the folder's inner layout is not captured: flat here).
                parts = ["archived_sessions", parts[-1]]
            if bundle.agent == "claude" and pick.workflows and "subagents" in parts:
                at = parts.index("subagents") + 1
                parts[at:at] = ["workflows", f"wf_{k:04x}abcd"]
            own_file = len(parts) == 2 and homes.UUID.fullmatch(parts[1].removesuffix(".jsonl"))
            if bundle.agent == "claude" and pick.rename_main >= 0 and own_file:
                main_stem = parts[1]
                parts[1] = _FILE_NAMES[pick.rename_main]
            # Two picks of one bundle into one place: the second is a copy beside it.
            dst = root.joinpath(*parts)
            if dst.exists():
                dst = dst.with_name(f"copy{k}-{dst.name}")
            dst.parent.mkdir(parents=True, exist_ok=True)
            data = src.read_bytes()
            if data and not data.endswith(b"\n"):
                data += b"\n"  # as the CLI ends a line (tests/homes.py)
            kind = pick.damage.get(i) if src.name.endswith(".jsonl") else None
            if kind == "missing":
                continue
            if kind:
                data = _damaged(data, kind, pick.cut)
            dst.write_bytes(data)
            placed.append(dst)
            relhome = str(dst.relative_to(home))
            if kind in _HURT or not _readable(data):
                expect.damaged.add(relhome)
            if kind == "unreadable":
                unreadable.append(dst)
            elif src.name.endswith(".jsonl") and _makes_lines(bundle.agent, data):
                readable = True
                names |= _names(data, dst.name)
        if main_stem:
            names.add(main_stem.removesuffix(".jsonl"))
        if readable:
            expect.sessions[f"{k}:{bundle.label}"] = names
    _junk(home, plan.junk, placed, expect, unreadable)
    for path in unreadable:
        path.chmod(0)
    return expect


def _junk(
    home: Path, junk: list[str], placed: list[Path], expect: Expect, unreadable: list[Path]
) -> None:
    projects = home / homes.ROOTS["claude"]
    project = projects / "-home-user-junk"
    project.mkdir(parents=True, exist_ok=True)
    sample = ROOT / "testdata" / "claude-session" / "thinking.jsonl"
    sid = "2efbdf9e-3bd1-4262-a6ba-7d755a6d835d"  # the sample's own session
    for kind in junk:
        if kind == "jsonl_dir_with_session":
            folder = project / "old.jsonl"
            folder.mkdir()
            shutil.copyfile(sample, folder / f"{sid}.jsonl")
            expect.sessions[f"junk:{kind}"] = {sid}
        elif kind == "fifo":
            os.mkfifo(project / "0b5e0000-1111-4222-8333-444455556666.jsonl")
        elif kind == "dangling":
            (project / "gone.jsonl").symlink_to(home / "nowhere.jsonl")
        elif kind == "loop":
            (project / "loop.jsonl").symlink_to(project / "loop.jsonl")
        elif kind == "link_out":
            outside = home / "outside" / f"{sid}.jsonl"
            outside.parent.mkdir(exist_ok=True)
            shutil.copyfile(sample, outside)
            # A symlinked file leading out of the folder walked is skipped.
            (project / f"{sid}.jsonl").symlink_to(outside)
        elif kind == "link_in" and placed:
            target = placed[0]
            if target.is_relative_to(projects):
                link = project / f"link-{target.name}"
                link.symlink_to(target)
                if str(target.relative_to(home)) in expect.damaged:
                    expect.damaged.add(str(link.relative_to(home)))
        elif kind == "linked_dir":
            (projects / "-linked").symlink_to(home / "outside", target_is_directory=True)
            (home / "outside").mkdir(exist_ok=True)
        elif kind == "journal":
            (project / "journal.jsonl").write_bytes(b'{"not":"a transcript"}\n')
        elif kind == "tool_results":
            (project / sid / "tool-results").mkdir(parents=True)
            (project / sid / "tool-results" / "t.jsonl").write_bytes(b"plain output\n")
        elif kind == "workflow_state":
            (project / sid / "workflows").mkdir(parents=True, exist_ok=True)
            (project / sid / "workflows" / "state.jsonl").write_bytes(b'{"state":1}\n')
        elif kind == "codex_history":
            codex = home / homes.ROOTS["codex"]
            codex.mkdir(parents=True, exist_ok=True)
            (codex / "history.jsonl").write_bytes(b'{"session_id":"x","ts":1,"text":"hi"}\n')
        elif kind == "unreadable_dir":
            folder = projects / "-home-user-locked"
            folder.mkdir()
            shutil.copyfile(sample, folder / f"{sid}.jsonl")
            expect.damaged.add(str(folder.relative_to(home)))
            unreadable.append(folder)


def tree(home: Path) -> str:
    """The home's files, for a failure's message (mode, size, symlink target)."""
    lines = []
    for dirpath, dirs, files in os.walk(home):
        for name in sorted(dirs + files):
            path = Path(dirpath) / name
            st_ = path.lstat()
            what = f"-> {os.readlink(path)}" if path.is_symlink() else f"{st_.st_size} B"
            if stat.S_ISDIR(st_.st_mode) and not path.is_symlink():
                what = "dir"
            lines.append(f"{oct(st_.st_mode & 0o777)} {path.relative_to(home)} {what}")
    return "\n".join(sorted(lines))


def problems(ran: homes.Ran, expect: Expect, lenient: bool) -> list[str]:
    """What is wrong with one command's run on a home: a crash; an exit status
    that is not 1 exactly when an error line was said (``sessions``, lenient as
    ``convert --lenient`` is, may end 0 after records that did not fit, never 1
    with no error said); an error line naming no damaged file."""
    found = []
    crash = homes.crashed(ran)
    if crash:
        return [f"crash: {crash}"]
    errors = homes.error_lines(ran.stderr)
    if ran.status not in ((0, 1) if lenient and errors else (1 if errors else 0,)):
        found.append(f"exit {ran.status} with {len(errors)} error lines: {ran.stderr[-1500:]}")
    found += [
        f"error line for whole input: {x}"
        for x in errors
        if not any(d in x for d in expect.damaged)
    ]
    return found


def examine(streamv1_bin: str, home: Path, expect: Expect) -> list[str]:
    """Every way ``convert`` and ``sessions`` of ``home`` break the property."""
    ran = homes.run(streamv1_bin, home, "convert")
    found = [f"convert: {x}" for x in problems(ran, expect, lenient=False)]
    lost = homes.missing(expect.sessions, homes.session_ids(ran.stdout))
    found += [f"convert: session missing: {x} {sorted(expect.sessions[x])}" for x in lost]
    if ran.stdout:
        found += [f"convert: invalid: {x}" for x in framing_violations(ran.stdout)[:5]]
    table = homes.run(streamv1_bin, home, "sessions", "--json")
    found += [f"sessions: {x}" for x in problems(table, expect, lenient=True)]
    if not homes.crashed(table):
        rows = {orjson.loads(x)["session_id"] for x in table.stdout.splitlines()}
        lost = homes.missing(expect.sessions, rows)
        found += [f"sessions: no row: {x} {sorted(expect.sessions[x])}" for x in lost]
    return found


def cleanup(home: Path) -> None:
    for dirpath, dirs, _ in os.walk(home):
        for name in dirs:
            path = Path(dirpath) / name
            if not path.is_symlink():
                path.chmod(0o755)
    shutil.rmtree(home, ignore_errors=True)


def _explicit(test: Any) -> Any:
    """The layouts known to have crashed the framer, as they are, every run: the
    2.1.29 prompt-suggestion side calls (``agent-aprompt_suggestion-*.jsonl``,
    ../shared's public corpus) and a Workflow's agents
    (``subagents/workflows/wf_*/``, the ``x_workflow`` capture once in testdata)."""
    pool = _material()
    for k, bundle in enumerate(pool):
        names = [rel for rel, _ in bundle.files]
        if any("aprompt_suggestion" in n or "/workflows/wf_" in n for n in names):
            test = example(plan=Plan([Pick(k, 0, -1, False, {}, 0.5)], []))(test)
    return test


@settings(
    max_examples=_EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    # Each example runs two commands: a shrink of a failure costs minutes, so the
    # suite reports the example as drawn (its home's tree), a deep run shrinks it.
    phases=list(Phase) if _DEEP else [Phase.explicit, Phase.reuse, Phase.generate],
)
@_explicit
@given(plan=plans())
def test_a_messy_home_converts_whole(streamv1_bin: str, plan: Plan) -> None:
    home = Path(tempfile.mkdtemp(prefix="streamv1-home-"))
    try:
        expect = build(home, plan)
        where = f"home {home}:\n{tree(home)}"
        note(where)
        found = examine(streamv1_bin, home, expect)
        assert found == [], "\n".join(found) + "\n" + where
    finally:
        cleanup(home)
