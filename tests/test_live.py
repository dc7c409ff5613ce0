"""Live run streams (ADR-0053), end to end with real processes: ``streamv1 tail``
with its socket, ``streamv1 relay`` feeding a run's print-mode stream while a
writer appends the same run's durable file, ``streamv1 subscribe`` and ``status``.

The captures are testdata/claude-stream/bash.jsonl and
testdata/claude-session/print_mode_bash.jsonl: one genuine run of Claude Code
2.1.332, its stream and its durable file (the same session).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
from helpers import convert_file, framing_violations

from streamv1.translator.tail import protocol
from streamv1.translator.tail.claims import Claims, Counters, TranscriptGate
from streamv1.translator.timefmt import format_ts, now_ts

ROOT = Path(__file__).resolve().parent.parent
STREAM = ROOT / "testdata" / "claude-stream" / "bash.jsonl"
DURABLE = ROOT / "testdata" / "claude-session" / "print_mode_bash.jsonl"
SID = "5eccd76e-a2bd-46d3-9ac7-285807858239"

# A command that prints a file's lines with a pause after each (a run in progress).
PACED = (
    "import sys, time\n"
    "pause = float(sys.argv[2])\n"
    "for line in open(sys.argv[1], 'rb'):\n"
    "    sys.stdout.buffer.write(line); sys.stdout.buffer.flush(); time.sleep(pause)\n"
)

#: As PACED, but it holds after line N (argv[3]) until the file argv[4] exists: a
#: test decides what the stream has delivered when it cuts it, whatever the load.
PACED_THEN_GATE = (
    "import os, sys, time\n"
    "pause, hold, gate = float(sys.argv[2]), int(sys.argv[3]), sys.argv[4]\n"
    "for n, line in enumerate(open(sys.argv[1], 'rb'), 1):\n"
    "    sys.stdout.buffer.write(line); sys.stdout.buffer.flush(); time.sleep(pause)\n"
    "    while n == hold and not os.path.exists(gate):\n"
    "        time.sleep(0.05)\n"
)


class Daemon:
    def __init__(self, bin_: str, tmp: Path) -> None:
        self.bin = bin_
        self.tmp = tmp
        self.projects = tmp / "projects"
        self.projects.mkdir()
        self.sock = tmp / "s.sock"
        self.out = tmp / "out.jsonl"
        self.log = tmp / "daemon.log"
        self.proc = subprocess.Popen(
            [
                bin_,
                "tail",
                str(self.projects),
                "--output",
                str(self.out),
                "--state",
                str(tmp / "state.json"),
                "--ingest-socket",
                str(self.sock),
                "--idle-close",
                "0",
                "--commit-every",
                "0.05",
                "--stats-every",
                "0.5",
                "--log-format",
                "json",
            ],
            stdout=subprocess.DEVNULL,
            stderr=self.log.open("wb"),
        )
        assert wait_until(lambda: self.status() is not None, 15), self.log.read_text()

    def status(self) -> dict[str, Any] | None:
        proc = subprocess.run(
            [self.bin, "status", "--socket", str(self.sock)], capture_output=True, check=False
        )
        return orjson.loads(proc.stdout) if proc.returncode == 0 else None

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        assert self.proc.wait(30) == 0, self.log.read_text()

    def lines(self) -> list[dict[str, Any]]:
        return [orjson.loads(x) for x in self.out.read_bytes().splitlines()]


@pytest.fixture
def daemon(streamv1_bin: str, tmp_path: Path) -> Iterator[Daemon]:
    d = Daemon(streamv1_bin, tmp_path)
    yield d
    if d.proc.poll() is None:
        d.proc.kill()
        d.proc.wait()


def wait_until(check: Any, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return True
        time.sleep(0.05)
    return False


def resumed_turn() -> bytes:
    """A later turn of the same session, as Claude Code appends it on --resume:
    a prompt, the reply, the cost record, stamped now."""
    records = [orjson.loads(x) for x in DURABLE.read_bytes().splitlines()]
    prompt = next(
        r for r in records if r.get("type") == "user" and isinstance(r["message"]["content"], str)
    )
    reply = [r for r in records if r.get("type") == "assistant"][-1]
    cost = next(r for r in records if r.get("type") == "cost-state")
    start = time.time() + 1  # after the hand-back floor
    out = []
    for i, rec in enumerate((prompt, reply, cost)):
        rec = orjson.loads(orjson.dumps(rec))
        if "timestamp" in rec:
            rec["timestamp"] = format_ts_ms(start + i * 0.1)
        if "uuid" in rec:
            rec["uuid"] = str(uuid.uuid4())
        out.append(rec)
    out[0]["message"]["content"] = "And now run `echo again`."
    out[1]["message"]["id"] = "msg_resumed_turn_0001"
    out[1]["message"]["content"] = [{"type": "text", "text": "Resumed: done again."}]
    return b"".join(orjson.dumps(r) + b"\n" for r in out)


def format_ts_ms(seconds: float) -> str:
    from datetime import UTC, datetime

    return format_ts(datetime.fromtimestamp(seconds, UTC))


def test_a_streamed_session_comes_once_from_the_stream_and_a_resumed_turn_from_the_file(
    daemon: Daemon, streamv1_bin: str
) -> None:
    target = daemon.projects / "p" / f"{SID}.jsonl"
    target.parent.mkdir()
    relay = subprocess.Popen(
        [
            streamv1_bin,
            "relay",
            "--socket",
            str(daemon.sock),
            "--",
            sys.executable,
            "-c",
            PACED,
            str(STREAM),
            "0.4",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    # The stream announces the session with its first line: the claim.
    assert wait_until(lambda: SID in (daemon.status() or {}).get("claims", {}), 15)
    # Meanwhile Claude Code writes the durable file of the same run, record by record.
    with target.open("ab") as fh:
        for raw in DURABLE.read_bytes().splitlines(keepends=True):
            fh.write(raw)
            fh.flush()
            time.sleep(0.05)
    out, err = relay.communicate(timeout=30)
    assert relay.returncode == 0, err.decode()
    assert out == STREAM.read_bytes()  # passed through unchanged
    transcript_lines = len(convert_file(DURABLE, "claude-session")[0].splitlines())
    assert wait_until(lambda: (daemon.status() or {}).get("suppressed") == transcript_lines, 15)
    status = daemon.status()
    assert status is not None
    assert status["claims"] == {} and status["floors"] == 1  # handed back
    # A resumed turn, appended later: from the transcript, once.
    with target.open("ab") as fh:
        fh.write(resumed_turn())
    assert wait_until(
        lambda: any(
            x["type"] == "result" and x["_meta"]["origin"] == "transcript" for x in daemon.lines()
        ),
        15,
    )
    final = daemon.status()
    daemon.stop()

    lines = daemon.lines()
    mine = [x for x in lines if x["session_id"] == SID]
    stream_lines = [x for x in mine if x["_meta"]["origin"] == "stream"]
    file_lines = [x for x in mine if x["_meta"]["origin"] == "transcript"]
    expected_stream = convert_file(STREAM, "claude-stream")[0].splitlines()
    assert len(stream_lines) == len(expected_stream)
    assert [x["type"] for x in stream_lines] == [orjson.loads(x)["type"] for x in expected_stream]
    # The transcript gave the resumed turn only: one run, the new message, no repeat.
    assert [x["type"] for x in file_lines] == ["system", "assistant", "result"]
    assert file_lines[1]["message"]["id"] == "msg_resumed_turn_0001"
    stream_ids = {x["message"].get("id") for x in stream_lines if x["type"] == "assistant"}
    assert "msg_resumed_turn_0001" not in stream_ids
    texts = [orjson.dumps(x["message"]) for x in mine if x["type"] in ("assistant", "user")]
    assert len(texts) == len(set(texts)), "a message came twice"
    assert framing_violations(daemon.out.read_bytes()) == []
    assert final is not None
    assert final["items"] == {"stream": len(stream_lines), "transcript": len(file_lines)}
    assert final["suppressed"] == transcript_lines
    assert final["stream_dropped"] == 0 and final["ambiguous"] == 0
    # and the periodic structlog events carry the same counters
    events = [orjson.loads(x) for x in daemon.log.read_bytes().splitlines()]
    counters = [e for e in events if e.get("event") == "counters"]
    assert counters and counters[-1]["suppressed"] == transcript_lines


def test_a_second_stream_of_a_claimed_session_is_counted_ambiguous(
    daemon: Daemon, streamv1_bin: str
) -> None:
    cmd = [sys.executable, "-c", PACED, str(STREAM), "0.3"]
    first = subprocess.Popen(
        [streamv1_bin, "relay", "--socket", str(daemon.sock), "--", *cmd], stdout=subprocess.DEVNULL
    )
    assert wait_until(lambda: SID in (daemon.status() or {}).get("claims", {}), 15)
    second = subprocess.Popen(
        [streamv1_bin, "relay", "--socket", str(daemon.sock), "--", *cmd], stdout=subprocess.DEVNULL
    )
    assert first.wait(30) == 0 and second.wait(30) == 0
    assert wait_until(lambda: (daemon.status() or {}).get("streams_active") == 0, 15)
    status = daemon.status()
    assert status is not None and status["ambiguous"] == 1 and status["claims"] == {}
    daemon.stop()


def test_unreadable_stream_lines_are_counted_and_reported(
    daemon: Daemon, streamv1_bin: str, tmp_path: Path
) -> None:
    noisy = tmp_path / "noisy.jsonl"
    lines = STREAM.read_bytes().splitlines(keepends=True)
    noisy.write_bytes(
        lines[0] + b"not json at all\n" + lines[1] + b'{"cut": \n' + b"".join(lines[2:])
    )
    relay = subprocess.run(
        [
            streamv1_bin,
            "relay",
            "--socket",
            str(daemon.sock),
            "--",
            sys.executable,
            "-c",
            "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())",
            str(noisy),
        ],
        capture_output=True,
        check=False,
        timeout=30,
    )
    assert relay.returncode == 0 and relay.stdout == noisy.read_bytes()
    assert wait_until(
        lambda: (
            (daemon.status() or {}).get("streams_total") == 1
            and (daemon.status() or {}).get("streams_active") == 0
        ),
        15,
    )
    status = daemon.status()
    assert status is not None and status["stream_parse_errors"] == 2
    daemon.stop()
    errors = [x for x in daemon.lines() if x.get("subtype") == "error"]
    assert len(errors) == 2 and all(x["_meta"]["origin"] == "stream" for x in errors)
    assert framing_violations(daemon.out.read_bytes()) == []


def test_a_relay_without_a_daemon_passes_everything_through(
    streamv1_bin: str, tmp_path: Path
) -> None:
    proc = subprocess.run(
        [
            streamv1_bin,
            "relay",
            "--socket",
            str(tmp_path / "none.sock"),
            "--",
            sys.executable,
            "-c",
            "import sys; sys.stdout.write(open(sys.argv[1]).read()); sys.exit(3)",
            str(STREAM),
        ],
        capture_output=True,
        check=False,
        timeout=30,
    )
    assert proc.returncode == 3  # the command's status
    assert proc.stdout == STREAM.read_bytes()
    assert b"no daemon listening" in proc.stderr


def test_a_stopped_daemon_does_not_hold_the_relay_back(
    daemon: Daemon, streamv1_bin: str, tmp_path: Path
) -> None:
    lines = STREAM.read_bytes().splitlines(keepends=True)
    big = tmp_path / "big.jsonl"
    big.write_bytes(lines[0] + lines[1] * 20000 + lines[-1])  # ~20 MB, far past any buffer
    daemon.proc.send_signal(signal.SIGSTOP)  # a daemon that reads nothing at all
    try:
        start = time.monotonic()
        relay = subprocess.run(
            [
                streamv1_bin,
                "relay",
                "--socket",
                str(daemon.sock),
                "--",
                sys.executable,
                "-c",
                "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())",
                str(big),
            ],
            capture_output=True,
            check=False,
            timeout=60,
        )
        elapsed = time.monotonic() - start
    finally:
        daemon.proc.send_signal(signal.SIGCONT)
    assert relay.returncode == 0
    assert relay.stdout == big.read_bytes()
    assert elapsed < 8.0, elapsed  # the command's time and the 2 s grace, no more
    assert b"lines not delivered to the daemon" in relay.stderr
    # Woken, the daemon takes what reached it, a cut-off last line tolerated, and
    # closes the run it had: the output stays a framed stream.
    assert wait_until(lambda: (daemon.status() or {}).get("streams_active") == 0, 30)
    status = daemon.status()
    assert status is not None and status["stream_parse_errors"] == 0
    daemon.stop()
    assert framing_violations(daemon.out.read_bytes()) == []


def test_a_stuck_subscriber_loses_lines_alone(
    daemon: Daemon, streamv1_bin: str, tmp_path: Path
) -> None:
    # A long run: 12,000 assistant lines (~8 MB out), printed at ~3,000 lines a second.
    lines = STREAM.read_bytes().splitlines(keepends=True)
    body = next(x for x in lines if b'"type":"assistant"' in x)
    big = tmp_path / "big.jsonl"
    big.write_bytes(lines[0] + body * 12000 + lines[-1])
    stuck = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    stuck.connect(str(daemon.sock))
    stuck.sendall(protocol.hello("subscribe"))  # ... and never reads
    good_out = tmp_path / "good.jsonl"
    good = subprocess.Popen(
        [streamv1_bin, "subscribe", "--socket", str(daemon.sock)], stdout=good_out.open("wb")
    )
    assert wait_until(lambda: (daemon.status() or {}).get("subscribers") == 2, 15)
    paced = [
        sys.executable,
        "-c",
        PACED.replace("time.sleep(pause)", "pause and time.sleep(pause)"),
        str(big),
        "0.0003",
    ]
    start = time.monotonic()
    direct = subprocess.run(paced, capture_output=True, check=True)
    alone = time.monotonic() - start
    start = time.monotonic()
    relay = subprocess.run(
        [streamv1_bin, "relay", "--socket", str(daemon.sock), "--", *paced],
        capture_output=True,
        check=False,
        timeout=120,
    )
    relayed = time.monotonic() - start
    assert relay.returncode == 0
    assert relay.stdout == direct.stdout == big.read_bytes()  # all of it, unchanged
    assert relayed < alone + 3.0, (relayed, alone)  # not held back by anyone
    assert wait_until(lambda: (daemon.status() or {}).get("streams_active") == 0, 30)
    status = daemon.status()
    assert status is not None
    assert status["subscriber_dropped"] > 0
    assert sorted(status["subscriber_drops"].values())[0] == 0  # the good one lost nothing
    written = daemon.out.read_bytes()
    assert wait_until(lambda: good_out.read_bytes() == written, 15)  # it got every line
    n = len(written.splitlines())
    assert n == status["items"]["stream"] and n > 1000
    # The stuck one reads at last: what its queue held, then a warning saying how
    # many lines it lost, once it has caught up.
    stuck.settimeout(10)
    data = b""
    while b'"type":"result","subtype":"success","session_id":"streamv1-' not in data:
        try:
            chunk = stuck.recv(1 << 20)
        except (TimeoutError, OSError):
            break
        if not chunk:
            break
        data += chunk
    stuck.close()
    daemon.stop()
    good.wait(15)
    got = [orjson.loads(x) for x in data.splitlines()]
    own = [x for x in got if x["session_id"].startswith("streamv1-")]
    assert [x.get("subtype") for x in own] == ["init", "warning", "success"]
    warning = own[1]
    assert warning["kind"] == "subscriber_dropped"
    assert warning["count"] == status["subscriber_dropped"]
    assert len(got) - len(own) + warning["count"] == n  # what it got and what it lost: all
    # The daemon's word is a run of its own session: what the subscriber read frames.
    from streamv1.translator.contract.validate import StreamChecker

    checker = StreamChecker("subscriber", allow_open=True)
    found = [
        str(v) for k, raw in enumerate(data.splitlines(), 1) for v in checker.check(k, raw, True)
    ]
    assert not [v for v in found if "streamv1-" in v or "outside a run" in v]


# -- the claim rules, in process -----------------------------------------------------------


def _init(session: str, ts: str) -> dict[str, Any]:
    return {"type": "system", "subtype": "init", "session_id": session, "seq": 0, "ts": ts}


def test_claims_hand_on_to_a_waiting_stream_and_back_with_a_floor() -> None:
    counters = Counters()
    claims = Claims(counters, clock=lambda: "2026-01-01T00:00:10.000Z")
    assert claims.claim("s", "a") and not claims.claim("s", "b")
    assert counters.ambiguous == 1
    assert claims.release("a") == [] and claims.holder == {"s": "b"}  # b is still live
    assert claims.release("b") == ["s"] and claims.floors == {"s": "2026-01-01T00:00:10.000Z"}
    assert claims.silences("s", "2026-01-01T00:00:09.000Z")
    assert not claims.silences("s", "2026-01-01T00:00:11.000Z")
    assert not claims.silences("other", None)


def test_the_gate_suppresses_whole_runs_and_marks_the_rest() -> None:
    counters = Counters()
    claims = Claims(counters)
    state: dict[str, Any] = {}
    gate = TranscriptGate(claims, state)
    claims.claim("s", "a")
    run = [
        _init("s", now_ts()),
        {"type": "assistant", "session_id": "s"},
        {"type": "result", "session_id": "s"},
    ]
    first = gate(run[0])
    claims.release("a")  # mid-run: the run stays suppressed to its end
    assert first is None and gate(run[1]) is None and gate(run[2]) is None
    assert counters.suppressed == 3 and state == {"suppressing": False}
    later = [_init("s", "2999-01-01T00:00:00.000Z"), {"type": "result", "session_id": "s"}]
    assert [gate(x)["_meta"] for x in later] == [{"origin": "transcript"}] * 2  # type: ignore[index]
    assert counters.items_transcript == 2


def _msg(kind: str, uid: str, seq: int) -> dict[str, Any]:
    return {"type": kind, "session_id": "s", "seq": seq, "extension": {"uuid": uid}}


def test_a_run_the_stream_left_unfinished_is_finished_with_what_it_never_delivered() -> None:
    """The transcript ran ahead of the stream (m2 read while the stream had only
    m1), then the stream ended mid-run: m2 and what follows come out as a run of
    their own, numbered from 0, after the suppressed run's init; m1 does not."""
    counters = Counters()
    claims = Claims(counters)
    state: dict[str, Any] = {}
    gate = TranscriptGate(claims, state)
    claims.claim("s", "a")
    claims.stream_line("s", "a", _init("s", now_ts()))
    claims.stream_line("s", "a", _msg("assistant", "m1", 1))
    init = {**_init("s", now_ts()), "extension": {"uuid": "p0"}}
    assert gate(init) is None
    assert gate(_msg("assistant", "m1", 1)) is None
    assert gate(_msg("assistant", "m2", 2)) is None  # held: the stream may still bring it
    assert claims.release("a", left=set(claims.delivered["s"])) == ["s"]
    assert claims.cut == {"s": ["m1"]}
    out = gate(_msg("user", "m3", 3))
    assert isinstance(out, list)
    assert [(x["type"], x["seq"], x.get("extension", {}).get("uuid")) for x in out] == [
        ("system", 0, "p0"),
        ("assistant", 1, "m2"),
        ("user", 2, "m3"),
    ]
    end = gate({"type": "result", "subtype": "success", "session_id": "s", "seq": 4})
    assert isinstance(end, dict) and end["seq"] == 3 and end["_meta"] == {"origin": "transcript"}
    assert claims.cut == {}  # finished
    assert claims.state() == {"floors": claims.floors, "cut": {}}


def test_a_run_the_stream_finished_is_not_finished_again() -> None:
    counters = Counters()
    claims = Claims(counters)
    gate = TranscriptGate(claims, {})
    claims.claim("s", "a")
    for line in (
        _init("s", now_ts()),
        _msg("assistant", "m1", 1),
        {"type": "result", "session_id": "s", "seq": 2},
    ):
        claims.stream_line("s", "a", line)
    assert gate(_init("s", now_ts())) is None and gate(_msg("assistant", "m1", 1)) is None
    claims.release("a")  # its run had its result: no cut
    assert claims.cut == {}
    assert gate({"type": "result", "session_id": "s", "seq": 2}) is None


@pytest.mark.skipif(not hasattr(os, "getuid"), reason="POSIX only")
def test_default_socket_is_under_the_runtime_dir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1000")
    assert protocol.default_socket() == Path("/run/user/1000/streamv1/ingest.sock")
    monkeypatch.delenv("XDG_RUNTIME_DIR")
    assert protocol.default_socket() == Path(f"/tmp/streamv1-{os.getuid()}/ingest.sock")


def _uuids(lines: list[dict[str, Any]]) -> list[str]:
    return [
        x["extension"]["uuid"]
        for x in lines
        if x["type"] in ("assistant", "user") and "uuid" in x.get("extension", {})
    ]


@pytest.mark.parametrize("how", ["daemon restarted", "relay killed"])
def test_a_run_a_stream_leaves_unfinished_is_finished_from_the_transcript(
    daemon: Daemon, streamv1_bin: str, how: str
) -> None:
    """#23 item 7: the stream is cut mid-run (the daemon stopped gracefully and
    started again, or the relay killed) while Claude Code goes on writing its
    durable file: the tool result, the final answer and the real result come from
    the transcript, every message once, framed."""
    target = daemon.projects / "p" / f"{SID}.jsonl"
    target.parent.mkdir()
    records = DURABLE.read_bytes().splitlines(keepends=True)
    # The stream delivers its init and the assistant's tool call, then holds until
    # it is cut (before, it went on at 0.5 s a line, and under load it delivered
    # the tool result before the cut: the transcript then had none to finish).
    gate = daemon.tmp / "cut"
    relay = subprocess.Popen(
        [
            streamv1_bin,
            "relay",
            "--socket",
            str(daemon.sock),
            "--",
            sys.executable,
            "-c",
            PACED_THEN_GATE,
            str(STREAM),
            "0.2",
            "3",
            str(gate),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert wait_until(lambda: (daemon.status() or {}).get("items", {}).get("stream", 0) >= 3, 15)
    # The durable file as far as the tool call (the stream has that far, too).
    call = next(i for i, r in enumerate(records) if b'"tool_use"' in r and b'"assistant"' in r)
    with target.open("ab") as fh:
        fh.write(b"".join(records[: call + 1]))
    assert wait_until(lambda: (daemon.status() or {}).get("suppressed", 0) >= 2, 15)
    if how == "daemon restarted":
        daemon.stop()
    else:
        relay.kill()
    gate.touch()  # the rest of the stream goes on, to nobody
    relay.wait(30)
    with target.open("ab") as fh:  # the run goes on: its answer, its end
        fh.write(b"".join(records[call + 1 :]))
    if how == "daemon restarted":
        daemon.proc = subprocess.Popen(
            [
                streamv1_bin,
                "tail",
                str(daemon.projects),
                "--output",
                str(daemon.out),
                "--state",
                str(daemon.tmp / "state.json"),
                "--ingest-socket",
                str(daemon.sock),
                "--idle-close",
                "0",
                "--commit-every",
                "0.05",
                "--log-format",
                "json",
            ],
            stdout=subprocess.DEVNULL,
            stderr=daemon.log.open("ab"),
        )
    assert wait_until(
        lambda: any(
            x["type"] == "result" and x["_meta"]["origin"] == "transcript" for x in daemon.lines()
        ),
        20,
    ), daemon.log.read_text()[-3000:]
    daemon.stop()
    lines = daemon.lines()
    mine = [x for x in lines if x["session_id"] == SID]
    want = _uuids(
        [orjson.loads(x) for x in convert_file(DURABLE, "claude-session")[0].splitlines()]
    )
    got = _uuids(mine)
    assert sorted(got) == sorted(want), (got, want)  # each message once
    results = [x for x in mine if x["type"] == "result"]
    assert [x["_meta"]["origin"] for x in results] == ["stream", "transcript"]
    assert results[0]["subtype"] != "success" and results[1]["subtype"] == "success"
    finished = [x for x in mine if x["_meta"]["origin"] == "transcript"]
    assert finished[0]["type"] == "system" and finished[0]["subtype"] == "init"
    assert [x["seq"] for x in finished] == list(range(len(finished)))
    assert any(x["type"] == "user" for x in finished)  # the tool result
    assert framing_violations(daemon.out.read_bytes()) == []


def test_status_reads_for_a_person_at_a_terminal_and_is_json_piped(
    daemon: Daemon, streamv1_bin: str
) -> None:
    """#25 item 4: status at a terminal is a readable summary (files followed,
    bytes behind, the output, lines per origin, streams, subscribers, the last
    error); piped, or with --json, the JSON object, with behind_bytes and
    last_error in it."""
    target = daemon.projects / "p" / f"{SID}.jsonl"
    target.parent.mkdir()
    target.write_bytes(DURABLE.read_bytes())
    assert wait_until(
        lambda: (daemon.status() or {}).get("items", {}).get("transcript", 0) >= 3, 15
    )
    value = daemon.status()
    assert value is not None
    assert value["behind_bytes"] == 0 and value["last_error"] is None
    assert value["output"] == str(daemon.out) and value["files"] == 1
    script = "import os, pty, sys; sys.exit(os.waitstatus_to_exitcode(pty.spawn(sys.argv[1:])))"
    shown = subprocess.run(
        ["python3", "-c", script, streamv1_bin, "status", "--socket", str(daemon.sock)],
        capture_output=True,
        timeout=30,
        check=True,
    ).stdout.decode()
    assert "1 files followed, 0.0 MB behind" in shown and f"output: {daemon.out}" in shown
    assert "last error: none" in shown and "{" not in shown
    forced = subprocess.run(
        ["python3", "-c", script, streamv1_bin, "status", "--json", "--socket", str(daemon.sock)],
        capture_output=True,
        timeout=30,
        check=True,
    ).stdout
    assert orjson.loads(forced.strip())["files"] == 1


def test_the_last_error_logged_is_kept_for_status(capsys: pytest.CaptureFixture[str]) -> None:
    from streamv1.translator import logs

    logs.get().warning("only a warning", path="/x")
    before = logs.last_error
    logs.get().error("file unreadable; not followed", path="/p/s.jsonl")
    assert logs.last_error is not None and logs.last_error != before
    assert logs.last_error["event"] == "file unreadable; not followed"
    assert logs.last_error["path"] == "/p/s.jsonl" and logs.last_error["at"].endswith("Z")
    capsys.readouterr()


def test_subscribe_shows_the_view_for_people_or_json(
    daemon: Daemon, streamv1_bin: str, tmp_path: Path
) -> None:
    """#25 item 3, for subscribe: --format pretty (auto at a terminal) shows the
    unified stream for people; piped, it is the stream_v1 lines as the daemon wrote.
    Item 1: the selection options keep the runs they name (all, or none, here)."""
    args = {
        "pretty": ["--format", "pretty"],
        "json": [],
        "agent": ["--agent", "claude-code"],
        "none": ["--agent", "codex"],
    }
    outs = {name: tmp_path / f"{name}.out" for name in args}
    subs = [
        subprocess.Popen(
            [streamv1_bin, "subscribe", "--socket", str(daemon.sock), *args[name]],
            stdout=out.open("wb"),
        )
        for name, out in outs.items()
    ]
    assert wait_until(lambda: (daemon.status() or {}).get("subscribers") == len(subs), 15)
    target = daemon.projects / "p" / f"{SID}.jsonl"
    target.parent.mkdir()
    target.write_bytes(DURABLE.read_bytes())
    assert wait_until(lambda: b'"type":"result"' in outs["json"].read_bytes(), 15)
    assert wait_until(lambda: "■ success" in outs["pretty"].read_text(), 15)
    daemon.stop()
    for sub in subs:
        sub.wait(15)
    shown = outs["pretty"].read_text()
    assert "⚙ Bash: echo hello" in shown and "> Run `echo hello` in the shell." in shown
    assert '{"type"' not in shown and "\x1b" not in shown
    assert outs["json"].read_bytes() == daemon.out.read_bytes() == outs["agent"].read_bytes()
    assert outs["none"].read_bytes() == b""
