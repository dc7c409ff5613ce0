"""One session's failure is that session's problem line, and nothing else.

A failure is injected into chosen sessions of a many-session home (framing an
event, ending a file's runs, merging a session's files) by wrapping the real code
for the test's duration, never by a hook in the product. Then, in ``convert``
(in process and the installed command), ``sessions`` and the live ``tail``:

* every other session's lines are byte for byte those of a run without the failure;
* the failed session says it: a system/error (``kind: internal_error``) naming the
  file and the line, followed at once by its run's result (``is_error``);
* every line still validates and every run is framed;
* the command's status is 1, never 70, and no traceback reaches stderr.
"""

from __future__ import annotations

import io
import os
import random
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import ROOT
from helpers import FIXED_NOW, framing_violations, schema_violations
from tailing import Clock, fixed, tail_output

from streamv1.translator.model.framing import Framer
from streamv1.translator.output.shapes.stream_v1 import StreamV1Encoder
from streamv1.translator.tail.daemon import TailDaemon
from streamv1.translator.tail.output import OutputSink
from streamv1.translator.translate import many_inputs
from streamv1.translator.translate.session import SessionMerge

CAPTURES = ROOT / "testdata" / "captures"
CODEX = ROOT / "testdata" / "codex" / "c10_subagent" / "sessions"


OPEN_SID = b"0c0ffee0-0000-4000-8000-000000000001"


#: The sessions an injection reached in the current test (one drawn at a line past
#: its session's last reaches none).
HIT: set[str] = set()


class Injected(RuntimeError):
    """The failure the tests inject (a bug, as the product sees it)."""


def make_home(home: Path) -> Path:
    """A home as the CLIs lay it out: every shipped Claude Code capture's session
    (main files, subagents and their sidecars) in one project folder, and a Codex
    parent and child rollout in their dated folder."""
    project = home / ".claude" / "projects" / "-home-user-project"
    for scenario in sorted(CAPTURES.iterdir()):
        src = scenario / "projects" / "-home-user-project"
        if src.is_dir():
            shutil.copytree(src, project, dirs_exist_ok=True)
    # A session still being written (its run open at the file's end), as a copy of
    # one under another id.
    src = CAPTURES / "x_parallel_tools" / "projects" / "-home-user-project"
    (main,) = src.glob("*.jsonl")
    lines = main.read_bytes().splitlines(keepends=True)
    cut = b"".join(lines[: max(2, len(lines) * 3 // 5)]).replace(main.stem.encode(), OPEN_SID)
    (project / f"{OPEN_SID.decode()}.jsonl").write_bytes(cut)
    codex = home / ".codex" / "sessions"
    shutil.copytree(CODEX, codex, ignore=shutil.ignore_patterns("*.expected.jsonl"))
    return home


def home_inputs(home: Path) -> list[str]:
    from streamv1.translator.reading.discover import walk_paths

    return sorted(walk_paths(str(home / ".claude" / "projects")) + walk_paths(str(home / ".codex")))


def convert(paths: list[str]) -> tuple[bytes, many_inputs.Totals]:
    out = io.BytesIO()
    jobs = [many_inputs.Job(p) for p in paths]
    options = many_inputs.Options(fixed_now=FIXED_NOW)
    totals = many_inputs.run(jobs, out, options, workers=1, progress=False)
    return out.getvalue(), totals


def by_session(data: bytes) -> dict[str, list[bytes]]:
    groups: dict[str, list[bytes]] = defaultdict(list)
    for raw in data.splitlines():
        groups[orjson.loads(raw)["session_id"]].append(raw)
    return dict(groups)


def multi_file_sessions(paths: list[str]) -> set[str]:
    """Sessions a merge frames: a main file with subagent files beside it."""
    out = set()
    for p in paths:
        if "/subagents/" in p:
            out.add(Path(p).parent.parent.name)
    return out


# -- the injections --------------------------------------------------------------------


def fail_in_push(doomed: set[str], rng: random.Random) -> Callable[..., Any]:
    """Framer.push raises at a random event (the 1st to the 12th) of each doomed
    session, once a session."""
    real = Framer.push
    left = {sid: rng.randint(1, 12) for sid in sorted(doomed)}

    def push(self: Framer, event: Any) -> Any:
        key = self.run_key
        sid = key[0] if key is not None else getattr(event, "session_id", None)
        if sid in left:
            left[sid] -= 1
            if left[sid] == 0:
                del left[sid]
                HIT.add(sid)
                raise Injected(f"injected into {sid}")
        return real(self, event)

    return push


def fail_in_encode(doomed: set[str], rng: random.Random) -> Callable[..., Any]:
    """The encoder raises at a random line (the 1st to the 8th) of each doomed
    session, once a session: a failure past the framer, caught by the input's net."""
    real = StreamV1Encoder.encode
    left = {sid: rng.randint(1, 8) for sid in sorted(doomed)}

    def encode(line: Any) -> bytes:
        sid = line.get("session_id")
        if sid in left:
            left[sid] -= 1
            if left[sid] == 0:
                del left[sid]
                HIT.add(sid)
                raise Injected(f"injected into a line of {sid}")
        return real(line)

    return staticmethod(encode)


def fail_in_merge(doomed: set[str]) -> Callable[..., Any]:
    """SessionMerge.step raises for a doomed session once it has framed a batch."""
    real = SessionMerge.step

    def step(self: SessionMerge, *args: Any, **kw: Any) -> Any:
        key = self.owner.framer.run_key
        if key is not None and key[0] in doomed:
            HIT.add(key[0])
            raise Injected(f"injected into the merge of {key[0]}")
        return real(self, *args, **kw)

    return step


INJECTIONS = ["push", "encode", "merge"]


def inject(monkeypatch: pytest.MonkeyPatch, where: str, doomed: set[str], seed: int) -> None:
    HIT.clear()
    if where == "push":
        monkeypatch.setattr(Framer, "push", fail_in_push(doomed, random.Random(seed)))
    elif where == "encode":
        monkeypatch.setattr(StreamV1Encoder, "encode", fail_in_encode(doomed, random.Random(seed)))
    else:
        monkeypatch.setattr(SessionMerge, "step", fail_in_merge(doomed))


# -- the checks ------------------------------------------------------------------------


def check_isolated(
    got: bytes, want: bytes, doomed: set[str], where: str, paths: list[str], live: bool = False
) -> None:
    found = framing_violations(got)
    if live:  # a live run still open (the session being written) has no result yet
        found = [v for v in found if not v.endswith("ends without a result")]
    assert found == []
    assert schema_violations(got) == []
    mine, theirs = by_session(got), by_session(want)
    assert set(mine) >= set(theirs) - doomed, "a session went missing"
    for sid, lines in theirs.items():
        if sid not in doomed:
            assert mine[sid] == lines, f"{sid}: another session's failure changed it"
    for sid in doomed:
        lines = [orjson.loads(raw) for raw in mine[sid]]
        errors = [
            k
            for k, line in enumerate(lines)
            if line.get("subtype") == "error"
            and (line.get("extension") or {}).get("kind") == "internal_error"
        ]
        if where == "encode":
            # The line the encoder failed on: its envelope in its place, saying so.
            said = [x for x in lines if (x.get("extension") or {}).get("kind") == "internal_error"]
            assert said and all("Injected" in x["extension"]["error"] for x in said)
            assert all(x["extension"]["path"] in paths for x in said)
            continue
        assert errors, f"{sid}: the failure ({where}) is not said"
        for k in errors:
            error, after = lines[k], lines[k + 1]
            assert after["type"] == "result" and after["is_error"] is True, after
            ext = error["extension"]
            assert ext["path"] in paths and isinstance(ext["line"], int)
            assert error["message"].startswith(f"{ext['path']}:{ext['line']}: ")
            assert "Injected" in error["message"]


def candidates_for(where: str, paths: list[str], baseline: bytes) -> set[str]:
    """The sessions an injection can reach: those a merge frames for ``merge``,
    any for the others."""
    sessions = set(by_session(baseline))
    return multi_file_sessions(paths) & sessions if where == "merge" else sessions


def pick(rng: random.Random, sessions: list[str], k: int) -> set[str]:
    return set(rng.sample(sorted(sessions), min(k, len(sessions))))


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_home(tmp_path_factory.mktemp("home"))


@pytest.fixture(scope="module")
def baseline(home: Path) -> bytes:
    data, totals = convert(home_inputs(home))
    assert totals.framing.failures == 0
    return data


@pytest.mark.parametrize("where", INJECTIONS)
@pytest.mark.parametrize("seed", range(3))
def test_a_failure_in_convert_stays_in_its_session(
    monkeypatch: pytest.MonkeyPatch, home: Path, baseline: bytes, where: str, seed: int
) -> None:
    paths = home_inputs(home)
    rng = random.Random(f"{where}{seed}")
    candidates = candidates_for(where, paths, baseline)
    doomed = pick(rng, sorted(candidates), 3)
    assert doomed
    inject(monkeypatch, where, doomed, seed)
    got, totals = convert(paths)
    assert HIT, "the injection reached no session"
    check_isolated(got, baseline, set(HIT), where, paths)
    assert totals.framing.failures >= len(HIT)


# -- the installed command ------------------------------------------------------------

_HOOK = """
import os, sys
spec = os.environ.get("STREAMV1_TEST_DOOMED")
if spec:
    doomed = set(spec.split(","))
    from streamv1.translator.model.framing import Framer
    real = Framer.push
    def push(self, event):
        key = self.run_key
        sid = key[0] if key is not None else getattr(event, "session_id", None)
        if sid in doomed:
            doomed.discard(sid)
            raise RuntimeError("Injected failure for " + sid)
        return real(self, event)
    Framer.push = push
"""


@pytest.fixture()
def hooked_env(tmp_path: Path, home: Path) -> Iterator[dict[str, str]]:
    """The installed command, with Framer.push wrapped in its process by a
    sitecustomize module the test puts first on its path (nothing in the product)."""
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(_HOOK)
    env = dict(os.environ, HOME=str(home), PYTHONPATH=str(hook), NO_COLOR="1")
    env.pop("XDG_CONFIG_HOME", None)
    yield env


def _run(bin_: str, args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [bin_, *args], env=env, capture_output=True, timeout=120, stdin=subprocess.DEVNULL
    )


def test_the_command_goes_on_past_a_failed_session(
    streamv1_bin: str, hooked_env: dict[str, str], baseline: bytes
) -> None:
    sessions = sorted(by_session(baseline))
    doomed = pick(random.Random(7), sessions, 4)
    args = ["convert", "--now", FIXED_NOW, "--jobs", "2"]
    clean = _run(streamv1_bin, args, {k: v for k, v in hooked_env.items() if k != "PYTHONPATH"})
    assert clean.returncode == 0, clean.stderr.decode()[-2000:]
    env = dict(hooked_env, STREAMV1_TEST_DOOMED=",".join(sorted(doomed)))
    failed = _run(streamv1_bin, args, env)
    assert failed.returncode == 1, failed.stderr.decode()[-2000:]
    assert b"Traceback" not in failed.stderr and b"internal error" not in failed.stderr
    assert b"translation failed" in failed.stderr
    paths = [str(Path(p)) for p in home_inputs(Path(env["HOME"]))]
    check_isolated(failed.stdout, clean.stdout, doomed, "push", paths)


def test_sessions_keeps_every_other_row(
    streamv1_bin: str, hooked_env: dict[str, str], baseline: bytes
) -> None:
    sessions = sorted(by_session(baseline))
    doomed = pick(random.Random(11), sessions, 3)
    clean_env = {k: v for k, v in hooked_env.items() if k != "PYTHONPATH"}
    clean = _run(streamv1_bin, ["sessions", "--json"], clean_env)
    assert clean.returncode == 0, clean.stderr.decode()[-2000:]
    env = dict(hooked_env, STREAMV1_TEST_DOOMED=",".join(sorted(doomed)))
    failed = _run(streamv1_bin, ["sessions", "--json"], env)
    assert failed.returncode == 1, failed.stderr.decode()[-2000:]
    assert b"Traceback" not in failed.stderr and b"internal error" not in failed.stderr
    want = {row["session_id"]: row for row in map(orjson.loads, clean.stdout.splitlines())}
    got = {row["session_id"]: row for row in map(orjson.loads, failed.stdout.splitlines())}
    assert set(got) == set(want), "every session keeps its row, the failed ones too"
    for sid, row in want.items():
        if sid not in doomed:
            assert got[sid] == row
        else:
            assert got[sid]["errors"] >= 1


# -- the live tail ---------------------------------------------------------------------


def _tail(home: Path, tmp: Path) -> bytes:
    daemon = TailDaemon(
        [home / ".claude" / "projects", home / ".codex" / "sessions"],
        OutputSink(tmp / "out.jsonl"),
        tmp / "state.json",
        clock=fixed,
        now=Clock(),
        commit_every=0,
    )
    daemon.start()
    daemon.tick(rescan=True)
    daemon.tick(rescan=True)
    daemon.stop()
    return tail_output(tmp / "out.jsonl")


@pytest.mark.parametrize("where", ["push", "merge"])
def test_a_failure_in_the_tail_stays_in_its_session(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, home: Path, where: str
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    want = _tail(home, tmp_path / "a")
    paths = home_inputs(home)
    doomed = pick(random.Random(where), sorted(candidates_for(where, paths, want)), 3)
    inject(monkeypatch, where, doomed, 5)
    got = _tail(home, tmp_path / "b")
    assert HIT, "the injection reached no session"
    check_isolated(got, want, set(HIT), where, paths, live=True)


def test_no_assert_decides_on_input() -> None:
    """An impossible state is a problem line, not a crash: no ``assert`` in the
    adapters or the framer (``python -O`` would skip it, and a failed one is a
    traceback)."""
    found = []
    for folder in (ROOT / "adapters", ROOT / "translator" / "model"):
        for path in sorted(folder.rglob("*.py")):
            for number, text in enumerate(path.read_text().splitlines(), 1):
                if text.strip().startswith("assert "):
                    found.append(f"{path.relative_to(ROOT)}:{number}: {text.strip()}")
    assert found == [], "\n".join(found)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__, "-q"]))
