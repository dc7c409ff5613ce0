"""Secrets never reach an output; text that merely looks like one is left alone.

The fixtures (tests/planted.py) carry 16 planted secrets of 15 kinds in the prompt,
the thinking, the assistant's text, the tool's input and the tool's output.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import orjson
import pytest
from planted import LOOKALIKES, MARKER_KIND, SECRETS, in_context

from translator import redact
from translator.scan import hyperscan
from translator.scrub import Scrubber

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = [ROOT / "testdata" / "claude-session" / "secrets.jsonl",
            ROOT / "testdata" / "claude-stream" / "secrets.jsonl"]
ENGINES = ["re"] + (["hyperscan"] if hyperscan is not None else [])


def fragments(secret: str) -> list[str]:
    """What must not survive of a secret: the whole, and each line of a key block."""
    return [secret, *(part for part in secret.split("\n")[1:-1] if part)]


def assert_clean(out: bytes) -> None:
    text = out.decode()
    for kind, secret in SECRETS.items():
        for part in fragments(secret):
            encoded = orjson.dumps(part).decode()[1:-1]
            assert encoded not in text, f"{kind} survived: {part[:20]}..."
    for look in LOOKALIKES:
        assert orjson.dumps(look).decode()[1:-1] in text, f"look-alike changed: {look}"


def test_fifteen_kinds_are_known() -> None:
    assert len({k.name for k in redact.KINDS}) >= 15
    assert {MARKER_KIND.get(k, k) for k in SECRETS} == {k.name for k in redact.KINDS}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("kind", sorted(SECRETS))
def test_each_secret_becomes_its_marker(engine: str, kind: str) -> None:
    scrub = Scrubber(engine=engine)
    text = f"before\n{in_context(kind, SECRETS[kind])}\nafter"
    out = orjson.loads(scrub(orjson.dumps({"text": text}) + b"\n"))["text"]
    marker = f"[REDACTED:{MARKER_KIND.get(kind, kind)}]"
    assert marker in out
    assert all(part not in out for part in fragments(SECRETS[kind]))
    assert out.startswith("before\n") and out.endswith("\nafter")


@pytest.mark.parametrize("engine", ENGINES)
def test_look_alikes_are_left_alone(engine: str) -> None:
    scrub = Scrubber(engine=engine)
    for look in LOOKALIKES:
        line = orjson.dumps({"text": look}) + b"\n"
        assert scrub(line) == line


def test_a_cut_off_private_key_is_masked_to_the_end_of_its_string() -> None:
    cut = "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"
    out = orjson.loads(Scrubber()(orjson.dumps({"a": cut, "b": "kept"}) + b"\n"))
    assert out == {"a": "[REDACTED:private_key]", "b": "kept"}


def test_secrets_in_keys_and_deep_values_are_masked() -> None:
    line = {"extension": {"env": {"GITHUB_TOKEN": SECRETS["github_token"]},
                          SECRETS["aws_access_key"]: [1, {"deep": [SECRETS["jwt"]]}]}}
    out = Scrubber()(orjson.dumps(line) + b"\n")
    assert_clean(out + orjson.dumps(LOOKALIKES))  # (look-alikes are not in this line)
    assert orjson.loads(out)["extension"]["env"]["GITHUB_TOKEN"] == "[REDACTED:github_token]"


def test_the_fixtures_carry_every_secret_in_every_place() -> None:
    marker = SECRETS["aws_access_key"]
    for fixture in FIXTURES:
        records = [orjson.loads(line) for line in fixture.read_bytes().splitlines()]
        blocks = [b for r in records if isinstance(r.get("message"), dict)
                  and isinstance(r["message"].get("content"), list)
                  for b in r["message"]["content"]]
        places = {b["type"] for b in blocks if marker in orjson.dumps(b).decode()}
        assert {"text", "thinking", "tool_use", "tool_result"} <= places, (fixture, places)


@pytest.mark.parametrize("to", ["stream_v1", "claude"])
@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda p: p.parent.name)
def test_no_secret_survives_convert(streamv1_bin: str, fixture: Path, to: str) -> None:
    proc = subprocess.run(
        [streamv1_bin, "convert", "--to", to, str(fixture)], capture_output=True, check=False
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert_clean(proc.stdout)
    assert proc.stdout.count(b"[REDACTED:") >= 5 * len(SECRETS)  # five places at least
    for line in proc.stdout.splitlines():
        orjson.loads(line)


def test_no_redact_keeps_them(streamv1_bin: str) -> None:
    proc = subprocess.run(
        [streamv1_bin, "convert", "--no-redact", str(FIXTURES[0])], capture_output=True,
        check=True,
    )
    assert orjson.dumps(SECRETS["aws_access_key"]).decode()[1:-1].encode() in proc.stdout
    assert b"[REDACTED:" not in proc.stdout


def _tail_once(tmp_path: Path, to: str) -> bytes:
    """The durable fixture through an in-process tail daemon, one round."""
    from translator.legacy import encoder_for
    from translator.tail.daemon import OutputSink, TailDaemon

    watched = tmp_path / "projects" / "p"
    watched.mkdir(parents=True)
    (watched / "0f0e0d0c-0b0a-0908-0706-050403020100.jsonl").write_bytes(FIXTURES[0].read_bytes())
    out = tmp_path / "out.jsonl"
    daemon = TailDaemon([tmp_path / "projects"], OutputSink(out), tmp_path / "state.json",
                        idle_close=0, encoder=lambda: encoder_for(to))
    daemon.start()
    daemon.stop()
    return out.read_bytes()


@pytest.mark.parametrize("to", ["stream_v1", "claude"])
def test_no_secret_survives_tail(tmp_path: Path, to: str) -> None:
    data = _tail_once(tmp_path, to)
    assert b'"type":"assistant"' in data and b'"origin":"transcript"' in data
    assert data.count(b"[REDACTED:") >= 5 * len(SECRETS)
    assert_clean(data)


def test_no_secret_reaches_a_subscriber(streamv1_bin: str, tmp_path: Path) -> None:
    """A live stream and a transcript, both full of secrets, through a real daemon
    to its output file and to a subscriber."""
    import sys
    import time

    projects = tmp_path / "projects" / "p"
    projects.mkdir(parents=True)
    sock = tmp_path / "s.sock"
    out = tmp_path / "out.jsonl"
    daemon = subprocess.Popen(
        [streamv1_bin, "tail", str(tmp_path / "projects"), "--output", str(out), "--state",
         str(tmp_path / "state.json"), "--ingest-socket", str(sock), "--idle-close", "0",
         "--commit-every", "0.05", "--log-format", "json"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 15
        while not sock.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        sub_out = tmp_path / "sub.jsonl"
        sub = subprocess.Popen([streamv1_bin, "subscribe", "--socket", str(sock)],
                               stdout=sub_out.open("wb"))
        time.sleep(0.5)
        # another session's transcript (the stream's own would be suppressed)
        durable = FIXTURES[0].read_bytes().replace(
            b"5eccd76e-a2bd-46d3-9ac7-285807858239", b"0f0e0d0c-0b0a-0908-0706-050403020100")
        (projects / "0f0e0d0c-0b0a-0908-0706-050403020100.jsonl").write_bytes(durable)
        relay = subprocess.run(
            [streamv1_bin, "relay", "--socket", str(sock), "--", sys.executable, "-c",
             "import sys; sys.stdout.buffer.write(open(sys.argv[1], 'rb').read())",
             str(FIXTURES[1])], capture_output=True, check=True, timeout=30)
        assert relay.stdout == FIXTURES[1].read_bytes()  # the pass-through is the run's own
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            data = out.read_bytes() if out.exists() else b""
            if data.count(b'"type":"result"') >= 2 and sub_out.read_bytes() == data:
                break
            time.sleep(0.1)
    finally:
        daemon.send_signal(15)
        daemon.wait(30)
    sub.wait(15)
    data = out.read_bytes()
    assert b'"origin":"stream"' in data and b'"origin":"transcript"' in data
    assert sub_out.read_bytes() == data
    assert data.count(b"[REDACTED:") >= 10 * len(SECRETS)
    assert_clean(data)
