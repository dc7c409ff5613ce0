"""The fleet's settings, cheap to import: the NATS options the commands declare,
the stream's configuration (:class:`BusConfig`), subject tokens, and the error a
bus gives. Every command imports it; the runtime that talks to NATS (asyncio,
nats-py: :mod:`translator.fleet.transfer`, :mod:`translator.fleet.jetstream`) is imported only
by a command that publishes or subscribes (#26: asyncio alone was ~18 ms of every
convert's start-up)."""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click


def hostname() -> str:
    """This machine's name, as gethostname(2) gives it (os.uname: no socket module
    to import for a default that every command's options evaluate)."""
    try:
        return os.uname().nodename
    except AttributeError:  # pragma: no cover - not POSIX
        import socket

        return socket.gethostname()


#: What may stand in a subject token as it is; anything else is escaped as ``_XX``.
_SAFE = re.compile(rb"[^A-Za-z0-9-]")
#: The longest subject token. A longer one (a session id of 5,000 characters made
#: a subject over the server's control line: it dropped the connection, and the
#: publisher sent the same line again for ever, #39) is its first characters and a
#: digest of the whole value: ``<start>__<32 hex of BLAKE2b-128>``.
TOKEN_MAX = 128
_DIGEST_HEX = 32
#: A server's longest protocol line (nats-server's ``max_control_line``, 4 KiB unless
#: its config says otherwise; INFO does not tell it): ``--nats-max-control-line``.
MAX_CONTROL_LINE = 4096
#: A subject prefix: tokens of printable ASCII, no wildcards, none empty.
_PREFIX = re.compile(r"[!-\-/-~]+(\.[!-\-/-~]+)*")  # (printable ASCII but ".")

#: Lines asked for per fetch.
FETCH = 256
#: Lines written between two confirmed acks (``--ack-window``): the most a kill can
#: leave printed but not acked, printed again by the next run. Each confirmation is
#: a round trip: 3,847 lines/s at 1, 13,259 at 32, 15,049 at 256 on loopback
#: (docs/fleet.md).
ACK_WINDOW = 1


class BusError(Exception):
    """A stream that cannot be made or used (configuration, permissions): one line."""


@functools.lru_cache(maxsize=1 << 14)  # a few hosts and sessions, over and over
def token(value: str) -> str:
    """``value`` as one subject token: letters, digits and ``-`` stay, every other
    byte (``.``, ``*``, ``>``, spaces, ``_`` itself) becomes ``_XX``, so two values
    never share a token and the original can be read back. Over TOKEN_MAX
    characters, its start and a digest of the whole value (``__`` marks it: an
    escaped token never holds two ``_`` in a row), so a subject stays short
    whatever the input; the value itself is in the message's headers."""
    raw = value.encode("utf-8", "surrogatepass")
    out = _SAFE.sub(lambda m: b"_%02X" % m.group(0)[0], raw).decode("ascii") or "_"
    if len(out) <= TOKEN_MAX:
        return out
    from streamv1.translator.hashes import blake2b

    start = out[: TOKEN_MAX - _DIGEST_HEX - 2]
    cut = start.rfind("_", len(start) - 2)  # (never half an escape)
    if cut >= 0:
        start = start[:cut]
    return f"{start}__{blake2b(raw, digest_size=_DIGEST_HEX // 2).hexdigest()}"


@dataclass(frozen=True)
class BusConfig:
    """Where lines go and how the stream is made when missing."""

    servers: tuple[str, ...]
    stream: str = "STREAMV1"
    prefix: str = "streamv1"
    replicas: int = 1
    max_age: float = 0.0  # seconds; 0: keep forever
    max_bytes: int = -1  # -1: no limit
    duplicate_window: float = 600.0  # seconds
    host: str = field(default_factory=hostname)
    creds: str | None = None
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    max_control_line: int = MAX_CONTROL_LINE

    def subject(self, session: str) -> str:
        return f"{self.prefix}.{token(self.host)}.{token(session)}"

    def filter(self, host: str | None, session: str | None) -> str:
        """The subject filter for one host and/or session (``*`` for any)."""
        return f"{self.prefix}.{token(host) if host else '*'}.{token(session) if session else '*'}"


def servers(value: str) -> tuple[str, ...]:
    """``nats://a:4222,nats://b:4222`` as a tuple, each checked."""
    found = tuple(s.strip() for s in value.split(",") if s.strip())
    for url in found:
        if not url.startswith(("nats://", "tls://")):
            raise click.UsageError(f"{url!r} is not a nats:// (or tls://) address")
    if not found:
        raise click.UsageError("no NATS server given")
    return found


def bus_options(publishing: bool) -> Callable[[Any], Any]:
    """The connection options (and, for publishers, the stream's limits, used when
    the stream is made). Each command gets ``bus`` (a dict) to pass to ``config``."""

    def add(command: Any) -> Any:
        # (the files a TLS or credentials connection reads: each must exist)
        files = {
            "--nats-creds": "NATS credentials file (JWT and seed) for this host.",
            "--nats-tls-ca": "CA certificate(s) that sign the servers' certificates.",
            "--nats-tls-cert": "Client certificate, for servers that verify clients.",
            "--nats-tls-key": "The client certificate's key.",
        }
        opts = [
            *(
                click.option(name, type=click.Path(dir_okay=False, exists=True), help=text)
                for name, text in files.items()
            ),
            click.option(
                "--nats-stream",
                default="STREAMV1",
                show_default=True,
                help="JetStream stream name.",
            ),
            click.option(
                "--nats-prefix",
                default="streamv1",
                show_default=True,
                help="Subject prefix: subjects are PREFIX.<host>.<session_id>.",
            ),
        ]
        if publishing:
            opts += [
                click.option(
                    "--host",
                    "host_name",
                    metavar="NAME",
                    default=hostname(),
                    show_default="this host's name",
                    help="The name this machine publishes as (its subjects' second token).",
                ),
                click.option(
                    "--nats-replicas",
                    type=click.IntRange(1, 5),
                    default=1,
                    show_default=True,
                    help="Replicas, when the stream is made.",
                ),
                click.option(
                    "--nats-max-age",
                    type=float,
                    default=0.0,
                    metavar="SECONDS",
                    help="Age limit, when the stream is made (default: none).",
                ),
                click.option(
                    "--nats-max-bytes",
                    type=int,
                    default=-1,
                    metavar="BYTES",
                    help="Size limit, when the stream is made (default: none).",
                ),
                click.option(
                    "--nats-max-control-line",
                    type=click.IntRange(256),
                    default=MAX_CONTROL_LINE,
                    show_default=True,
                    metavar="BYTES",
                    help="The servers' max_control_line (not in their INFO): a line whose "
                    "subject would not fit is said and stepped over, never sent.",
                ),
                click.option(
                    "--nats-duplicate-window",
                    type=float,
                    default=600.0,
                    show_default=True,
                    metavar="SECONDS",
                    help="How long the server remembers message ids, when the stream is made.",
                ),
            ]
        for opt in reversed(opts):
            command = opt(command)
        return command

    return add


def config(urls: str, params: dict[str, Any], host: str | None = None) -> BusConfig:
    """The BusConfig from a command's parameters (bus_options' names)."""
    if params.get("nats_tls_key") and not params.get("nats_tls_cert"):
        raise click.UsageError("--nats-tls-key needs --nats-tls-cert")
    prefix = params["nats_prefix"]
    if not _PREFIX.fullmatch(prefix) or "*" in prefix or ">" in prefix or len(prefix) > TOKEN_MAX:
        raise click.UsageError(
            f"--nats-prefix {prefix!r}: dot-separated tokens of printable ASCII, without "
            f"spaces, '*' or '>', at most {TOKEN_MAX} characters"
        )
    return BusConfig(
        servers=servers(urls),
        stream=params["nats_stream"],
        prefix=prefix,
        replicas=params.get("nats_replicas", 1),
        max_age=params.get("nats_max_age", 0.0),
        max_bytes=params.get("nats_max_bytes", -1),
        duplicate_window=params.get("nats_duplicate_window", 600.0),
        max_control_line=params.get("nats_max_control_line", MAX_CONTROL_LINE),
        host=host or params.get("host_name") or hostname(),
        creds=params.get("nats_creds"),
        tls_ca=params.get("nats_tls_ca"),
        tls_cert=params.get("nats_tls_cert"),
        tls_key=params.get("nats_tls_key"),
    )


def check_token(name: str, value: str) -> None:
    if not value or value != value.strip():
        raise click.UsageError(f"{name} must be a non-empty name without surrounding spaces")


def publish_state(state: Path) -> Path:
    """The publisher's checkpoint beside the daemon's."""
    return state.with_name(state.name + ".publish.json")


def temp_output() -> Path:
    """Where ``convert --publish`` without ``-o`` puts the lines it sends."""
    import tempfile

    fd, name = tempfile.mkstemp(prefix="streamv1-publish-", suffix=".jsonl")
    os.close(fd)
    return Path(name)
