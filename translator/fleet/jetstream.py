"""Sending stream_v1 lines to NATS JetStream so that each is stored once.

Each line is a message with its own subject and id (:mod:`translator.fleet.messages`):
sent again, the server drops it inside its duplicate window. Beyond the window, no
line is stored twice either: within one subject lines are sent one at a time, in
order, so the only line whose fate can be unknown is the one in flight; when a send
fails, or a subject is first used after a start, the subject's last stored message
is asked for and compared by id, and the line goes again only on that message's
sequence (:meth:`Sender._settled`). A line given twice is sent
once (by a send; across sends, by ``convert --publish``), the window being no
help for copies further apart than it. This holds while one publisher writes each
host's subjects (docs/fleet.md).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from streamv1.translator import logs
from streamv1.translator.fleet.bus import BusConfig, BusError
from streamv1.translator.fleet.connection import RETRY_MAX, reason_of, refused_for_good, retrying
from streamv1.translator.fleet.messages import (
    SEQ_HEADER,
    SESSION_HEADER,
    Line,
    control_line,
    frame,
    unsendable,
)

log = logs.get()

#: How long one publish waits for its ack before the line's fate is asked for.
ACK_WAIT = 5.0


class Sender:
    """Sends lines so that each is stored once, in order within its subject.

    Subjects go in parallel; within one, a line goes only after the one before it
    is acked. A send that fails leaves one line of unknown fate per subject: before
    it is sent again the subject's last stored message is read, and if that is this
    line, it is not sent again. The same question is asked once per subject after
    every start (``fresh``), for the lines a crash left unacked."""

    def __init__(
        self,
        js: Any,
        config: BusConfig,
        on_retry: Callable[[str], None] | None = None,
        nc: Any = None,
        source: str | None = None,
    ) -> None:
        """``source``: the file the lines come from, named when one is stepped over."""
        self.js = js
        #: The connection: a batch's lines before its commit get no answer, so they
        #: are published on it, not with JetStream's publish (which waits for one).
        self.nc = nc if nc is not None else js._nc
        self._in_flight = asyncio.Semaphore(BATCHES_IN_FLIGHT)
        self._asking = asyncio.Lock()
        self.config = config
        self.on_retry = on_retry
        self.checked: set[str] = set()  # subjects whose last message was looked at
        self.stored = 0
        self.duplicates = 0  # the server said: already stored (inside its window)
        self.skipped = 0  # already stored, found by asking for the last message
        self.repeated = 0  # a line given twice to one send: sent once
        self.source = source
        #: Lines the server can never take (over its max_payload with their headers,
        #: or the stream's max_msg_size, or a subject over its control line): not sent.
        self.too_large = 0
        #: The stream's max_msg_size (-1: none; None: not asked yet).
        self.max_msg_size: int | None = None
        #: Does the stream take atomic batches (``allow_atomic``, nats-server 2.12+)?
        #: None: not asked yet. Without them, one line per round trip.
        self.atomic: bool | None = None
        self.batches = 0  # atomic batches stored

    async def send(self, lines: Sequence[Line], fresh: bool = True) -> None:
        """Store every line (retrying until it is); returns when all are. A line
        the server can never take is said, counted and stepped over first; one
        given twice (the same id) is sent once. Across calls, a line given again
        is the caller's to leave out (``convert --publish`` remembers what it
        sent): past the duplicate window, nothing else would."""
        await self._ask_stream()
        by_subject: dict[str, list[Line]] = {}
        ids: dict[str, set[str]] = {}
        for line in self._sendable(lines):
            # A line twice among them (one session's lines in two converted files)
            # goes once: left to the server's duplicate window, the second copy was
            # stored whenever it came past the window (4 lines under load, #39), and
            # a batch holding an id twice is refused whole (line by line).
            seen = ids.setdefault(line.subject, set())
            if line.msg_id in seen:
                self.repeated += 1
                continue
            seen.add(line.msg_id)
            by_subject.setdefault(line.subject, []).append(line)
        await asyncio.gather(
            *(self._subject(subject, group, fresh) for subject, group in by_subject.items())
        )

    async def _subject(self, subject: str, lines: list[Line], fresh: bool) -> None:
        start = 0
        if fresh and subject not in self.checked:
            last = await retrying(
                lambda: self.last_id(subject), self.on_retry, what=f"stream {self.config.stream}: "
            )
            self.checked.add(subject)
            start = _after(lines, last)
            self.skipped += start
        while start < len(lines):
            chunk = _chunk(lines, start)
            start += len(chunk)
            if len(chunk) > 1 and await self._atomic():
                await self._batch(chunk)
            else:
                for line in chunk:
                    await self._one(line)

    def _sendable(self, lines: Sequence[Line]) -> Sequence[Line]:
        """``lines`` but those the server can never take, each said and counted.
        Sent, such a line made the server drop the connection (over max_payload,
        the control line), and the publisher sent it again for ever, holding up
        every line after it (#39)."""
        limit = int(getattr(self.nc, "max_payload", 0) or 0)  # (the server's INFO)
        what = "the server's max_payload"
        if self.max_msg_size is not None and 0 < self.max_msg_size < (limit or 1 << 62):
            limit, what = self.max_msg_size, f"stream {self.config.stream}'s max_msg_size"
        stream, control = self.config.stream, self.config.max_control_line
        why = [unsendable(line, stream, limit, control, what) for line in lines]
        if not any(why):
            return lines
        kept = []
        for line, reason in zip(lines, why, strict=True):
            if reason is None:
                kept.append(line)
            else:
                self._stepped_over(line, reason)
        return kept

    def _stepped_over(self, line: Line, reason: str) -> None:
        """Say and count a line the server can never take. No retry makes it fit,
        and holding it would hold every line after it; the output file keeps it."""
        self.too_large += 1
        session = line.headers.get(SESSION_HEADER, "")
        where = {"file": self.source} if self.source else {}
        log.error(
            "line not published",
            why=reason,
            **where,
            session=session if len(session) <= 80 else f"{session[:64]}… ({len(session)} chars)",
            seq=line.headers.get(SEQ_HEADER),
            bytes=len(line.data),
        )

    async def _ask_stream(self) -> None:
        """Ask the stream, once, whether it takes atomic batches (a stream made by
        an older streamv1, or by its operator, may not: said once, and lines then
        go one per round trip) and its largest message (max_msg_size)."""
        async with self._asking:  # (subjects go at once: one question, one log line)
            if self.atomic is None:
                try:
                    info = await self.js.stream_info(self.config.stream)
                except Exception:
                    return  # unreachable now: one at a time, ask again later
                self.atomic = bool(getattr(info.config, "allow_atomic", False))
                size = getattr(info.config, "max_msg_size", None)
                self.max_msg_size = size if isinstance(size, int) else -1
                if not self.atomic:
                    log.info(
                        "stream takes no atomic batches: one line per round trip (nats "
                        "stream edit STREAM --allow-atomic makes publishing many times "
                        "faster)",
                        stream=self.config.stream,
                    )

    async def _atomic(self) -> bool:
        """Whether the stream takes atomic batches (:meth:`_ask_stream`)."""
        await self._ask_stream()
        return bool(self.atomic)

    async def _batch(self, lines: list[Line]) -> None:
        """Store consecutive lines of one subject as one atomic batch: one round
        trip, and the server stores all of them, in order, or none (ADR-50). So a
        batch of unknown fate (a lost commit ack, a dropped connection) is stored
        exactly when the subject's last message is its last line, as for a single
        line. What a batch cannot carry goes line by line: a line another run
        stored meanwhile (the server refuses a batch holding a known id) or one
        over max_payload."""
        delay, incomplete = 0.1, 0
        expect: int | None = None  # sent again: on the last sequence the check saw
        while True:
            try:
                async with self._in_flight:
                    reply = await self._send_batch(lines, expect)
            except Exception as exc:
                from nats.errors import MaxPayloadError

                if isinstance(exc, MaxPayloadError):
                    break  # uncommitted: the server drops the batch; line by line
                if refused_for_good(exc):
                    raise BusError(
                        f"publish to {lines[0].subject} refused: {reason_of(exc)}"
                    ) from exc
                if (expect := await self._settled(lines, reason_of(exc), delay)) is None:
                    return
                delay = min(delay * 2, RETRY_MAX)
                continue
            error = reply.get("error")
            if not error:
                self.stored += len(lines)
                self.batches += 1
                return
            code = error.get("err_code")
            if code == _WRONG_LAST:  # stored meanwhile, or something else was
                if (expect := await self._settled(lines, _description(error), delay)) is None:
                    return
                continue
            if code == _INCOMPLETE and incomplete < 3:
                # The server let the batch go before its commit (too many open at
                # once, or a dropped line): nothing of it is stored; again.
                incomplete += 1
                await asyncio.sleep(delay)
                continue
            if code == _DISABLED:
                self.atomic = False  # its operator took allow_atomic away meanwhile
                break
            if code in _BATCH_ONLY:
                break  # what only a batch is refused for: the lines one by one
            if (error.get("code") or 0) in (400, 403, 404):
                raise BusError(
                    f"publish to {lines[0].subject} refused: {error.get('description') or error}"
                )
            # Anything else is waited out, as a single line's would be (503: no
            # leader yet, a cluster changing its mind).
            if (expect := await self._settled(lines, _description(error), delay)) is None:
                return
            delay = min(delay * 2, RETRY_MAX)
        for line in lines:
            await self._one(line)

    async def _send_batch(self, lines: list[Line], expect: int | None = None) -> dict[str, Any]:
        """Publish the lines with the batch headers, the last one as the commit (a
        request: the server answers it, for the whole batch). ``expect``: the
        batch is stored only if the subject's last sequence is this one (a batch
        sent again, :meth:`_settled`); it goes with ``publish``, as is rare.

        The lines before the commit go as frames written here, joined, handed to
        the client in one call: nats-py's ``publish`` encodes each header of each
        line in Python (a regex, strips, four appends: 6.7 µs a line against
        0.4 µs for one format here), which was a third of what a line cost to
        send. The frames are the protocol's ``HPUB`` exactly as nats-py writes it
        (tests/test_fleet.py compares them); ``publish``'s one check that applies
        to a frame, max_payload, is made here. While the connection is down,
        ``publish`` does the sending (it refuses what the client's buffer cannot
        hold, where frames would pile up with each retry), as it does for a client
        without the call used (``_send_command``, nats-py's since 2.0)."""
        import uuid

        nc = self.nc
        batch = uuid.uuid4().hex
        *before, commit = lines
        send = getattr(nc, "_send_command", None)
        guard = {} if expect is None else {EXPECTED_HEADER: str(expect)}
        if (
            send is not None
            and before
            and expect is None
            and nc.is_connected
            and not nc.is_draining_pubs
        ):
            from nats.errors import MaxPayloadError

            limit = nc.max_payload
            if any(len(line.data) > limit for line in before):
                raise MaxPayloadError
            await send(b"".join([frame(line, batch, n) for n, line in enumerate(before, 1)]))
        else:
            for n, line in enumerate(before, 1):
                await nc.publish(
                    line.subject,
                    line.data,
                    headers={
                        **line.headers,
                        **(guard if n == 1 else {}),
                        "Nats-Batch-Id": batch,
                        "Nats-Batch-Sequence": str(n),
                    },
                )
        headers = {
            **commit.headers,
            **(guard if not before else {}),
            "Nats-Batch-Id": batch,
            "Nats-Batch-Sequence": str(len(lines)),
            "Nats-Batch-Commit": "1",
        }
        msg = await nc.request(commit.subject, commit.data, timeout=ACK_WAIT, headers=headers)
        answer = orjson.loads(msg.data)
        return answer if isinstance(answer, dict) else {}

    async def _one(self, line: Line) -> None:
        delay = 0.1
        headers = dict(line.headers)  # sent again: on the last sequence the check saw
        while True:
            try:
                ack = await self.js.publish(
                    line.subject,
                    line.data,
                    timeout=ACK_WAIT,
                    stream=self.config.stream,
                    headers=headers,
                )
            except Exception as exc:
                from nats.errors import MaxPayloadError

                if isinstance(exc, MaxPayloadError):
                    self._stepped_over(line, "over the server's max_payload")
                    return
                if getattr(exc, "err_code", None) == _TOO_LARGE:
                    # (the stream's max_msg_size, lowered since it was asked)
                    self._stepped_over(line, f"refused by the stream: {reason_of(exc)}")
                    return
                wrong_last = getattr(exc, "err_code", None) == _WRONG_LAST
                if not wrong_last and refused_for_good(exc):
                    raise BusError(f"publish to {line.subject} refused: {reason_of(exc)}") from exc
                if (expect := await self._settled([line], reason_of(exc), delay)) is None:
                    return
                headers = {**line.headers, EXPECTED_HEADER: str(expect)}
                if not wrong_last:
                    delay = min(delay * 2, RETRY_MAX)
                continue
            if ack.duplicate:
                self.duplicates += 1
            else:
                self.stored += 1
            return

    async def _settled(self, lines: Sequence[Line], reason: str, delay: float) -> int | None:
        """After a send of unknown fate (one line, or an atomic batch: all or none of
        it is stored): said, ``delay`` waited, then was it stored? It was when the
        subject's last message is its last line (the ack was what got lost): None.
        Not stored: the subject's last sequence, which the lines are sent again on.

        While nothing answers the question is asked again, never taken for a no: a
        line sent again then (nats-py holds it for the reconnect) was stored twice
        when the server had stored it, lost the ack and come back past its window.
        And a "not there" holds only for when it was said: a loaded server may
        answer before it stores a send queued ahead of the question (its stream
        and its API are served apart). So the lines go again only on that last
        sequence (Nats-Expected-Last-Subject-Sequence): stored meanwhile, the
        server refuses them, and the question is asked again (#39)."""
        if self.on_retry is not None:
            self.on_retry(reason)
        await asyncio.sleep(delay)
        seq, last = await retrying(
            lambda: self._last(lines[0].subject),
            self.on_retry,
            what=f"stream {self.config.stream}: ",
            first=delay,
        )
        if last == lines[-1].msg_id:
            self.skipped += len(lines)
            return None
        return seq

    async def stored_ids(self, subject: str) -> set[str]:
        """Every message id the subject holds (headers only, an ephemeral consumer):
        what makes a repeated conversion store nothing twice, however long after."""
        from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

        ids: set[str] = set()
        if control_line(subject, self.config.stream) > self.config.max_control_line:
            return ids  # (its lines are never sent: the request would drop the connection)
        try:
            info = await self.js.stream_info(self.config.stream, subjects_filter=subject)
        except Exception:
            info = None
        if info is not None and not (info.state.subjects or {}).get(subject):
            return ids  # nothing stored on it: no consumer needed
        sub = await self.js.pull_subscribe(
            subject,
            stream=self.config.stream,
            config=ConsumerConfig(
                ack_policy=AckPolicy.NONE,
                headers_only=True,
                deliver_policy=DeliverPolicy.ALL,
                inactive_threshold=30.0,
            ),
        )
        try:
            while True:
                try:
                    msgs = await sub.fetch(1000, timeout=2.0)
                except TimeoutError:  # nats' own, or asyncio's: fetch raises both (#23)
                    break
                for msg in msgs:
                    value = (msg.headers or {}).get("Nats-Msg-Id")
                    if value is not None:
                        ids.add(str(value))
                if msgs and msgs[-1].metadata.num_pending == 0:
                    break
        finally:
            with contextlib.suppress(Exception):
                await sub.unsubscribe()
        return ids

    async def last_id(self, subject: str) -> str | None:
        """The id of the subject's last stored message (None: it holds none)."""
        return (await self._last(subject))[1]

    async def _last(self, subject: str) -> tuple[int, str | None]:
        """The sequence and id of the subject's last stored message (0, None: none)."""
        from nats.js.errors import NotFoundError

        try:
            msg = await self.js.get_last_msg(self.config.stream, subject)
        except NotFoundError:
            return 0, None
        value = (msg.headers or {}).get("Nats-Msg-Id")
        return int(msg.seq or 0), str(value) if value is not None else None


#: At most this many lines in one atomic batch (the server's limit, 1,000) and
#: about this many bytes (the server holds a batch in memory until its commit).
BATCH_LINES = 1000
BATCH_BYTES = 4 << 20

#: Batches open at once: the server abandons what is over its limit of open
#: batches a stream (50 by default), "incomplete" (120 at once on nats-server
#: 2.15.1: 56 refused; 16, 32 and 48 at once: none).
BATCHES_IN_FLIGHT = 32

#: "message size exceeds maximum allowed": over the stream's max_msg_size (or the
#: server's max_payload) with its headers. Never stored, however often sent.
_TOO_LARGE = 10054
#: What the server refuses a batch for that line by line may still store, or
#: step over: a message id it holds already (10201), a batch over its limits
#: (10199), a batch it let go of three times (10176, incomplete: what a line over
#: the stream's max_msg_size makes of its batch on 2.15.1) and a line too large.
_INCOMPLETE = 10176
_BATCH_ONLY = frozenset({10199, 10201, _INCOMPLETE, _TOO_LARGE})
#: "atomic publish is disabled" (nats-server 2.15.1, a stream without allow_atomic).
_DISABLED = 10174
#: "wrong last sequence": a send on the subject's last sequence (:data:`EXPECTED_HEADER`)
#: found another (what it was sent again for was stored meanwhile, or else).
_WRONG_LAST = 10071
#: A send again goes only on the subject's last sequence (:meth:`Sender._settled`).
EXPECTED_HEADER = "Nats-Expected-Last-Subject-Sequence"


def _description(error: dict[str, Any]) -> str:
    return str(error.get("description") or error)


def _chunk(lines: Sequence[Line], start: int) -> list[Line]:
    """The lines from ``start`` that go in one batch."""
    end, size = start, 0
    while end < len(lines) and end - start < BATCH_LINES:
        size += len(lines[end].data)
        if end > start and size > BATCH_BYTES:
            break
        end += 1
    return list(lines[start:end])


def _after(lines: list[Line], last: str | None) -> int:
    """How many of ``lines`` the subject already holds, given its last message id."""
    if last is None:
        return 0
    for i in range(len(lines) - 1, -1, -1):
        if lines[i].msg_id == last:
            return i + 1
    return 0
