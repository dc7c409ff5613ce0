"""stream_v1 lines on NATS JetStream: the fleet's shared stream.

One JetStream stream (default ``STREAMV1``) holds every host's lines, one subject per
host and session: ``<prefix>.<host>.<session_id>``, each token made subject-safe by
:func:`token`. Every message carries the line as its body and these headers:

- ``Nats-Msg-Id``: ``<host>.<session>.<seq>.<hash>``, where hash is a BLAKE2b of the
  line's bytes. It is the line's identity: sent again (a crash, a reconnect, the same
  archive converted twice), the server drops it inside its duplicate window.
- ``Streamv1-Host``, ``Streamv1-Session``, ``Streamv1-Seq``, ``Streamv1-Type``: for
  consumers that filter without parsing the body.

Beyond the duplicate window, no line is stored twice either: within one subject
lines are sent one at a time, in order, so the only line whose fate can be unknown
is the one in flight; when a send fails, or a subject is first used after a start,
the subject's last stored message is asked for and compared by id (:class:`Sender`).
This holds while one publisher writes each host's subjects (docs/fleet.md).
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import Awaitable, Callable, Iterable, Sequence
from typing import Any, NamedTuple, TypeVar

import orjson

from streamv1.translator import logs
from streamv1.translator.fleet.bus import BusConfig, BusError, token
from streamv1.translator.hashes import blake2b

log = logs.get()

T = TypeVar("T")

#: How long one publish waits for its ack before the line's fate is asked for.
ACK_WAIT = 5.0
#: How long to wait between tries while the server is unreachable (doubling to this).
RETRY_MAX = 5.0


class Line(NamedTuple):
    """One encoded stream_v1 line, as it goes out."""

    subject: str
    msg_id: str
    data: bytes
    headers: dict[str, str]
    #: ``headers`` as the protocol writes them (``Key: value\r\n`` each, values
    #: trimmed, CR and LF as spaces: nats-py's rules), for the frames of a batch
    head: bytes


def line_for(config: BusConfig, data: bytes) -> Line:
    """The message for one output line (without its newline). Lines that are not a
    JSON object with a session_id go out under session ``_`` (they never come from
    our encoders; the output is what it is)."""
    session, seq, kind = _fields(data)
    digest = blake2b(data, digest_size=12).hexdigest()
    # Every part a token: a crafted line's seq ("1\n") would otherwise be an id the
    # client changes on the way (CR and LF as spaces), never the one compared.
    msg_id = f"{token(config.host)}.{token(session)}.{token(seq) if seq else ''}.{digest}"
    headers = {
        "Nats-Msg-Id": msg_id,
        "Streamv1-Host": config.host,
        "Streamv1-Session": session,
        "Streamv1-Seq": seq,
        "Streamv1-Type": kind,
    }
    head = (
        f"Nats-Msg-Id: {msg_id}\r\nStreamv1-Host: {_value(config.host)}\r\n"
        f"Streamv1-Session: {_value(session)}\r\nStreamv1-Seq: {_value(seq)}\r\n"
        f"Streamv1-Type: {_value(kind)}\r\n"
    ).encode()
    return Line(config.subject(session), msg_id, data, headers, head)


#: A header value as nats-py writes it: trimmed, CR and LF as spaces (so a value
#: never ends its line or starts a command).
_NEWLINES = str.maketrans({"\r": " ", "\n": " "})


def _value(text: str) -> str:
    return text.strip().translate(_NEWLINES)


def subject_of(config: BusConfig, data: bytes) -> str:
    """The subject ``line_for`` gives the line, without the rest of its message."""
    return config.subject(_fields(data)[0])


def _fields(data: bytes) -> tuple[str, str, str]:
    """(session_id, seq, type) of a line, "" where it has none."""
    try:
        obj = orjson.loads(data)
    except orjson.JSONDecodeError:
        return "", "", ""
    if not isinstance(obj, dict):
        return "", "", ""
    return (str(obj.get("session_id") or ""), str(obj.get("seq", "")), str(obj.get("type") or ""))


def _tls(config: BusConfig) -> ssl.SSLContext | None:
    if not (config.tls_ca or config.tls_cert):
        return None
    context = ssl.create_default_context(cafile=config.tls_ca)
    if config.tls_cert:
        context.load_cert_chain(config.tls_cert, config.tls_key)
    return context


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
    import nats

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
        text = _reason(exc)
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
                probe = await nats.connect(
                    servers=list(config.servers),
                    name=name,
                    tls=_tls(config),
                    user_credentials=config.creds,
                    allow_reconnect=False,
                    connect_timeout=2,
                    max_reconnect_attempts=1,
                    reconnect_time_wait=0.2,
                    error_cb=quiet,
                )
                await probe.close()
            return await nats.connect(
                servers=list(config.servers),
                name=name,
                tls=_tls(config),
                user_credentials=config.creds,
                max_reconnect_attempts=-1,
                reconnect_time_wait=1,
                connect_timeout=2,
                allow_reconnect=True,
                disconnected_cb=disconnected,
                reconnected_cb=reconnected,
                error_cb=error,
            )
        except Exception as exc:
            if not wait or _permanent(exc):
                cause = last[0] if last else exc
                raise BusError(
                    f"cannot connect to {','.join(config.servers)}: {_reason(cause)}"
                ) from exc
            if on_state is not None:
                on_state("disconnected")
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)


def _permanent(exc: BaseException) -> bool:
    """A TLS or credentials file that cannot be read does not get better by waiting."""
    return isinstance(exc, (FileNotFoundError, PermissionError, ssl.SSLError))


def _reason(exc: BaseException) -> str:
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
    ) -> None:
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
        self.too_large = 0  # over the servers' max_payload: not sent
        #: Does the stream take atomic batches (``allow_atomic``, nats-server 2.12+)?
        #: None: not asked yet. Without them, one line per round trip.
        self.atomic: bool | None = None
        self.batches = 0  # atomic batches stored

    async def send(self, lines: Sequence[Line], fresh: bool = True) -> None:
        """Store every line (retrying until it is); returns when all are."""
        by_subject: dict[str, list[Line]] = {}
        for line in lines:
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

    async def _atomic(self) -> bool:
        """Whether the stream takes atomic batches, asked once (a stream made by
        an older streamv1, or by its operator, may not: said once, and lines then
        go one per round trip)."""
        async with self._asking:  # (subjects go at once: one question, one log line)
            if self.atomic is None:
                try:
                    info = await self.js.stream_info(self.config.stream)
                except Exception:
                    return False  # unreachable now: one at a time, ask again later
                self.atomic = bool(getattr(info.config, "allow_atomic", False))
                if not self.atomic:
                    log.info(
                        "stream takes no atomic batches: one line per round trip (nats "
                        "stream edit STREAM --allow-atomic makes publishing many times "
                        "faster)",
                        stream=self.config.stream,
                    )
        return self.atomic

    async def _batch(self, lines: list[Line]) -> None:
        """Store consecutive lines of one subject as one atomic batch: one round
        trip, and the server stores all of them, in order, or none (ADR-50). So a
        batch of unknown fate (a lost commit ack, a dropped connection) is stored
        exactly when the subject's last message is its last line, as for a single
        line. What a batch cannot carry goes line by line: a line another run
        stored meanwhile (the server refuses a batch holding a known id) or one
        over max_payload."""
        delay, incomplete = 0.1, 0
        while True:
            try:
                async with self._in_flight:
                    reply = await self._send_batch(lines)
            except Exception as exc:
                from nats.errors import MaxPayloadError

                if isinstance(exc, MaxPayloadError):
                    break  # uncommitted: the server drops the batch; line by line
                if _refused(exc):
                    raise BusError(
                        f"publish to {lines[0].subject} refused: {_reason(exc)}"
                    ) from exc
                if await self._stored_meanwhile(lines, _reason(exc), delay):
                    return
                delay = min(delay * 2, RETRY_MAX)
                continue
            error = reply.get("error")
            if not error:
                self.stored += len(lines)
                self.batches += 1
                return
            code = error.get("err_code")
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
            if await self._stored_meanwhile(lines, str(error.get("description") or error), delay):
                return
            delay = min(delay * 2, RETRY_MAX)
        for line in lines:
            await self._one(line)

    async def _send_batch(self, lines: list[Line]) -> dict[str, Any]:
        """Publish the lines with the batch headers, the last one as the commit (a
        request: the server answers it, for the whole batch).

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
        if send is not None and before and nc.is_connected and not nc.is_draining_pubs:
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
                    headers={**line.headers, "Nats-Batch-Id": batch, "Nats-Batch-Sequence": str(n)},
                )
        headers = {
            **commit.headers,
            "Nats-Batch-Id": batch,
            "Nats-Batch-Sequence": str(len(lines)),
            "Nats-Batch-Commit": "1",
        }
        msg = await nc.request(commit.subject, commit.data, timeout=ACK_WAIT, headers=headers)
        answer = orjson.loads(msg.data)
        return answer if isinstance(answer, dict) else {}

    async def _one(self, line: Line) -> None:
        delay = 0.1
        while True:
            try:
                ack = await self.js.publish(
                    line.subject,
                    line.data,
                    timeout=ACK_WAIT,
                    stream=self.config.stream,
                    headers=dict(line.headers),
                )
            except Exception as exc:
                from nats.errors import MaxPayloadError

                if isinstance(exc, MaxPayloadError):
                    # No retry makes it fit, and holding it would hold every line
                    # after it: said, counted, and the output file keeps it.
                    self.too_large += 1
                    log.error(
                        "line larger than the servers' max_payload; not "
                        "published (raise max_payload to carry it)",
                        subject=line.subject,
                        msg_id=line.msg_id,
                        bytes=len(line.data),
                    )
                    return
                if _refused(exc):
                    raise BusError(f"publish to {line.subject} refused: {_reason(exc)}") from exc
                if await self._stored_meanwhile([line], _reason(exc), delay):
                    return
                delay = min(delay * 2, RETRY_MAX)
                continue
            if ack.duplicate:
                self.duplicates += 1
            else:
                self.stored += 1
            return

    async def _stored_meanwhile(self, lines: Sequence[Line], reason: str, delay: float) -> bool:
        """After a send of unknown fate (one line, or an atomic batch: all or none of
        it is stored): said, ``delay`` waited, then was it stored? It was when the
        subject's last message is its last line (the ack was what got lost). Still
        unreachable, or not stored: False, send it again."""
        if self.on_retry is not None:
            self.on_retry(reason)
        await asyncio.sleep(delay)
        try:
            stored = await self.last_id(lines[0].subject) == lines[-1].msg_id
        except Exception:
            return False
        if stored:
            self.skipped += len(lines)
        return stored

    async def stored_ids(self, subject: str) -> set[str]:
        """Every message id the subject holds (headers only, an ephemeral consumer):
        what makes a repeated conversion store nothing twice, however long after."""
        from nats.js.api import AckPolicy, ConsumerConfig, DeliverPolicy

        ids: set[str] = set()
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
        from nats.js.errors import NotFoundError

        try:
            msg = await self.js.get_last_msg(self.config.stream, subject)
        except NotFoundError:
            return None
        headers = msg.headers or {}
        value = headers.get("Nats-Msg-Id")
        return str(value) if value is not None else None


async def retrying(
    call: Callable[[], Awaitable[T]],
    on_retry: Callable[[str], None] | None,
    refused: Callable[[BaseException], bool] | None = None,
    what: str = "",
    first: float = 0.1,
) -> T:
    """``call()`` until it answers, waiting longer each time (to RETRY_MAX): a server
    that is down, electing a leader or coming up is waited out. An error ``refused``
    says waiting will not mend (by default :func:`_refused`) ends it as a BusError."""
    delay = first
    while True:
        try:
            return await call()
        except BusError:
            raise
        except Exception as exc:
            if (refused or _refused)(exc):
                raise BusError(f"{what}{_reason(exc)}") from exc
            if on_retry is not None:
                on_retry(_reason(exc))
            await asyncio.sleep(delay)
            delay = min(delay * 2, RETRY_MAX)


#: At most this many lines in one atomic batch (the server's limit, 1,000) and
#: about this many bytes (the server holds a batch in memory until its commit).
BATCH_LINES = 1000
BATCH_BYTES = 4 << 20

#: Batches open at once: the server abandons what is over its limit of open
#: batches a stream (50 by default), "incomplete" (120 at once on nats-server
#: 2.15.1: 56 refused; 16, 32 and 48 at once: none).
BATCHES_IN_FLIGHT = 32

#: What the server refuses a batch for that line by line may still store: a
#: message id it holds already (10201), a batch over its limits (10199), and
#: a batch it let go of three times (10176, incomplete).
_INCOMPLETE = 10176
_BATCH_ONLY = frozenset({10199, 10201, _INCOMPLETE})
#: "atomic publish is disabled" (nats-server 2.15.1, a stream without allow_atomic).
_DISABLED = 10174


def frame(line: Line, batch: str, n: int) -> bytes:
    """The protocol's HPUB for ``line`` as the ``n``-th of atomic batch ``batch``
    (no reply subject), byte for byte what nats-py's ``publish`` sends."""
    head = b"NATS/1.0\r\n%sNats-Batch-Id: %s\r\nNats-Batch-Sequence: %d\r\n\r\n" % (
        line.head,
        batch.encode(),
        n,
    )
    return b"HPUB %s  %d %d\r\n%s%s\r\n" % (
        line.subject.encode(),
        len(head),
        len(head) + len(line.data),
        head,
        line.data,
    )


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


def _refused(exc: BaseException) -> bool:
    """Errors that waiting does not mend: permissions, a stream that is not there or
    not ours (everything else, a timeout or a lost connection, is waited out)."""
    from nats.js.errors import APIError, NoStreamResponseError

    if isinstance(exc, NoStreamResponseError):
        return False  # no stream answers: a cluster electing a leader, or the server coming up
    if isinstance(exc, APIError):  # 503 (no leader yet) and the like are waited out
        return (getattr(exc, "code", None) or 0) in (400, 403, 404)
    return False


def lines_of(config: BusConfig, data: Iterable[bytes]) -> list[Line]:
    return [line_for(config, raw) for raw in data if raw]
