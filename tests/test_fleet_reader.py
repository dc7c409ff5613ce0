"""#39: the reader trusts what the bus says no more than the subject. Anyone allowed
to publish may send any body; ``subscribe --from`` prints only stream_v1 lines
of their subject's host and session, encoded again (no control character of a
message reaches stdout, in any format), with the host as ``extension.fleet_host``;
everything else is counted per kind on stderr, its body never shown. Against a
real nats-server (tests/natsserver.py), the hostile messages sent with nats-py."""

from __future__ import annotations

import asyncio
import os
import re
import selectors
import subprocess
import time
import unicodedata
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import natsserver
import orjson
import pytest
from conftest import ROOT
from hypothesis import given
from hypothesis import strategies as st

from streamv1.translator.fleet import bus, received
from streamv1.translator.hashes import blake2b

DATA = ROOT / "testdata"
ALICE = DATA / "claude-session" / "print_mode_bash.jsonl"
BOB = DATA / "codex" / "c2_shell.rollout.jsonl"


def _converted(bin_: str, path: Path) -> list[bytes]:
    return subprocess.run(
        [bin_, "--log-level", "error", "convert", str(path)], capture_output=True, check=True
    ).stdout.splitlines()


def _subject(host: str, session: str) -> str:
    return f"streamv1.{bus.token(host)}.{bus.token(session)}"


def _text(line: bytes, text: str) -> bytes:
    """An assistant line of ours with its text replaced (a valid stream_v1 line)."""
    obj = orjson.loads(line)
    obj["message"]["content"][0]["text"] = text
    return orjson.dumps(obj)


@dataclass(frozen=True)
class Message:
    name: str
    kind: str | None  # the kind it is counted as; None: printed
    subject: str
    body: bytes
    headers: dict[str, str] | None = None


def hostile(alice: list[bytes], bob: list[bytes]) -> list[Message]:
    """What a publisher allowed on alice's subjects may send, and what the reader
    makes of each: counted under a kind, or (valid lines holding characters a
    terminal obeys) printed with those escaped."""
    s = orjson.loads(alice[0])["session_id"]
    mine = _subject("alice", s)
    said = next(x for x in alice if b'"type":"text"' in x and b'"assistant"' in x)
    forged = bob[-1]  # bob's result
    assert b'"type":"result"' in forged
    return [
        Message("newline, then a forged result of bob's", "not_json", mine, said + b"\n" + forged),
        Message("text", "not_json", mine, b"plain words, no JSON"),
        Message("JSON array", "not_json", mine, b"[1,2]"),
        Message("JSON, not stream_v1", "not_stream_v1", mine, b'{"hello":"world"}'),
        Message(
            "stream_v1 but a bad ts", "not_stream_v1", mine, said.replace(b'"ts":"', b'"ts":"x')
        ),
        Message("bob's session on alice's subject", "session", mine, bob[1]),
        Message(
            "the session header disagrees",
            "session",
            mine,
            said,
            {"Streamv1-Session": "another"},
        ),
        Message("says it is bob (header)", "host", mine, said, {"Streamv1-Host": "bob"}),
        Message(
            "says it is bob (extension)",
            "host",
            mine,
            _extended(said, fleet_host="bob"),
        ),
        Message(
            "alice's name spelt another way", "subject", f"streamv1.alic_65.{bus.token(s)}", said
        ),
        Message("extension not an object", "extension", mine, _no_extension(said, b'"x"')),
        Message("raw ESC[2J", "not_json", mine, b"\x1b[2J\x1b[H"),
        Message("raw OSC 0 title", "not_json", mine, b"\x1b]0;PWNED-TITLE\x07"),
        Message("raw OSC 52 clipboard", "not_json", mine, b"\x1b]52;c;cHduZWQ=\x07"),
        Message("raw C1 CSI", "not_json", mine, b"\x9b2J"),
        Message("raw bidi override", "not_json", mine, "txt.\u202eexe".encode()),
        Message("ESC[2J in a string", "not_stream_v1", mine, _text(said, "\x1b[2J\x1b[Hgone")),
        Message("OSC 0 in a string", "not_stream_v1", mine, _text(said, "\x1b]0;PWNED-TITLE\x07")),
        Message("OSC 52 in a string", "not_stream_v1", mine, _text(said, "\x1b]52;c;cHduZWQ=\x07")),
        Message("C1 CSI in a string", "not_stream_v1", mine, _text(said, "\x9b2J")),
        Message(
            "ESC written \\u001B",
            "not_stream_v1",
            mine,
            _text(said, "MARK").replace(b"MARK", b"\\u001B[2J"),
        ),
        # Valid lines: printed, what a terminal would obey written as escapes.
        Message("C1 OSC in a string", None, mine, _text(said, "odd \x9d0;TITLE2\x9c end")),
        Message("bidi override in a string", None, mine, _text(said, "file \u202eexe.txt")),
        Message("shift-out and DEL in a string", None, mine, _text(said, "so\x0e del\x7f end")),
    ]


def _extended(line: bytes, **more: str) -> bytes:
    obj = orjson.loads(line)
    obj["extension"] = {**more, **obj.get("extension", {})}
    return orjson.dumps(obj)


def _no_extension(line: bytes, value: bytes) -> bytes:
    obj = orjson.loads(line)
    obj.pop("extension", None)
    return orjson.dumps(obj)[:-1] + b',"extension":' + value + b"}"


async def _send(url: str, sent: list[Message]) -> None:
    import nats

    nc = await nats.connect(url)
    try:
        js = nc.jetstream()
        for m in sent:
            await js.publish(m.subject, m.body, headers=m.headers)
    finally:
        await nc.close()


@pytest.fixture
def bus_with_hostile(streamv1_bin: str, tmp_path: Path) -> Any:
    """A server holding alice's and bob's sessions (published by convert) and then
    every message of :func:`hostile`, sent on alice's subjects."""
    alice, bob = _converted(streamv1_bin, ALICE), _converted(streamv1_bin, BOB)
    server = natsserver.Server(tmp_path / "nats").start()
    try:
        for host, path in (("alice", ALICE), ("bob", BOB)):
            subprocess.run(
                [streamv1_bin, "convert", str(path), "--publish", server.url, "--host", host],
                capture_output=True,
                timeout=60,
                check=True,
            )
        sent = hostile(alice, bob)
        asyncio.run(_send(server.url, sent))
        yield server, alice, bob, sent
    finally:
        server.stop()


#: A control character, or a character a terminal acts on: C0 but the newline,
#: DEL, C1, the bidirectional marks.
_OBEYED = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _counted(stderr: str) -> dict[str, int]:
    """kind → count, from subscribe's summary lines (one per kind)."""
    found = re.findall(r"messages from the bus not printed: .*[( ]kind=(\w+) count=(\d+)", stderr)
    kinds = [k for k, _ in found]
    assert len(kinds) == len(set(kinds)), stderr  # one line per kind
    return {k: int(n) for k, n in found}


@pytest.mark.parametrize("fmt", ["json", "pretty"])
def test_hostile_messages_are_counted_and_never_printed(
    streamv1_bin: str, bus_with_hostile: Any, fmt: str
) -> None:
    server, alice, bob, sent = bus_with_hostile
    run = subprocess.run(
        [streamv1_bin, "subscribe", "--from", server.url, "--catch-up", "--format", fmt],
        capture_output=True,
        timeout=60,
        check=True,
    )
    out, err = run.stdout.decode(), run.stderr.decode()
    # Nothing a terminal obeys, whatever the format.
    assert not _OBEYED.search(out), [m for m in _OBEYED.findall(out)]
    # Each refused message counted under its kind, one line per kind.
    assert _counted(err) == dict(Counter(m.kind for m in sent if m.kind)), err
    # The bodies are never said on stderr either.
    for fragment in ("PWNED", "cHduZWQ", "plain words", "hello", "gone", "\x1b", "\x9b"):
        assert fragment not in err, fragment
    printed = [m.body for m in sent if m.kind is None]
    if fmt == "json":
        # Good lines as they were, each with its subject's host; the valid lines
        # holding odd characters, with those as \\uXXXX (the same JSON value).
        want = [
            *natsserver.hosted(alice, "alice"),
            *natsserver.hosted(bob, "bob"),
            *natsserver.hosted(printed, "alice"),
        ]
        assert run.stdout.splitlines(keepends=True) == want
        assert [orjson.loads(x)["message"] for x in want[-len(printed) :]] == [
            orjson.loads(x)["message"] for x in printed
        ]
        results = [orjson.loads(x) for x in run.stdout.splitlines() if b'"result"' in x]
        assert [r["extension"]["fleet_host"] for r in results] == ["alice", "bob"]
    else:
        lines = out.splitlines()
        assert "5eccd76e ⚙ Bash: echo hello" in lines  # alice's run
        assert sum("■ success" in x for x in lines) == 2  # one result each: none forged
        shown = [
            x
            for path in (ALICE, BOB)
            for x in subprocess.run(
                [streamv1_bin, "--log-level", "error", "convert", "--format", "pretty", str(path)],
                capture_output=True,
                text=True,
                check=True,
            ).stdout.splitlines()
        ]
        assert lines[: len(shown)] == shown and len(lines) == len(shown) + len(printed), out
        assert "5eccd76e ● odd \\u009d0;TITLE2\\u009c end" in lines
        assert "5eccd76e ● file \\u202eexe.txt" in lines
        assert "5eccd76e ● so␎ del␡ end" in lines


def test_the_first_of_each_kind_is_said_at_once_when_live(
    streamv1_bin: str, bus_with_hostile: Any
) -> None:
    """A live reader (no --catch-up) says the first message of each kind it refuses
    when it comes (it may run for days), and its counts when it stops."""
    server, _, _, sent = bus_with_hostile
    proc = subprocess.Popen(
        [streamv1_bin, "subscribe", "--from", server.url, "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    kinds = {m.kind for m in sent if m.kind}
    said = b""
    assert proc.stderr is not None
    deadline = time.monotonic() + 60
    with selectors.DefaultSelector() as sel:
        sel.register(proc.stderr, selectors.EVENT_READ)
        while said.count(b"each kind said once") < len(kinds):
            assert time.monotonic() < deadline, said
            if sel.select(timeout=1):
                said += os.read(proc.stderr.fileno(), 65536)
    proc.send_signal(2)
    out, rest = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert _counted((said + rest).decode()) == dict(Counter(m.kind for m in sent if m.kind))
    assert not _OBEYED.search(out.decode())


def test_the_pretty_view_leaves_the_terminal_alone(
    streamv1_bin: str, bus_with_hostile: Any, tmp_path: Path
) -> None:
    """In a real terminal (tmux, set-clipboard on): after subscribe's view of the
    hostile stream the screen is not cleared, the title is the pane's own, and no
    clipboard write arrived. The same escapes printed raw do all three (the
    checks can fail)."""
    from test_view import Pane

    server = bus_with_hostile[0]
    go, done = tmp_path / "go", tmp_path / "done"
    command = (
        f"while [ ! -e {go} ]; do sleep 0.02; done; echo MARK-BEFORE; "
        f"{streamv1_bin} subscribe --from {server.url} --catch-up --format pretty; "
        f"touch {done}; sleep 60"
    )
    with Pane(command, tmp_path, rows=60) as pane:

        def tmux(*args: str) -> str:
            return subprocess.run(
                ["tmux", "-S", pane.socket, *args], capture_output=True, text=True, check=True
            ).stdout

        tmux("set", "-g", "set-clipboard", "on")
        title = tmux("display", "-p", "-t", pane.name, "#{pane_title}")
        go.touch()
        deadline = time.monotonic() + 60
        while not done.exists():
            assert time.monotonic() < deadline, pane.screen()
            time.sleep(0.1)
        time.sleep(0.3)
        screen = pane.screen()
        assert "MARK-BEFORE" in screen and "⚙ Bash: echo hello" in screen, screen
        assert tmux("display", "-p", "-t", pane.name, "#{pane_title}") == title
        assert tmux("list-buffers") == ""
        # The checks themselves: the raw escapes do change all three.
        tmux(
            "respawn-pane",
            "-k",
            "-t",
            pane.name,
            "echo MARK-CONTROL; sleep 0.5; "
            r"printf '\033]0;PWNED\007\033]52;c;cHduZWQ=\007\033[2J'; sleep 60",
        )
        deadline = time.monotonic() + 10
        while "pwned" not in tmux("list-buffers"):
            assert time.monotonic() < deadline
            time.sleep(0.1)
        assert tmux("display", "-p", "-t", pane.name, "#{pane_title}") == "PWNED\n"
        assert "MARK-CONTROL" not in pane.screen()


# -- the rule, in process --------------------------------------------------------------------


@given(st.text(min_size=1, max_size=10))  # (a token of at most 120 characters: never cut)
def test_a_subject_token_reads_back_as_its_value(value: str) -> None:
    assert received.untoken(bus.token(value)) == value


@pytest.mark.parametrize("text", ["alic_65", "a_2e", "_", "a.b", "a_7", "_C3_28"])
def test_a_token_no_publisher_writes_is_no_host(text: str) -> None:
    """Two spellings of one host would let a publisher allowed on one subject pass
    as the other's host (``alic_65`` for ``alice``); invalid UTF-8 is no name."""
    assert received.untoken(text) is None


class _Digesting(bus.BusConfig):
    """A bus whose subjects hold a digest for a long session id (as a publisher
    may, to bound subjects): the reader follows the publisher's rule unchanged."""

    def subject(self, session: str) -> str:
        part = session if len(session) <= 16 else "h" + blake2b(session.encode()).hexdigest()[:16]
        return f"{self.prefix}.{bus.token(self.host)}.{bus.token(part)}"


def test_the_session_is_compared_by_the_publishers_rule() -> None:
    line = {
        "type": "system",
        "subtype": "init",
        "session_id": "s" * 40,
        "seq": 0,
        "ts": "2026-01-01T00:00:00Z",
    }
    data = orjson.dumps(line)
    reader = received.Reader(_Digesting(servers=("nats://x:1",), host="-"))
    subject = _Digesting(servers=("nats://x:1",), host="alice").subject(line["session_id"])
    headers = {"Streamv1-Host": "alice", "Streamv1-Session": line["session_id"]}
    printed = orjson.loads(reader.line(subject, headers, data))
    assert printed == {**line, "extension": {"fleet_host": "alice"}}
    other = orjson.dumps({**line, "session_id": "t" * 40})
    with pytest.raises(received.Refused) as refused:
        reader.line(subject, {"Streamv1-Host": "alice"}, other)
    assert refused.value.kind == "session"


def test_the_host_is_the_subjects_with_or_without_its_header() -> None:
    """A publisher of another kind sends no headers: the subject's token is the
    host. A host named by bytes that are no UTF-8 (``--host`` from undecodable
    argv) has U+FFFD in its header: its token says it, shown with U+FFFD."""
    line = {
        "type": "system",
        "subtype": "init",
        "session_id": "s",
        "seq": 0,
        "ts": "2026-01-01T00:00:00Z",
    }
    data = orjson.dumps(line)
    reader = received.Reader(bus.BusConfig(servers=("nats://x:1",), host="-"))
    for host, headers, shown in (
        ("my.host", None, "my.host"),
        ("my.host", {"Streamv1-Host": "my.host", "Streamv1-Session": "s"}, "my.host"),
        ("bad\udcff", {"Streamv1-Host": "bad\ufffd"}, "bad\ufffd"),
    ):
        out = orjson.loads(reader.line(_subject(host, "s"), headers, data))
        assert out["extension"] == {"fleet_host": shown}
    for subject, headers, kind in (
        (_subject("my.host", "s"), {"Streamv1-Host": "other"}, "host"),
        ("streamv1.my.host.s", None, "subject"),  # (a dot is never in a token)
        ("other.h.s", None, "subject"),
        (_subject("bad\udcff", "s"), {"Streamv1-Host": "good"}, "host"),
    ):
        with pytest.raises(received.Refused) as refused:
            reader.line(subject, headers, data)
        assert refused.value.kind == kind, subject


def test_every_character_a_terminal_obeys_leaves_as_an_escape() -> None:
    """All of C0, DEL, C1 and the bidi controls in a valid line's text: printed as
    JSON escapes, the same value once parsed."""
    obeyed = [chr(c) for c in range(0x110000) if unicodedata.category(chr(c)) == "Cc"]
    obeyed += ["\u061c", "\u200e", "\u200f", *map(chr, range(0x202A, 0x202F))]
    obeyed += [chr(c) for c in range(0x2066, 0x206A)]
    text = "".join(c for c in obeyed if c not in "\x1b\x9b")  # (those: not stream_v1)
    line = {
        "type": "assistant",
        "session_id": "s1",
        "seq": 1,
        "ts": "2026-01-01T00:00:00Z",
        "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
    }
    reader = received.Reader(bus.BusConfig(servers=("nats://x:1",), host="-"))
    out = reader.line(_subject("h", "s1"), None, orjson.dumps(line))
    assert out.endswith(b"\n") and out.count(b"\n") == 1
    assert all(b < 0x7F and (b >= 0x20 or b == 0x0A) for b in out), out
    assert orjson.loads(out)["message"]["content"][0]["text"] == text


def test_a_refused_message_is_acked_not_fetched_again(
    streamv1_bin: str, bus_with_hostile: Any
) -> None:
    """Refused lines are consumed like printed ones: a durable reader's next run
    has nothing left (they would otherwise come back after every ack wait)."""
    server = bus_with_hostile[0]
    args = [streamv1_bin, "subscribe", "--from", server.url, "--durable", "d", "--catch-up"]
    first = subprocess.run(args, capture_output=True, timeout=60, check=True)
    assert first.stdout and b"not printed" in first.stderr
    again = subprocess.run(args, capture_output=True, timeout=60, check=True)
    assert again.stdout == b"" and b"not printed" not in again.stderr


def test_the_fast_check_agrees_with_jsonschema(streamv1_bin: str) -> None:
    """Two validators of one schema (jsonschema-rs for the reader's pace, jsonschema
    for validate's reasons) must agree: on every line of three sources' corpora,
    and on each line broken in the ways a body can be (a key missing, a wrong type,
    an unknown key, a bad ts, an escape)."""
    from streamv1.translator.contract import validate

    files = [
        str(p)
        for folder in ("claude-session", "codex", "gemini")
        for p in sorted((DATA / folder).glob("*.jsonl"))
        if ".expected." not in p.name
    ]
    lines = subprocess.run(
        [streamv1_bin, "--log-level", "error", "convert", "--lenient", *files],
        capture_output=True,
        check=False,
    ).stdout.splitlines()
    assert len(lines) > 500

    def slow(obj: Any) -> bool:
        if validate.schema_errors(obj):
            return False
        ansi = list(validate.StreamChecker("-").check(1, orjson.dumps(obj), True))
        return not any("ANSI" in v.reason or "RFC 3339" in v.reason for v in ansi)

    broken = 0
    for i, raw in enumerate(lines):
        obj = orjson.loads(raw)
        assert validate.is_stream_v1_line(obj) and slow(obj), raw[:300]
        if i % 7:
            continue
        key = sorted(obj)[i % len(obj)]
        for bad in (
            {k: v for k, v in obj.items() if k != key},
            {**obj, key: [1]},
            {**obj, "not_a_key": 1},
            {**obj, "ts": "yesterday"},
            {**obj, "session_id": "\x1b[2J"},
        ):
            fast = validate.is_stream_v1_line(bad)
            assert fast == validate.is_stream_v1_line(bad, orjson.dumps(bad)) == slow(bad)
            broken += 1
    assert broken > 300
