"""convert's run selection (#25 item 1): --since/--until/--project/--agent/--session
keep whole runs of the stream, so what passes is still framed as the contract says."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import orjson
from conftest import ROOT
from helpers import framing_violations, schema_violations

DATA = ROOT / "testdata"
LAYOUT = DATA / "claude-session" / "subagent_layout" / "7ab05073-03bd-480e-bfab-7ae89322bf51"
INPUTS = [
    str(DATA / "claude-session" / "print_mode_bash.jsonl"),
    str(DATA / "codex" / "c2_shell.rollout.jsonl"),
    str(DATA / "gemini" / "chat_tool_error.jsonl"),
    str(LAYOUT.with_suffix(".jsonl")),
    str(LAYOUT / "subagents" / "agent-a4ecf0489c6080106.jsonl"),
]


def convert(bin_: str, *args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [bin_, "convert", *args, *INPUTS], capture_output=True, timeout=120, check=False
    )


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
    nested = [
        line
        for r in runs(convert(streamv1_bin, "--session", "7ab05073").stdout)
        for line in r
        if line.get("parent_tool_use_id")
    ]
    assert nested  # the subagent's lines come with their parent's run


def test_a_selection_is_refused_with_out_dir_and_a_bad_time(
    streamv1_bin: str, tmp_path: Path
) -> None:
    proc = convert(streamv1_bin, "--agent", "codex", "--out-dir", str(tmp_path / "o"))
    assert proc.returncode == 2 and b"not --out-dir" in proc.stderr
    proc = convert(streamv1_bin, "--since", "whenever")
    assert proc.returncode == 2 and b"'whenever' is no time" in proc.stderr


# -- tail and subscribe: the same rule, live --------------------------------------------


def test_tail_writes_the_runs_convert_keeps_across_restarts_mid_run(
    streamv1_bin: str, tmp_path: Path
) -> None:
    """tail --since: the first run of a resumed session began before WHEN, the second
    after, another session's only run before. The daemon is stopped inside the first
    run (left out) and inside the second (kept), and started again each time: the
    open run's decision is checkpointed with the file, so the rest of each run goes
    where its start went, and the output is convert --since's, byte for byte (the
    origin marks aside)."""
    from streamv1.translator.tail.daemon import TailDaemon
    from streamv1.translator.tail.output import OutputSink
    from streamv1.translator.views.ledger import Filter, parse_when

    when = "2026-11-30T10:55:37Z"
    resumed = DATA / "claude-session" / "resumed_two_invocations.jsonl"
    other = DATA / "claude-session" / "print_mode_bash.jsonl"
    project = tmp_path / "projects" / "p"
    project.mkdir(parents=True)
    src = resumed.read_bytes()
    lines = src.splitlines(keepends=True)
    assert b'"timestamp":"2026-11-30T10:55:36.7' in lines[12]  # inside the first run
    assert b'"type":"attachment"' in lines[25] and b"10:55:37.166Z" in lines[25]  # the second
    parts = [b"".join(lines[:13]), b"".join(lines[13:26]), b"".join(lines[26:])]
    target = project / resumed.name
    shutil.copy(other, project / other.name)
    keep = Filter(since=parse_when(when))
    out = tmp_path / "out.jsonl"
    sizes = []
    for part in parts:
        with target.open("ab") as fh:
            fh.write(part)
        d = TailDaemon(
            [tmp_path / "projects"],
            OutputSink(out),
            tmp_path / "state.json",
            commit_every=0,
            idle_close=0,
            selection=keep,
            clock=lambda: "2026-12-01T00:00:00.000Z",
        )
        d.start()
        d.tick(changed={str(project), str(target), str(project / other.name)})
        d.stop()
        sizes.append(out.stat().st_size if out.exists() else 0)
    assert sizes[0] == 0 < sizes[1] < sizes[2]  # nothing of the first run; the second's start
    got = re.sub(
        rb',"_meta":\{"origin":"transcript"\}\}$', b"}", out.read_bytes(), flags=re.MULTILINE
    )
    want = subprocess.run(
        [streamv1_bin, "convert", "--since", when, str(resumed)],
        capture_output=True,
        timeout=60,
        check=True,
    ).stdout
    assert len(runs(want)) == 1 and got == want


def test_a_selection_changed_between_restarts_leaves_each_open_run_whole(
    streamv1_bin: str, tmp_path: Path
) -> None:
    """A review found it: tail -o restarted with a selection dropped the rest of a
    run whose start it had written (a run with no result), and restarted without
    one wrote the rest of a run it had left out (lines with no init). A run open at
    a restart now goes on as it began; the new selection judges the runs after it.
    Here: the resumed session's first run is open at each restart."""
    from streamv1.translator.tail.daemon import TailDaemon
    from streamv1.translator.tail.output import OutputSink
    from streamv1.translator.views.ledger import Filter

    resumed = DATA / "claude-session" / "resumed_two_invocations.jsonl"
    lines = resumed.read_bytes().splitlines(keepends=True)
    whole = subprocess.run(
        [streamv1_bin, "convert", str(resumed)], capture_output=True, timeout=60, check=True
    ).stdout
    first, second = runs(whole)
    nowhere = Filter(project="/nowhere")
    for before, after, want in [(None, nowhere, [first]), (nowhere, None, [second])]:
        root = tmp_path / ("adding" if before is None else "removing")
        project = root / "projects" / "p"
        project.mkdir(parents=True)
        target = project / resumed.name
        for part, selection in ((lines[:13], before), (lines[13:], after)):
            with target.open("ab") as fh:
                fh.write(b"".join(part))
            d = TailDaemon(
                [root / "projects"],
                OutputSink(root / "out.jsonl"),
                root / "state.json",
                commit_every=0,
                idle_close=0,
                selection=selection,
                clock=lambda: "2026-12-01T00:00:00.000Z",
            )
            d.start()
            d.tick(changed={str(project), str(target)})
            d.stop()
        got = re.sub(
            rb',"_meta":\{"origin":"transcript"\}\}$',
            b"}",
            (root / "out.jsonl").read_bytes(),
            flags=re.MULTILINE,
        )
        assert runs(got) == want, (before, after)


def test_lines_no_selection_can_judge_pass_and_a_bad_time_is_in_no_window() -> None:
    """subscribe --from with a selection ended with exit 70 on a line of another
    tool (no JSON, or no object) and, being unacked, again at every restart. Such
    lines are of no session: they pass. A run whose init has a time no schema
    passes is in no time window."""
    import io

    from streamv1.translator.translate.select import RunFilter
    from streamv1.translator.views.ledger import Filter, parse_when

    class Sink(io.BytesIO):
        def fileno(self) -> int:
            return -1

    out = Sink()
    selected = RunFilter(out, Filter(since=parse_when("2026-01-01")))
    bad_time = orjson.dumps(
        {"type": "system", "subtype": "init", "session_id": "s", "seq": 0, "ts": "yesterday-ish"}
    )
    result = orjson.dumps(
        {"type": "result", "session_id": "s", "seq": 1, "ts": "2026-12-01T00:00:00.000Z"}
    )
    selected.write(b"not json\n[1,2]\n" + bad_time + b"\n" + result + b"\n")
    assert out.getvalue() == b"not json\n[1,2]\n"
    assert selected.runs_dropped == 1
