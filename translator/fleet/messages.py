"""A stream_v1 line as a JetStream message: its subject, its id and its headers.

One JetStream stream (default ``STREAMV1``) holds every host's lines, one subject per
host and session: ``<prefix>.<host>.<session_id>``, each token made subject-safe by
:func:`token`. Every message carries the line as its body and these headers:

- ``Nats-Msg-Id``: ``<host>.<session>.<seq>.<hash>``, where hash is a BLAKE2b of the
  line's bytes. It is the line's identity: sent again (a crash, a reconnect, the same
  archive converted twice), the server drops it inside its duplicate window.
- ``Streamv1-Host``, ``Streamv1-Session``, ``Streamv1-Seq``, ``Streamv1-Type``: for
  consumers that filter without parsing the body.

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


def lines_of(config: BusConfig, data: Iterable[bytes]) -> list[Line]:
    return [line_for(config, raw) for raw in data if raw]
