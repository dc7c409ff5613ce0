"""The tail daemon and its socket against hostile input and hostile neighbours
(issue #14, points 3, 7, 8, 9, 10): it never dies on content, holds no line whole
past a limit, never blocks on a FIFO or leaves its folder by a symlink, and talks
only to its own user, in a folder only that user can reach."""

from __future__ import annotations

import errno
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import tailing
from helpers import convert_file, convert_session_files, state_doc
from tailing import SESSION, Clock, daemon, tail_output

from streamv1.translator import logs
from streamv1.translator.reading.files import SIDECAR_LIMIT
from streamv1.translator.tail import follower as follower_mod
from streamv1.translator.tail import ingest, protocol
from streamv1.translator.tail.ingest import IngestServer, Subscriber

BASH = SESSION / "print_mode_bash.jsonl"
BASH_NAME = "5eccd76e-a2bd-46d3-9ac7-285807858239.jsonl"


def errors_of(data: bytes) -> list[dict[str, Any]]:
    return [
        x
        for x in map(orjson.loads, data.splitlines())
        if x["type"] == "system" and x.get("subtype") == "error"
    ]


# -- 7. never dies on content -----------------------------------------------------------------


def test_a_line_the_translator_fails_on_is_an_error_line_and_the_daemon_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from streamv1.adapters.claude_session import ClaudeSessionAdapter

    whole = convert_file(BASH, "claude-session")[0]
    real_feed = ClaudeSessionAdapter.feed

    def feed(self: Any, record: dict[str, Any], where: Any) -> Any:
        if record.get("type") == "assistant" and where.line == 13:
            raise RecursionError("a bug this input reveals")
        return real_feed(self, record, where)

    monkeypatch.setattr(ClaudeSessionAdapter, "feed", feed)
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    (proj / BASH_NAME).write_bytes(BASH.read_bytes())
    d = daemon(tmp_path, Clock(), idle_close=0)
    d.stop()
    out = tail_output(tmp_path / "out.jsonl")
    errors = errors_of(out)
    assert len(errors) == 1 and errors[0]["extension"]["line"] == 13
    assert "RecursionError" in errors[0]["message"]
    assert out.count(b'"type":"assistant"') == whole.count(b'"type":"assistant"') - 1
    assert out.count(b'"type":"user"') == whole.count(b'"type":"user"')  # the rest came
    assert state_doc(tmp_path / "state.json")["files"]  # and it goes on


# -- 8. lines longer than the limit ----------------------------------------------------------


def test_an_over_long_line_is_reported_and_skipped_even_while_it_grows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(follower_mod, "MAX_LINE_BYTES", 4000)
    monkeypatch.setattr(follower_mod, "READ_CHUNK", 1024)  # many chunks per line
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    target = proj / BASH_NAME
    src = BASH.read_bytes().splitlines(keepends=True)
    target.write_bytes(b"".join(src[:14]))
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    with target.open("ab") as fh:
        fh.write(b"\0" * 3000)  # a line being written, not over the limit yet
    d.tick(changed={str(target)})
    with target.open("ab") as fh:
        fh.write(b"\0" * 9000)  # now it is, and still has no end
    d.tick(changed={str(target)})
    assert errors_of(tail_output(tmp_path / "out.jsonl")) == []  # not before its end
    with target.open("ab") as fh:
        fh.write(b"\n" + b"".join(src[14:]))
    d.tick(changed={str(target)})
    d.stop()
    out = tail_output(tmp_path / "out.jsonl")
    [error] = errors_of(out)
    assert (
        error["extension"]["kind"] == "line_too_long"
        if "kind" in error.get("extension", {})
        else error["kind"] == "line_too_long"
    )
    assert error["extension"]["line"] == 15 and error["extension"]["length"] == 12000
    whole = tmp_path / "whole.jsonl"
    whole.write_bytes(b"".join(src))
    want = [
        x
        for x in convert_file(whole, "claude-session")[0].splitlines()
        if b'"subtype":"error"' not in x
    ]
    got = [x for x in out.splitlines() if b'"subtype":"error"' not in x]
    assert len(got) == len(want)


def test_a_relayed_line_over_the_limit_is_dropped_not_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest, "MAX_LINE_BYTES", 4000)
    a, b = socket.socketpair()
    stream = ingest.LiveStream("s", a, {}, lambda: None)

    def feed() -> None:
        b.sendall(b'{"first":1}\n' + b"x" * 20000)
        b.sendall(b"y" * 20000 + b'\n{"second":2}\n')
        b.close()

    threading.Thread(target=feed).start()
    stream.read()
    got = []
    while not stream.queue.empty():
        got.append(stream.queue.get_nowait())
    assert got == [b'{"first":1}', b'{"second":2}'] and stream.dropped == 1


# -- 9. files that are not regular files, symlinks, permissions ------------------------------


def test_a_fifo_never_blocks_the_daemon_and_is_reported_once(tmp_path: Path) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    os.mkfifo(proj / "x.jsonl")
    (proj / BASH_NAME).write_bytes(BASH.read_bytes())
    os.symlink(proj / "x.jsonl", proj / "link-to-fifo.jsonl")
    d = daemon(tmp_path, Clock(), idle_close=0)  # returns: nothing blocked
    d.tick(changed={str(proj / "x.jsonl")})  # an event names it
    d.tick(rescan=True)
    d.stop()
    assert (
        tail_output(tmp_path / "out.jsonl") == convert_file(proj / BASH_NAME, "claude-session")[0]
    )


def _layout_with_sidecar(tmp: Path, make: Callable[[Path], None]) -> list[Path]:
    """The subagent layout under ``tmp/projects``, its sidecar's name made by ``make``
    (a FIFO, a symlink to a device, a file too large to be a sidecar)."""
    sid = tailing.SID
    parent = tmp / "projects" / "q" / f"{sid}.jsonl"
    agent = parent.with_suffix("") / "subagents" / f"{tailing.LAYOUT_AGENT}.jsonl"
    agent.parent.mkdir(parents=True)
    parent.write_bytes((tailing.LAYOUT / f"{sid}.jsonl").read_bytes())
    agent.write_bytes((tailing.LAYOUT / sid / "subagents" / agent.name).read_bytes())
    make(agent.with_name(agent.stem + ".meta.json"))
    return [parent, agent]


SIDECARS: dict[str, Callable[[Path], None]] = {
    "fifo": os.mkfifo,
    "symlink to /dev/zero": lambda p: os.symlink("/dev/zero", p),
    "over the bound": lambda p: p.write_bytes(b" " * (SIDECAR_LIMIT + 1) + b"{}"),
}


@pytest.mark.parametrize("kind", list(SIDECARS))
def test_a_sidecar_that_is_no_small_regular_file_blocks_neither_convert_nor_the_daemon(
    tmp_path: Path, streamv1_bin: str, kind: str
) -> None:
    """A FIFO named like a subagent's .meta.json blocked open() for good (the daemon
    ignored SIGTERM, convert never ended); /dev/zero through a symlink read without
    end. Now the sidecar is as good as absent, within a bound, and SIGTERM stops."""
    files = _layout_with_sidecar(tmp_path, SIDECARS[kind])
    want = convert_session_files(files, source="claude-session")[0]
    got = subprocess.run(
        [streamv1_bin, "convert", str(tmp_path / "projects" / "q")],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert got.returncode == 0, got.stderr
    assert got.stdout == want and b'"task_started"' in want
    tmp_path.chmod(0o700)  # the socket's folder: the test's own
    proc = tailing.start(streamv1_bin, tmp_path)
    tailing.wait_started(tmp_path, proc)
    deadline = time.monotonic() + 30
    while tail_output(tmp_path / "out.jsonl").count(b"\n") < want.count(b"\n"):
        assert proc.poll() is None and time.monotonic() < deadline, "the daemon is stuck"
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    assert tail_output(tmp_path / "out.jsonl") == want


@pytest.mark.parametrize("name", ["state.json", "state.json.lock"])
def test_state_and_lock_files_that_are_fifos_are_refused_not_waited_on(
    tmp_path: Path, streamv1_bin: str, name: str
) -> None:
    (tmp_path / "projects").mkdir()
    tmp_path.chmod(0o700)
    os.mkfifo(tmp_path / name)
    proc = tailing.start(streamv1_bin, tmp_path)
    assert proc.wait(timeout=30) == 1
    assert b"not a regular file" in (tmp_path / "daemon.log").read_bytes()


@pytest.mark.parametrize("how", ["another user's", "open to others", "a file", "a symlink"])
def test_a_socket_folder_the_daemon_cannot_use_is_a_warning_not_a_failed_start(
    tmp_path: Path, streamv1_bin: str, how: str
) -> None:
    """With no XDG_RUNTIME_DIR the socket is under /tmp/streamv1-<uid>, which any
    user may make first: every start exited 1. Now the relay is off, said once, and
    the transcripts are followed."""
    folder = tmp_path / "sock"
    if how == "another user's":
        if os.geteuid() != 0:
            pytest.skip("needs root to make a folder another user owns")
        folder.mkdir(mode=0o700)
        os.chown(folder, 65534, 65534)
    elif how == "open to others":
        folder.mkdir(mode=0o700)
        folder.chmod(0o777)
    elif how == "a file":
        folder.write_bytes(b"")
    else:
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        folder.symlink_to(tmp_path / "elsewhere")
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    (proj / BASH_NAME).write_bytes(BASH.read_bytes())
    tmp_path.chmod(0o700)
    proc = tailing.start(streamv1_bin, tmp_path, "--ingest-socket", str(folder / "i.sock"))
    tailing.wait_started(tmp_path, proc)
    assert proc.poll() is None, (tmp_path / "daemon.log").read_text()
    want = convert_file(proj / BASH_NAME, "claude-session")[0]
    deadline = time.monotonic() + 30
    while tail_output(tmp_path / "out.jsonl") != want and time.monotonic() < deadline:
        time.sleep(0.1)
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 0
    assert tail_output(tmp_path / "out.jsonl") == want
    log = (tmp_path / "daemon.log").read_text()
    assert log.count("relays and subscribers are off") == 1, log


def test_symlinks_out_of_the_watched_folder_are_not_followed_unless_asked(
    tmp_path: Path,
) -> None:
    from streamv1.translator.reading.discover import walk_paths

    outside = tmp_path / "elsewhere.jsonl"
    outside.write_bytes(BASH.read_bytes())
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    (proj / "inside.jsonl").write_bytes(BASH.read_bytes())
    os.symlink(outside, proj / "out.jsonl")
    os.symlink(proj / "inside.jsonl", proj / "alias.jsonl")
    root = str(tmp_path / "projects")
    assert walk_paths(root) == [str(proj / "alias.jsonl"), str(proj / "inside.jsonl")]
    assert str(proj / "out.jsonl") in walk_paths(root, follow_symlinks=True)
    d = daemon(tmp_path, Clock(), idle_close=0)
    assert not d._wanted(str(proj / "out.jsonl"))
    d.stop()


def test_an_unreadable_file_is_reported_once_and_tried_again_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    target = proj / BASH_NAME
    target.write_bytes(BASH.read_bytes())
    real_open = os.open
    locked = {"on": True}

    def no_access(path: Any, flags: int, *args: Any) -> int:
        if locked["on"] and str(path) == str(target):
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", no_access)
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=0)
    for _ in range(3):
        d.tick(rescan=True)
    err = capsys.readouterr().err
    assert err.count("permission denied") == 1 and "gone" not in err
    locked["on"] = False
    target.chmod(0o640)  # what a user does to let it be read: its ctime moves
    d.tick(rescan=True)
    d.stop()
    assert tail_output(tmp_path / "out.jsonl") == convert_file(target, "claude-session")[0]


# -- 10. the socket -------------------------------------------------------------------------


def _server(folder: Path) -> IngestServer:
    server = IngestServer(folder / "s.sock", lambda: None, lambda: {"ok": 1})
    server.start()
    return server


@pytest.mark.parametrize("how", ["open to others", "another user's"])
def test_a_socket_folder_we_do_not_own_alone_is_refused_by_both_ends(
    tmp_path: Path, how: str
) -> None:
    folder = tmp_path / "streamv1-1000"
    folder.mkdir(mode=0o700)
    if how == "open to others":
        folder.chmod(0o755)
    else:
        if os.geteuid() != 0:
            pytest.skip("needs root to make a folder another user owns")
        os.chown(folder, 65534, 65534)
    with pytest.raises(protocol.Untrusted):
        _server(folder)
    with pytest.raises(protocol.Untrusted):
        protocol.connect(folder / "s.sock")


def test_a_client_of_another_user_is_closed(tmp_path: Path) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to connect as another user")
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(dir="/tmp"))  # reachable by others (pytest's are 0700)
    folder.chmod(0o700)
    server = _server(folder)
    try:
        folder.chmod(0o711)  # reachable by name, to show the kernel's word is checked too
        os.chmod(folder / "s.sock", 0o666)
        probe = (
            "import os, socket\n"
            "os.setgid(65534); os.setuid(65534)\n"
            "s = socket.socket(socket.AF_UNIX); s.connect(os.environ['SOCK'])\n"
            "try:\n"
            '    s.sendall(b\'{"streamv1":1,"role":"status"}\\n\')\n'
            "    print('closed' if s.recv(100) == b'' else 'answered')\n"
            "except ConnectionError:\n"
            "    print('closed')\n"
        )
        proc = subprocess.run(
            ["python3", "-c", probe],
            env={"SOCK": str(folder / "s.sock")},
            capture_output=True,
            text=True,
            timeout=20,
            check=False,
        )
        assert proc.stdout.strip() == "closed", proc.stderr
        assert server.refused == 1
    finally:
        server.close()
        shutil.rmtree(folder, ignore_errors=True)


def test_a_hello_dribbled_a_byte_at_a_time_is_cut_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest, "HELLO_TIMEOUT", 1.0)
    server = _server(tmp_path)
    try:
        sock = protocol.connect(tmp_path / "s.sock")
        sock.settimeout(5)
        started = time.monotonic()
        closed = False
        for byte in b'{"streamv1":1,"role":"status"}':
            try:
                sock.sendall(bytes([byte]))
            except OSError:
                closed = True
                break
            time.sleep(0.25)
            if time.monotonic() - started > 4:
                break
        if not closed:
            closed = sock.recv(100) == b""
        assert closed and time.monotonic() - started < 4
    finally:
        server.close()


def test_connections_beyond_the_cap_are_closed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(ingest, "MAX_CLIENTS", 2)
    server = _server(tmp_path)
    try:
        held = [protocol.connect(tmp_path / "s.sock") for _ in range(2)]
        time.sleep(0.2)
        extra = protocol.connect(tmp_path / "s.sock")
        extra.settimeout(5)
        assert extra.recv(10) == b""
        assert server.refused == 1
        for sock in held:
            sock.close()
    finally:
        server.close()


def test_accept_survives_running_out_of_descriptors(tmp_path: Path) -> None:
    class Starved(IngestServer):
        fails = 3

        def _take(self) -> socket.socket:
            if self.fails:
                self.fails -= 1
                raise OSError(errno.EMFILE, "Too many open files")
            return super()._take()

    server = Starved(tmp_path / "s.sock", lambda: None, lambda: {"ok": 1})
    server.start()
    try:
        from streamv1.translator.tail.client import status

        assert status(tmp_path / "s.sock") == {"ok": 1}  # heard after the failures
        assert server.fails == 0
    finally:
        server.close()


def test_an_idle_subscriber_takes_a_batch_larger_than_its_queue() -> None:
    a, b = socket.socketpair()
    sub = Subscriber(a, 1, limit=1000)
    sub.offer(b"x" * 5000 + b"\n")  # the queue is empty: taken whole
    assert sub.dropped == 0 and sub.waiting == 5001
    sub.offer(b"y" * 10 + b"\n")  # behind a full queue: dropped, counted
    assert sub.dropped == 1
    a.close()
    b.close()


# -- 3. secrets never reach the logs -----------------------------------------------------------


@pytest.mark.parametrize("fmt", ["console", "json"])
def test_log_events_are_masked(fmt: str, capsys: pytest.CaptureFixture[str]) -> None:
    secret = "sk-ant-api03-" + "A1b2C3d4" * 6
    logs.configure("info", fmt)
    try:
        logs.get().info(
            "live stream connected",
            command=f"claude --api-key {secret} -p hi",
            note=f"value was {secret}",
        )
    finally:
        logs.configure("info", "console")
    err = capsys.readouterr().err
    assert secret not in err and "[REDACTED:anthropic_api_key]" in err


# -- 7. a writer of damaged lines ----------------------------------------------------------------


def _mutants(seed: int, n: int) -> list[bytes]:
    """Damaged versions of real lines: flipped and cut bytes, spliced lines, and
    values of every wrong type and size where the adapters expect others."""
    import random

    rng = random.Random(seed)
    real = [
        line
        for f in sorted((SESSION.parent).rglob("*.jsonl"))
        if ".expected." not in f.name and "tail" not in f.parts
        for line in f.read_bytes().splitlines()
        if line.strip()
    ]
    odd = [
        b"[]",
        b"[1,2]",
        b"1e999",
        b"-0",
        b"9" * 5000,
        b"18446744073709551616",
        b'"\\ud800"',
        b"null",
        b"{}",
        b'{"a":' * 300 + b"1" + b"}" * 300,
        b'"0000-01-01T00:00:00Z"',
        b'"9999-12-31T23:59:59-23:59"',
        b'"not a time"',
        b"Infinity",
        b"NaN",
        b"true",
    ]
    out = []
    for _ in range(n):
        line = bytearray(rng.choice(real))
        how = rng.randrange(5)
        if how == 0 and line:
            for _ in range(rng.randint(1, 4)):
                line[rng.randrange(len(line))] = rng.randrange(256)
        elif how == 1:
            line = line[: rng.randrange(len(line) + 1)]
        elif how == 2:
            line += rng.choice(real)
        else:
            # a value of the wrong kind after a key the adapters read
            keys = [
                b'"type":',
                b'"timestamp":',
                b'"content":',
                b'"sessionId":',
                b'"message":',
                b'"usage":',
                b'"session_id":',
                b'"subtype":',
                b'"text":',
                b'"id":',
            ]
            key = rng.choice(keys)
            at = bytes(line).find(key)
            if at >= 0:
                start = at + len(key)
                end = start
                depth = 0
                while end < len(line):  # the value's end, roughly
                    c = line[end]
                    if c in b"[{":
                        depth += 1
                    elif c in b"]}":
                        if depth == 0:
                            break
                        depth -= 1
                    elif c == ord(",") and depth == 0:
                        break
                    end += 1
                line[start:end] = rng.choice(odd)
        out.append(bytes(line).replace(b"\n", b" "))
    return out


@pytest.mark.parametrize("seed", [1, 2])
def test_a_writer_of_damaged_lines_never_stops_the_daemon(tmp_path: Path, seed: int) -> None:
    proj = tmp_path / "projects" / "p"
    proj.mkdir(parents=True)
    target = proj / BASH_NAME
    target.write_bytes(b"")
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=5)
    lines = _mutants(seed, 1500)
    for k in range(0, len(lines), 50):
        with target.open("ab") as fh:
            fh.write(b"\n".join(lines[k : k + 50]) + b"\n")
        d.tick(changed={str(target)})  # never raises
        clock.t += 1
    clock.t += 10
    d.tick()
    d.stop()
    follower_state = state_doc(tmp_path / "state.json")["files"]
    assert follower_state[str(target)]["offset"] == target.stat().st_size  # all read
    for raw in (tmp_path / "out.jsonl").read_bytes().splitlines():
        orjson.loads(raw)  # whole JSON lines only
