"""Checks a stream_v1 stream: every line against the locked schema, plus the framing
rules the schema cannot express.

Framing rules (ADR-0050 §2 and the schema's description):

* one UTF-8 JSON object per line, one trailing newline, nothing else;
* a run starts with system/init (seq 0); seq goes up by exactly 1 per line of it;
* a run ends with exactly one result (with is_error); after it, that run's key
  (below) takes nothing but a new system/init;
* ``ts`` is an RFC 3339 timestamp;
* never an ANSI escape, not as a byte and not inside a decoded string.

Runs of several sessions may interleave (the tail daemon's unified stream): a run
is known by its ``session_id`` alone, as a consumer of the contract reads it. A
nested actor's lines (``parent_tool_use_id``) are lines of the open run of their
session, in its seq, as print mode shows nested actors; a system/init or a result
arriving while that session's run is open is a second run inside the first, and
rejected. (A nested actor with no run around it, a subagent file converted alone,
is a run of its own: its init may carry ``parent_tool_use_id``.)
``--allow-open`` accepts runs still open at the end (a live stream cut at an
arbitrary moment).

The schema itself is checked by the ``jsonschema`` package (Draft 2020-12).
"""

from __future__ import annotations

import calendar
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import IO, Any

import orjson
from jsonschema import Draft202012Validator

from streamv1.translator.output.scrub import scrub_text

_RFC3339 = re.compile(
    r"(\d{4})-(\d\d)-(\d\d)[Tt ](\d\d):(\d\d):(\d\d)(?:\.\d+)?(?:[Zz]|[+-](\d\d):(\d\d))",
    re.ASCII,
)


def is_rfc3339(ts: str) -> bool:
    """RFC 3339's grammar and its ranges: a month 13 or a February 30 has the
    shape of a time and is none (a leap second, :60, is one)."""
    m = _RFC3339.fullmatch(ts)
    if m is None:
        return False
    year, month, day, hour, minute, second = (int(g) for g in m.groups()[:6])
    if not 1 <= month <= 12 or hour > 23 or minute > 59 or second > 60:
        return False
    if not 1 <= day <= calendar.monthrange(year or 2000, month)[1]:
        return False
    off_h, off_m = m.group(7), m.group(8)
    return off_h is None or (int(off_h) <= 23 and int(off_m) <= 59)


@dataclass(slots=True, frozen=True)
class Violation:
    path: str
    line: int
    reason: str

    def __str__(self) -> str:
        # A message quotes the input (a value, a key, the file's name) and goes to
        # a CI log: scrubbed as every output line is.
        return scrub_text(f"{self.path}:{self.line}: {self.reason}")


def schema_text() -> str:
    return (
        resources.files("streamv1.translator.contract")
        .joinpath("stream-json.schema.json")
        .read_text("utf-8")
    )


@cache
def _validator() -> Draft202012Validator:
    schema = json.loads(schema_text())
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema)


@cache
def _fast() -> Any:
    import jsonschema_rs

    return jsonschema_rs.Draft202012Validator(json.loads(schema_text()))


#: How an ESC or a U+009B inside a JSON string can be written (a raw ESC is no JSON):
#: a line's bytes without any of these hold neither, decoded.
_ANSI_WRITTEN = (b"\\u001b", b"\\u001B", b"\\u009b", b"\\u009B", b"\xc2\x9b")


def is_stream_v1_line(obj: Any, raw: bytes | None = None) -> bool:
    """Is ``obj`` (one parsed line; ``raw``, its JSON text, when the caller has it)
    a stream_v1 line by every rule of its own: the schema, no ANSI escape, an RFC
    3339 ``ts``? (Not the framing: that is a stream's.) Yes or no, ~250 times
    faster than :func:`schema_errors` (jsonschema-rs: 3 us a line, not 0.9 ms), for
    a reader that checks each line it is handed (subscribe --from);
    :func:`schema_errors` says why a line fails."""
    if not isinstance(obj, dict) or not _fast().is_valid(obj):
        return False
    if (raw is None or any(w in raw for w in _ANSI_WRITTEN)) and _has_ansi(obj):
        return False  # (the walk only where the bytes may hold one: 10 us a line)
    return is_rfc3339(obj["ts"])  # (the schema requires ts, a string)


def schema_errors(obj: Any) -> list[str]:
    """Every way ``obj`` fails the schema, one short reason each."""
    out = []
    try:
        for err in _validator().iter_errors(obj):
            while err.context:  # anyOf/oneOf: the deepest failure says most
                err = max(err.context, key=lambda e: len(e.absolute_path))
            where = "/".join(str(p) for p in err.absolute_path) or "(line)"
            # (scrubbed before it is cut: a secret cut short is no longer its shape)
            said = scrub_text(_plain(err.message, err.instance))
            out.append(f"schema: {scrub_text(where)}: {_short(said)}")
    except RecursionError:
        # jsonschema writes each error's value with repr(), which recurses: a value
        # nested ~1,000 deep (orjson reads up to 1,024) is reported, not a crash.
        out.append("schema: a value nested too deep to check (or show)")
    return out


def _plain(message: str, instance: Any) -> str:
    """jsonschema begins many messages with the value's repr (a Python dict); say
    what kind of value it is instead."""
    if isinstance(instance, dict | list):
        shown = repr(instance)
        if message.startswith(shown):
            kind = "the object" if isinstance(instance, dict) else "the array"
            return kind + message[len(shown) :]
    return message


def _short(message: str, limit: int = 200) -> str:
    return message if len(message) <= limit else message[:limit] + "…"


def _has_ansi(value: Any) -> bool:
    """An ESC or 8-bit CSI in any string, key or value, at any depth (a loop, not
    recursion: a line may nest as deep as orjson reads, 1,024 levels)."""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            if "\x1b" in node or "\x9b" in node:
                return True
        elif isinstance(node, dict):
            stack.extend(node.keys())
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _said(value: Any, quote: bool = True) -> str:
    """A value for a message: short, secrets masked, and never repr() of a container
    (a line may nest 1,024 levels; repr recurses)."""
    if isinstance(value, str):
        value = scrub_text(value)  # (before it is cut: a secret cut short is no longer its shape)
        shown = value if len(value) <= 80 else value[:80] + "…"
        return repr(shown) if quote else shown
    if isinstance(value, list | dict):
        return f"<{type(value).__name__} of {len(value)}>"
    return repr(value)


def _key(value: Any) -> Any:
    """A run key part: the value when it is a string (or absent), else one marker
    per type (a list or object there is a schema violation, said already; it
    must not make the framing check itself fail)."""
    return value if value is None or isinstance(value, str) else f"<{type(value).__name__}>"


class StreamChecker:
    """Framing state over one stream; feed lines in order, then ``finish``."""

    def __init__(self, path: str, allow_open: bool = False) -> None:
        self.path = path
        self.lines = 0
        self.runs = 0
        self.allow_open = allow_open
        # session_id → {"seq", "line", "parent"}: the open run of each session
        self._open: dict[Any, dict[str, Any]] = {}

    def check(self, number: int, raw: bytes, terminated: bool) -> Iterator[Violation]:
        self.lines += 1
        v = self._violation
        if not terminated:
            yield v(number, "last line has no trailing newline")
        if not raw.strip():
            yield v(number, "blank line (each line must be one JSON object)")
            return
        if b"\x1b" in raw:
            yield v(number, "raw ANSI escape byte")
        try:
            obj = orjson.loads(raw)
        except orjson.JSONDecodeError as exc:
            yield v(number, f"not JSON ({_short(scrub_text(str(exc)), 120)})")
            return
        if not isinstance(obj, dict):
            yield v(number, f"not a JSON object ({type(obj).__name__})")
            return
        for reason in schema_errors(obj):
            yield v(number, reason)
        if _has_ansi(obj):
            yield v(number, "ANSI escape inside a string value")
        ts = obj.get("ts")
        if isinstance(ts, str) and not is_rfc3339(ts):
            yield v(number, f"ts {_said(ts)} is not an RFC 3339 timestamp")
        yield from self._framing(number, obj)

    def _framing(self, number: int, obj: dict[str, Any]) -> Iterator[Violation]:
        v = self._violation
        kind = obj.get("type")
        sid = _key(obj.get("session_id"))
        parent = _key(obj.get("parent_tool_use_id"))
        seq = obj.get("seq")
        if kind == "system" and obj.get("subtype") == "init":
            if sid in self._open:
                yield v(
                    number,
                    f"system/init while the run of session {_said(sid)} from line "
                    f"{self._open[sid]['line']} has no result",
                )
            self._open[sid] = {"seq": 0, "line": number, "parent": parent}
            self.runs += 1
            if seq != 0:
                yield v(number, f"system/init has seq {_said(seq)}, not 0")
            return
        run = self._open.get(sid)
        if run is None:
            yield v(
                number,
                f"{_said(kind, quote=False)} line outside a run (a run starts with "
                f"system/init; none is open for session {_said(sid)})",
            )
            return
        expected = run["seq"] + 1
        if seq != expected:
            yield v(number, f"seq {_said(seq)}, expected {expected}")
        run["seq"] = seq if isinstance(seq, int) else expected
        if kind == "result":
            if not isinstance(obj.get("is_error"), bool):
                yield v(number, "result without a boolean is_error")
            if parent != run["parent"]:
                yield v(number, "result of a nested actor inside its parent's run")
            del self._open[sid]

    def finish(self) -> Iterator[Violation]:
        if self.lines == 0:
            yield Violation(self.path, 0, "empty stream: no lines")
        elif not self.allow_open:
            for run in self._open.values():
                yield self._violation(
                    self.lines, f"run from line {run['line']} ends without a result"
                )

    def _violation(self, number: int, reason: str) -> Violation:
        return Violation(self.path, number, reason)


def validate_stream(
    stream: IO[bytes], path: str, allow_open: bool = False, max_line: int | None = None
) -> Iterator[Violation]:
    """Every violation in one stream, in line order. A line longer than
    ``max_line`` (default: the reader's limit) is reported and not read."""
    from streamv1.translator.reading.reader import MAX_LINE_BYTES, line_too_long, read_lines

    limit = MAX_LINE_BYTES if max_line is None else max_line
    checker = StreamChecker(path, allow_open)
    for line in read_lines(stream, path, max_line=limit):
        if line.skipped:
            checker.lines += 1
            yield Violation(path, line.number, line_too_long(line.skipped, limit))
            continue
        if line.nuls:
            yield Violation(path, line.number, f"{line.nuls} NUL bytes (not JSON)")
        yield from checker.check(line.number, line.data, line.terminated)
    yield from checker.finish()
