"""Reaching the fleet's NATS server: the connection, the stream, and the waits.

A connection reconnects for ever once made; a first one is waited for (the daemon's
publisher) or refused at once (``subscribe``, ``convert --publish``). The stream is
made when missing (:func:`ensure_stream`). A server that is down, electing a leader
or coming up is waited out (:func:`retrying`); what waiting does not mend
(:func:`refused_for_good`: permissions, a stream that is not ours) ends as a
:class:`BusError`.

Apart from the sending (:mod:`translator.fleet.jetstream`): these know the server,
not the lines.
"""

from __future__ import annotations

import asyncio
import functools
import ssl
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from streamv1.translator import logs
from streamv1.translator.fleet.bus import BusConfig, BusError

log = logs.get()

T = TypeVar("T")

#: How long to wait between tries while the server is unreachable (doubling to this).
RETRY_MAX = 5.0


def _tls(config: BusConfig) -> ssl.SSLContext | None:
    if not config.tls_required:
        return None
    context = ssl.create_default_context(cafile=config.tls_ca)
    if config.tls_cert:
        context.load_cert_chain(config.tls_cert, config.tls_key)
    return context


def _client(config: BusConfig) -> Any:
    """A nats-py client; one that refuses to say anything in clear text where TLS
    was asked for (:func:`_tls_only`)."""
    from nats.aio.client import Client

    return _tls_only()() if config.tls_required else Client()


@functools.cache
def _tls_only() -> type:
    """nats-py's client, but TLS or nothing. nats-py moves to TLS only when the
    server's INFO says ``tls_required``: a server (or someone in the middle) that
    leaves it out got the CONNECT, password included, and every line in clear text
    (#39; the Go client refuses with ErrSecureConnWanted). So: a server offering TLS
    as an option (``tls_available``) is taken up on it, one offering none is
    refused, and CONNECT, the first thing a client writes, is never written on a
    socket that is not TLS. Two of nats-py's own steps are wrapped; should a
    release rename them, no connection asked to use TLS is made at all."""
    from nats.aio.client import Client
    from nats.aio.transport import TcpTransport
    from nats.errors import SecureConnWantedError

    if not all(callable(getattr(Client, name, None)) for name in _WRAPPED):
        raise BusError(
            "this nats-py cannot be made to refuse a server without TLS; TLS was asked "
            "for, so nothing is sent (pip install 'nats-py>=2.7,<3')"
        )

    class NoTLS(SecureConnWantedError):
        def __init__(self, url: str) -> None:
            super().__init__()
            self.url = url

        def __str__(self) -> str:
            return (
                f"nats: {self.url} offers no TLS, and TLS was asked for: nothing sent "
                "(not even the credentials)"
            )

    class TLSOnly(Client):
        def _where(self) -> str:
            uri = self._current_server.uri if self._current_server else None
            return f"{uri.hostname}:{uri.port}" if uri is not None else "the server"

        async def _process_info(
            self, info: dict[str, Any], initial_connection: bool = False
        ) -> None:
            if initial_connection and not info.get("tls_required"):
                # (the INFO before CONNECT; with handshake-first, the socket is TLS already)
                if not (info.get("tls_available") or self.options.get("tls_handshake_first")):
                    raise NoTLS(self._where())
                info["tls_required"] = True  # nats-py upgrades when, and only when, told
            await super()._process_info(info, initial_connection)

        def _connect_command(self) -> bytes:
            transport = self._transport
            writer = getattr(transport, "_io_writer", None)
            if not (
                isinstance(transport, TcpTransport)
                and writer is not None
                and writer.get_extra_info("ssl_object") is not None
            ):
                raise NoTLS(self._where())
            command: bytes = super()._connect_command()
            return command

    return TLSOnly


#: nats-py's steps :func:`_tls_only` wraps.
_WRAPPED = ("_process_info", "_connect_command", "_process_connect_init")


async def connect(
    config: BusConfig,
    name: str,
    *,
    wait: bool = True,
    on_state: Callable[[str], None] | None = None,
) -> Any:
    """A connection that reconnects for ever. With ``wait``, a server that is down at
    start is waited for (the daemon's publisher); without, the error is raised
    (``subscribe`` and ``convert`` tell their user at once)."""
    logs.secret(*config.secrets())  # (a process of its own, the publisher, comes here)

    async def disconnected() -> None:
        if on_state is not None:
            on_state("disconnected")

    async def reconnected() -> None:
        if on_state is not None:
            on_state("connected")

    seen: set[str] = set()

    async def error(exc: Exception) -> None:
        # A permissions violation comes this way, not as a failed publish (that one
        # only times out and is retried): say each kind once, loudly.
        text = reason_of(exc)
        if text not in seen and len(seen) < 100:
            seen.add(text)
            log.warning("nats error", reason=text)

    last: list[BaseException] = []

    async def quiet(exc: Exception) -> None:
        last[:] = [exc]

    delay = 0.2
    while True:
        try:
            if not wait:
                # nats-py retries a first connect for ever when reconnecting is on:
                # one try without it says at once whether anything answers.
                probe = _client(config)
                await probe.connect(
                    **_credentials(config),
                    name=name,
                    allow_reconnect=False,
                    connect_timeout=2,
                    max_reconnect_attempts=1,
                    reconnect_time_wait=0.2,
                    error_cb=quiet,
                )
                await probe.close()
            nc = _client(config)
            await nc.connect(
                **_credentials(config),
                name=name,
                max_reconnect_attempts=-1,
                reconnect_time_wait=1,
                connect_timeout=2,
                allow_reconnect=True,
                disconnected_cb=disconnected,
                reconnected_cb=reconnected,
                error_cb=error,
            )
            return nc
        except BusError:
            raise
        except Exception as exc:
            if not wait or _permanent(exc):
                cause = last[0] if last else exc
                raise BusError(f"cannot connect to {config.shown()}: {reason_of(cause)}") from exc
            if on_state is not None:
                on_state("disconnected")
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)


def _credentials(config: BusConfig) -> dict[str, Any]:
    """nats-py's connect arguments for where and as whom."""
    return {
        "servers": list(config.servers),
        "tls": _tls(config),
        "tls_handshake_first": config.tls_first,
        "user_credentials": config.creds,
        "nkeys_seed": config.nkey,
        "user": config.user,
        "password": config.password,
        "token": config.token,
    }


def _permanent(exc: BaseException) -> bool:
    """A TLS or credentials file that cannot be read does not get better by waiting."""
    return isinstance(exc, (FileNotFoundError, PermissionError, ssl.SSLError))


def reason_of(exc: BaseException) -> str:
    text = str(exc) or type(exc).__name__
    return text.splitlines()[0] if text else type(exc).__name__


async def ensure_stream(js: Any, config: BusConfig) -> None:
    """Make the stream if missing; an existing one is used as it is (its limits are
    the operator's), but a stream that does not take our subjects is an error."""
    from nats.js.api import StorageType, StreamConfig
    from nats.js.errors import APIError, NotFoundError

    wanted = f"{config.prefix}.>"
    try:
        info = await js.stream_info(config.stream)
    except NotFoundError:
        made = StreamConfig(
            name=config.stream,
            subjects=[wanted],
            storage=StorageType.FILE,
            num_replicas=config.replicas,
            max_age=config.max_age or None,
            max_bytes=config.max_bytes,
            duplicate_window=config.duplicate_window,
            allow_atomic=True,
        )  # many lines a round trip (:meth:`Sender._batch`)
        try:
            await js.add_stream(made)
        except APIError as exc:
            if (getattr(exc, "code", None) or 0) != 400:
                raise
            # A server before 2.12 may refuse the field it does not know: the stream
            # without it (one line a round trip).
            made.allow_atomic = None
            await js.add_stream(made)
        log.info("stream made", stream=config.stream, subjects=wanted, replicas=config.replicas)
        return
    subjects = info.config.subjects or []
    if wanted not in subjects and not any(s in (">",) for s in subjects):
        raise BusError(
            f"stream {config.stream} takes {', '.join(subjects) or 'no subjects'}, not {wanted}"
        )


async def retrying(
    call: Callable[[], Awaitable[T]],
    on_retry: Callable[[str], None] | None,
    refused: Callable[[BaseException], bool] | None = None,
    what: str = "",
    first: float = 0.1,
) -> T:
    """``call()`` until it answers, waiting longer each time (to RETRY_MAX): a server
    that is down, electing a leader or coming up is waited out. An error ``refused``
    says waiting will not mend (by default :func:`refused_for_good`) ends it as a BusError."""
    delay = first
    while True:
        try:
            return await call()
        except BusError:
            raise
        except Exception as exc:
            if (refused or refused_for_good)(exc):
                raise BusError(f"{what}{reason_of(exc)}") from exc
            if on_retry is not None:
                on_retry(reason_of(exc))
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)


def refused_for_good(exc: BaseException) -> bool:
    """Errors that waiting does not mend: permissions, a stream that is not there or
    not ours (everything else, a timeout or a lost connection, is waited out)."""
    from nats.js.errors import APIError, NoStreamResponseError

    if isinstance(exc, NoStreamResponseError):
        return False  # no stream answers: a cluster electing a leader, or the server coming up
    if isinstance(exc, APIError):  # 503 (no leader yet) and the like are waited out
        return (getattr(exc, "code", None) or 0) in (400, 403, 404)
    return False
