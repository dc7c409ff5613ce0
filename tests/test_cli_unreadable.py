"""End-to-end: an input named on the command line that cannot be read, beside
one that can (issue #38 item 5). One line naming it, the rest converted, exit 1:
never click's usage error (exit 2) that stopped every other input."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

SESSION = ROOT / "testdata" / "claude-session" / "max_turns.jsonl"
SESSION_ID = "3b6a9baf-b16b-49da-8fbc-08763ee86a72"
#: Without these a root process reads whatever a file's mode says (what every test
#: here runs as, on the CI machine); without them the kernel refuses it as a user's.
_READ_PAST_MODES = "dac_override,dac_read_search"


@pytest.fixture
def refused(tmp_path: Path) -> list[str]:
    """A command prefix under which a mode-000 file is refused (EACCES): none for
    a user; for root, ``setpriv`` with the capabilities that read past modes
    dropped. Checked with ``cat`` before it is used."""
    probe = tmp_path / "probe"
    probe.write_text("x")
    probe.chmod(0)
    setpriv = shutil.which("setpriv")
    prefixes: list[list[str]] = [] if os.geteuid() == 0 else [[]]
    if setpriv is not None:
        drop = ",".join(f"-{cap}" for cap in _READ_PAST_MODES.split(","))
        prefixes.append([setpriv, f"--bounding-set={drop}", f"--inh-caps={drop}"])
    for prefix in prefixes:
        cat = subprocess.run([*prefix, "cat", str(probe)], capture_output=True, check=False)
        if cat.returncode != 0 and b"Permission denied" in cat.stderr:
            return prefix
    pytest.skip("no way here to be refused a read (root without setpriv)")


def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(list(args), capture_output=True, cwd=cwd, timeout=60, check=False)


def errors(proc: subprocess.CompletedProcess[bytes]) -> list[str]:
    err = proc.stderr.decode()
    assert "Traceback" not in err and "Usage:" not in err, err
    return [line for line in err.splitlines() if ": error: " in line]


def locked_beside_good(tmp_path: Path) -> None:
    shutil.copy(SESSION, tmp_path / "good.jsonl")
    shutil.copy(SESSION, tmp_path / "locked.jsonl")
    (tmp_path / "locked.jsonl").chmod(0)


@pytest.mark.parametrize("command", ["convert", "sessions", "validate"])
def test_an_unreadable_file_beside_a_readable_one(
    streamv1_bin: str, tmp_path: Path, refused: list[str], command: str
) -> None:
    """Before: ``Error: Invalid value for '[PATHS]...': Path 'locked.jsonl' is not
    readable.``, exit 2, good.jsonl not converted."""
    locked_beside_good(tmp_path)
    proc = run(*refused, streamv1_bin, command, "good.jsonl", "locked.jsonl", cwd=tmp_path)
    assert proc.returncode == 1, proc.stderr.decode()
    said = "streamv1: error: locked.jsonl: cannot read the input: Permission denied"
    assert errors(proc)[-1] == said
    if command == "convert":
        assert proc.stdout.count(b'"type":"result"') == 1  # good.jsonl's run
    elif command == "sessions":
        assert SESSION_ID[:8].encode() in proc.stdout
    else:  # validate reads good.jsonl too (and says it is not stream_v1 yet)
        assert any("good.jsonl" in line for line in errors(proc))


def test_an_unreadable_output_file_is_written_not_refused(
    streamv1_bin: str, tmp_path: Path, refused: list[str]
) -> None:
    """``-o`` names a file to write: click's readable check refused a write-only one."""
    shutil.copy(SESSION, tmp_path / "good.jsonl")
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"")
    out.chmod(0o200)
    proc = run(*refused, streamv1_bin, "convert", "good.jsonl", "-o", str(out), cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr.decode()
    out.chmod(0o600)
    assert out.read_bytes().count(b'"type":"result"') == 1


def test_a_folder_where_a_file_is_expected(streamv1_bin: str, tmp_path: Path) -> None:
    shutil.copy(SESSION, tmp_path / "good.jsonl")
    (tmp_path / "x.jsonl").mkdir()
    proc = run(streamv1_bin, "convert", "good.jsonl", "x.jsonl", cwd=tmp_path)
    assert proc.returncode == 1
    assert errors(proc) == ["streamv1: error: x.jsonl: directory holds no transcripts (*.jsonl)"]
    assert proc.stdout.count(b'"type":"result"') == 1


def test_a_file_removed_between_listing_and_opening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A folder's file listed, then deleted before it is opened: one line naming
    it, the folder's other session converted, exit 1."""
    from click.testing import CliRunner

    from streamv1.translator.cli import app
    from streamv1.translator.cli import convert as convert_mod

    root = tmp_path / "projects"
    (root / "p").mkdir(parents=True)
    shutil.copy(SESSION, root / "p" / "a.jsonl")
    shutil.copy(ROOT / "testdata" / "claude-session" / "thinking.jsonl", root / "p" / "b.jsonl")
    real = convert_mod.walk_paths

    def walk_then_delete(*args: Any, **kw: Any) -> list[str]:
        found = real(*args, **kw)
        (root / "p" / "b.jsonl").unlink()
        return found

    monkeypatch.setattr(convert_mod, "walk_paths", walk_then_delete)
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app.main, ["convert", str(root), "-o", str(out)])
    assert result.exit_code == 1, result.output
    said = [line for line in result.output.splitlines() if ": error: " in line]
    gone = root / "p" / "b.jsonl"
    assert said == [f"streamv1: error: {gone}: cannot read the input: No such file or directory"]
    assert out.read_bytes().count(b'"type":"result"') == 1  # a.jsonl's run


def test_tail_with_an_unreadable_folder_beside_a_readable_one(
    streamv1_bin: str, tmp_path: Path, refused: list[str]
) -> None:
    """One warning naming the folder (before: taken for a shortage of inotify
    watches, with advice to raise the limit); the readable folder is followed."""
    ok, locked = tmp_path / "ok", tmp_path / "locked"
    (ok / "p").mkdir(parents=True)
    (locked / "p").mkdir(parents=True)
    shutil.copy(SESSION, ok / "p" / f"{SESSION_ID}.jsonl")
    shutil.copy(SESSION, locked / "p" / "other.jsonl")
    locked.chmod(0)
    out = tmp_path / "out.jsonl"
    args = [*refused, streamv1_bin, "tail", str(ok), str(locked), "-o", str(out)]
    args += ["--state", str(tmp_path / "state"), "--no-ingest", "--log-format", "json"]
    proc = subprocess.Popen(args, stderr=subprocess.PIPE, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (out.exists() and b"init" in out.read_bytes()):
            time.sleep(0.1)
        time.sleep(0.5)
    finally:
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=30)
        locked.chmod(0o755)
    assert proc.returncode == 0, err.decode()
    logged = [json.loads(line) for line in err.decode().splitlines() if line.startswith("{")]
    warned = [x for x in logged if x.get("level") in ("warning", "error")]
    assert [(x["event"].split(";")[0], x.get("path"), x.get("reason")) for x in warned] == [
        ("cannot read this folder", str(locked), "Permission denied")
    ]
    assert out.read_bytes().count(b'"type":"system","subtype":"init"') == 1
