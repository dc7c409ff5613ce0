"""The view for people (#25 item 3), driven in a real terminal: tmux runs the
installed command in a pane, capture-pane reads what a person sees."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import uuid
from pathlib import Path

import pytest
from conftest import ROOT

DATA = ROOT / "testdata"
LAYOUT = DATA / "claude-session" / "subagent_layout" / "7ab05073-03bd-480e-bfab-7ae89322bf51"
INPUTS = [DATA / "claude-session" / "print_mode_bash.jsonl",
          DATA / "codex" / "c2_shell.rollout.jsonl",
          DATA / "gemini" / "chat_tool_error.jsonl",
          LAYOUT.with_suffix(".jsonl"), LAYOUT / "subagents" / "agent-a4ecf0489c6080106.jsonl"]

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


def in_terminal(command: str, tmp: Path, env: dict[str, str] | None = None,
                escapes: bool = False) -> str:
    """Run ``command`` in a fresh tmux pane (180x60) until it ends; the screen."""
    name = f"streamv1-{uuid.uuid4().hex[:8]}"
    done = tmp / f"{name}.done"
    socket = str(tmp / f"{name}.sock")
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TMUX")}
    environ |= {"TERM": "xterm-256color"} | (env or {})
    exports = " ".join(f"{k}={v}" for k, v in (env or {}).items())
    script = f"{exports} {command}; touch {done}; sleep 60"
    subprocess.run(["tmux", "-S", socket, "new-session", "-d", "-s", name, "-x", "180",
                    "-y", "60", script], env=environ, check=True)
    try:
        deadline = time.monotonic() + 60
        while not done.exists():
            assert time.monotonic() < deadline, "the command did not end"
            time.sleep(0.1)
        args = ["tmux", "-S", socket, "capture-pane", "-p", "-t", name, "-S", "-200"]
        return subprocess.run(args + (["-e"] if escapes else []), capture_output=True,
                              text=True, check=True).stdout
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, check=False)


def test_a_person_sees_prompts_tool_calls_errors_and_results_not_json(
        streamv1_bin: str, tmp_path: Path) -> None:
    screen = in_terminal(f"{streamv1_bin} --log-level error convert "
                         + " ".join(map(str, INPUTS)), tmp_path)
    assert '{"type"' not in screen and '"session_id"' not in screen
    for seen in ("> Run `echo hello` in the shell.",  # the prompt
                 "⚙ Bash: echo hello",  # a tool call: its name and its command
                 "command_execution: echo hello",  # Codex code mode's nested call
                 "✗ tool error: File not found",  # a failing tool, marked
                 "■ success · 2 turns · 44,402 tokens · $0.1018",  # a result
                 "▶ run begins: gemini-cli"):
        assert seen in screen, (seen, screen)
    nested = [x for x in screen.splitlines() if x.startswith("7ab05073     ")]
    assert nested, screen  # the subagent's lines, indented under its parent's run


def test_piped_or_redirected_it_is_the_stream_v1_bytes(streamv1_bin: str, tmp_path: Path) -> None:
    args = [streamv1_bin, "--log-level", "error", "convert", *map(str, INPUTS)]
    want = subprocess.run(args, capture_output=True, check=True).stdout
    out = tmp_path / "out.jsonl"
    in_terminal(" ".join(args) + f" | cat > {out}", tmp_path)
    assert out.read_bytes() == want and want.startswith(b'{"type":"system"')
    screen = in_terminal(" ".join(args[:4]) + " --format json " + " ".join(args[4:]), tmp_path)
    assert '{"type":"system","subtype":"init"' in screen  # forced JSON at a terminal
    piped = subprocess.run([*args[:4], "--format", "pretty", *args[4:]], capture_output=True,
                           check=True).stdout.decode()
    assert "⚙ Bash: echo hello" in piped and "\x1b" not in piped  # forced, no colour off a tty


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"}, {"TERM": "dumb"}], ids=["NO_COLOR", "dumb"])
def test_no_color_and_a_dumb_terminal_get_no_escape_codes(
        streamv1_bin: str, tmp_path: Path, env: dict[str, str]) -> None:
    command = f"{streamv1_bin} --log-level error convert {INPUTS[0]}"
    coloured = in_terminal(command, tmp_path, escapes=True)
    assert "\x1b[" in coloured  # a colour per session, normally
    plain = in_terminal(command, tmp_path, env=env, escapes=True)
    assert "⚙ Bash: echo hello" in plain and "\x1b[" not in plain


def _many_sessions(folder: Path, n: int) -> None:
    """n sessions (a real interactive transcript of four turns, 34 KB, each its own
    session id), in 30 project folders."""
    src = (DATA / "claude-session" / "interactive_four_turns.jsonl").read_text()
    sid = "90b90b6f-cd35-43f6-923d-d9255e2f4ab2"
    for i in range(n):
        new = str(uuid.UUID(int=i + 1))
        project = folder / f"p{i % 30}"
        project.mkdir(parents=True, exist_ok=True)
        (project / f"{new}.jsonl").write_text(src.replace(sid, new))


_PROGRESS = re.compile(r"convert (\d+)/1500 files .* MB/s ETA")


@pytest.mark.parametrize("where", ["redirected", "-o", "view"])
def test_a_long_convert_shows_progress_before_it_ends(streamv1_bin: str, tmp_path: Path,
                                                     where: str) -> None:
    """#25 item 4: 1,500 files at a terminal show files, MB, rate and ETA on stderr
    while they are converted, whether stdout is redirected to a file, or the output
    is -o FILE (both get the same bytes as a convert with no terminal), or stdout
    is the view for people beside it."""
    _many_sessions(tmp_path / "in", 1500)
    out = tmp_path / "out.jsonl"
    view = where == "view"
    command = f"{streamv1_bin} convert {tmp_path / 'in'}" + {
        "redirected": f" > {out}", "-o": f" -o {out}", "view": ""}[where]
    name = f"streamv1-{uuid.uuid4().hex[:8]}"
    done = tmp_path / "done"
    socket = str(tmp_path / "tmux.sock")
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TMUX")}
    subprocess.run(["tmux", "-S", socket, "new-session", "-d", "-s", name, "-x", "180", "-y",
                    "50", f"{command}; touch {done}; sleep 60"],
                   env=environ | {"TERM": "xterm-256color"}, check=True)
    during: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while not done.exists():
            assert time.monotonic() < deadline, "the convert did not end"
            screen = subprocess.run(["tmux", "-S", socket, "capture-pane", "-p", "-t", name],
                                    capture_output=True, text=True, check=True).stdout
            if not done.exists():  # (the screen was read while it ran)
                during.update(int(n) for n in _PROGRESS.findall(screen))
            time.sleep(0.05)
        screen = subprocess.run(["tmux", "-S", socket, "capture-pane", "-p", "-t", name,
                                 "-S", "-100"], capture_output=True, text=True,
                                check=True).stdout
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, check=False)
    assert any(n < 1500 for n in during), (sorted(during), screen)
    assert "convert 1500/1500 files" in screen and "summary" in screen
    if view:
        assert "■ success" in screen and '{"type"' not in screen
    else:
        want = subprocess.run([streamv1_bin, "convert", str(tmp_path / "in")],
                              capture_output=True, check=True).stdout
        assert out.read_bytes() == want and want.count(b'"subtype":"init"') >= 1500


def test_tail_at_a_terminal_shows_its_catch_up_and_the_view(streamv1_bin: str,
                                                            tmp_path: Path) -> None:
    """#25 items 3 and 4 for tail: at a terminal its stdout is the view for people,
    and its start-up catch-up shows files, MB, rate and ETA while it reads, drawn
    below the view's lines; Ctrl-C ends it (status 0, as SIGINT does)."""
    src = (DATA / "claude-session" / "print_mode_bash.jsonl").read_text()
    for i in range(400):
        project = tmp_path / "projects" / f"p{i % 10}"
        project.mkdir(parents=True, exist_ok=True)
        new = str(uuid.UUID(int=i + 1))
        (project / f"{new}.jsonl").write_text(
            src.replace("5eccd76e-a2bd-46d3-9ac7-285807858239", new))
    name = f"streamv1-{uuid.uuid4().hex[:8]}"
    socket = str(tmp_path / "tmux.sock")
    status = tmp_path / "status"
    environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TMUX")}
    command = (f"{streamv1_bin} tail --no-ingest --state {tmp_path / 'state'} "
               f"{tmp_path / 'projects'}; echo $? > {status}; sleep 60")
    conf = tmp_path / "tmux.conf"
    conf.write_text("set -g history-limit 50000\n")  # every line of the view kept
    subprocess.run(["tmux", "-S", socket, "-f", str(conf), "new-session", "-d", "-s", name,
                    "-x", "180", "-y", "50", command],
                   env=environ | {"TERM": "xterm-256color"}, check=True)
    during: set[int] = set()
    pattern = re.compile(r"catch-up (\d+)/400 files .* MB/s ETA")

    def screen(*extra: str) -> str:
        return subprocess.run(["tmux", "-S", socket, "capture-pane", "-p", "-t", name, *extra],
                              capture_output=True, text=True, check=True).stdout

    try:
        deadline = time.monotonic() + 120
        while 400 not in during:
            assert time.monotonic() < deadline, (sorted(during), screen())
            during.update(int(n) for n in pattern.findall(screen()))
            time.sleep(0.05)
        subprocess.run(["tmux", "-S", socket, "send-keys", "-t", name, "C-c"], check=True)
        while not status.exists():
            assert time.monotonic() < deadline, screen()
            time.sleep(0.1)
        shown = screen("-S", "-50000")
    finally:
        subprocess.run(["tmux", "-S", socket, "kill-server"], capture_output=True, check=False)
    assert any(n < 400 for n in during), sorted(during)
    assert status.read_text().strip() == "0"
    assert "⚙ Bash: echo hello" in shown and "> Run `echo hello` in the shell." in shown
    assert '{"type"' not in shown and "Traceback" not in shown
    assert shown.count("■ success · 2 turns") == 400  # every session's run, once
