"""The command-line side of the fleet stream: publishing a converted file, and
reading the stream back. The options and the stream's configuration are in
:mod:`translator.fleet.bus` (light: every command imports it; this module brings
asyncio and nats-py, and is imported only to publish or subscribe). The protocol
itself is in :mod:`translator.fleet.messages` (subjects, ids),
:mod:`translator.fleet.connection` (connecting, the stream) and
:mod:`translator.fleet.jetstream` (once-only sending); docs/fleet.md is the
operator's guide."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any, TypeVar

import orjson

from streamv1.translator import logs
from streamv1.translator.exits import Interrupted
from streamv1.translator.fleet import connection, jetstream, messages, received
from streamv1.translator.fleet.bus import ACK_WINDOW, FETCH, BusConfig, BusError

log = logs.get()

__all__ = ["BusConfig", "BusError", "publish_file", "subscribe"]

#: Lines read from a converted file per send (bounded memory for any archive).
FILE_BATCH = 5000

T = TypeVar("T")

#: Seconds a signalled subscribe may take to end by itself before it is ended hard
#: (:func:`_stop_within`): far past its own way out (within 2 s: what a fetch
#: brought is written and acked first, the connection closes in at most 2 s), so
#: it is only the last resort.
STOP_WITHIN = 10.0
_DEADLINES: list[threading.Timer] = []


def _stop_within(seconds: float, signum: int) -> None:
    """The last guarantee that a signal ends the command: if the process is still
    there ``seconds`` after the first signal (a wait no signal reaches: CI twice saw
    subscribe, sent SIGINT in its first 0.3 s, never end, and 200 tries here under
    load could not make it again), stdout and stderr are flushed and it exits with
    the signal's status, saying where it was. Nothing printed is lost: subscribe writes each line
    before it acks it, and lines not acked come again (as after a SIGKILL)."""
    if _DEADLINES:
        return
    main = threading.main_thread().ident

    def end() -> None:
        frame = sys._current_frames().get(main) if main is not None else None
        where = f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame else "?"
        with contextlib.suppress(Exception):
            sys.stdout.flush()
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        with contextlib.suppress(OSError):
            os.write(
                2,
                f"streamv1: warning: signal {signum} did not end the command in "
                f"{seconds:g} s; stopped hard (it was at {where})\n".encode(),
            )
        os._exit(128 + signum)

    timer = threading.Timer(seconds, end)
    timer.daemon = True
    _DEADLINES.append(timer)
    timer.start()


def _run_noting_signals(
    work: Callable[[list[int]], Awaitable[T]],
    *,
    cancel: bool | Callable[[], bool] = False,
    stop_within: float | None = None,
) -> T:
    """Run ``work(stopped)`` in an event loop where SIGINT and SIGTERM are noted in
    ``stopped`` (the work ends itself at its next step, raising Interrupted) from
    before anything else runs in the loop. An exception raised by a signal handler
    inside the loop lands in whichever callback is running, a nats reader task's
    say, and is lost: the command then never ends. CI stop 30: subscribe sent
    SIGINT 0.1 s after start, while it connected, hung in 4 of 5 tries.

    ``cancel``: a signal also cancels the work where it waits (Interrupted), for
    work whose waits may last (a publish retrying while the bus is down ignored
    Ctrl-C and SIGTERM for good); a callable says whether to, at the signal.
    ``stop_within``: seconds after a signal the process is ended hard if it is still
    there (:func:`_stop_within`)."""

    stopped: list[int] = []

    def noted(signum: int, _frame: Any) -> None:
        stopped.append(signum)
        if stop_within is not None:
            _stop_within(stop_within, signum)

    # Noted from before the loop starts: asyncio.run would otherwise put its own
    # SIGINT handler first, which cancels the main task; a cancel thrown into
    # nats-py's connect was swallowed there (a CI run: subscribe, SIGINT at start
    # under load, never ended), and the signal was lost.
    before: dict[int, Any] = {}
    for signum in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(ValueError):  # (not the main thread)
            before[signum] = signal.signal(signum, noted)

    async def main() -> T:
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()

        def note(signum: int) -> None:
            stopped.append(signum)
            if stop_within is not None:
                _stop_within(stop_within, signum)
            if task is not None and (cancel() if callable(cancel) else cancel):
                task.cancel()

        for signum in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, note, signum)
        try:
            if stopped:  # a signal before the loop's handlers were there
                raise Interrupted(stopped[0])
            return await work(stopped)
        except asyncio.CancelledError:
            if stopped:
                raise Interrupted(stopped[0]) from None
            raise
        finally:
            for signum in (signal.SIGINT, signal.SIGTERM):
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(signum)

    try:
        return asyncio.run(main())
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


# -- convert --publish ---------------------------------------------------------------------


def publish_file(path: Path, bus: BusConfig, source: str | None = None) -> dict[str, int]:
    """Send every line of a converted file; a line the stream holds already is not
    stored again (by id inside the duplicate window, by each subject's last message
    beyond it), and one the server can never take is said and stepped over
    (``too_large``). Returns the counts. ``source``: the file named when a line is
    stepped over (``path`` itself by default)."""
    # A signal cancels the publish where it waits (what was sent is stored; a second
    # run sends the rest): its waits may last, a retry while the bus is down.
    named = str(path) if source is None else source
    return _run_noting_signals(lambda _: _publish_file(path, bus, named), cancel=True)


async def _publish_file(path: Path, bus: BusConfig, source: str) -> dict[str, int]:
    nc = await connection.connect(bus, messages.client_name("convert", bus.host), wait=False)
    try:
        js = nc.jetstream()
        await _bounded(connection.ensure_stream(js, bus))
        sender = jetstream.Sender(js, bus, on_retry=_said_once(), nc=nc, source=source or None)
        # First pass: the sessions in the file, and the ids their subjects hold
        # already, so a second run stores nothing twice however long after the
        # first (a session that grew since sends only the lines it did not have).
        # (An empty stream holds none: no pass.)
        held: dict[str, set[str]] = {}
        if await _bounded(_holds_any(js, bus)):
            with path.open("rb") as f:
                for raw in f:
                    if raw.strip() and (subject := messages.subject_of(bus, raw)) not in held:
                        held[subject] = await _bounded(sender.stored_ids(subject), 120.0)
        lines = skipped = 0
        batch: list[messages.Line] = []
        for _, line in _numbered(path, bus):
            lines += 1
            ids = held.setdefault(line.subject, set())
            if line.msg_id in ids:
                skipped += 1
                continue
            # Remembered once sent: a line the file holds twice (one session's lines
            # in two input files), its copies sends apart, was stored twice when they
            # were further apart than the server's duplicate window (#39).
            ids.add(line.msg_id)
            batch.append(line)
            if len(batch) >= FILE_BATCH:
                await sender.send(batch, fresh=False)
                batch = []
        await sender.send(batch, fresh=False)
        return {
            "published": sender.stored,
            "already_stored": skipped + sender.duplicates + sender.skipped + sender.repeated,
            "too_large": sender.too_large,
            "lines": lines,
        }
    finally:
        with contextlib.suppress(Exception):
            await asyncio.wait_for(nc.close(), 2)


async def _holds_any(js: Any, bus: BusConfig) -> bool:
    """Does the stream hold any message at all (else no line of the file)?"""
    return bool((await js.stream_info(bus.stream)).state.messages)


def _numbered(path: Path, bus: BusConfig) -> Iterator[tuple[int, messages.Line]]:
    with path.open("rb") as f:
        for number, raw in enumerate(f):
            data = raw.rstrip(b"\n")
            if data:
                yield number, messages.line_for(bus, data)


async def _bounded(work: Any, seconds: float = 20.0) -> Any:
    """A one-shot command does not wait for ever on a stream that never answers."""
    try:
        return await asyncio.wait_for(work, seconds)
    except TimeoutError as exc:
        raise BusError(f"no answer from JetStream in {seconds:.0f} s") from exc
    except BusError:
        raise
    except Exception as exc:
        raise BusError(connection.reason_of(exc)) from exc


def _said_once() -> Callable[[str], None]:
    said: list[str] = []

    def say(reason: str) -> None:
        if not said:
            said.append(reason)
            log.warning("bus not answering; retrying", reason=reason)

    return say


# -- subscribe --from nats:// -----------------------------------------------------------------


#: How long a durable consumer holding unacked lines must show no reader at work
#: (no pull request waiting, nothing delivered or acked) before those lines are
#: taken for a dead subscriber's and delivered again (:func:`_take_back`).
QUIET = 2.0
#: How long to look for that quiet at most: a killed subscriber's last pull request
#: waits out its expiry (the fetch timeout, 1 s) before it is gone.
QUIET_LIMIT = QUIET + 2.0
#: How often the consumer is looked at meanwhile.
LOOK = 0.25
#: The first nats-server with $JS.API.CONSUMER.RESET (ADR-60).
RESET_SINCE = (2, 14)


def subscribe(
    bus: BusConfig,
    out: IO[bytes],
    *,
    host: str | None,
    session: str | None,
    durable: str | None,
    since: datetime | None,
    catch_up: bool,
    ack_window: int = ACK_WINDOW,
) -> int:
    """Print the stream's lines (a pull consumer, each acked after it is written).
    Returns how many were written."""
    # Until the fetches begin, a signal cancels what it waits for (the connect,
    # which nats-py retries for ever once a first try has failed, and the consumer's
    # creation): nothing is printed or acked yet. From the first fetch on, the loop
    # ends between two fetches, so nothing fetched is left unacked.
    connecting = [True]
    asked = _Asked(host, session, durable, since, catch_up, ack_window)
    return _run_noting_signals(
        lambda stopped: _subscribe(bus, out, asked, stopped, connecting),
        cancel=lambda: connecting[0],
        stop_within=STOP_WITHIN,
    )


@dataclass(frozen=True, slots=True)
class _Asked:
    """What :func:`subscribe` was asked to read, handed whole to its loop."""

    host: str | None
    session: str | None
    durable: str | None
    since: datetime | None
    catch_up: bool
    ack_window: int


async def _subscribe(
    bus: BusConfig, out: IO[bytes], asked: _Asked, stopped: list[int], connecting: list[bool]
) -> int:
    from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

    nc = await connection.connect(bus, "streamv1-subscribe", wait=False)
    written = 0
    # Only what is one stream_v1 line of its subject's host and session is printed,
    # encoded again (received: the bus holds what anyone allowed to publish sent).
    reader = received.Reader(bus, live=not asked.catch_up)
    # Ctrl-C and SIGTERM end the loop between two fetches, never inside one: what a
    # fetch brought is written and acked first, so no line is printed twice and none
    # is left fetched but unacked (#23 item 12: raised from a signal handler inside
    # the event loop, the interrupt was lost in 8 of 10 tries, then hung for good).
    try:
        js = nc.jetstream()
        subject = bus.filter(asked.host, asked.session)
        cfg = ConsumerConfig(
            ack_policy=AckPolicy.EXPLICIT,
            deliver_policy=DeliverPolicy.BY_START_TIME if asked.since else DeliverPolicy.ALL,
            opt_start_time=asked.since.astimezone(UTC) if asked.since else None,
            filter_subject=subject,
            inactive_threshold=None if asked.durable else 300.0,
        )
        sub = await _bounded(
            js.pull_subscribe(subject, durable=asked.durable, stream=bus.stream, config=cfg)
        )
        if asked.durable:
            await _take_back(nc, sub, bus, asked.durable, stopped)
        said_held = False
        connecting[0] = False  # from here a signal ends the loop between two fetches
        while not stopped:
            try:
                msgs = await sub.fetch(FETCH, timeout=1.0)
            except TimeoutError:  # nats' own, or asyncio's: fetch raises both (#23)
                msgs = []
            window: list[Any] = []  # written, acked, the ack not yet confirmed
            for i, msg in enumerate(msgs):
                try:
                    line = reader.line(msg.subject, msg.headers, msg.data)
                except received.Refused as refused:
                    # Counted and acked, never printed (nor fetched again).
                    reader.refuse(refused.kind, _stream_seq(msg))
                else:
                    out.write(line)
                    out.flush()  # written before it is acked: nothing acked is unprinted
                    written += 1
                window.append(msg)
                if len(window) >= asked.ack_window or i == len(msgs) - 1:
                    await _confirm(nc, window, stopped)
                    window = []
                else:
                    await msg.ack()
            if asked.catch_up and (not msgs or msgs[-1].metadata.num_pending == 0):
                # Done only when nothing is held either: lines another subscriber
                # fetched and never acked are part of what the stream holds (#23
                # item 12: they were left out, with exit 0).
                info = await _bounded(sub.consumer_info())
                if info.num_pending == 0 and not info.num_ack_pending:
                    return written
                if info.num_ack_pending and not said_held:
                    said_held = True
                    log.warning(
                        "waiting for lines another subscriber holds (fetched, not acked): "
                        "they come when it acks them, or after their ack wait",
                        durable=asked.durable,
                        lines=info.num_ack_pending,
                        ack_wait_s=_seconds(info.config.ack_wait),
                    )
        raise Interrupted(stopped[0])
    finally:
        reader.report()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(nc.close(), 2)


def _stream_seq(msg: Any) -> int | None:
    """A fetched message's place in the stream (what the server knows it by)."""
    try:
        return int(msg.metadata.sequence.stream)
    except Exception:  # (not a JetStream message: no metadata)
        return None


async def _confirm(nc: Any, window: list[Any], stopped: list[int]) -> None:
    """Ack the window's last line and wait for the server to confirm it: acks are
    handled in order, so every ack sent before it is done too. A kill then leaves
    at most the lines written since the last confirmation printed but not acked
    (at most the window, printed again by the next run). Before, acks sat in the
    client's buffer until the batch was done: a kill mid-batch printed up to 255
    lines twice. A failed try sends the window's acks again (an ack is idempotent)
    in case the connection dropped them. The server does not answer an ack for a
    line someone else has reset the consumer past, so while connected three
    unanswered tries end it; while disconnected the server is waited for."""
    delay, tries = 0.1, 0
    while True:
        try:
            await window[-1].ack_sync(timeout=jetstream.ACK_WAIT)
            return
        except Exception as exc:
            tries += 1
            if stopped or (tries >= 3 and nc.is_connected):
                log.warning(
                    "ack not confirmed: these lines may be printed again by the next run",
                    reason=connection.reason_of(exc),
                    lines=len(window),
                )
                return
            await asyncio.sleep(delay)
            delay = min(delay * 2, connection.RETRY_MAX)
            for msg in window[:-1]:
                with contextlib.suppress(Exception):
                    await msg.ack()


def _activity(info: Any) -> tuple[object, ...]:
    """What changes when any reader of a consumer is at work: a delivery, an ack.
    (Not num_pending: that grows with the stream, whoever reads.)"""
    delivered, floor = info.delivered, info.ack_floor
    return (
        delivered and delivered.stream_seq,
        delivered and delivered.consumer_seq,
        floor and floor.stream_seq,
        info.num_ack_pending,
    )


async def _take_back(nc: Any, sub: Any, bus: BusConfig, durable: str, stopped: list[int]) -> None:
    """Deliver again, first and in order, the lines a dead subscriber of this durable
    fetched and never acked. The server holds them until their ack wait ends (30 s
    by default) and meanwhile a fetch brings newer lines: #23 item 12, where
    ``--catch-up`` exited 0 without 253 of them and they came 30 s later, after the
    lines that follow them. The consumer is reset to its ack floor ($JS.API.CONSUMER
    .RESET, nats-server 2.14, ADR-60), which keeps its config and name.

    Only when no other reader is at work on it for QUIET seconds: a durable shared by
    several subscribers (work-queue style) is left alone, since a reset would hand
    a live reader's held lines to this one too. Those come after their ack wait,
    and ``--catch-up`` waits for them."""
    info = await _bounded(sub.consumer_info())
    held = info.num_ack_pending or 0
    if not held:
        return
    loop = asyncio.get_running_loop()
    start = quiet = loop.time()
    last = _activity(info)
    while loop.time() - quiet < QUIET:
        if stopped:
            return
        if loop.time() - start > QUIET_LIMIT:
            log.warning(
                "lines held (fetched, not acked) by another subscriber that is still "
                "reading; left to it (they come here after their ack wait if it dies)",
                durable=durable,
                lines=held,
            )
            return
        await asyncio.sleep(LOOK)
        info = await _bounded(sub.consumer_info())
        if not info.num_ack_pending:
            return  # acked, or delivered again after their ack wait: nothing held
        now = _activity(info)
        if info.num_waiting or now != last:
            quiet, last = loop.time(), now
    held = info.num_ack_pending
    try:
        version = nc.connected_server_version
        old = (version.major, version.minor) < RESET_SINCE
    except (ValueError, TypeError):
        old = True
    if old:
        log.warning(
            "lines a stopped subscriber fetched and never acked come after their ack "
            "wait, after newer lines: this nats-server cannot reset a consumer (2.14 can)",
            durable=durable,
            lines=held,
        )
        return
    try:
        reply = await nc.request(f"$JS.API.CONSUMER.RESET.{bus.stream}.{durable}", b"", timeout=5.0)
        answer = orjson.loads(reply.data)
    except Exception as exc:
        log.warning(
            "consumer reset refused; the lines a stopped subscriber held come after their ack wait",
            durable=durable,
            lines=held,
            reason=connection.reason_of(exc),
        )
        return
    if not isinstance(answer, dict) or answer.get("error"):
        error = answer.get("error") if isinstance(answer, dict) else answer
        log.warning(
            "consumer reset refused; the lines a stopped subscriber held come after their ack wait",
            durable=durable,
            lines=held,
            reason=str(error),
        )
        return
    log.info(
        "lines a stopped subscriber fetched and never acked: delivered again "
        "first (consumer reset to its ack floor)",
        durable=durable,
        lines=held,
        from_seq=answer.get("reset_seq"),
    )


def _seconds(value: object) -> str:
    return f"{value:g}" if isinstance(value, (int, float)) else "?"
