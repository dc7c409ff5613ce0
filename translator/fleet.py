"""The command-line side of the fleet stream: the NATS options shared by ``tail``,
``convert`` and ``subscribe``, publishing a converted file, and reading the stream
back. The protocol itself (subjects, ids, once-only sending) is in
:mod:`translator.jetstream`; docs/fleet.md is the operator's guide."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import click

from streamv1.translator import jetstream, logs
from streamv1.translator.jetstream import BusConfig, BusError
from streamv1.translator.pipeline import Interrupted

__all__ = ["BusConfig", "BusError", "bus_options", "config", "publish_file", "subscribe"]

#: Lines read from a converted file per send (bounded memory for any archive).
FILE_BATCH = 5000


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
        opts = [
            click.option("--nats-creds", type=click.Path(dir_okay=False, exists=True),
                         help="NATS credentials file (JWT and seed) for this host."),
            click.option("--nats-tls-ca", type=click.Path(dir_okay=False, exists=True),
                         help="CA certificate(s) that sign the servers' certificates."),
            click.option("--nats-tls-cert", type=click.Path(dir_okay=False, exists=True),
                         help="Client certificate, for servers that verify clients."),
            click.option("--nats-tls-key", type=click.Path(dir_okay=False, exists=True),
                         help="The client certificate's key."),
            click.option("--nats-stream", default="STREAMV1", show_default=True,
                         help="JetStream stream name."),
            click.option("--nats-prefix", default="streamv1", show_default=True,
                         help="Subject prefix: subjects are PREFIX.<host>.<session_id>."),
        ]
        if publishing:
            opts += [
                click.option("--host", "host_name", metavar="NAME",
                             default=socket.gethostname(), show_default="this host's name",
                             help="The name this machine publishes as (its subjects' "
                             "second token)."),
                click.option("--nats-replicas", type=click.IntRange(1, 5), default=1,
                             show_default=True, help="Replicas, when the stream is made."),
                click.option("--nats-max-age", type=float, default=0.0, metavar="SECONDS",
                             help="Age limit, when the stream is made (default: none)."),
                click.option("--nats-max-bytes", type=int, default=-1, metavar="BYTES",
                             help="Size limit, when the stream is made (default: none)."),
                click.option("--nats-duplicate-window", type=float, default=600.0,
                             show_default=True, metavar="SECONDS",
                             help="How long the server remembers message ids, when the "
                             "stream is made."),
            ]
        for opt in reversed(opts):
            command = opt(command)
        return command

    return add


def config(urls: str, params: dict[str, Any], host: str | None = None) -> BusConfig:
    """The BusConfig from a command's parameters (bus_options' names)."""
    if params.get("nats_tls_key") and not params.get("nats_tls_cert"):
        raise click.UsageError("--nats-tls-key needs --nats-tls-cert")
    return BusConfig(
        servers=servers(urls),
        stream=params["nats_stream"],
        prefix=params["nats_prefix"],
        replicas=params.get("nats_replicas", 1),
        max_age=params.get("nats_max_age", 0.0),
        max_bytes=params.get("nats_max_bytes", -1),
        duplicate_window=params.get("nats_duplicate_window", 600.0),
        host=host or params.get("host_name") or socket.gethostname(),
        creds=params.get("nats_creds"),
        tls_ca=params.get("nats_tls_ca"),
        tls_cert=params.get("nats_tls_cert"),
        tls_key=params.get("nats_tls_key"),
    )


def check_token(name: str, value: str) -> None:
    if not value or value != value.strip():
        raise click.UsageError(f"{name} must be a non-empty name without surrounding spaces")


# -- convert --publish ---------------------------------------------------------------------


def publish_file(path: Path, bus: BusConfig) -> dict[str, int]:
    """Send every line of a converted file; a line the stream holds already is not
    stored again (by id inside the duplicate window, by each subject's last message
    beyond it). Returns the counts."""
    return asyncio.run(_publish_file(path, bus))


async def _publish_file(path: Path, bus: BusConfig) -> dict[str, int]:
    nc = await jetstream.connect(bus, f"streamv1-convert@{bus.host}", wait=False)
    try:
        js = nc.jetstream()
        await _bounded(jetstream.ensure_stream(js, bus))
        sender = jetstream.Sender(js, bus, on_retry=_said_once())
        # First pass: the sessions in the file, and the ids their subjects hold
        # already, so a second run stores nothing twice however long after the
        # first (a session that grew since sends only the lines it did not have).
        held: dict[str, set[str]] = {}
        for _, line in _numbered(path, bus):
            if line.subject not in held:
                held[line.subject] = await _bounded(sender.stored_ids(line.subject), 120.0)
        lines = skipped = 0
        batch: list[jetstream.Line] = []
        for _, line in _numbered(path, bus):
            lines += 1
            if line.msg_id in held[line.subject]:
                skipped += 1
                continue
            batch.append(line)
            if len(batch) >= FILE_BATCH:
                await sender.send(batch, fresh=False)
                batch = []
        await sender.send(batch, fresh=False)
        return {"published": sender.stored,
                "already_stored": skipped + sender.duplicates + sender.skipped,
                "too_large": sender.too_large, "lines": lines}
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(nc.close(), 2)


def _numbered(path: Path, bus: BusConfig) -> Iterator[tuple[int, jetstream.Line]]:
    with path.open("rb") as f:
        for number, raw in enumerate(f):
            data = raw.rstrip(b"\n")
            if data:
                yield number, jetstream.line_for(bus, data)


async def _bounded(work: Any, seconds: float = 20.0) -> Any:
    """A one-shot command does not wait for ever on a stream that never answers."""
    try:
        return await asyncio.wait_for(work, seconds)
    except TimeoutError as exc:
        raise BusError(f"no answer from JetStream in {seconds:.0f} s") from exc
    except BusError:
        raise
    except Exception as exc:
        raise BusError(jetstream._reason(exc)) from exc


def _said_once() -> Callable[[str], None]:
    said: list[str] = []

    def say(reason: str) -> None:
        if not said:
            said.append(reason)
            logs.get().warning(f"bus not answering ({reason}); retrying")

    return say


# -- subscribe --from nats:// -----------------------------------------------------------------


def subscribe(bus: BusConfig, out: IO[bytes], *, host: str | None, session: str | None,
              durable: str | None, since: datetime | None, catch_up: bool) -> int:
    """Print the stream's lines (a pull consumer, each acked after it is written).
    Returns how many were written."""
    return asyncio.run(_subscribe(bus, out, host, session, durable, since, catch_up))


async def _subscribe(bus: BusConfig, out: IO[bytes], host: str | None, session: str | None,
                     durable: str | None, since: datetime | None, catch_up: bool) -> int:
    from nats.errors import TimeoutError as NatsTimeout
    from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

    nc = await jetstream.connect(bus, "streamv1-subscribe", wait=False)
    written = 0
    # Ctrl-C and SIGTERM end the loop between two fetches, never inside one: what a
    # fetch brought is written and acked first, so no line is printed twice and none
    # is left fetched but unacked (#23 item 12: raised from a signal handler inside
    # the event loop, the interrupt was lost in 8 of 10 tries, then hung for good).
    stopped: list[int] = []
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(signum, stopped.append, signum)
    try:
        js = nc.jetstream()
        subject = bus.filter(host, session)
        cfg = ConsumerConfig(
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.BY_START_TIME if since else DeliverPolicy.ALL,
            opt_start_time=since.astimezone(UTC) if since else None,
            filter_subject=subject,
            inactive_threshold=None if durable else 300.0,
        )
        sub = await _bounded(js.pull_subscribe(subject, durable=durable, stream=bus.stream,
                                               config=cfg))
        while not stopped:
            try:
                msgs = await sub.fetch(256, timeout=1.0)
            except NatsTimeout:
                msgs = []
            for msg in msgs:
                out.write(msg.data + b"\n")
                out.flush()  # written before it is acked: nothing acked is unprinted
                await msg.ack()
                written += 1
            if catch_up:
                if msgs and msgs[-1].metadata.num_pending == 0:
                    return written
                if not msgs:
                    info = await _bounded(sub.consumer_info())
                    if info.num_pending == 0 and info.num_ack_pending == 0:
                        return written
        raise Interrupted(stopped[0])
    finally:
        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.remove_signal_handler(signum)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(nc.close(), 2)


def parse_since(value: str | None) -> datetime | None:
    """An RFC 3339 time, or a duration back from now (``90s``, ``15m``, ``2h``, ``7d``)."""
    if value is None:
        return None
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    if value[-1:] in units and value[:-1].replace(".", "", 1).isdigit():
        from datetime import timedelta

        return datetime.now(UTC) - timedelta(seconds=float(value[:-1]) *
                                                      units[value[-1]])
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError as exc:
        raise click.UsageError(f"--since {value!r}: an RFC 3339 time or a duration like "
                               "15m, 2h, 7d") from exc
    return when if when.tzinfo else when.replace(tzinfo=UTC)


def publish_state(state: Path) -> Path:
    """The publisher's checkpoint beside the daemon's."""
    return state.with_name(state.name + ".publish.json")


def temp_output() -> Path:
    """Where ``convert --publish`` without ``-o`` puts the lines it sends."""
    import tempfile

    fd, name = tempfile.mkstemp(prefix="streamv1-publish-", suffix=".jsonl")
    os.close(fd)
    return Path(name)
