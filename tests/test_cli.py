"""End-to-end: the installed streamv1 command, as a user runs it."""

from __future__ import annotations

import os
import re
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import ROOT
from helpers import framing_violations, lines_of, schema_violations

STREAM = ROOT / "testdata" / "claude-stream" / "bash.jsonl"
SESSION = ROOT / "testdata" / "claude-session" / "print_mode_bash.jsonl"


def run(
    bin_: str, *args: str, stdin: bytes | None = None, cwd: Path | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [bin_, *args], input=stdin, capture_output=True, cwd=cwd, timeout=60, check=False
    )


def one_line_error(proc: subprocess.CompletedProcess[bytes]) -> str:
    err = proc.stderr.decode()
    assert "Traceback" not in err
    errors = [line for line in err.splitlines() if ": error: " in line]
    assert len(errors) == 1, err
    return errors[0]


def test_convert_file_to_stdout_validates(streamv1_bin: str) -> None:
    proc = run(streamv1_bin, "convert", str(SESSION))
    assert proc.returncode == 0, proc.stderr
    assert framing_violations(proc.stdout) == [] and schema_violations(proc.stdout) == []
    assert b"summary" in proc.stderr and b"summary" not in proc.stdout


def test_stdin_auto_detects_the_stream(streamv1_bin: str) -> None:
    proc = run(streamv1_bin, "convert", stdin=STREAM.read_bytes())
    assert proc.returncode == 0
    first = orjson.loads(proc.stdout.splitlines()[0])
    assert first["subtype"] == "init" and first["agent"]["model"]


def test_a_pipe_is_converted_live(streamv1_bin: str) -> None:
    """Each output line appears while the input is still open."""
    proc = subprocess.Popen(
        [streamv1_bin, "convert", "--source", "claude-stream"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin and proc.stdout
    lines = STREAM.read_bytes().splitlines(keepends=True)
    try:
        proc.stdin.write(lines[0] + lines[1])  # init, then the first assistant line
        proc.stdin.flush()
        got = b""
        deadline = time.monotonic() + 20
        while got.count(b"\n") < 2 and time.monotonic() < deadline:
            ready, _, _ = select.select([proc.stdout], [], [], 0.5)
            if ready:
                got += os.read(proc.stdout.fileno(), 65536)
        assert got.count(b"\n") >= 2, "no output while the input was still open"
        kinds = [orjson.loads(x)["type"] for x in got.splitlines()]
        assert kinds[:2] == ["system", "assistant"]
    finally:
        proc.stdin.close()
        proc.wait(timeout=20)


def test_out_dir_mirrors_relative_paths(streamv1_bin: str, tmp_path: Path) -> None:
    """One output file a session, at its main file's relative path: a subagent's
    file is inside it (its lines are lines of the parent's run), not one of its own."""
    src = ROOT / "testdata" / "claude-session" / "subagent_layout"
    proc = run(streamv1_bin, "convert", str(src), "--out-dir", str(tmp_path / "out"))
    assert proc.returncode == 0, proc.stderr
    made = sorted(
        str(p.relative_to(tmp_path / "out"))
        for p in (tmp_path / "out").rglob("*.jsonl")
        if ".expected." not in p.name
    )  # (the goldens beside them: inputs too)
    assert made == ["7ab05073-03bd-480e-bfab-7ae89322bf51.jsonl"]
    lines = lines_of((tmp_path / "out" / made[0]).read_bytes())
    assert {x.get("parent_tool_use_id") for x in lines} == {None, "toolu_01Ol0AGLKlFXti4j8cFdnOcj"}
    assert framing_violations((tmp_path / "out" / made[0]).read_bytes()) == []


def test_an_out_dir_inside_its_input_folder_is_not_read_back(
    streamv1_bin: str, tmp_path: Path
) -> None:
    """#23 item 18: the second run read the first run's outputs as inputs."""
    src = tmp_path / "archive"
    (src / "p").mkdir(parents=True)
    shutil.copy(SESSION, src / "p" / SESSION.name)
    out = src / "converted"
    made = []
    for _ in range(2):
        proc = run(streamv1_bin, "convert", str(src), "--out-dir", str(out))
        assert proc.returncode == 0, proc.stderr
        made.append({str(f.relative_to(out)): f.read_bytes() for f in out.rglob("*.jsonl")})
    assert made[0] == made[1] and list(made[0]) == [f"p/{SESSION.name}"]
    assert "what it holds is output, not input" in proc.stderr.decode()


def test_output_file(streamv1_bin: str, tmp_path: Path) -> None:
    target = tmp_path / "o.jsonl"
    proc = run(streamv1_bin, "convert", str(STREAM), "-o", str(target))
    assert proc.returncode == 0 and proc.stdout == b""
    assert framing_violations(target.read_bytes()) == []


def test_missing_path(streamv1_bin: str, tmp_path: Path) -> None:
    proc = run(streamv1_bin, "convert", str(tmp_path / "nope.jsonl"))
    assert proc.returncode == 1
    assert "nope.jsonl" in one_line_error(proc)


def test_empty_file(streamv1_bin: str, tmp_path: Path) -> None:
    (tmp_path / "e.jsonl").write_bytes(b"")
    proc = run(streamv1_bin, "convert", str(tmp_path / "e.jsonl"))
    assert proc.returncode == 1
    assert "e.jsonl" in one_line_error(proc) and proc.stdout == b""


def test_binary_file(streamv1_bin: str, tmp_path: Path) -> None:
    (tmp_path / "b.jsonl").write_bytes(bytes(range(256)) * 40)
    proc = run(streamv1_bin, "convert", str(tmp_path / "b.jsonl"))
    assert proc.returncode == 1
    assert "binary" in one_line_error(proc)


def test_directory_without_transcripts(streamv1_bin: str, tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("hi")
    proc = run(streamv1_bin, "convert", str(tmp_path))
    assert proc.returncode == 1
    assert "no transcripts" in one_line_error(proc)


def test_unknown_source_is_a_usage_error(streamv1_bin: str) -> None:
    proc = run(streamv1_bin, "convert", "--source", "nosuch", str(STREAM))
    assert proc.returncode == 2
    assert b"is not one of" in proc.stderr and b"Traceback" not in proc.stderr


def test_known_type_with_bad_body_exits_1_unless_lenient(streamv1_bin: str) -> None:
    bad = STREAM.read_bytes().splitlines(keepends=True)
    bad.insert(
        2,
        b'{"type":"assistant","session_id":"s","message":{"content":"x"}}\n'.replace(
            b'"content":"x"', b'"content":7'
        ),
    )
    data = b"".join(bad)
    proc = run(streamv1_bin, "convert", stdin=data)
    assert proc.returncode == 1
    assert "-:3:" in one_line_error(proc)
    lines = [orjson.loads(x) for x in proc.stdout.splitlines()]
    errors = [x for x in lines if x.get("subtype") == "error"]
    assert len(errors) == 1 and errors[0]["message"].startswith("-:3:")
    assert lines[-1]["type"] == "result" and lines[-1]["subtype"] == "success"
    assert run(streamv1_bin, "convert", "--lenient", stdin=data).returncode == 0


def test_no_ansi_reaches_the_output(streamv1_bin: str) -> None:
    rec = orjson.loads(STREAM.read_bytes().splitlines()[3])
    rec["message"]["content"][0]["content"] = "\x1b[31mred\x1b[0m plain"
    lines = STREAM.read_bytes().splitlines()
    lines[3] = orjson.dumps(rec)
    proc = run(streamv1_bin, "convert", stdin=b"\n".join(lines) + b"\n")
    assert proc.returncode == 0
    assert b"\x1b" not in proc.stdout and b"\\u001b" not in proc.stdout
    assert b"red plain" in proc.stdout


def test_validate_reports_file_and_line(streamv1_bin: str, tmp_path: Path) -> None:
    out = run(streamv1_bin, "convert", str(STREAM)).stdout.splitlines()
    broken = tmp_path / "broken.jsonl"
    row = orjson.loads(out[1])
    row["seq"] = 7
    row["sessionId"] = "camel"
    out[1] = orjson.dumps(row)
    broken.write_bytes(b"\n".join(out[:-1]) + b"\n")
    proc = run(streamv1_bin, "validate", str(broken))
    assert proc.returncode == 1
    text = proc.stdout.decode()
    assert f"{broken}:2: seq 7, expected 1" in text
    assert f"{broken}:2: schema:" in text
    assert "ends without a result" in text


def test_validate_accepts_converted_output(streamv1_bin: str) -> None:
    out = run(streamv1_bin, "convert", str(SESSION)).stdout
    proc = run(streamv1_bin, "validate", "-", stdin=out)
    assert proc.returncode == 0, proc.stdout


def test_no_path_at_a_terminal_falls_back_to_the_sample(streamv1_bin: str, tmp_path: Path) -> None:
    """With nothing to read (no pipe, no ~/.claude/projects), the bundled sample, in
    the view for people (stdout is a terminal)."""
    script = "import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn(sys.argv[1:])))"
    env = {**os.environ, "HOME": str(tmp_path)}
    proc = subprocess.run(
        ["python3", "-c", script, streamv1_bin, "convert"],
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout
    assert b"bundled sample" in proc.stdout and b"run begins: claude-code" in proc.stdout
    assert b'"subtype":"init"' not in proc.stdout


def test_the_default_jobs_is_one_process_until_the_inputs_pay_for_a_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#26: a pool made --jobs' default 0.77-0.86x as fast as one process on 10
    small files. One process now, until the inputs hold PARALLEL_FROM bytes (sizes
    are what count, not how many files); then a process per core."""
    from streamv1.translator.translate import many_inputs

    monkeypatch.setattr(os, "cpu_count", lambda: 2)

    def jobs(*sizes: int) -> list[many_inputs.Job]:
        made = []
        for i, size in enumerate(sizes):
            path = tmp_path / f"{len(list(tmp_path.iterdir()))}-{i}.jsonl"
            with path.open("wb") as fh:
                fh.truncate(size)  # (sparse: only its size is looked at)
            made.append(many_inputs.Job(str(path)))
        return made

    small = many_inputs.PARALLEL_FROM // 1000
    assert many_inputs.default_workers(jobs(*[small] * 999)) == 1
    assert many_inputs.default_workers(jobs(*[small] * 1000)) == 2
    assert (
        many_inputs.default_workers(jobs(many_inputs.PARALLEL_FROM)) == 1
    )  # one input: nothing to share
    assert many_inputs.default_workers(jobs(many_inputs.PARALLEL_FROM, 1)) == 2
    monkeypatch.setattr(os, "cpu_count", lambda: 1)
    assert many_inputs.default_workers(jobs(many_inputs.PARALLEL_FROM, 1)) == 1


def test_jobs_give_the_same_output_in_input_order(streamv1_bin: str, tmp_path: Path) -> None:
    """--jobs N: byte for byte the serial output, per input in input order, for the
    shared output and for --out-dir (many small files: several groups a worker)."""
    archive = tmp_path / "archive"
    cases = sorted(
        p
        for p in (ROOT / "testdata").rglob("*.jsonl")
        if ".expected." not in p.name and p.parent.name in ("claude-session", "claude-stream")
    )
    for copy in range(12):
        for case in cases:
            dest = archive / f"c{copy:02d}" / case.parent.name / case.name
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(case.read_bytes())
    outputs = {}
    for jobs in ("1", "2", "3"):
        proc = subprocess.run(
            [
                streamv1_bin,
                "--log-level",
                "error",
                "convert",
                "--now",
                "2026-01-01T00:00:00.000Z",
                "--jobs",
                jobs,
                str(archive),
            ],
            capture_output=True,
            check=False,
        )
        outputs[jobs] = proc.stdout
        subprocess.run(
            [
                streamv1_bin,
                "--log-level",
                "error",
                "convert",
                "--now",
                "2026-01-01T00:00:00.000Z",
                "--jobs",
                jobs,
                "--out-dir",
                str(tmp_path / f"out{jobs}"),
                str(archive),
            ],
            capture_output=True,
            check=False,
        )
    assert outputs["1"] and outputs["1"] == outputs["2"] == outputs["3"]
    serial = sorted(p.relative_to(tmp_path / "out1") for p in (tmp_path / "out1").rglob("*"))
    assert len(serial) > 12 * len(cases)  # the files and their folders
    for jobs in ("2", "3"):
        for rel in serial:
            a, b = tmp_path / "out1" / rel, tmp_path / f"out{jobs}" / rel
            assert a.is_dir() == b.is_dir()
            if a.is_file():
                assert a.read_bytes() == b.read_bytes(), rel


# -- #15: outputs that never hurt the user -------------------------------------------------


def test_an_output_that_is_also_an_input_is_refused(streamv1_bin: str, tmp_path: Path) -> None:
    same = tmp_path / "same.jsonl"
    same.write_bytes(SESSION.read_bytes())
    proc = subprocess.run(
        [streamv1_bin, "convert", str(same), "-o", str(same)], capture_output=True, check=False
    )
    assert proc.returncode == 1 and same.read_bytes() == SESSION.read_bytes()
    err = proc.stderr.decode().strip().splitlines()
    assert len(err) == 1 and "also an input" in err[0]


def test_o_is_written_whole_or_not_at_all(streamv1_bin: str, tmp_path: Path) -> None:
    out = tmp_path / "out.jsonl"
    out.write_bytes(b"what was there\n")
    proc = subprocess.run(
        [streamv1_bin, "convert", str(SESSION), "-o", str(out)], capture_output=True, check=False
    )
    assert proc.returncode == 0 and out.read_bytes().count(b"\n") > 1
    assert [p.name for p in tmp_path.iterdir()] == ["out.jsonl"]  # no temp file left
    # Killed part way (a slow input on stdin): the old file stands, no temp is left.
    out.write_bytes(b"what was there\n")
    proc2 = subprocess.Popen(
        [streamv1_bin, "convert", "-", "-o", str(out)],
        stdin=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc2.stdin is not None
    proc2.stdin.write(SESSION.read_bytes()[:3000])
    proc2.stdin.flush()
    time.sleep(1)
    proc2.kill()
    proc2.wait()
    assert out.read_bytes() == b"what was there\n"


@pytest.mark.parametrize("where", ["missing/dir/x.jsonl", "", "/dev/full"])
def test_output_path_errors_are_one_line(streamv1_bin: str, tmp_path: Path, where: str) -> None:
    target = where if where.startswith("/") else str(tmp_path / where)
    proc = subprocess.run(
        [streamv1_bin, "convert", str(SESSION), "-o", target], capture_output=True, check=False
    )
    assert proc.returncode == 1
    err = proc.stderr.decode()
    assert "Traceback" not in err and target.rstrip("/") in err


@pytest.mark.parametrize("args", [["one"], ["many"], ["many", "--jobs", "2"], ["many", "-o"]])
def test_a_full_disk_is_one_line_naming_the_output(streamv1_bin: str, args: list[str]) -> None:
    """#23 item 15: stdout (or -o) on a full disk: one line naming the output, exit 1;
    no input is blamed, no traceback."""
    one = ROOT / "testdata" / "claude-session" / "thinking.jsonl"
    many = ROOT / "testdata" / "captures"  # clean inputs: every error would be the output's
    inputs = [str(one)] if args[0] == "one" else [str(many)]
    rest = args[1:] + (["/dev/full"] if args[-1] == "-o" else [])
    with open("/dev/full", "wb") as full:
        proc = subprocess.run(
            [streamv1_bin, "convert", *inputs, *rest],
            stdout=full,
            stderr=subprocess.PIPE,
            timeout=120,
            check=False,
        )
    assert proc.returncode == 1
    errors = [x for x in proc.stderr.decode().splitlines() if ": error: " in x]
    assert "Traceback" not in proc.stderr.decode()
    where = "/dev/full" if "-o" in rest else "stdout"
    assert errors == [
        f"streamv1: error: {where}: cannot write the output: No space left on device "
        "(the inputs are fine)"
    ]


def test_out_dir_under_a_file_is_one_line(streamv1_bin: str, tmp_path: Path) -> None:
    (tmp_path / "afile").write_bytes(b"")
    proc = subprocess.run(
        [streamv1_bin, "convert", str(SESSION), "--out-dir", str(tmp_path / "afile" / "sub")],
        capture_output=True,
        check=False,
    )
    assert proc.returncode == 1
    err = proc.stderr.decode().strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0] and "afile" in err[0]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_closed_stdout_ends_quietly_with_141(
    streamv1_bin: str, tmp_path: Path, jobs: str
) -> None:
    big = tmp_path / "big.jsonl"
    big.write_bytes(SESSION.read_bytes() * 300)
    proc = subprocess.Popen(
        [streamv1_bin, "convert", "--jobs", jobs, str(big), str(big)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.read(100)
    proc.stdout.close()  # what `| head -c 100` does
    err = proc.stderr.read().decode()
    assert proc.wait(30) == 141
    assert "Traceback" not in err and "BrokenPipe" not in err


def test_out_dir_refuses_two_inputs_with_one_output_name(streamv1_bin: str, tmp_path: Path) -> None:
    for folder, src in (
        ("d1", SESSION),
        ("d2", ROOT / "testdata" / "claude-session" / "thinking.jsonl"),
    ):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "a.jsonl").write_bytes(src.read_bytes())
    for args in (
        [str(tmp_path / "d1" / "a.jsonl"), str(tmp_path / "d2" / "a.jsonl")],
        [str(tmp_path / "d1"), str(tmp_path / "d2")],
    ):
        proc = subprocess.run(
            [streamv1_bin, "convert", *args, "--out-dir", str(tmp_path / "out")],
            capture_output=True,
            check=False,
        )
        assert proc.returncode == 1
        err = proc.stderr.decode().strip().splitlines()
        assert len(err) == 1 and "d1" in err[0] and "d2" in err[0]
        assert not list((tmp_path / "out").rglob("*.jsonl"))


def test_a_source_named_wrongly_is_said_and_counted(streamv1_bin: str) -> None:
    proc = subprocess.run(
        [streamv1_bin, "convert", "--source", "stella", str(SESSION)],
        capture_output=True,
        check=False,
    )
    err = proc.stderr.decode()
    assert "look like another source's" in err and "source_mismatch=1" in err
    assert "source=stella looks_like=claude-session" in err
    bad = subprocess.run(
        [streamv1_bin, "convert", "--source", "nope", str(SESSION)],
        capture_output=True,
        check=False,
    )
    assert bad.returncode == 2 and "claude-session" in bad.stderr.decode()  # the choices


def test_a_dash_named_project_folder_is_explained(streamv1_bin: str, tmp_path: Path) -> None:
    folder = tmp_path / "-home-user-proj"
    folder.mkdir()
    (folder / "s.jsonl").write_bytes(SESSION.read_bytes())
    proc = subprocess.run(
        [streamv1_bin, "convert", "-home-user-proj"], cwd=tmp_path, capture_output=True, check=False
    )
    assert proc.returncode == 1 and proc.stdout == b""
    assert "./-home-user-proj" in proc.stderr.decode() and "--" in proc.stderr.decode()
    ok = subprocess.run(
        [streamv1_bin, "convert", "--", "-home-user-proj"],
        cwd=tmp_path,
        capture_output=True,
        check=False,
    )
    assert ok.returncode == 0 and ok.stdout.count(b"\n") > 1


def test_plain_text_is_not_called_binary(streamv1_bin: str, tmp_path: Path) -> None:
    text = tmp_path / "notes.jsonl"
    text.write_text("hello world\nthese are notes\n")
    proc = subprocess.run([streamv1_bin, "convert", str(text)], capture_output=True, check=False)
    assert proc.returncode == 1 and "plain text, not JSON lines" in proc.stderr.decode()


def test_scripts_run_never_waits_on_an_open_stdin(tmp_path: Path) -> None:
    """The README's main command with no terminal and a pipe nobody writes to (a
    CI step): it converts (the projects, or the bundled sample), and ends."""
    env = {**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "none")}
    proc = subprocess.Popen(
        [str(ROOT / "scripts" / "run")],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    assert proc.stdout is not None
    out, deadline = b"", time.monotonic() + 120
    try:
        while time.monotonic() < deadline:  # a blocked read would hang the suite
            if select.select([proc.stdout], [], [], 1.0)[0]:
                chunk = os.read(proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                out += chunk
        else:
            pytest.fail("scripts/run still running after 120 s: it waits on stdin")
        assert proc.wait(timeout=30) == 0
    finally:
        proc.kill()
        if proc.stdin is not None:
            proc.stdin.close()
    assert out and out.count(b"\n") > 1 and b'"type":"result"' in out


def test_convert_honours_claude_config_dir(streamv1_bin: str, tmp_path: Path) -> None:
    projects = tmp_path / "cfg" / "projects" / "p"
    projects.mkdir(parents=True)
    (projects / "s.jsonl").write_bytes(SESSION.read_bytes())
    proc = subprocess.run(
        [streamv1_bin, "convert"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        check=False,
        env={**os.environ, "CLAUDE_CONFIG_DIR": str(tmp_path / "cfg")},
    )
    assert proc.returncode == 0 and str(tmp_path / "cfg" / "projects") in proc.stderr.decode()
    assert proc.stdout.count(b"\n") > 1


def test_progress_only_where_it_is_not_mixed_into_the_output(
    streamv1_bin: str, tmp_path: Path
) -> None:
    import pty

    inputs = [str(SESSION), str(ROOT / "testdata" / "claude-session" / "thinking.jsonl")]

    def stderr_of(stdout_to_terminal: bool, *args: str) -> bytes:
        master, slave = pty.openpty()
        out = slave if stdout_to_terminal else (tmp_path / "out.jsonl").open("wb").fileno()
        proc = subprocess.Popen(
            [streamv1_bin, "--log-level", "error", "convert", *args, *inputs],
            stdout=out,
            stderr=slave,
            stdin=subprocess.DEVNULL,
        )
        proc.wait(60)
        os.close(slave)
        seen = b""
        while True:
            ready, _, _ = select.select([master], [], [], 0.5)
            if not ready:
                break
            try:
                chunk = os.read(master, 65536)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        os.close(master)
        return seen

    assert b"2/2 files" in stderr_of(stdout_to_terminal=False)  # output in a file: shown
    # JSON lines on the same terminal: not (it would be mixed into them).
    json_seen = stderr_of(True, "--format", "json")
    assert b'{"type":"system"' in json_seen and b"files" not in json_seen
    # The view for people on it (at a terminal, by default): shown, below the view.
    viewed = stderr_of(stdout_to_terminal=True)
    assert b"2/2 files" in viewed and b"run begins" in viewed and b'{"type"' not in viewed


def test_validate_says_convert_first_for_a_raw_transcript(streamv1_bin: str) -> None:
    proc = subprocess.run(
        [streamv1_bin, "validate", str(SESSION)], capture_output=True, check=False
    )
    assert proc.returncode == 1 and proc.stdout == b""
    err = [x for x in proc.stderr.decode().splitlines() if "error" in x]
    assert len(err) == 1 and "Claude Code transcript" in err[0] and "convert it first" in err[0]
    assert "{" not in err[0]  # no dict reprs


def test_validate_walks_a_directory_as_convert_does(streamv1_bin: str, tmp_path: Path) -> None:
    good = tmp_path / "out" / "p"
    good.mkdir(parents=True)
    expected = ROOT / "testdata" / "claude-session" / "print_mode_bash.expected.jsonl"
    (good / "a.jsonl").write_bytes(expected.read_bytes())
    (good / "tool-results").mkdir()
    (good / "tool-results" / "skipped.jsonl").write_bytes(b"not even json\n")
    proc = subprocess.run(
        [streamv1_bin, "validate", str(tmp_path / "out")], capture_output=True, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "files=1" in proc.stderr.decode()


def test_one_spelling_per_option_and_examples_in_every_help(streamv1_bin: str) -> None:
    for command in ("convert", "validate", "tail", "relay", "subscribe", "status"):
        text = subprocess.run(
            [streamv1_bin, command, "--help"], capture_output=True, check=True
        ).stdout.decode()
        assert "Examples:" in text, command
        if command in ("convert", "tail"):
            assert "-o, --output" in text, command
        if command in ("tail", "relay", "subscribe", "status"):
            assert "--socket" in text, command


def test_log_level_after_the_subcommand_and_quiet(streamv1_bin: str) -> None:
    after = subprocess.run(
        [streamv1_bin, "convert", "--log-level", "error", str(SESSION)],
        capture_output=True,
        check=False,
    )
    quiet = subprocess.run(
        [streamv1_bin, "convert", "-q", str(SESSION)], capture_output=True, check=False
    )
    loud = subprocess.run([streamv1_bin, "convert", str(SESSION)], capture_output=True, check=False)
    assert after.returncode == quiet.returncode == loud.returncode == 0
    assert b"summary" in loud.stderr
    assert after.stderr == b"" and quiet.stderr == b""
    assert after.stdout == quiet.stdout == loud.stdout


def test_service_writes_the_unit_with_this_streamv1(streamv1_bin: str, tmp_path: Path) -> None:
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "cfg")}
    printed = subprocess.run(
        [streamv1_bin, "service", "print"], capture_output=True, check=True, env=env
    ).stdout.decode()
    exec_line = next(x for x in printed.splitlines() if x.startswith("ExecStart="))
    assert exec_line.startswith(f"ExecStart={os.path.realpath(streamv1_bin)} tail ")
    assert "@STREAMV1@" not in printed and "pip install --user" not in printed
    subprocess.run([streamv1_bin, "service", "install"], capture_output=True, check=True, env=env)
    unit = tmp_path / "cfg" / "systemd" / "user" / "streamv1.service"
    assert unit.read_text() == printed
    unit.write_text(printed.replace(" tail ", " tail --from end "))  # the user's own edit
    again = subprocess.run(
        [streamv1_bin, "service", "install"], capture_output=True, check=False, env=env
    )
    assert again.returncode == 1 and b"--force" in again.stderr


def test_the_unit_in_the_package_is_the_one_in_systemd() -> None:
    shipped = ROOT / "translator" / "systemd" / "streamv1.service"
    assert shipped.read_bytes() == (ROOT / "systemd" / "streamv1.service").read_bytes()


def test_ctrl_c_ends_the_open_run_says_the_summary_and_exits_130(
    streamv1_bin: str, tmp_path: Path
) -> None:
    import signal

    proc = subprocess.Popen(
        [streamv1_bin, "convert", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    proc.stdin.write(SESSION.read_bytes()[:4000])  # mid-turn, and the input stays open
    proc.stdin.flush()
    time.sleep(1.0)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)
    assert proc.returncode == 130
    assert b"interrupted" in err and b"Traceback" not in err
    assert framing_violations(out) == []  # the run was ended: it still validates
    assert b'"subtype":"interrupted"' in out


@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_an_interrupted_convert_to_a_file_keeps_what_it_converted(
    streamv1_bin: str, tmp_path: Path, sig: str
) -> None:
    """``… | streamv1 convert -o run.jsonl`` stopped by Ctrl-C or SIGTERM deleted
    everything converted, although the summary counted it: now the file holds it,
    the open run ended with an interrupted result, and the summary says so."""
    import signal

    out = tmp_path / "run.jsonl"
    out.write_bytes(b"what was there\n")
    proc = subprocess.Popen(
        [streamv1_bin, "convert", "-", "-o", str(out)],
        stdin=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None
    proc.stdin.write(SESSION.read_bytes()[:4000])  # mid-turn, and the input stays open
    proc.stdin.flush()
    time.sleep(1.0)
    proc.send_signal(getattr(signal, sig))
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 128 + getattr(signal, sig)
    data = out.read_bytes()
    assert framing_violations(data) == [] and data.count(b"\n") > 1
    assert b'"subtype":"interrupted"' in data.splitlines()[-1]
    said = next(x for x in err.decode().splitlines() if "interrupted" in x)
    lines = len(data.splitlines())
    assert f"output={out}" in said and f"lines_out={lines}" in said, said
    assert [p.name for p in tmp_path.iterdir()] == ["run.jsonl"]  # no temp file left


_KICK_AT_IMPORT = """
import os, signal, sys
at = sys.argv.pop(1)
class Kick:  # Ctrl-C the moment the module named is looked for
    def find_spec(self, name, path=None, target=None):
        if name == at:
            sys.stderr.write("kicked\\n")
            os.kill(os.getpid(), signal.SIGINT)
sys.meta_path.insert(0, Kick())
sys.argv[1:] = ["--help"]
from streamv1.translator.cli.start import run
run()
"""


def test_ctrl_c_at_any_import_of_start_up_exits_130() -> None:
    """CI: SIGINT while orjson's extension initialised (it imports json, dataclasses)
    crashed the process (SIGSEGV, 1 start in ~250 of the subscribe Ctrl-C test). A
    Ctrl-C at the import of each module the command loads ends it with 130."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            # (every module `streamv1 --help` loads: the group's, then each
            # command's, which the group imports when it lists them; the kick's
            # own imports first, as there)
            "import os, signal, sys\n"
            "from streamv1.translator.cli.start import run\n"
            "class Seen:\n"
            "    def find_spec(self, name, path=None, target=None):\n"
            "        print(name, file=sys.stderr)\n"
            "sys.meta_path.insert(0, Seen())\n"
            "sys.argv[1:] = ['--help']\n"
            "try:\n"
            "    run()\n"
            "except SystemExit:\n"
            "    pass\n",
        ],
        capture_output=True,
        check=True,
        text=True,
    ).stderr.split()
    assert "orjson.orjson" in loaded and "json" in loaded
    status: dict[str, tuple[int, bytes]] = {}
    for start in range(0, len(loaded), 8):
        procs = {
            name: subprocess.Popen(
                [sys.executable, "-c", _KICK_AT_IMPORT, name],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
            )
            for name in loaded[start : start + 8]
        }
        for name, proc in procs.items():
            _, err = proc.communicate(timeout=30)
            status[name] = proc.returncode, err
    assert {name: code for name, (code, _) in status.items() if code != 130} == {}
    assert all(
        err.startswith(b"kicked\n") and b"Traceback" not in err for _, err in status.values()
    )


@pytest.mark.parametrize("sig,status", [("SIGINT", 130), ("SIGTERM", 143)])
def test_a_signal_stops_a_multi_file_convert_at_once(
    streamv1_bin: str, tmp_path: Path, sig: str, status: int
) -> None:
    import signal

    archive = tmp_path / "archive"
    archive.mkdir()
    data = (ROOT / "testdata" / "claude-session" / "interactive_four_turns.jsonl").read_bytes()
    for k in range(4000):
        (archive / f"f{k}.jsonl").write_bytes(data)
    out = tmp_path / "out.jsonl"
    proc = subprocess.Popen(
        [streamv1_bin, "convert", "--jobs", "2", str(archive), "-o", str(out)],
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    time.sleep(1.0)
    if proc.poll() is not None:
        pytest.skip("the conversion ended before the signal (a fast machine)")
    sent = time.monotonic()
    os.killpg(proc.pid, getattr(signal, sig))  # Ctrl-C reaches the whole group
    _, err = proc.communicate(timeout=30)
    assert time.monotonic() - sent < 1.0
    assert proc.returncode == status and b"Traceback" not in err
    # What was converted is kept, whole sessions only (a spool cut by the signal is
    # cut back off), and the summary counts just that.
    kept = out.read_bytes()
    assert not kept or framing_violations(kept) == []  # (empty: stopped while grouping)
    said = next(x for x in err.decode().splitlines() if "interrupted" in x)
    assert f"lines_out={len(kept.splitlines())}" in said, said
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]


def test_validate_messages_name_the_place_not_a_dict(streamv1_bin: str, tmp_path: Path) -> None:
    lines = [
        {
            "type": "system",
            "subtype": "init",
            "session_id": "s",
            "seq": 0,
            "ts": "2026-01-01T00:00:00Z",
            "agent": {"name": "x", "provider": "y"},
            "capabilities": ["stream_v1"],
        },
        {
            "type": "assistant",
            "session_id": "s",
            "seq": 1,
            "ts": "2026-01-01T00:00:00Z",
            "message": {"role": "assistant", "content": [{"type": "text", "text": 5}]},
        },
        {
            "type": "result",
            "subtype": "success",
            "session_id": "s",
            "seq": 2,
            "ts": "2026-01-01T00:00:00Z",
            "is_error": False,
            "num_turns": 1,
            "duration_ms": 1,
            "result": "x",
        },
    ]
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b"".join(orjson.dumps(x) + b"\n" for x in lines))
    proc = subprocess.run([streamv1_bin, "validate", str(path)], capture_output=True, check=False)
    assert proc.returncode == 1
    said = proc.stdout.decode()
    assert "message/content/0/text: 5 is not of type 'string'" in said and "{'" not in said


def test_progress_moves_inside_one_big_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from streamv1.translator.translate import batch_progress, many_inputs

    big = tmp_path / "big.jsonl"
    big.write_bytes(SESSION.read_bytes() * 3000)  # ~34 MB: read in many 1 MiB reads
    monkeypatch.setattr(batch_progress, "PROGRESS_ONE_FILE", 1_000)
    ticks = {"n": 0}
    real_read = batch_progress.Progress.read

    def counting(self: batch_progress.Progress, n: int) -> None:
        ticks["n"] += 1
        real_read(self, n)

    monkeypatch.setattr(batch_progress.Progress, "read", counting)
    out = tmp_path / "out.jsonl"
    with out.open("wb") as sink:
        many_inputs.run(
            [many_inputs.Job(str(big))],
            sink,
            many_inputs.Options(None, None, None, "stream_v1", False),
            1,
            progress=True,
        )
    assert ticks["n"] >= 10  # heard inside the file, not once at its end
    assert "1/1 files" in capsys.readouterr().err


def test_the_sdist_carries_what_its_tests_need(tmp_path: Path) -> None:
    """Built with the project's own backend: testdata, tests, scripts, the unit and
    the LICENSE are in it, so its tests run from it."""
    import sys
    import tarfile

    subprocess.run(
        [
            sys.executable,
            "-c",
            f"from setuptools import build_meta; build_meta.build_sdist({str(tmp_path)!r})",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    [sdist] = tmp_path.glob("streamv1-*.tar.gz")
    with tarfile.open(sdist) as tar:
        names = {n.split("/", 1)[1] for n in tar.getnames() if "/" in n}
    for wanted in (
        "LICENSE",
        "testdata/claude-session/print_mode_bash.jsonl",
        "tests/test_cli.py",
        "scripts/test",
        "systemd/streamv1.service",
        "translator/systemd/streamv1.service",
        "docs/output.md",
    ):
        assert wanted in names, wanted


def test_python_m_cli_is_the_whole_command() -> None:
    """``python -m streamv1.translator.cli`` runs the same group as ``streamv1``:
    every command is there."""
    import sys

    proc = subprocess.run(
        [sys.executable, "-m", "streamv1.translator.cli", "--help"], capture_output=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr.decode()
    listed = proc.stdout.decode().split("Commands:", 1)[1].split()
    commands = {"convert", "relay", "service", "status", "subscribe", "tail", "validate"}
    assert commands <= set(listed)


def test_an_unreadable_input_is_one_line_and_the_rest_is_converted(
    streamv1_bin: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#23 item 17: a file named on the command line that cannot be read, and a
    subfolder of a directory that cannot be listed: one line each naming it, the
    other inputs converted, exit 1 (never a usage error, never silence)."""
    sysfs = Path("/sys/bus/platform/drivers_probe")  # write-only: even root may not read it
    if sysfs.exists():
        proc = run(streamv1_bin, "convert", str(sysfs), str(SESSION))
        assert proc.returncode == 1
        assert one_line_error(proc).startswith(
            f"streamv1: error: {sysfs}: cannot read the input: Permission denied"
        )
        assert proc.stdout.count(b'"type":"result"') == 1
    # A folder nobody may list (as root, every folder can be: the listing is refused
    # where the walk asks for it, as the kernel refuses it a user).
    from click.testing import CliRunner

    from streamv1.translator.cli import app
    from streamv1.translator.reading import discover

    root = tmp_path / "projects"
    (root / "p").mkdir(parents=True)
    (root / "locked").mkdir()
    shutil.copy(SESSION, root / "p" / SESSION.name)
    shutil.copy(SESSION, root / "locked" / "other.jsonl")
    real = discover.os.scandir

    def scandir(path: Any) -> Any:
        if str(path).endswith("locked"):
            raise PermissionError(13, "Permission denied")
        return real(path)

    monkeypatch.setattr(discover.os, "scandir", scandir)
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app.main, ["convert", str(root), "-o", str(out)])
    assert result.exit_code == 1, result.output
    assert f"{root / 'locked'}: cannot read this folder: Permission denied" in result.output
    assert out.read_bytes().count(b'"type":"result"') == 1  # p's session is converted


def test_the_unit_degrades_for_an_older_systemd() -> None:
    """#23 item 20: RestartSteps and RestartMaxDelaySec are systemd >= 254's; an
    older systemd (Debian 12's 252) warns of each at every load. The unit written
    for it leaves them as comments saying why; for a newer one, as shipped."""
    from streamv1.translator.cli.service import for_systemd

    shipped = (ROOT / "systemd" / "streamv1.service").read_text()
    old = for_systemd(shipped, 252)
    assert "\nRestartSteps=" not in old and "\nRestartMaxDelaySec=" not in old
    assert "# (systemd 252 has no RestartSteps: needs 254) RestartSteps=6" in old
    assert "\nRestartSec=2\n" in old and "\nRestart=on-failure\n" in old
    assert for_systemd(shipped, 256) == shipped == for_systemd(shipped, None)


@pytest.mark.parametrize("traceback", [False, True])
def test_an_exception_no_command_handles_is_one_line(tmp_path: Path, traceback: bool) -> None:
    """A bug (here one planted in the code subscribe calls; in #23, nats-py's fetch
    raising asyncio's TimeoutError where its own was caught) ends the command with
    one line and 70, not a traceback; STREAMV1_TRACEBACK=1 gives the traceback."""
    plant = (
        "import sys\n"
        "from streamv1.translator.cli import app, subscribe\n"
        "def broken(*args, **kwargs):\n"
        "    raise RuntimeError('planted')\n"
        "subscribe.configured_bus = broken\n"
        "sys.argv = ['streamv1', 'subscribe', '--from', 'nats://127.0.0.1:9']\n"
        "app.run()\n"
    )
    env = {**os.environ, "STREAMV1_TRACEBACK": "1" if traceback else ""}
    proc = subprocess.run(
        [sys.executable, "-c", plant], capture_output=True, env=env, timeout=60, check=False
    )
    err = proc.stderr.decode()
    if traceback:
        assert proc.returncode == 1 and "Traceback" in err and "planted" in err
    else:
        assert proc.returncode == 70, err
        assert err.splitlines() == [
            "streamv1: error: internal error: RuntimeError: planted "
            "(a bug: please report it; STREAMV1_TRACEBACK=1 shows "
            "where)"
        ]


def _logged(stderr: bytes, event: str) -> dict[str, str]:
    """The fields of one logged event, from the console format (``k=v``, or
    ``k='v w'``)."""
    line = next(x for x in stderr.decode().splitlines() if f": {event} (" in x)
    body = line.split(f": {event} (", 1)[1].rstrip(")")
    return {
        k: a or b
        for k, a, b in re.findall(r"(\w+)=(?:'((?:[^'\\]|\\.)*)'|(\S+?))(?= \w+=|$)", body)
    }


def test_the_summary_names_dropped_kinds_and_sums_tokens_and_stated_cost(streamv1_bin: str) -> None:
    """#25 item 5: the closing summary says what ``dropped`` counts (its most
    frequent kinds, where the docs say why) and the runs' tokens and stated cost."""
    proc = run(streamv1_bin, "convert", str(SESSION), str(STREAM))
    assert proc.returncode == 0, proc.stderr
    summary = _logged(proc.stderr, "summary")
    results = [line for line in lines_of(proc.stdout) if line["type"] == "result"]
    want = {
        key: sum(u[key] for r in results for u in r["model_usage"].values())
        for key in ("input_tokens", "output_tokens", "cache_read", "cache_creation")
    }
    assert {key: int(summary[key]) for key in want} == want and want["cache_read"] > 0
    stated = [r["total_cost_usd"] for r in results if r.get("total_cost_usd") is not None]
    assert stated and float(summary["stated_cost_usd"]) == round(sum(stated), 6)
    assert summary["costed_runs"] == f"{len(stated)} of {len(results)}"
    dropped: dict[str, int] = {}
    for r in results:
        for kind, n in r.get("extension", {}).get("dropped", {}).items():
            dropped[kind] = dropped.get(kind, 0) + n
    top = max(dropped, key=lambda k: dropped[k])
    assert int(summary["dropped"]) == sum(dropped.values())
    assert f"{top} {dropped[top]}" in summary["dropped_kinds"]
    assert "docs/mapping.md" in summary["dropped_kinds"]
    debug = run(streamv1_bin, "--log-level", "debug", "convert", "-o", os.devnull, str(SESSION))
    kinds = dict(
        item.rsplit(" ", 1)
        for item in _logged(debug.stderr, "dropped record kinds")["kinds"].split(", ")
    )
    session_only = [
        r
        for r in lines_of(run(streamv1_bin, "convert", str(SESSION)).stdout)
        if r["type"] == "result"
    ]
    assert {k: int(v) for k, v in kinds.items()} == {
        k: v for r in session_only for k, v in r["extension"]["dropped"].items()
    }
