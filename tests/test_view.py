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

import orjson
import pytest
from conftest import ROOT

DATA = ROOT / "testdata"
LAYOUT = DATA / "claude-session" / "subagent_layout" / "7ab05073-03bd-480e-bfab-7ae89322bf51"
INPUTS = [
    DATA / "claude-session" / "print_mode_bash.jsonl",
    DATA / "codex" / "c2_shell.rollout.jsonl",
    DATA / "gemini" / "chat_tool_error.jsonl",
    LAYOUT.with_suffix(".jsonl"),
    LAYOUT / "subagents" / "agent-a4ecf0489c6080106.jsonl",
]

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")


class Pane:
    """``command`` running in a fresh tmux pane (180 columns), read as a person sees
    it; ``close`` (or the ``with``'s end) kills its server.

    With ``record``, every byte the command writes to the pane is also appended to
    that file (tmux's pipe-pane, started before the command is let go): a redrawn
    line such as a progress line can then be checked frame by frame, which polling
    the screen cannot do on a loaded machine (a frame shown for 0.25 s is missed
    whenever the poller does not run for that long)."""

    def __init__(
        self,
        command: str,
        tmp: Path,
        env: dict[str, str] | None = None,
        rows: int = 50,
        history: int = 2000,
        record: Path | None = None,
    ) -> None:
        self.name = f"streamv1-{uuid.uuid4().hex[:8]}"
        self.socket = str(tmp / f"{self.name}.sock")
        conf = tmp / f"{self.name}.conf"
        conf.write_text(f"set -g history-limit {history}\n")
        environ = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "TMUX")}
        environ |= {"TERM": "xterm-256color"} | (env or {})
        exports = " ".join(f"{k}={v}" for k, v in (env or {}).items())
        go = tmp / f"{self.name}.go"
        if record is not None:
            command = f"while [ ! -e {go} ]; do sleep 0.02; done; {command}"
        subprocess.run(
            [
                "tmux",
                "-S",
                self.socket,
                "-f",
                str(conf),
                "new-session",
                "-d",
                "-s",
                self.name,
                "-x",
                "180",
                "-y",
                str(rows),
                f"{exports} {command}",
            ],
            env=environ,
            check=True,
        )
        if record is not None:
            subprocess.run(
                ["tmux", "-S", self.socket, "pipe-pane", "-o", "-t", self.name, f"cat >> {record}"],
                check=True,
            )
            go.touch()

    def screen(self, *extra: str) -> str:
        return subprocess.run(
            ["tmux", "-S", self.socket, "capture-pane", "-p", "-t", self.name, *extra],
            capture_output=True,
            text=True,
            check=True,
        ).stdout

    def keys(self, *keys: str) -> None:
        subprocess.run(["tmux", "-S", self.socket, "send-keys", "-t", self.name, *keys], check=True)

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], capture_output=True, check=False)

    def __enter__(self) -> Pane:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


_COLOUR = re.compile(r"\x1b\[[0-9;]*m")
_MOVE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07|\r")


def frames(record: Path, pattern: re.Pattern[str]) -> set[int]:
    """The numbers ``pattern``'s group found in every frame written to a recorded
    pane: colours taken out, and each cursor move or carriage return a line break,
    so that one frame is one line."""
    if not record.exists():  # (nothing written yet)
        return set()
    text = _COLOUR.sub("", record.read_bytes().decode("utf-8", "replace"))
    text = _MOVE.sub("\n", text)
    return {int(n) for n in pattern.findall(text)}


def in_terminal(
    command: str, tmp: Path, env: dict[str, str] | None = None, escapes: bool = False
) -> str:
    """Run ``command`` in a fresh tmux pane (180x60) until it ends; the screen."""
    done = tmp / f"{uuid.uuid4().hex[:8]}.done"
    with Pane(f"{command}; touch {done}; sleep 60", tmp, env, rows=60) as pane:
        deadline = time.monotonic() + 60
        while not done.exists():
            assert time.monotonic() < deadline, "the command did not end"
            time.sleep(0.1)
        return pane.screen("-S", "-200", *(["-e"] if escapes else []))


def test_a_person_sees_prompts_tool_calls_errors_and_results_not_json(
    streamv1_bin: str, tmp_path: Path
) -> None:
    screen = in_terminal(
        f"{streamv1_bin} --log-level error convert " + " ".join(map(str, INPUTS)), tmp_path
    )
    assert '{"type"' not in screen and '"session_id"' not in screen
    for seen in (
        "> Run `echo hello` in the shell.",  # the prompt
        "⚙ Bash: echo hello",  # a tool call: its name and its command
        "command_execution: echo hello",  # Codex code mode's nested call
        "✗ tool error: File not found",  # a failing tool, marked
        "■ success · 2 turns · 44,402 tokens · $0.1018",  # a result
        "▶ run begins: gemini-cli",
    ):
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
    piped = subprocess.run(
        [*args[:4], "--format", "pretty", *args[4:]], capture_output=True, check=True
    ).stdout.decode()
    assert "⚙ Bash: echo hello" in piped and "\x1b" not in piped  # forced, no colour off a tty


@pytest.mark.parametrize("env", [{"NO_COLOR": "1"}, {"TERM": "dumb"}], ids=["NO_COLOR", "dumb"])
def test_no_color_and_a_dumb_terminal_get_no_escape_codes(
    streamv1_bin: str, tmp_path: Path, env: dict[str, str]
) -> None:
    command = f"{streamv1_bin} --log-level error convert {INPUTS[0]}"
    coloured = in_terminal(command, tmp_path, escapes=True)
    assert "\x1b[" in coloured  # a colour per session, normally
    plain = in_terminal(command, tmp_path, env=env, escapes=True)
    assert "⚙ Bash: echo hello" in plain and "\x1b[" not in plain


def _many_sessions(folder: Path, n: int, case: str = "interactive_four_turns") -> None:
    """n sessions (a real transcript of testdata/claude-session, by default one of
    four interactive turns, 34 KB, each its own session id), in 30 project folders."""
    path = DATA / "claude-session" / f"{case}.jsonl"
    src = path.read_text()
    sid = str(orjson.loads(src.splitlines()[0].encode()).get("sessionId") or "")
    assert sid and sid in src
    for i in range(n):
        new = str(uuid.UUID(int=i + 1))
        project = folder / f"p{i % 30}"
        project.mkdir(parents=True, exist_ok=True)
        (project / f"{new}.jsonl").write_text(src.replace(sid, new))


_PROGRESS = re.compile(r"convert (\d+)/1500 files .* MB/s ETA")


@pytest.mark.parametrize("where", ["redirected", "-o", "view"])
def test_a_long_convert_shows_progress_before_it_ends(
    streamv1_bin: str, tmp_path: Path, where: str
) -> None:
    """#25 item 4: 1,500 files at a terminal show files, MB, rate and ETA on stderr
    while they are converted, whether stdout is redirected to a file, or the output
    is -o FILE (both get the same bytes as a convert with no terminal), or stdout
    is the view for people beside it."""
    _many_sessions(tmp_path / "in", 1500)
    out = tmp_path / "out.jsonl"
    view = where == "view"
    command = (
        f"{streamv1_bin} convert {tmp_path / 'in'}"
        + {"redirected": f" > {out}", "-o": f" -o {out}", "view": ""}[where]
    )
    done = tmp_path / "done"
    record = tmp_path / "pane.bytes"
    with Pane(f"{command}; touch {done}; sleep 60", tmp_path, record=record) as pane:
        deadline = time.monotonic() + 120
        while not done.exists():
            assert time.monotonic() < deadline, "the convert did not end"
            time.sleep(0.05)
        screen = pane.screen("-S", "-100")
    during = frames(record, _PROGRESS)
    assert any(n < 1500 for n in during), (sorted(during), screen)
    assert "convert 1500/1500 files" in screen and "summary" in screen
    if view:
        assert "■ success" in screen and '{"type"' not in screen
    else:
        want = subprocess.run(
            [streamv1_bin, "convert", str(tmp_path / "in")], capture_output=True, check=True
        ).stdout
        assert out.read_bytes() == want and want.count(b'"subtype":"init"') >= 1500


def test_tail_at_a_terminal_shows_its_catch_up_and_the_view(
    streamv1_bin: str, tmp_path: Path
) -> None:
    """#25 items 3 and 4 for tail: at a terminal its stdout is the view for people,
    and its start-up catch-up shows files, MB, rate and ETA while it reads, drawn
    below the view's lines; Ctrl-C ends it (status 0, as SIGINT does)."""
    # 1,200 sessions, 14 MB: a catch-up of several redraws (0.25 s apart) even on a
    # machine a few times faster than this one (12 MB/s here); with 400, the
    # catch-up could end before the rate had two updates to be measured from.
    n = 1200
    _many_sessions(tmp_path / "projects", n, "print_mode_bash")
    status = tmp_path / "status"
    command = (
        f"{streamv1_bin} tail --no-ingest --state {tmp_path / 'state'} "
        f"{tmp_path / 'projects'}; echo $? > {status}; sleep 60"
    )
    pattern = re.compile(rf"catch-up (\d+)/{n} files \S+ [0-9.]+/[0-9.]+ MB [0-9.]+ MB/s ETA")
    record = tmp_path / "pane.bytes"
    # (history: every line of the view kept)
    with Pane(command, tmp_path, history=50000, record=record) as pane:
        deadline = time.monotonic() + 120
        while n not in (during := frames(record, pattern)):
            assert time.monotonic() < deadline, (sorted(during), pane.screen())
            time.sleep(0.05)
        pane.keys("C-c")
        while not status.exists():
            assert time.monotonic() < deadline, pane.screen()
            time.sleep(0.1)
        shown = pane.screen("-S", "-50000")
    assert any(0 < k < n for k in during), sorted(during)  # a rate while it read
    assert status.read_text().strip() == "0"
    assert "⚙ Bash: echo hello" in shown and "> Run `echo hello` in the shell." in shown
    assert '{"type"' not in shown and "Traceback" not in shown
    assert shown.count("■ success · 2 turns") == n  # every session's run, once
