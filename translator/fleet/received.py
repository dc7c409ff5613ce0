"""What ``subscribe --from`` takes from the bus, and what it prints of it.

Anyone who may publish on the stream's subjects may put anything in a message:
a body with a newline in it (two lines on stdout, the second a forged ``result``
for another host's session), text that is not JSON, JSON that is not stream_v1,
a line whose session or host is not its subject's, terminal escapes (a screen
clear, a window title, an OSC 52 clipboard write). The subject is what the
server's per-host permissions check; the body and the headers are the
publisher's word. So a message is printed only when:

- its body is exactly one JSON object, and a stream_v1 line by the locked
  schema's rules (:func:`translator.contract.validate.is_stream_v1_line`: the
  schema, no ANSI escape in any string, an RFC 3339 ``ts``);
- its subject is the one its publisher gives that line (:func:`origin`): the
  subject's host with the line's ``session_id``, by the publisher's own rule
  (:func:`translator.fleet.messages.subject_of`); and the ``Streamv1-Host`` /
  ``Streamv1-Session`` headers, and an ``extension.fleet_host`` the line carries,
  where present, say the same.

What is printed is never the body's bytes: the parsed line, encoded again by
orjson (which writes every C0 control as ``\\u00XX``), with the subject's host
added as ``extension.fleet_host`` (so a reader of many hosts can tell them apart),
and the characters orjson leaves raw that a terminal acts on (DEL, the C1
controls, the bidirectional overrides) written as ``\\uXXXX`` too: the same JSON
value, nothing a terminal obeys. Everything else is counted by kind
(:class:`Refused`) and said on stderr, never its body.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

import orjson

from streamv1.translator import logs
from streamv1.translator.contract.validate import is_stream_v1_line
from streamv1.translator.fleet import messages
from streamv1.translator.fleet.bus import BusConfig, token

log = logs.get()

#: Where a line's host goes on the way out (``extension`` is the schema's free-form
#: home for what is not modeled).
HOST_KEY = "fleet_host"

#: The kinds of message not printed, as said on stderr.
KINDS = {
    "not_json": "not one JSON object (not JSON, more than one line, or not an object)",
    "not_stream_v1": "not a stream_v1 line (the locked schema, an ANSI escape, ts)",
    "subject": "a subject that is not <prefix>.<host>.<session>",
    "session": "a session that is not its subject's",
    "host": "a host that is not its subject's",
    "extension": "an extension that is not an object (no room for the host)",
}

#: A subject token as :func:`translator.fleet.bus.token` writes it.
_TOKEN = re.compile(r"(?:[A-Za-z0-9-]|_[0-9A-F]{2})+")
_ESCAPED = re.compile(r"_([0-9A-F]{2})")

#: What orjson writes raw and a terminal obeys, as UTF-8 (only ever inside a JSON
#: string: orjson writes nothing else but ASCII): DEL, the C1 controls (U+0080-
#: U+009F: CSI, OSC, DCS ... in their 8-bit form), the Arabic letter mark and the
#: bidirectional marks, embeddings, overrides and isolates (U+200E-F, U+202A-E,
#: U+2066-9), which reorder what a terminal shows.
_OBEYED = re.compile(
    rb"\x7f|\xc2[\x80-\x9f]|\xd8\x9c|\xe2\x80[\x8e\x8f\xaa-\xae]|\xe2\x81[\xa6-\xa9]"
)


def _escaped(m: re.Match[bytes]) -> bytes:
    return b"\\u%04x" % ord(m[0].decode())


def untoken(text: str) -> str | None:
    """The value a subject token stands for, or None when ``text`` is not one
    :func:`token` writes (so nothing else reads as the same host), or does not
    hold the whole value (a long one cut to a digest: its header has it)."""
    if not _TOKEN.fullmatch(text) or text == "_":
        return None
    raw = _ESCAPED.sub(lambda m: chr(int(m[1], 16)), text).encode("latin-1")
    try:
        value = raw.decode("utf-8", "surrogatepass")
    except UnicodeDecodeError:
        return None
    return value if token(value) == text else None


class Refused(Exception):
    """A message not printed; ``kind`` is one of :data:`KINDS`."""

    def __init__(self, kind: str) -> None:
        super().__init__(kind)
        self.kind = kind


class Reader:
    """Checks each message of one subscription and counts what it refuses."""

    def __init__(self, bus: BusConfig, *, live: bool = True) -> None:
        """``live``: the first message of each kind refused is said at once too
        (a live reader may run for days before its summary); a ``--catch-up``
        run ends soon, and says only its summary: one line per kind."""
        self.bus = bus
        self.live = live
        self._head = bus.prefix + "."
        self._buses: dict[str, BusConfig] = {}
        #: kind → [count, first stream sequence, last stream sequence]
        self.refused: dict[str, list[int]] = {}

    def line(self, subject: str, headers: dict[str, str] | None, data: bytes) -> bytes:
        """The line to print for a message (re-encoded, with its newline), or
        :class:`Refused`."""
        try:
            obj = orjson.loads(data)
        except orjson.JSONDecodeError:
            raise Refused("not_json") from None
        if not isinstance(obj, dict):
            raise Refused("not_json")
        if not is_stream_v1_line(obj, data):
            raise Refused("not_stream_v1")
        host = self.origin(subject, headers or {}, obj, data)
        extension = obj.get("extension")
        if extension is None:
            obj["extension"] = {HOST_KEY: host}
        elif isinstance(extension, dict):
            extension[HOST_KEY] = host
        else:
            raise Refused("extension")
        try:
            out = orjson.dumps(obj, option=orjson.OPT_APPEND_NEWLINE)
        except TypeError:  # (an integer orjson reads but will not write: past 64 bits)
            raise Refused("not_stream_v1") from None
        return _OBEYED.sub(_escaped, out)

    def origin(
        self, subject: str, headers: dict[str, str], obj: dict[str, Any], data: bytes
    ) -> str:
        """The host a line came from: its subject's, when the subject is the one
        the publisher gives this line (the subject's host, the line's session, by
        :func:`translator.fleet.messages.subject_of`, whatever that rule makes of a
        long id) and no header or ``extension.fleet_host`` says otherwise. Else
        :class:`Refused`: "subject", "host" or "session".

        The one place the session and the host are compared: the subject's own
        tokens are never read as the session, so a subject that stands for its
        session another way (a digest of a long id) needs no change here."""
        if not subject.startswith(self._head):
            raise Refused("subject")
        parts = subject[len(self._head) :].split(".")
        if len(parts) != 2:
            raise Refused("subject")
        claimed = headers.get("Streamv1-Host")
        host = claimed.strip() if claimed is not None else None
        if host is None or "\ufffd" in host:
            # No header (a publisher of another kind), or one that could not carry
            # the name (bytes that are no UTF-8 go as U+FFFD): the token says it.
            host = untoken(parts[0])
            if host is None:
                raise Refused("subject" if claimed is None else "host")
        if not host:
            raise Refused("host")
        session = obj["session_id"]  # (the schema requires it, a string)
        said = headers.get("Streamv1-Session")
        if said is not None and said.strip() != _header_value(session):
            raise Refused("session")
        shown = _shown(host)
        extension = obj.get("extension")
        if isinstance(extension, dict) and extension.get(HOST_KEY, shown) != shown:
            raise Refused("host")
        expected = messages.subject_of(self._bus_of(host), data)
        if expected != subject:
            wanted = expected[len(self._head) :].split(".")
            raise Refused("host" if wanted[0] != parts[0] else "session")
        return shown

    def _bus_of(self, host: str) -> BusConfig:
        """This bus as ``host`` publishes on it (a few hosts, over and over)."""
        found = self._buses.get(host)
        if found is None:
            if len(self._buses) > 4096:
                self._buses.clear()
            found = self._buses[host] = dataclasses.replace(self.bus, host=host)
        return found

    def refuse(self, kind: str, seq: int | None) -> None:
        """Count one message not printed (live, the first of each kind is said at
        once)."""
        at = seq if isinstance(seq, int) else 0
        count = self.refused.get(kind)
        if count is None:
            self.refused[kind] = [1, at, at]
            if not self.live:
                return
            log.warning(
                "a message from the bus not printed (each kind said once; counted to the end)",
                reason=KINDS[kind],
                kind=kind,
                stream_seq=at,
            )
        else:
            count[0] += 1
            count[2] = at

    def report(self) -> None:
        """One stderr line per kind refused: how many, the first and last stream
        sequence (to look them up on the server; the bodies are never shown)."""
        for kind, (count, first, last) in self.refused.items():
            log.warning(
                "messages from the bus not printed",
                reason=KINDS[kind],
                kind=kind,
                count=count,
                first_stream_seq=first,
                last_stream_seq=last,
            )


def _shown(name: str) -> str:
    """A name as JSON can carry it: bytes that were no UTF-8 (argv's, read with
    surrogateescape) as U+FFFD, as the headers show them."""
    try:
        return name.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    except UnicodeEncodeError:  # (a surrogate no byte made)
        return name.encode("utf-8", "surrogatepass").decode("utf-8", "replace")


def _header_value(text: str) -> str:
    """A header value as nats-py sends it and reads it back (trimmed, CR and LF as
    spaces): what ``Streamv1-Session`` holds for this session id."""
    return text.strip().replace("\r", " ").replace("\n", " ").strip()
