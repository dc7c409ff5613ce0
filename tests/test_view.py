"""The view for people (#25 item 3), driven in a real terminal: tmux runs the
installed command in a pane, capture-pane reads what a person sees."""

from __future__ import annotations

import os
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
