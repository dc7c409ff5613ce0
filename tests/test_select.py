"""convert's run selection (#25 item 1): --since/--until/--project/--agent/--session
keep whole runs of the stream, so what passes is still framed as the contract says."""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
from conftest import ROOT
from helpers import framing_violations, schema_violations

DATA = ROOT / "testdata"
LAYOUT = DATA / "claude-session" / "subagent_layout" / "7ab05073-03bd-480e-bfab-7ae89322bf51"
INPUTS = [str(DATA / "claude-session" / "print_mode_bash.jsonl"),
          str(DATA / "codex" / "c2_shell.rollout.jsonl"),
          str(DATA / "gemini" / "chat_tool_error.jsonl"),
          str(LAYOUT.with_suffix(".jsonl")),
          str(LAYOUT / "subagents" / "agent-a4ecf0489c6080106.jsonl")]


def convert(bin_: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([bin_, "convert", *args, *INPUTS], capture_output=True, timeout=120,
                          check=False)


def runs(out: bytes) -> list[list[dict[str, object]]]:
    """The output's runs, each its lines, in order."""
    found: list[list[dict[str, object]]] = []
    for raw in out.splitlines():
        line = orjson.loads(raw)
        if line.get("subtype") == "init":
            found.append([])
        found[-1].append(line)
    return found


def test_each_filter_keeps_whole_runs_of_what_it_names(streamv1_bin: str) -> None:
    every = convert(streamv1_bin)
    assert every.returncode == 0, every.stderr
    all_runs = runs(every.stdout)
    by_agent = {r[0]["agent"]["name"] for r in all_runs}  # type: ignore[index]
    assert by_agent == {"claude-code", "codex", "gemini-cli"}
    for args, keeps in [
        (["--agent", "codex"], lambda r: r[0]["agent"]["name"] == "codex"),
        (["--session", "7ab05073"], lambda r: str(r[0]["session_id"]).startswith("7ab05073")),
        (["--project", "/home/user/project"], lambda r: True),
        (["--project", "nowhere"], lambda r: False),
        (["--since", "2026-12-01"], lambda r: str(r[0]["ts"]) >= "2026-12-01"),
        (["--until", "2026-12-01"], lambda r: str(r[0]["ts"]) <= "2026-12-01"),
    ]:
        proc = convert(streamv1_bin, *args)
        assert proc.returncode == 0, (args, proc.stderr)
        want = [r for r in all_runs if keeps(r)]
        assert runs(proc.stdout) == want, args
        if want:  # (an empty output is no stream to check)
            assert framing_violations(proc.stdout) == []
            assert schema_violations(proc.stdout) == []
        if len(want) < len(all_runs):
            assert f"runs={len(all_runs) - len(want)}".encode() in proc.stderr, proc.stderr
    nested = [line for r in runs(convert(streamv1_bin, "--session", "7ab05073").stdout)
              for line in r if line.get("parent_tool_use_id")]
    assert nested  # the subagent's lines come with their parent's run


def test_a_selection_is_refused_with_out_dir_and_a_bad_time(streamv1_bin: str,
                                                             tmp_path: Path) -> None:
    proc = convert(streamv1_bin, "--agent", "codex", "--out-dir", str(tmp_path / "o"))
    assert proc.returncode == 2 and b"not --out-dir" in proc.stderr
    proc = convert(streamv1_bin, "--since", "whenever")
    assert proc.returncode == 2 and b"'whenever' is no time" in proc.stderr
