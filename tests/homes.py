"""Homes as the CLIs leave them, made from the flat public corpus, and the checks
that a whole home converts.

``../shared/corpus/public/`` keeps each file flat: ``<owner>__<repo>/<path in the
repository, / as __>``. :func:`public_layout` puts each real Claude Code session
file back where Claude Code writes it, ``HOME/.claude/projects/<project>/``:

* ``<session>.jsonl`` for a session's own file;
* ``<session>/subagents/agent-<id>.jsonl`` (and its ``.meta.json`` when one was
  kept) for a subagent of the newer layout;
* ``agent-<id>.jsonl`` beside the session's file for the older flat layout.

What is read, and what is guessed:

* The project folder is the ``projects__<project>__`` part of the name (the repo
  copied a ``~/.claude/projects`` folder: claudeless' ``<scenario>.projects``,
  claude-code-viewer's ``projects``, claude-code-log's ``real_projects``), or the
  folder above the session file when its name is a project slug (sniffly's
  ``mock-data/-Users-...``). Where the name has none, it is the first record's
  ``cwd`` made a slug as Claude Code names the folder: each character that is not
  a letter, digit, ``_`` or ``-`` becomes ``-`` (guessed from the corpus' own
  pairs: ``/src/experiments/claude_p`` in ``-src-experiments-claude_p``,
  ``.../danieldemmel.me-next`` in ``...-danieldemmel-me-next``). A subagent file
  goes to its session's project (its records' ``sessionId``), found by the same.
* The session is the file's name when it is ``<uuid>.jsonl`` (Claude Code names
  the file by the session). Otherwise (``full.jsonl``, ``index.jsonl``, ...) it
  is the *last* record's ``sessionId``: a resumed session's file holds the
  records it was resumed from under their old id first (vscode-copilot-chat's
  ``b02ed4d8``, happy-cli's ``task_sdk``), then its own.
* A subagent file whose path does not say its layout (agtrace's
  ``claude_agent.jsonl``) is named ``agent-<agentId>.jsonl`` and goes flat beside
  its session's file when its version is older than 2.1, else under
  ``<session>/subagents/``: guessed from the corpus, where every flat
  ``agent-*.jsonl`` is 2.0.x and every ``subagents/`` one is 2.1.x.

Claude Code ends every record it writes with a newline; entireio's copies lost
the last one (16 of its 19 files end mid-line), so :func:`lay_out` gives it back.
Files no Claude Code home holds are kept out, with the reason
(:data:`Layout.kept_out`): print-mode and SDK streams (nothing stores them in a
home), values *normalized* to placeholders, other tools' files, JSON arrays.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

UUID = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_SLUG_CHAR = re.compile(r"[^A-Za-z0-9_-]")
#: Repositories whose files are not a Claude Code home's, and why (SOURCES.md).
_NOT_A_HOME = {
    "scoutme__milk": "not Claude Code (milk's own stream-json goldens)",
    "adhyaay-karnwal__terragon-oss": "print-mode output re-saved as JSON arrays",
    "nshkrdotcom__claude_agent_sdk": "single print-mode frames",
    "charlieyou__claude-agent-sdk-gleam": "a print-mode stream",
}


@dataclass(frozen=True)
class Placed:
    """One corpus file and where its CLI keeps it (relative to HOME)."""

    source: Path
    rel: str
    session: str
    #: "main" (a session's own file) or "subagent"
    kind: str


@dataclass
class Layout:
    placed: list[Placed] = field(default_factory=list)
    #: corpus file → why no home holds it
    kept_out: dict[Path, str] = field(default_factory=dict)

    def sessions(self) -> dict[str, set[str]]:
        """Every session of the home (each with a readable record; a subagent's
        file alone is one too) → the ids it may go by in the output: its own and
        every ``sessionId`` its files' records carry. A resumed 1.0.x session's
        file begins with records of the session it was resumed from, and the
        converter names the run by them (found with this helper: reported on
        issue #38, not decided here)."""
        out: dict[str, set[str]] = {}
        for p in self.placed:
            recs = records(p.source)
            if recs:
                names = out.setdefault(p.session, {p.session})
                names |= {r["sessionId"] for r in recs if isinstance(r.get("sessionId"), str)}
        return out

    def damaged(self) -> dict[Path, list[int]]:
        """Placed files with lines that are not one JSON object (line numbers)."""
        found = {}
        for p in self.placed:
            bad = damaged_lines(p.source)
            if bad:
                found[p.source] = bad
        return found


def damaged_lines(path: Path) -> list[int]:
    bad = []
    for n, raw in enumerate(path.read_bytes().split(b"\n"), 1):
        if not raw.strip():
            continue
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            rec = None
        if not isinstance(rec, dict):
            bad.append(n)
    return bad


def missing(want: dict[str, set[str]], got: set[str]) -> list[str]:
    """The home's sessions none of whose ids the output holds."""
    return sorted(s for s, names in want.items() if not names & got)


def records(path: Path) -> list[dict[str, Any]]:
    """The JSON objects of a JSONL file (lines that are not one are passed over)."""
    out = []
    for raw in path.read_bytes().splitlines():
        try:
            rec = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(rec, dict):
            out.append(rec)
    return out


def slug(cwd: str) -> str:
    """The project folder Claude Code names for ``cwd`` (the rule above, guessed)."""
    return _SLUG_CHAR.sub("-", cwd)


def _project_in_name(parts: list[str]) -> str | None:
    for i, part in enumerate(parts[:-1]):
        if part.endswith("projects") and i + 1 < len(parts) - 1:
            return parts[i + 1]
    return None


def _kind(recs: list[dict[str, Any]]) -> str | None:
    """ "main", "subagent", or None for a file that is not a durable session file."""
    if not recs or any("session_id" in r for r in recs):
        return None  # a print-mode / SDK stream: its lines carry session_id
    if not any("sessionId" in r or "leafUuid" in r or "parentUuid" in r for r in recs):
        return None
    talk = [r for r in recs if r.get("type") in ("user", "assistant")]
    if talk and all(r.get("isSidechain") is True for r in talk):
        return "subagent"
    return "main"


def _version(recs: list[dict[str, Any]]) -> tuple[int, ...]:
    for r in recs:
        v = r.get("version")
        if isinstance(v, str) and re.fullmatch(r"\d+(\.\d+)*", v):
            return tuple(int(x) for x in v.split("."))
    return ()


def public_layout(public: Path) -> Layout:
    """Where each file of the public corpus goes in a home (the rules above)."""
    layout = Layout()
    pending: list[tuple[Path, list[str], list[dict[str, Any]]]] = []
    projects: dict[str, str] = {}  # session → project folder of its own file
    for repo in sorted(p for p in public.iterdir() if p.is_dir()):
        for src in sorted(repo.iterdir()):
            if repo.name in _NOT_A_HOME:
                layout.kept_out[src] = _NOT_A_HOME[repo.name]
                continue
            if not src.name.endswith(".jsonl"):
                layout.kept_out[src] = "not JSONL"
                continue
            recs = records(src)
            if "normalized" in src.name or any(r.get("cwd") == "<CWD>" for r in recs):
                layout.kept_out[src] = "values normalized to placeholders"
                continue
            kind = _kind(recs)
            parts = src.name.split("__")
            if kind is None and not UUID.fullmatch(parts[-1].removesuffix(".jsonl")):
                layout.kept_out[src] = "not a durable session file (a print-mode stream)"
                continue
            pending.append((src, parts, recs))
            if kind == "main" or kind is None:
                session = _session(parts, recs)
                projects.setdefault(session, _project(parts, recs))
    for src, parts, recs in pending:
        kind = _kind(recs) or "main"
        if kind == "main":
            session = _session(parts, recs)
            rel = f"{projects[session]}/{session}.jsonl"
        else:
            session = _last_session(recs) or "unknown"
            project = _project_in_name(parts) or projects.get(session) or _project(parts, recs)
            name = parts[-1] if parts[-1].startswith("agent-") else _agent_name(recs)
            if "subagents" in parts:
                rel = f"{project}/{session}/{'/'.join(parts[parts.index('subagents') :])}"
            elif parts[-1].startswith("agent-") or _version(recs) < (2, 1):
                rel = f"{project}/{name}"
            else:
                rel = f"{project}/{session}/subagents/{name}"
        layout.placed.append(Placed(src, f".claude/projects/{rel}", session, kind))
    return layout


def _session(parts: list[str], recs: list[dict[str, Any]]) -> str:
    stem = parts[-1].removesuffix(".jsonl")
    if UUID.fullmatch(stem):
        return stem
    return _last_session(recs) or stem


def _last_session(recs: list[dict[str, Any]]) -> str | None:
    ids = [r["sessionId"] for r in recs if isinstance(r.get("sessionId"), str)]
    return ids[-1] if ids else None


def _project(parts: list[str], recs: list[dict[str, Any]]) -> str:
    named = _project_in_name(parts)
    if named:
        return named
    if len(parts) >= 2 and parts[-2].startswith("-"):
        return parts[-2]
    cwd = next((r["cwd"] for r in recs if isinstance(r.get("cwd"), str)), None)
    return slug(cwd) if cwd else "-unknown"


def _agent_name(recs: list[dict[str, Any]]) -> str:
    agent = next((r["agentId"] for r in recs if isinstance(r.get("agentId"), str)), "unknown")
    return f"agent-{agent}.jsonl"


def lay_out(home: Path, placed: list[Placed]) -> None:
    """Copy each file to its place under ``home``, its last line ended as Claude
    Code ends it (a ``.meta.json`` beside a subagent's file goes with it)."""
    for p in placed:
        dst = home / p.rel
        dst.parent.mkdir(parents=True, exist_ok=True)
        data = p.source.read_bytes()
        dst.write_bytes(data if not data or data.endswith(b"\n") else data + b"\n")
        meta = p.source.with_name(p.source.name.removesuffix(".jsonl") + ".meta.json")
        if meta.exists():
            shutil.copyfile(meta, dst.with_name(dst.name.removesuffix(".jsonl") + ".meta.json"))


# --- running the commands on a home -------------------------------------------


@dataclass
class Ran:
    status: int
    stdout: bytes
    stderr: str


def home_env(home: Path) -> dict[str, str]:
    """The environment of a user whose home is ``home``: no Claude Code override,
    state and runtime folders inside it (a daemon's checkpoint stays in the test)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CLAUDE_", "XDG_", "CODEX_"))}
    env.update(
        HOME=str(home),
        XDG_STATE_HOME=str(home / ".local" / "state"),
        XDG_RUNTIME_DIR=str(home / ".run"),
        STREAMV1_TRACEBACK="1",
    )
    env.pop("GEMINI_CLI_HOME", None)
    return env


def as_a_user() -> list[str]:
    """A command prefix that takes from root what lets it read any file, so a
    file made unreadable (mode 000) is unreadable to the command as to a user
    (the suite runs as root in containers); nothing when not root."""
    if os.geteuid() == 0 and shutil.which("setpriv"):
        return ["setpriv", "--bounding-set", "-dac_override,-dac_read_search"]
    return []


def run(bin_: str, home: Path, *args: str, timeout: float = 120) -> Ran:
    """``streamv1 <args>`` as a user in ``home`` runs it, stdin empty."""
    proc = subprocess.run(
        [*as_a_user(), bin_, *args],
        env=home_env(home),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
        cwd=home,
    )
    return Ran(proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "replace"))


def crashed(ran: Ran) -> str | None:
    """Why a run is a crash: an internal error (exit 70) or a traceback."""
    if ran.status == 70 or "internal error" in ran.stderr or "Traceback" in ran.stderr:
        # Where the first (innermost) traceback ends, and what it says.
        frames: list[str] = []
        for line in ran.stderr.splitlines():
            if line.startswith("  File ") and "site-packages" not in line:
                frames.append(line.strip())
            elif frames and line and not line.startswith((" ", "Traceback")):
                return f"exit {ran.status}: {' | '.join(frames[-3:])}: {line}"
        return f"exit {ran.status}: {ran.stderr[-1500:]}"
    return None


def error_lines(stderr: str) -> list[str]:
    return [x for x in stderr.splitlines() if x.startswith("streamv1: error")]


def framing_only(data: bytes) -> list[str]:
    """The contract checker's framing rules alone (init first, seq +1, one result
    last a run), not the schema: for lines compared whole with lines the schema
    was checked on (the schema costs ~2 ms a line)."""
    from unittest import mock

    from streamv1.translator.contract import validate

    with mock.patch.object(validate, "schema_errors", lambda obj: []):
        checker = validate.StreamChecker("out")
        raw = data.split(b"\n")
        cut = raw.pop()  # what follows the last newline: nothing, in a whole stream
        found = [str(v) for n, x in enumerate(raw, 1) for v in checker.check(n, x, True)]
        if cut:
            found += [str(v) for v in checker.check(len(raw) + 1, cut, False)]
        return found + [str(v) for v in checker.finish()]


def session_ids(data: bytes) -> set[str]:
    return {orjson.loads(x).get("session_id") for x in data.splitlines()}


# --- material for messy homes ---------------------------------------------------------


@dataclass(frozen=True)
class Bundle:
    """One session as its CLI leaves it: its files, each with its place relative
    to the CLI's own root (``.claude/projects``, ``.codex``, ``.gemini/tmp``)."""

    agent: str  # "claude", "codex", "gemini"
    label: str
    files: tuple[tuple[str, Path], ...]


#: Where each agent keeps its sessions, relative to HOME.
ROOTS = {"claude": ".claude/projects", "codex": ".codex", "gemini": ".gemini/tmp"}


def _rel_claude(projects: Path) -> list[tuple[str, Path]]:
    return [
        (str(p.relative_to(projects)), p)
        for p in sorted(projects.rglob("*"))
        if p.is_file()
        and (p.name.endswith(".jsonl") or p.name.endswith(".meta.json"))
        and not p.name.endswith(".expected.jsonl")
    ]


def _claude_sessions(files: list[tuple[str, Path]], label: str) -> list[Bundle]:
    """A projects folder's files, one bundle a session (its own file, its folder)."""
    groups: dict[str, list[tuple[str, Path]]] = {}
    for rel, src in files:
        parts = rel.split("/")
        stem = parts[-1].removesuffix(".jsonl")
        if len(parts) >= 2 and UUID.fullmatch(stem):
            key = "/".join([*parts[:-1], stem])
        elif "subagents" in parts:
            key = "/".join(parts[: parts.index("subagents")])
        else:
            sid = _last_session(records(src)) if src.name.endswith(".jsonl") else None
            key = "/".join([*parts[:-1], sid or stem])
        groups.setdefault(key, []).append((rel, src))
    return [
        Bundle("claude", f"{label}:{key}", tuple(files)) for key, files in sorted(groups.items())
    ]


def _codex_rel(src: Path) -> str:
    """``sessions/YYYY/MM/DD/rollout-<time>-<id>.jsonl``, as Codex names a rollout,
    from its session_meta (a rollout kept under another name)."""
    meta = next((r["payload"] for r in records(src) if r.get("type") == "session_meta"), {})
    ts = str(meta.get("timestamp") or "2026-01-01T00:00:00.000Z")
    thread = str(meta.get("id") or "00000000-0000-4000-8000-000000000000")
    day = ts[:10].split("-")
    return f"sessions/{'/'.join(day)}/rollout-{ts[:19].replace(':', '-')}-{thread}.jsonl"


def _gemini_rel(src: Path) -> str:
    """``<project>/chats/session-<time>-<id8>.jsonl``, as Gemini CLI names a chat."""
    meta = next((r for r in records(src) if "sessionId" in r and "startTime" in r), {})
    ts = str(meta.get("startTime") or "2026-01-01T00:00:00.000Z")
    sid = str(meta.get("sessionId") or "00000000")
    return f"project/chats/session-{ts[:16].replace(':', '-')}-{sid[:8]}.jsonl"


def material(root: Path, shared: Path) -> list[Bundle]:
    """Every real session this checkout and ../shared (when beside it) hold, as
    its CLI lays it out: the public corpus (above), the Claude Code, Codex and
    Gemini captures (their ``projects/`` or ``durable/`` homes) and the trimmed
    captures in testdata."""
    testdata = root / "testdata"
    out: list[Bundle] = []
    corpus = shared / "corpus"
    if (corpus / "public").exists():
        lay = public_layout(corpus / "public")
        files = [(p.rel.removeprefix(".claude/projects/"), p.source) for p in lay.placed]
        out += _claude_sessions(files, "public")
    scenario_roots = [testdata / "captures"]
    scenario_roots += sorted(corpus.glob("claude-code-*")) if corpus.exists() else []
    for base in scenario_roots:
        for projects in sorted(base.glob("*/projects")):
            out += _claude_sessions(_rel_claude(projects), f"{base.name}/{projects.parent.name}")
    session = testdata / "claude-session"
    out += _claude_sessions(_rel_claude(session / "subagent_layout"), "claude-session")
    for src in sorted(session.glob("*.jsonl")):
        if not src.name.endswith(".expected.jsonl"):
            sid = _last_session(records(src)) or src.stem
            out.append(
                Bundle(
                    "claude",
                    f"claude-session/{src.name}",
                    ((f"-home-user-project/{sid}.jsonl", src),),
                )
            )
    codex = testdata / "codex"
    for src in sorted(codex.glob("*.rollout.jsonl")):
        if src.name.endswith(".expected.jsonl"):
            continue
        out.append(Bundle("codex", f"codex/{src.name}", ((_codex_rel(src), src),)))
    for folder in sorted(p for p in codex.iterdir() if (p / "sessions").is_dir()):
        files = _tree(folder, ".jsonl")
        out.append(Bundle("codex", f"codex/{folder.name}", files))
    for src in sorted((testdata / "gemini").glob("chat_*.jsonl")):
        if src.name.endswith(".expected.jsonl"):
            continue
        out.append(Bundle("gemini", f"gemini/{src.name}", ((_gemini_rel(src), src),)))
    out.append(Bundle("gemini", "gemini/subagent", _tree(testdata / "gemini", "subagent/")))
    for scenario in sorted(corpus.glob("codex-*/*/durable/.codex")) if corpus.exists() else []:
        files = tuple(f for f in _tree(scenario, ".jsonl") if f[0].startswith("sessions/"))
        out.append(Bundle("codex", f"{scenario.parent.parent.name}", files))
    for scenario in (
        sorted(corpus.glob("gemini-*/*/durable/.gemini/tmp")) if corpus.exists() else []
    ):
        out.append(Bundle("gemini", scenario.parts[-4], _tree(scenario, ".jsonl")))
    return out


def _tree(base: Path, keep: str) -> tuple[tuple[str, Path], ...]:
    """The ``.jsonl`` files under ``base`` (goldens left out) whose relative path
    holds ``keep``."""
    return tuple(
        (str(p.relative_to(base)), p)
        for p in sorted(base.rglob("*.jsonl"))
        if keep in str(p.relative_to(base)) and not p.name.endswith(".expected.jsonl")
    )
