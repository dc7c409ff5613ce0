"""The fleet's connection cannot be talked out of TLS, takes its credentials from
files and the environment (never only argv), and never logs one (#39).

Real nats-servers on loopback, with a certificate made here (openssl) and users
with per-host permissions. The one stand-in is the attacker of the downgrade: a
listener that plays a plain server's INFO (no TLS) and records every byte a
client sends it."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import natsserver
import nkeys
import pytest
from tailing import SESSION

from streamv1.translator import logs
from streamv1.translator.fleet import bus

SOURCE = SESSION / "thinking.jsonl"
PASSWORD = "pw-of-alice-7Rq"  # alice-laptop's; the reader's below
READER_PASSWORD = "pw-of-dash-3Kx"


class PlainServer:
    """A downgrade: answers every connection with a plain server's INFO (no
    ``tls_required``, no ``tls_available``) and keeps what the client sends."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.port = self.sock.getsockname()[1]
        self.received = bytearray()
        self.connections = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        info = {
            "server_id": "NPLAIN",
            "version": "2.15.1",
            "proto": 1,
            "headers": True,
            "max_payload": 1 << 20,
            "auth_required": True,
            "jetstream": True,
        }
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
            conn.sendall(b"INFO " + json.dumps(info).encode() + b"\r\n")
            threading.Thread(target=self._read, args=(conn,), daemon=True).start()

    def _read(self, conn: socket.socket) -> None:
        conn.settimeout(10)
        with conn:
            while True:
                try:
                    data = conn.recv(65536)
                except OSError:
                    return
                if not data:
                    return
                with self._lock:
                    self.received += data
                if b"PING" in data:
                    conn.sendall(b"PONG\r\n")

    def close(self) -> None:
        self.sock.close()


@pytest.fixture
def plain() -> Iterator[PlainServer]:
    s = PlainServer()
    yield s
    s.close()


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    return natsserver.certificates(tmp_path_factory.mktemp("pki"))


def _tls_block(pem: dict[str, Path], extra: str = "") -> str:
    return (
        f'tls {{ cert_file: "{pem["server"]}", key_file: "{pem["server-key"]}", '
        f'ca_file: "{pem["ca"]}" {extra} }}\n'
    )


def _seed(tmp: Path, name: str) -> tuple[Path, str]:
    """A user NKEY: its seed file and public key."""
    seed = nkeys.encode_seed(os.urandom(32), nkeys.PREFIX_BYTE_USER)
    path = tmp / f"{name}.nk"
    path.write_bytes(seed + b"\n")
    path.chmod(0o600)
    return path, nkeys.from_seed(bytearray(seed)).public_key.decode()


def _host_permissions(host: str) -> str:
    """What a host's user may do: docs/fleet.md's allow-list (publish as itself;
    the stream's info, last message, and an ephemeral consumer to read its own ids)."""
    return (
        "permissions: { publish: { allow: ["
        f'"streamv1.{host}.>", "$JS.API.STREAM.INFO.STREAMV1", '
        '"$JS.API.STREAM.MSG.GET.STREAMV1", "$JS.API.DIRECT.GET.STREAMV1.>", '
        '"$JS.API.CONSUMER.CREATE.STREAMV1.>", "$JS.API.CONSUMER.DELETE.STREAMV1.>", '
        '"$JS.API.CONSUMER.MSG.NEXT.STREAMV1.>", "$JS.ACK.STREAMV1.>" ] }, '
        'subscribe: { allow: ["_INBOX.>"] } }'
    )


def _accounts(seed_key: str) -> str:
    reader = (
        'permissions: { publish: { allow: ["$JS.API.CONSUMER.>", '
        '"$JS.API.STREAM.INFO.STREAMV1", "$JS.ACK.STREAMV1.>"] }, '
        'subscribe: { allow: ["_INBOX.>"] } }'
    )
    return f"""
accounts {{
  STREAMV1 {{
    jetstream: enabled
    users: [
      {{ user: admin, password: admin-pw }}
      {{ user: alice-laptop, password: "{PASSWORD}", {_host_permissions("alice-laptop")} }}
      {{ nkey: {seed_key}, {_host_permissions("ci-runner")} }}
      {{ user: dashboard, password: "{READER_PASSWORD}", {reader} }}
    ]
  }}
}}
"""


@pytest.fixture(scope="module")
def team(
    tmp_path_factory: pytest.TempPathFactory, pki: dict[str, Path]
) -> Iterator[tuple[natsserver.Server, Path, Path]]:
    """A TLS server with accounts and per-host users, its stream made by the admin
    (hosts have no right to make it): (server, the CI runner's seed file, folder)."""
    tmp = tmp_path_factory.mktemp("team")
    seed, key = _seed(tmp, "ci-runner")
    server = natsserver.Server(tmp / "nats", conf=_tls_block(pki) + _accounts(key)).start()
    admin = subprocess.run(
        [
            *_cmd("convert", str(SOURCE), "--publish", _tls_url(server), "--host", "seed"),
            "--nats-tls-ca",
            str(pki["ca"]),
            "--nats-user",
            "admin",
            "--nats-password-file",
            str(_secret_file(tmp, "admin", "admin-pw")),
        ],
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert admin.returncode == 0, admin.stderr
    yield server, seed, tmp
    server.stop(signal.SIGKILL)


def _cmd(*args: str) -> list[str]:
    import shutil
    import sys

    found = shutil.which("streamv1", path=os.path.dirname(sys.executable))
    assert found is not None
    return [found, "--log-level", "debug", *args]


def _tls_url(server: natsserver.Server) -> str:
    return f"tls://127.0.0.1:{server.port}"


def _secret_file(tmp: Path, name: str, value: str) -> Path:
    path = tmp / f"{name}.secret"
    path.write_text(value + "\n")
    path.chmod(0o600)
    return path


def _run(args: list[str], env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("NATS_")}
    return subprocess.run(
        args, capture_output=True, text=True, timeout=90, check=False, env={**clean, **(env or {})}
    )


def _stored(server: natsserver.Server, pki: dict[str, Path]) -> list[dict[str, Any]]:
    import ssl

    return natsserver.stored(
        _tls_url(server),
        tls=ssl.create_default_context(cafile=str(pki["ca"])),
        user="admin",
        password="admin-pw",
    )


# -- a connection asked to use TLS never speaks in clear text -----------------------------


def _asking(
    way: str, port: int, pki: dict[str, Path], tmp: Path
) -> tuple[str, list[str], dict[str, str]]:
    """(the address, options, environment) of each way to ask for TLS, each with a
    credential the attacker would like."""
    plain = f"nats://127.0.0.1:{port}"
    if way == "tls-scheme":
        return f"tls://alice-laptop:{PASSWORD}@127.0.0.1:{port}", [], {}
    if way == "ca-option":
        return plain, ["--nats-tls-ca", str(pki["ca"])], {"NATS_TOKEN": "tok-8Hw"}
    if way == "ca-env":
        return (
            plain,
            [],
            {"NATS_CA": str(pki["ca"]), "NATS_USER": "alice-laptop", "NATS_PASSWORD": PASSWORD},
        )
    if way == "tls-first":
        return f"nats://Q@127.0.0.1:{port}", ["--nats-tls-first"], {}
    assert way == "context"
    ctx = tmp / "team.json"
    ctx.write_text(
        json.dumps({"url": f"tls://127.0.0.1:{port}", "user": "alice-laptop", "password": PASSWORD})
    )
    return "env", ["--nats-context", str(ctx)], {}


WAYS = ["tls-scheme", "ca-option", "ca-env", "tls-first", "context"]


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize("command", ["subscribe", "convert"])
def test_a_server_without_tls_gets_not_a_byte_of_a_tls_connection(
    plain: PlainServer, pki: dict[str, Path], tmp_path: Path, way: str, command: str
) -> None:
    url, options, env = _asking(way, plain.port, pki, tmp_path)
    if command == "subscribe":
        args = _cmd("subscribe", "--from", url, "--catch-up", *options)
    else:
        args = _cmd("convert", str(SOURCE), "--publish", url, *options)
    proc = _run(args, env)
    assert proc.returncode == 1, proc.stderr
    assert plain.connections >= 1  # it was asked, and answered
    if way == "tls-first":
        # (the handshake came first: a TLS ClientHello, no protocol, no credential)
        assert plain.received[:1] == b"\x16" and b"CONNECT" not in plain.received
    else:
        assert bytes(plain.received) == b""
        assert "offers no TLS, and TLS was asked for: nothing sent" in proc.stderr
    assert "Traceback" not in proc.stderr
    for value in (PASSWORD, "tok-8Hw", "://Q@"):
        assert value not in proc.stderr


def test_the_daemon_asked_for_tls_waits_and_sends_nothing(
    plain: PlainServer, pki: dict[str, Path], tmp_path: Path
) -> None:
    (tmp_path / "projects").mkdir()
    proc = subprocess.Popen(
        [
            *_cmd("tail", str(tmp_path / "projects"), "-o", str(tmp_path / "out.jsonl")),
            "--state",
            str(tmp_path / "state.json"),
            "--no-ingest",
            "--publish",
            f"tls://alice-laptop:{PASSWORD}@127.0.0.1:{plain.port}",
            "--nats-tls-ca",
            str(pki["ca"]),
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    deadline = time.monotonic() + 30
    while plain.connections < 2 and time.monotonic() < deadline:
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=30)
    assert plain.connections >= 2  # tried, and tried again
    assert bytes(plain.received) == b""
    assert "offers no TLS" in err and PASSWORD not in err


def test_a_server_offering_tls_as_an_option_is_taken_up_on_it(
    pki: dict[str, Path], tmp_path: Path
) -> None:
    """``allow_non_tls``: the INFO says ``tls_available``, not ``tls_required``;
    nats-py alone would stay in clear text. The server's /connz says TLS."""
    server = natsserver.Server(
        tmp_path / "nats", conf=_tls_block(pki) + "allow_non_tls: true\n"
    ).start()
    try:
        proc = _run(
            _cmd("convert", str(SOURCE), "--publish", server.url, "--nats-tls-ca", str(pki["ca"]))
        )
        assert proc.returncode == 0, proc.stderr
        sub = subprocess.Popen(
            _cmd("subscribe", "--from", _tls_url(server), "--nats-tls-ca", str(pki["ca"])),
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert sub.stdout is not None
            sub.stdout.readline()  # connected, reading
            import urllib.request

            with urllib.request.urlopen(f"http://127.0.0.1:{server.monitor}/connz", timeout=5) as r:
                conns = json.load(r)["connections"]
            ours = [c for c in conns if c.get("name") == "streamv1-subscribe"]
            assert ours and all(c.get("tls_version") for c in ours), ours
        finally:
            sub.kill()
            sub.wait()
    finally:
        server.stop(signal.SIGKILL)


# -- credentials from files, the environment and a context; never in a log -------------------


def _lines(server: natsserver.Server, pki: dict[str, Path], host: str) -> int:
    return sum(1 for m in _stored(server, pki) if m["subject"].startswith(f"streamv1.{host}."))


def _no_secret_in(text: str, *values: str) -> None:
    for value in values:
        assert value not in text, value


def test_a_password_from_a_file_or_the_environment(
    team: tuple[natsserver.Server, Path, Path], pki: dict[str, Path], tmp_path: Path
) -> None:
    server, _, _ = team
    publish = _cmd("convert", str(SOURCE), "--publish", _tls_url(server))
    ca = ["--nats-tls-ca", str(pki["ca"])]
    pw = _secret_file(tmp_path, "alice", PASSWORD)
    by_file = _run(
        [
            *publish,
            "--host",
            "alice-laptop",
            *ca,
            "--nats-user",
            "alice-laptop",
            "--nats-password-file",
            str(pw),
        ]
    )
    assert by_file.returncode == 0, by_file.stderr
    stored = _lines(server, pki, "alice-laptop")
    assert stored > 0
    # The environment (the user in the address, its password in NATS_PASSWORD), again:
    # nothing stored twice.
    by_env = _run(
        [
            *_cmd(
                "convert", str(SOURCE), "--publish", f"tls://alice-laptop@127.0.0.1:{server.port}"
            ),
            "--host",
            "alice-laptop",
        ],
        {"NATS_PASSWORD": PASSWORD, "NATS_CA": str(pki["ca"])},
    )
    assert by_env.returncode == 0, by_env.stderr
    assert _lines(server, pki, "alice-laptop") == stored
    # NATS_URL holding it all, named by the address `env`.
    by_url = _run(
        [*_cmd("convert", str(SOURCE), "--publish", "env", "--host", "alice-laptop")],
        {
            "NATS_URL": f"tls://alice-laptop:{PASSWORD}@127.0.0.1:{server.port}",
            "NATS_CA": str(pki["ca"]),
        },
    )
    assert by_url.returncode == 0, by_url.stderr
    # A host may publish only as itself: the server refuses alice-laptop as bob (a
    # refused publish only times out, and is retried: the error said, nothing stored).
    as_bob_proc = subprocess.Popen(
        [
            *publish,
            "--host",
            "bob",
            *ca,
            "--nats-user",
            "alice-laptop",
            "--nats-password-file",
            str(pw),
        ],
        stderr=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        text=True,
    )
    try:
        _, bob_err = as_bob_proc.communicate(timeout=8)
    except subprocess.TimeoutExpired:
        as_bob_proc.kill()
        _, bob_err = as_bob_proc.communicate()
    assert 'permissions violation for publish to "streamv1.bob.' in bob_err.lower()
    assert _lines(server, pki, "bob") == 0
    # A wrong password: refused, one line.
    wrong = _run(
        [*publish, "--host", "alice-laptop", *ca],
        {"NATS_USER": "alice-laptop", "NATS_PASSWORD": "not-it-Zz9"},
    )
    assert wrong.returncode == 1 and "Authorization Violation" in wrong.stderr
    for err in (by_file.stderr, by_env.stderr, by_url.stderr, bob_err, wrong.stderr):
        _no_secret_in(err, PASSWORD, "not-it-Zz9")
    assert "seen by every local user" not in by_env.stderr + by_url.stderr


def test_an_nkey_seed_from_a_file_or_the_environment(
    team: tuple[natsserver.Server, Path, Path], pki: dict[str, Path]
) -> None:
    server, seed, _ = team
    publish = [*_cmd("convert", str(SOURCE), "--publish", _tls_url(server)), "--host", "ci-runner"]
    by_option = _run([*publish, "--nats-nkey", str(seed), "--nats-tls-ca", str(pki["ca"])])
    assert by_option.returncode == 0, by_option.stderr
    assert _lines(server, pki, "ci-runner") > 0
    by_env = _run(publish, {"NATS_NKEY": str(seed), "NATS_CA": str(pki["ca"])})
    assert by_env.returncode == 0, by_env.stderr
    text = seed.read_text().strip()
    for proc in (by_option, by_env):
        _no_secret_in(proc.stderr, text)


def test_a_reader_from_a_nats_context(
    team: tuple[natsserver.Server, Path, Path], pki: dict[str, Path], tmp_path: Path
) -> None:
    """A nats CLI context by name under $XDG_CONFIG_HOME: the url, user, password
    and CA all from it."""
    server, _, _ = team
    folder = tmp_path / "config" / "nats" / "context"
    folder.mkdir(parents=True)
    (folder / "team.json").write_text(
        json.dumps(
            {
                "url": _tls_url(server),
                "user": "dashboard",
                "password": READER_PASSWORD,
                "ca": str(pki["ca"]),
            }
        )
    )
    proc = _run(
        _cmd("subscribe", "--from", "env", "--catch-up"),
        {"NATS_CONTEXT": "team", "XDG_CONFIG_HOME": str(tmp_path / "config")},
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.count("\n") == len(_stored(server, pki)) > 0
    _no_secret_in(proc.stderr, READER_PASSWORD)


def _token_server(tmp: Path, pki: dict[str, Path], token: str) -> natsserver.Server:
    conf = _tls_block(pki) + f'authorization {{ token: "{token}" }}\n'
    return natsserver.Server(tmp / "nats", conf=conf).start()


@pytest.mark.parametrize("token", ["Q", "k9Z"])
def test_a_short_token_never_reaches_the_daemons_log(
    pki: dict[str, Path], tmp_path: Path, token: str
) -> None:
    """The daemon (and its publisher process) log every connect and disconnect;
    the token in the address (argv, as before #39) and from NATS_TOKEN is masked
    in all of them, and in ``status``."""
    server = _token_server(tmp_path, pki, token)
    (tmp_path / "projects").mkdir()
    try:
        for name, url, env in (
            ("argv", f"tls://{token}@127.0.0.1:{server.port}", {}),
            ("env", _tls_url(server), {"NATS_TOKEN": token}),
        ):
            out = tmp_path / f"{name}.jsonl"
            proc = subprocess.Popen(
                [
                    *_cmd("tail", str(tmp_path / "projects"), "-o", str(out)),
                    "--state",
                    str(tmp_path / f"{name}.state"),
                    "--ingest-socket",
                    str(tmp_path / f"{name}.sock"),
                    "--publish",
                    url,
                    "--nats-tls-ca",
                    str(pki["ca"]),
                ],
                stderr=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                text=True,
                env={
                    **{k: v for k, v in os.environ.items() if not k.startswith("NATS_")},
                    **env,
                },
            )
            deadline = time.monotonic() + 30
            while "streamv1-tail@" not in " ".join(server.client_names()):
                assert time.monotonic() < deadline and proc.poll() is None
                time.sleep(0.2)
            status = _run(_cmd("status", "--socket", str(tmp_path / f"{name}.sock"))).stdout
            server.stop()  # a disconnect, said
            time.sleep(1.5)
            server.start()  # and a connect again
            time.sleep(2.5)
            proc.send_signal(signal.SIGTERM)
            _, err = proc.communicate(timeout=30)
            said = [line for line in err.splitlines() if "bus state" in line]
            assert any("disconnected" in line for line in said), err
            assert len(said) >= 3, err
            for text in (err, status):
                assert f"{token}@" not in text and f"={token} " not in text
                assert not re.search(rf"(?<![A-Za-z0-9]){token}(?![A-Za-z0-9])", text), text
    finally:
        server.stop(signal.SIGKILL)


def test_an_address_with_a_credential_on_the_command_line_is_warned_of(
    plain: PlainServer,
) -> None:
    proc = _run(
        _cmd("subscribe", "--from", f"nats://u:p4ss-word@127.0.0.1:{plain.port}", "--catch-up")
    )
    assert "seen by every local user (ps)" in proc.stderr
    assert "p4ss-word" not in proc.stderr


# -- the rules ----------------------------------------------------------------------------------


def test_an_address_is_shown_without_its_credentials() -> None:
    assert bus.shown_url("tls://u:p@h:4222") == "tls://***@h:4222"
    assert bus.shown_url("nats://T@h") == "nats://***@h"
    assert bus.shown_url("nats://h:4222") == "nats://h:4222"
    assert bus.url_secrets("nats://u:p%40ss@h") == ["p%40ss", "p@ss"]
    assert bus.url_secrets("nats://TOK@h") == ["TOK", "TOK"]


def test_a_known_credential_is_masked_however_short(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(logs, "_secrets", {})  # (this process's only)
    logs.configure("debug", "console")
    logs.secret("x", "a-long-password")
    log = logs.get()
    log.info("bus state", servers="nats://x@h:4222", token="x", path="/tmp/box")
    log.warning("nats error", reason="auth a-long-password refused; box x")
    err = capsys.readouterr().err
    assert "a-long-password" not in err and "x@" not in err and "token=x" not in err
    assert "/tmp/box" in err  # a letter of a word stays
    assert "box ***" in err


# -- decentralized auth: a .creds file (operator, account and user JWTs made here) ---------


def _b64(data: bytes) -> str:
    import base64

    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _jwt(claims: dict[str, Any], signer: Any) -> str:
    """A NATS JWT (ed25519-nkey), signed by ``signer``: what nsc would make."""
    import base64
    import hashlib

    claims = {"iat": int(time.time()), **claims}
    body = json.dumps(claims, separators=(",", ":")).encode()
    claims["jti"] = base64.b32encode(hashlib.new("sha512_256", body).digest()).decode()
    head = _b64(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    payload = _b64(json.dumps(claims, separators=(",", ":")).encode())
    return f"{head}.{payload}.{_b64(signer.sign(f'{head}.{payload}'.encode()))}"


def _operator_setup(tmp: Path) -> tuple[str, Path, list[str]]:
    """(the server's config, a host's .creds file, its secrets: JWT and seed)."""

    def pair(prefix: int) -> tuple[bytes, Any, str]:
        seed = nkeys.encode_seed(os.urandom(32), prefix)
        kp = nkeys.from_seed(bytearray(seed))
        return seed, kp, kp.public_key.decode()

    _, op, op_pub = pair(nkeys.PREFIX_BYTE_OPERATOR)
    _, acc, acc_pub = pair(nkeys.PREFIX_BYTE_ACCOUNT)
    _, _, sys_pub = pair(nkeys.PREFIX_BYTE_ACCOUNT)
    seed, _, user_pub = pair(nkeys.PREFIX_BYTE_USER)
    limits = {
        "subs": -1,
        "data": -1,
        "payload": -1,
        "imports": -1,
        "exports": -1,
        "wildcards": True,
        "conn": -1,
        "leaf": -1,
    }
    js = {"mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1}
    operator = _jwt(
        {
            "iss": op_pub,
            "sub": op_pub,
            "name": "op",
            "nats": {"type": "operator", "version": 2, "system_account": sys_pub},
        },
        op,
    )
    account = _jwt(
        {
            "iss": op_pub,
            "sub": acc_pub,
            "name": "STREAMV1",
            "nats": {"limits": {**limits, **js}, "type": "account", "version": 2},
        },
        op,
    )
    system = _jwt(
        {
            "iss": op_pub,
            "sub": sys_pub,
            "name": "SYS",
            "nats": {"limits": limits, "type": "account", "version": 2},
        },
        op,
    )
    user = _jwt(
        {
            "iss": acc_pub,
            "sub": user_pub,
            "name": "ci-runner",
            "nats": {
                "pub": {"allow": ["streamv1.ci-runner.>", "$JS.API.>", "$JS.ACK.>"]},
                "sub": {"allow": ["_INBOX.>"]},
                "subs": -1,
                "data": -1,
                "payload": -1,
                "type": "user",
                "version": 2,
            },
        },
        acc,
    )
    (tmp / "op.jwt").write_text(operator)
    conf = (
        f'operator: "{tmp / "op.jwt"}"\nsystem_account: {sys_pub}\nresolver: MEMORY\n'
        f'resolver_preload: {{ {acc_pub}: "{account}", {sys_pub}: "{system}" }}\n'
    )
    creds = tmp / "ci-runner.creds"
    creds.write_text(
        f"-----BEGIN NATS USER JWT-----\n{user}\n------END NATS USER JWT------\n\n"
        f"-----BEGIN USER NKEY SEED-----\n{seed.decode()}\n------END USER NKEY SEED------\n"
    )
    creds.chmod(0o600)
    return conf, creds, [user, seed.decode()]


def test_a_creds_file_from_an_option_or_the_environment(
    pki: dict[str, Path], tmp_path: Path
) -> None:
    conf, creds, secrets = _operator_setup(tmp_path)
    server = natsserver.Server(tmp_path / "nats", conf=_tls_block(pki) + conf).start()
    try:
        publish = [
            *_cmd("convert", str(SOURCE), "--publish", _tls_url(server)),
            "--host",
            "ci-runner",
            "--nats-tls-ca",
            str(pki["ca"]),
        ]
        by_option = _run([*publish, "--nats-creds", str(creds)])
        assert by_option.returncode == 0, by_option.stderr
        assert "published=4" in by_option.stderr
        by_env = _run(publish, {"NATS_CREDS": str(creds)})
        assert by_env.returncode == 0, by_env.stderr
        assert "already_stored=4" in by_env.stderr
        for proc in (by_option, by_env):
            _no_secret_in(proc.stderr, *secrets)
        # Without it: refused (the server knows no anonymous user).
        anonymous = _run(publish)
        assert anonymous.returncode == 1 and "Authorization Violation" in anonymous.stderr
    finally:
        server.stop(signal.SIGKILL)
