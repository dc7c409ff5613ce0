"""The tail daemon's output, sent on to NATS JetStream (``tail --publish``).

The publisher reads the daemon's own ``--output`` file, never the daemon's memory,
and only up to the length the daemon has checkpointed: those bytes are never cut
back, so a line once sent is a line the output keeps. It has its own checkpoint
(``<state>.publish.json``: the output's inode and an offset), advanced only after
the server has acked every line before it. So:

- the daemon never waits for the bus: it only tells the publisher, after each of
  its checkpoints, how long the output is (``committed``);
- while the bus is down the output file is the buffer (hours or days), and catching
  up reads it a batch at a time, so memory stays bounded;
- after a crash the lines since the publisher's checkpoint go again, and the server
  drops them by their ``Nats-Msg-Id`` (see :mod:`translator.fleet.jetstream` for the
  check that covers an outage longer than the duplicate window).

It runs on a thread of its own with its own event loop, in a process of its own
(:mod:`translator.tail.publisher_process`): sending costs about as much CPU a line
as the daemon's conversion, and on one interpreter the two took turns.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from streamv1.translator import logs
from streamv1.translator.fleet import bus, connection, jetstream, messages
from streamv1.translator.reading.files import read_regular
from streamv1.translator.reading.lines import MAX_LINE_BYTES, LineSplitter, line_too_long

#: Most lines, and bytes, read and sent as one batch (the unit of the checkpoint;
#: each subject's share goes in atomic batches, translator.fleet.jetstream). 1,000 before
#: #26: a checkpoint (fsync) and a round trip every 1,000 lines.
BATCH_LINES = 10_000
BATCH_BYTES = 16 << 20
READ_BYTES = 1 << 20
VERSION = 1


class OutputPublisher:
    def __init__(
        self,
        output: Path,
        state: Path,
        config: bus.BusConfig,
        on_change: Callable[[], None] | None = None,
    ) -> None:
        """``on_change``: called (on the publisher's thread) when what
        :meth:`report` says has changed: connected or not, a batch checkpointed,
        publishing stopped for good."""
        self.output = output
        self.on_change = on_change
        self.state = state
        self.config = config
        self.log = logs.get()
        self._lock = threading.Lock()
        self._limits: dict[int, int] = {}  # output inode -> length the daemon vouches for
        self._current = 0  # the inode the daemon writes now
        #: inode -> a descriptor of that output file, from the daemon: a file renamed
        #: away (or deleted) before it was read to its end stays readable.
        self._given: dict[int, int] = {}
        self._held = False  # has it opened (or passed) a file since it started?
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake: asyncio.Event | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.connected = False
        self.sent_lines = 0
        self.too_large = 0  # lines the server can never take (jetstream.Sender), not sent
        self.offset = 0
        self.ino = 0
        self._before: bytes | None = None  # the bytes before the offset, when reached
        self.error: str | None = None  # set when publishing stopped for good

    # -- the daemon's side (its thread) ---------------------------------------------

    def committed(self, ino: int, length: int) -> None:
        """The daemon checkpointed: the output ``ino`` holds ``length`` bytes for good."""
        with self._lock:
            self._limits[ino] = length
            self._current = ino
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):  # the loop has ended
                loop.call_soon_threadsafe(wake.set)

    def given(self, ino: int, fd: int) -> None:
        """The output file ``ino`` itself, opened for reading by the daemon (the
        publisher's to close). Given before the ``committed`` that names it."""
        with self._lock:
            old = self._given.pop(ino, -1)
            self._given[ino] = fd
        if old >= 0:
            os.close(old)

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, name="publisher", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Finish the batch in hand (for up to ``timeout``), checkpoint, disconnect."""
        self._stop.set()
        loop, wake = self._loop, self._wake
        if loop is not None and wake is not None:
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(wake.set)
        if self._thread is not None:
            self._thread.join(timeout)

    @property
    def ended(self) -> bool:
        """Has its thread ended (stopped, or publishing stopped for good)?"""
        return self._thread is not None and not self._thread.is_alive()

    def status(self) -> dict[str, Any]:
        with self._lock:
            limits, current = dict(self._limits), self._current
        return status(self.report(), limits, current)

    def report(self) -> dict[str, Any]:
        """Where publishing stands, without what the daemon vouches for (the
        process that runs it adds that: :func:`status`)."""
        return {
            "connected": self.connected,
            "sent_lines": self.sent_lines,
            "too_large": self.too_large,
            "ino": self.ino,
            "offset": self.offset,
            "error": self.error,
        }

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()

    # -- the publisher's thread ------------------------------------------------------

    def _run(self) -> None:
        try:
            asyncio.run(self._main())
        except bus.BusError as exc:
            self.error = logs.conceal(str(exc))
            self.log.error("publishing stopped; the output file keeps every line", reason=str(exc))
        except Exception as exc:  # pragma: no cover - said, never a traceback
            self.error = logs.conceal(f"{type(exc).__name__}: {exc}")
            self.log.error(
                "publishing stopped; the output file keeps every line", reason=self.error
            )
        finally:
            self._changed()

    async def _main(self) -> None:
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._wake.set()

        def state(s: str) -> None:
            was, self.connected = self.connected, s == "connected"
            if was != self.connected:
                self.log.info("bus state", state=s, servers=self.config.shown())
                self._changed()

        nc = await self._until_stopped(
            connection.connect(
                self.config, messages.client_name("tail", self.config.host), on_state=state
            )
        )
        if nc is None:
            return
        state("connected")
        try:
            js = nc.jetstream()
            # A cluster still forming answers 400 (no peers yet): only a permissions
            # error stops the publisher here.
            await self._until_stopped(
                connection.retrying(
                    lambda: connection.ensure_stream(js, self.config),
                    self._retry_said,
                    refused=lambda exc: "permission" in str(exc).lower(),
                    first=0.2,
                )
            )
            sender = jetstream.Sender(
                js, self.config, on_retry=self._retry_said, nc=nc, source=str(self.output)
            )
            await self._follow(sender)
        finally:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(nc.close(), 2)

    async def _until_stopped(self, work: Any) -> Any:
        """``work``, unless a stop comes first (a daemon stopping with the bus down)."""
        task = asyncio.ensure_future(work)
        while not task.done():
            if self._stop.is_set():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
                return None
            await asyncio.wait({task}, timeout=0.1)
        return task.result()

    _last_said = 0.0

    def _retry_said(self, reason: str) -> None:
        now = time.monotonic()
        if now - self._last_said > 30:
            self._last_said = now
            self.log.warning(
                "bus not answering; the output file holds the lines until it does", reason=reason
            )

    async def _follow(self, sender: jetstream.Sender) -> None:
        assert self._wake is not None
        self.ino, self.offset = self._load()
        fd = -1
        fresh = True  # the first batch after a start: ask what each subject holds
        try:
            while not self._stop.is_set():
                with self._lock:
                    current, limit = self._current, self._limits.get(self.ino)
                    order = list(self._limits)  # the daemon's files, oldest first
                if not current:
                    await self._wait()
                    continue
                if fd < 0 or (self.ino != current and (limit is None or self.offset >= limit)):
                    fd = await self._open(fd, _next_file(order, self.ino, not self._held), current)
                    continue
                if limit is None or self.offset >= limit:
                    if limit is not None and self.offset > limit and self.ino == current:
                        self.log.warning(
                            "output is shorter than what was published from it "
                            "(cut by someone else); publishing from its start",
                            path=str(self.output),
                        )
                        self.offset = 0
                        continue
                    await self._wait()
                    continue
                if self.ino == current and not self._same_before(fd):
                    # Cut and written again since it was read to here (logrotate's
                    # copytruncate while the bus was down): the offset is inside
                    # other lines now. Read on from there and a fragment went out,
                    # and the rest never (#23 item 11: 180 of 420 lines). Every line
                    # of the file as it now is goes out; the server drops what it holds.
                    self.log.warning(
                        "output cut and written again since it was published "
                        "to here (copytruncate); publishing it from its start",
                        path=str(self.output),
                    )
                    self.offset = 0
                    continue
                raw, end = self._batch(fd, limit)
                # What lies before the new offset, as read now (not after the send: a
                # cut while it was sending must not be taken for the old bytes).
                before = os.pread(
                    fd, min(end, self.BEFORE_BYTES), end - min(end, self.BEFORE_BYTES)
                )
                if end == self.offset:
                    await self._wait()
                    continue
                await self._until_stopped(sender.send(messages.lines_of(self.config, raw), fresh))
                if self._stop.is_set():
                    break  # cut short: this batch is not checkpointed; it goes again
                fresh = False
                self.offset = end
                self._before = before
                self.sent_lines += len(raw) - (sender.too_large - self.too_large)
                self.too_large = sender.too_large
                self._save()
                self._changed()
        finally:
            if fd >= 0:
                os.close(fd)

    async def _open(self, fd: int, target: int, current: int) -> int:
        """Open the output file ``target``: at start, or after a rotation once the
        file before it was read to the end the daemon vouched for. The daemon's
        descriptor of it where it gave one, else the path; a path that does not lead
        to the file the daemon writes yet (renamed, not reopened yet) is waited for."""
        with self._lock:
            given = self._given.get(target, -1)
        if given >= 0:
            new = os.dup(given)
        else:
            try:
                new = os.open(self.output, os.O_RDONLY)
            except FileNotFoundError:
                await self._wait()
                return fd
            except OSError as exc:
                raise bus.BusError(f"{self.output}: cannot read ({exc.strerror})") from exc
            if os.fstat(new).st_ino != target:
                os.close(new)
                if target != current:
                    # An older file, renamed away before this publisher held it, and
                    # no descriptor from the daemon: out of reach. Said, and passed.
                    with self._lock:
                        end = self._limits.get(target, 0)
                    self.log.warning(
                        "output rotated before it was published to its end, "
                        "and no longer at its path: its rest is not sent",
                        path=str(self.output),
                        ino=target,
                    )
                    self.ino, self.offset, self._held = target, end, True
                    self._save()
                    self._changed()
                    if fd >= 0:
                        os.close(fd)
                    return -1
                await self._wait()
                return fd
        if fd >= 0:
            os.close(fd)
        if target != self.ino:
            if not self._held and self.ino:
                self.log.warning(
                    "output is not the file the publish checkpoint names "
                    "(rotated while stopped); publishing it from its start: "
                    "what the old file held past the checkpoint is not sent",
                    path=str(self.output),
                )
            elif self.ino:
                self.log.info(
                    "output rotated; publishing the new file from its start", path=str(self.output)
                )
            self.ino, self.offset = target, 0
            self._save()
            self._changed()
        self._held = True
        self._forget_before(target)
        return new

    def _forget_before(self, ino: int) -> None:
        """Close the daemon's descriptors of the files before ``ino``: read to
        their end, or passed."""
        with self._lock:
            done = files_before(list(self._limits), ino)
            fds = [self._given.pop(old) for old in done if old in self._given]
        for old_fd in fds:
            os.close(old_fd)

    def _batch(self, fd: int, limit: int) -> tuple[list[bytes], int]:
        """The next lines from the offset (up to BATCH_LINES, about BATCH_BYTES), cut
        by the one splitter, and the offset just past them. Only whole lines lie
        before ``limit``; one over MAX_LINE_BYTES is stepped over (said)."""
        split = LineSplitter(str(self.output), MAX_LINE_BYTES, offset=self.offset, strip_cr=False)
        lines: list[bytes] = []
        size, pos = 0, self.offset
        while pos < limit and len(lines) < BATCH_LINES and size < BATCH_BYTES:
            chunk = os.pread(fd, min(READ_BYTES, limit - pos), pos)
            if not chunk:
                break
            pos += len(chunk)
            for line in split.feed(chunk):
                if line.skipped:
                    self.log.error(
                        "output line too long; not published",
                        path=str(self.output),
                        offset=line.offset,
                        reason=line_too_long(line.skipped, MAX_LINE_BYTES),
                    )
                    continue
                lines.append(line.data)
                size += len(line.data)
                if len(lines) >= BATCH_LINES:
                    break
        return lines, split.offset

    async def _wait(self) -> None:
        assert self._wake is not None
        self._wake.clear()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self._wake.wait(), 1.0)

    # -- its checkpoint ----------------------------------------------------------------

    #: How many bytes before the offset must be unchanged to read on from it.
    BEFORE_BYTES = 256

    def _bytes_before(self, fd: int) -> bytes:
        start = max(0, self.offset - self.BEFORE_BYTES)
        return os.pread(fd, self.offset - start, start)

    def _same_before(self, fd: int) -> bool:
        """Are the bytes just before the offset those that were there when it was
        reached? (Unknown after a start: taken as they are then.)"""
        if not self.offset:
            return True
        now = self._bytes_before(fd)
        if self._before is None:
            self._before = now
            return True
        return now == self._before

    def _load(self) -> tuple[int, int]:
        try:
            raw = orjson.loads(read_regular(self.state, 1 << 20, follow=True))
        except FileNotFoundError:
            return 0, 0
        except (OSError, orjson.JSONDecodeError) as exc:
            self.log.warning(
                "publish checkpoint unreadable; publishing the output from its start (the "
                "server drops what it holds)",
                path=str(self.state),
                reason=str(exc),
            )
            return 0, 0
        if (
            not isinstance(raw, dict)
            or raw.get("version") != VERSION
            or not isinstance(raw.get("ino"), int)
            or not isinstance(raw.get("offset"), int)
        ):
            self.log.warning(
                "publish checkpoint of another version; publishing the output from its start",
                path=str(self.state),
            )
            return 0, 0
        return raw["ino"], raw["offset"]

    def _save(self) -> None:
        data = orjson.dumps(
            {
                "version": VERSION,
                "ino": self.ino,
                "offset": self.offset,
                "stream": self.config.stream,
                "servers": self.config.shown().split(","),
            }
        )
        tmp = self.state.with_name(self.state.name + ".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, data)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, self.state)


def files_before(order: list[int], ino: object) -> list[int]:
    """The daemon's output files (``order``: oldest first) before ``ino``; none
    where ``ino`` is not one of them."""
    return order[: order.index(ino)] if ino in order else []


def _next_file(order: list[int], ino: int, starting: bool) -> int:
    """The output file to publish next, of the daemon's (``order``: oldest first, the
    one written now last): at a start the checkpoint's file where the daemon
    knows it, else the daemon's first (written since it started, all after the
    checkpoint's); after a file read to its end, the one after it."""
    if ino in order:
        return ino if starting else order[min(order.index(ino) + 1, len(order) - 1)]
    return order[0]


def status(report: dict[str, Any], limits: dict[int, int], current: int) -> dict[str, Any]:
    """What ``tail status`` shows of the publisher: its :meth:`~OutputPublisher.report`
    and how many bytes the daemon vouches for that it has not sent yet."""
    limit = limits.get(current, 0)
    behind = limit - report["offset"] if report["ino"] == current else limit
    return {
        "connected": report["connected"],
        "sent_lines": report["sent_lines"],
        "too_large": report["too_large"],
        "behind_bytes": max(0, behind),
        "error": report["error"],
    }
