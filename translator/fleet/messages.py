"""A stream_v1 line as a JetStream message: its subject, its id and its headers.

One JetStream stream (default ``STREAMV1``) holds every host's lines, one subject per
host and session: ``<prefix>.<host>.<session_id>``, each token made subject-safe by
:func:`token`. Every message carries the line as its body and these headers:

- ``Nats-Msg-Id``: ``<host>.<session>.<seq>.<hash>``, where hash is a BLAKE2b of the
  line's bytes. It is the line's identity: sent again (a crash, a reconnect, the same
  archive converted twice), the server drops it inside its duplicate window.
- ``Streamv1-Host``, ``Streamv1-Session``, ``Streamv1-Seq``, ``Streamv1-Type``: for
  consumers that filter without parsing the body. The host and session are whole
  here however long (their subject tokens are cut to a digest past
  :data:`~translator.fleet.bus.TOKEN_MAX`): :data:`SESSION_HEADER`, :data:`HOST_HEADER`.

A line the server can never take (:func:`unsendable`: over its ``max_payload`` with
its headers, or a subject over its control line) is said and stepped over by the
sender, never sent (#39: it dropped the connection, and the line went again for ever).

Apart from the sending (:mod:`translator.fleet.jetstream`): what a line becomes
on the wire, computed without a connection, byte for byte what nats-py would write
(:func:`frame`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import orjson

from streamv1.translator.fleet.bus import BusConfig, token
from streamv1.translator.hashes import blake2b

#: The headers every line carries (the names readers look for).
MSG_ID_HEADER = "Nats-Msg-Id"
HOST_HEADER = "Streamv1-Host"
#: The line's whole ``session_id`` (as a header value: trimmed, CR and LF as spaces),
#: however long: the subject's session token may be a digest of it (bus.token).
SESSION_HEADER = "Streamv1-Session"
SEQ_HEADER = "Streamv1-Seq"
TYPE_HEADER = "Streamv1-Type"


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
    # The values as they go (what nats-py would make of them), so that the frames
    # and the client's publish write the same bytes.
    host, session_value, seq, kind = _value(config.host), _value(session), _value(seq), _value(kind)
    headers = {
        MSG_ID_HEADER: msg_id,
        HOST_HEADER: host,
        SESSION_HEADER: session_value,
        SEQ_HEADER: seq,
        TYPE_HEADER: kind,
    }
    head = (
        f"{MSG_ID_HEADER}: {msg_id}\r\n{HOST_HEADER}: {host}\r\n"
        f"{SESSION_HEADER}: {session_value}\r\n{SEQ_HEADER}: {seq}\r\n"
        f"{TYPE_HEADER}: {kind}\r\n"
    ).encode()
    return Line(config.subject(session), msg_id, data, headers, head)


#: A header value as nats-py writes it: trimmed, CR and LF as spaces (so a value
#: never ends its line or starts a command).
_NEWLINES = str.maketrans({"\r": " ", "\n": " "})


def _value(text: str) -> str:
    value = text.strip().translate(_NEWLINES)
    if value.isascii():
        return value
    # UTF-8 as it goes; a host name from undecodable argv bytes (surrogates) made
    # every line raise: its bytes as a reader decodes them (U+FFFD for the bad ones).
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


#: What a line's message adds to its own headers, at most, however it goes: the
#: header block's first line and its end, then either a batch's headers (a commit's,
#: the longest) or the stream JetStream's publish names (``Nats-Expected-Stream``).
_HEAD_ENDS = len(b"NATS/1.0\r\n\r\n")
_BATCH_HEADERS = len(
    b"Nats-Batch-Id: %s\r\nNats-Batch-Sequence: 1000\r\nNats-Batch-Commit: 1\r\n" % (b"0" * 32)
)
_EXPECTED_STREAM = len(b"Nats-Expected-Stream: \r\n")
#: nats-py's reply inbox: ``_INBOX.``, a 22-character id, ``.``, and 26 more.
_REPLY = len("_INBOX.") + 22 + 1 + 26


def control_line(subject: str, stream: str) -> int:
    """The longest protocol line the fleet sends that names ``subject``, at most:
    a publish (``HPUB <subject> <reply> <header bytes> <total bytes>``) or the
    request that makes a consumer filtered on it (``convert --publish`` asks what
    the subject holds; ``subscribe --from --session`` reads it), sizes of up to 10
    digits."""
    publish = len("HPUB  \r\n") + _REPLY + 2 * 11
    consumer = len("PUB $JS.API.CONSUMER.CREATE...  \r\n") + len(stream) + 22 + _REPLY + 10
    return len(subject.encode()) + max(publish, consumer)


def wire_size(line: Line, stream: str) -> int:
    """The most bytes the server counts against ``max_payload`` for ``line``: its
    headers and its body."""
    extra = max(_BATCH_HEADERS, _EXPECTED_STREAM + len(stream.encode()))
    return _HEAD_ENDS + len(line.head) + extra + len(line.data)


def unsendable(
    line: Line, stream: str, max_payload: int, max_control_line: int, what: str = "max_payload"
) -> str | None:
    """Why the server can never take ``line`` (None: it can). The server answers
    either by dropping the connection, and sent again the line only drops it
    again: such a line is stepped over, said, never sent. ``max_payload``: the
    least of the server's (its INFO) and the stream's ``max_msg_size``; 0: not
    known, not checked; ``what``: which of the two it is."""
    if max_payload > 0 and (size := wire_size(line, stream)) > max_payload:
        return f"{size} bytes with its headers, over the limit of {max_payload} ({what})"
    if control_line(line.subject, stream) > max_control_line:
        return (
            f"its subject ({len(line.subject)} bytes) makes a protocol line over "
            f"{max_control_line} bytes (the server's max_control_line, --nats-max-control-line)"
        )
    return None


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


def client_name(role: str, host: str) -> str:
    """The connection's name, ``streamv1-<role>@<host>`` (the server's /connz shows
    it). It goes in CONNECT, a protocol line: a host name over the server's control
    line (a 300-character ``--host``: 'maximum control line exceeded' at every
    try) is its subject token there, bounded; so is one JSON would escape."""
    name = f"streamv1-{role}@{host}"
    if len(name) <= 100 and name.isascii() and name.isprintable():
        return name
    return f"streamv1-{role}@{token(host)}"


def lines_of(config: BusConfig, data: Iterable[bytes]) -> list[Line]:
    return [line_for(config, raw) for raw in data if raw]
