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
    creds: str | None = None  # a .creds file (user JWT and seed)
    nkey: str | None = None  # an NKEY seed file
    user: str | None = None
    password: str | None = field(default=None, repr=False)
    token: str | None = field(default=None, repr=False)
    tls_ca: str | None = None
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_first: bool = False  # the TLS handshake before the server's INFO
    #: TLS asked for (a ``tls://`` address or any TLS option): a server that does not
    #: offer it is refused before anything is sent (:mod:`translator.fleet.connection`).
    tls_required: bool = False
    max_control_line: int = MAX_CONTROL_LINE

    def shown(self) -> str:
        """The servers as logs and errors name them: no credential in an address."""
        return ",".join(shown_url(url) for url in self.servers)

    def secrets(self) -> tuple[str, ...]:
        """Every credential this configuration holds, by value (masked in the logs):
        the password, the token, an address's password or token, and the keys a
        seed or credentials file holds."""
        found = [self.password or "", self.token or ""]
        for url in self.servers:
            found += url_secrets(url, named=self.password is not None)
        for path in (self.creds, self.nkey):
            found += _file_secrets(path)
        return tuple(s for s in found if s)

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
            raise click.UsageError(f"{shown_url(url)!r} is not a nats:// (or tls://) address")
    if not found:
        raise click.UsageError("no NATS server given")
    return found


def _userinfo(url: str) -> tuple[str, str] | None:
    """(scheme://, user-info) of an address that carries credentials, else None."""
    scheme, sep, rest = url.partition("://")
    netloc = rest.split("/", 1)[0]
    if not sep or "@" not in netloc:
        return None
    return scheme + sep, netloc.rpartition("@")[0]


def shown_url(url: str) -> str:
    """The address without its credentials (``nats://***@host:4222``)."""
    found = _userinfo(url)
    if found is None:
        return url
    scheme, info = found
    return scheme + "***@" + url[len(scheme) + len(info) + 1 :]


def url_secrets(url: str, named: bool = False) -> list[str]:
    """The password (or, alone, the token) an address carries, as given and as
    decoded: ``nats://TOKEN@host``, ``nats://user:PASSWORD@host``. ``named``: a
    password is given apart, so a user alone is that password's user, no secret."""
    from urllib.parse import unquote

    found = _userinfo(url)
    if found is None:
        return []
    user, colon, password = found[1].partition(":")
    if not colon and named:
        return []
    value = password if colon else user
    return [value, unquote(value)]


def _file_secrets(path: str | None) -> list[str]:
    """The keys and tokens a .creds or seed file holds (its lines between markers,
    or a bare seed): what would give someone this host's identity."""
    if not path:
        return []
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    lines = (line.strip() for line in text.splitlines())
    return [t for t in lines if len(t) >= 20 and " " not in t and t[0] not in "-*"]


def bus_options(publishing: bool) -> Callable[[Any], Any]:
    """The connection options (and, for publishers, the stream's limits, used when
    the stream is made). Each command gets ``bus`` (a dict) to pass to ``config``."""

    def add(command: Any) -> Any:
        # (the files a TLS or credentials connection reads: each must exist). The
        # credentials themselves never come from argv, which every local user sees
        # in ps: a file, or the nats tools' environment variables.
        files = {
            "--nats-creds": ("NATS_CREDS", "NATS credentials file (user JWT and seed)."),
            "--nats-nkey": ("NATS_NKEY", "NKEY seed file (a user the server knows by its key)."),
            "--nats-password-file": (
                None,
                "File holding the password of --nats-user (or of the user in the "
                "address); else $NATS_PASSWORD.",
            ),
            "--nats-token-file": (None, "File holding the server's auth token; else $NATS_TOKEN."),
            "--nats-tls-ca": ("NATS_CA", "CA certificate(s) that sign the servers' certificates."),
            "--nats-tls-cert": (
                "NATS_CERT",
                "Client certificate, for servers that verify clients.",
            ),
            "--nats-tls-key": ("NATS_KEY", "The client certificate's key."),
        }
        opts = [
            *(
                click.option(
                    name,
                    type=click.Path(dir_okay=False, exists=True),
                    envvar=env,
                    show_envvar=env is not None,
                    help=text,
                )
                for name, (env, text) in files.items()
            ),
            click.option(
                "--nats-user",
                metavar="NAME",
                envvar="NATS_USER",
                show_envvar=True,
                help="User name (its password: --nats-password-file or $NATS_PASSWORD; "
                "alone, it is a token, as for the nats CLI).",
            ),
            click.option(
                "--nats-context",
                metavar="NAME|FILE",
                envvar="NATS_CONTEXT",
                show_envvar=True,
                help="A nats CLI context (~/.config/nats/context/NAME.json): its url, "
                "credentials and TLS files fill what the options leave unset.",
            ),
            click.option(
                "--nats-tls-first",
                is_flag=True,
                default=None,
                help="TLS handshake before the server's first word (servers with "
                "handshake_first); TLS is required either way once any TLS option or "
                "a tls:// address is given.",
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


#: The address that means "the addresses in $NATS_URL" (else the context's url): an
#: address holding a password need not be on the command line.
FROM_ENV = "env"


def config(urls: str, params: dict[str, Any], host: str | None = None) -> BusConfig:
    """The BusConfig from a command's parameters (bus_options' names), the nats
    tools' environment variables and a nats CLI context: an option (or its
    variable) first, then the context. Its credentials are masked in every log line
    from here on."""
    from streamv1.translator import logs

    context = _context(params.get("nats_context"))
    from_argv = urls != FROM_ENV
    if not from_argv:
        urls = os.environ.get("NATS_URL") or _text(context.get("url")) or ""
        if not urls:
            raise click.UsageError(f"{FROM_ENV!r} as the address needs NATS_URL (or a context url)")
    found = servers(urls)

    def path(name: str, key: str) -> str | None:
        value = params.get(name)
        if value:
            return str(value)
        given = _text(context.get(key))
        if given is None:
            return None
        given = os.path.expanduser(given)
        if not os.path.isfile(given):
            raise click.UsageError(f"the NATS context's {key} {given!r} is not a file")
        return given

    creds, nkey = path("nats_creds", "creds"), path("nats_nkey", "nkey")
    tls_ca, tls_cert = path("nats_tls_ca", "ca"), path("nats_tls_cert", "cert")
    tls_key = path("nats_tls_key", "key")
    if tls_key and not tls_cert:
        raise click.UsageError("--nats-tls-key needs --nats-tls-cert")
    if creds and nkey:
        raise click.UsageError("--nats-creds and --nats-nkey are two identities: give one")
    user = params.get("nats_user") or _text(context.get("user"))
    password = (
        _read(params.get("nats_password_file"), "--nats-password-file")
        or os.environ.get("NATS_PASSWORD")
        or _text(context.get("password"))
    )
    token = (
        _read(params.get("nats_token_file"), "--nats-token-file")
        or os.environ.get("NATS_TOKEN")
        or _text(context.get("token"))
    )
    if password and not user:  # nats://alice@bus with the password kept out of argv
        user = next((_url_user(u) for u in found if _url_user(u)), None)
        if not user:
            raise click.UsageError("a NATS password needs a user: --nats-user or NATS_USER")
    if user and not password and not token:
        user, token = None, user  # a user alone is a token, as for the nats CLI
    if from_argv and any(url_secrets(u, named=bool(password)) for u in found):
        logs.get().warning(
            "a credential in a NATS address on the command line is seen by every local user (ps)",
            hint="give it with NATS_URL and the address `env`, NATS_PASSWORD, NATS_TOKEN, "
            "--nats-password-file or --nats-token-file",
        )
    tls_first = bool(params.get("nats_tls_first") or context.get("tls_first") is True)
    prefix = params["nats_prefix"]
    if not _PREFIX.fullmatch(prefix) or "*" in prefix or ">" in prefix or len(prefix) > TOKEN_MAX:
        raise click.UsageError(
            f"--nats-prefix {prefix!r}: dot-separated tokens of printable ASCII, without "
            f"spaces, '*' or '>', at most {TOKEN_MAX} characters"
        )
    made = BusConfig(
        servers=found,
        stream=params["nats_stream"],
        prefix=prefix,
        replicas=params.get("nats_replicas", 1),
        max_age=params.get("nats_max_age", 0.0),
        max_bytes=params.get("nats_max_bytes", -1),
        duplicate_window=params.get("nats_duplicate_window", 600.0),
        max_control_line=params.get("nats_max_control_line", MAX_CONTROL_LINE),
        host=host or params.get("host_name") or hostname(),
        creds=creds,
        nkey=nkey,
        user=user if password else None,
        password=password or None,
        token=token or None,
        tls_ca=tls_ca,
        tls_cert=tls_cert,
        tls_key=tls_key,
        tls_first=tls_first,
        tls_required=bool(
            tls_first or tls_ca or tls_cert or any(u.startswith("tls://") for u in found)
        ),
    )
    logs.secret(*made.secrets())
    return made


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _url_user(url: str) -> str | None:
    """The user an address names without its password (``nats://alice@bus``)."""
    from urllib.parse import unquote

    found = _userinfo(url)
    if found is None or ":" in found[1]:
        return None
    return unquote(found[1]) or None


def _read(path: str | None, option: str) -> str | None:
    """A password or token file's content, without its final newline."""
    if not path:
        return None
    try:
        value = Path(path).read_text(encoding="utf-8").rstrip("\r\n")
    except (OSError, UnicodeDecodeError) as exc:
        raise click.UsageError(f"{option} {path}: cannot read ({exc})") from None
    if not value:
        raise click.UsageError(f"{option} {path} is empty")
    return value


def _context(name: str | None) -> dict[str, Any]:
    """A nats CLI context: ``NAME`` under $XDG_CONFIG_HOME/nats/context (default
    ~/.config), or a path to one."""
    if not name:
        return {}
    import json

    if os.sep in name or name.endswith(".json"):
        where = Path(name).expanduser()
    else:
        home = os.environ.get("XDG_CONFIG_HOME") or os.path.expanduser("~/.config")
        where = Path(home) / "nats" / "context" / f"{name}.json"
    try:
        found = json.loads(where.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise click.UsageError(f"NATS context {str(where)!r}: cannot read ({exc})") from None
    if not isinstance(found, dict):
        raise click.UsageError(f"NATS context {str(where)!r} is not a JSON object")
    return found


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
