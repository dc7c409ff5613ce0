"""A seeded mutation fuzzer over the real fixtures in ``testdata/``.

Shared by ``tests/test_fuzz.py`` (a few thousand mutants in CI) and
``bench/fuzz.py`` (tens of thousands). A mutant is a fixture with one to three
mutations: byte flips, inserted structural bytes, truncation, duplicated, swapped,
deleted and spliced lines, a value of a random record replaced by an edge value
(another type, a number out of range, a lone surrogate, a timestamp out of range,
deep nesting), number and unicode edits on the raw bytes. Everything is drawn
from ``random.Random(seed)``: a failing seed reproduces its mutant exactly.

:func:`check` converts a mutant in-process the way ``streamv1 convert`` does and
returns what is wrong with the result: an exception (a traceback for a user), an
output line the schema rejects (the project's validator and an independent one),
a system/error line that names no file:line, or ``streamv1 validate`` raising on
the mutant.
"""

from __future__ import annotations

import io
import random
import re
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
FIXED_NOW = "2026-01-01T00:00:00.000Z"
SOURCES = ("claude-session", "claude-stream", "gemini", "stella", "stream_v1")


def fixtures() -> list[Path]:
    """Every input fixture (and every golden output: stream_v1 inputs in turn)."""
    found = [
        p
        for p in sorted(TESTDATA.rglob("*"))
        if p.is_file()
        and (p.suffix == ".jsonl" or p.name.endswith(".document.json"))
        and "tail" not in p.relative_to(TESTDATA).parts
    ]
    return found


# -- edge values ---------------------------------------------------------------

_DEEP = (5, 100, 199, 200, 201, 253, 254, 255, 300, 990, 1025, 1100, 5000)
EDGE_NUMBERS = (
    b"0",
    b"-0",
    b"-1",
    b"1.5",
    b"1e308",
    b"1e400",
    b"-1e400",
    b"1e-400",
    b"NaN",
    b"Infinity",
    b"-Infinity",
    b"9007199254740993",
    b"9223372036854775807",
    b"9223372036854775808",
    b"18446744073709551615",
    b"18446744073709551616",
    b"-9223372036854775809",
    b"1" * 5000,
    b"-" + b"9" * 4301,
    b"1E5",
    b"0.0",
)
EDGE_STRINGS = (
    b'"\\ud800"',
    b'"a\\udc00b"',
    b'"\\ud83d\\ude00"',
    b'"\\u0000"',
    b'"\\u001b[31mred\\u001b[0m"',
    b'"\\u2028\\u2029"',
    b'""',
    b'"\xff\xfe"',
    b'"\xc3"',
    b'"\xed\xa0\x80"',
    b'"\xef\xbb\xbf"',
)
EDGE_TIMES = (
    b'"0000-01-01T00:00:00Z"',
    b'"0999-12-31T23:59:59Z"',
    b'"0001-01-01T00:00:00+05:00"',
    b'"9999-12-31T23:59:59-05:00"',
    b'"9999-12-31T23:59:59.999999Z"',
    b'"2025-13-45T99:99:99Z"',
    b'"2025-01-01"',
    b'"2025-01-01T00:00:00"',
    b'"2025-01-01 00:00:00.123456789+00:00"',
    b'"now"',
    b'""',
    b'"\\ud800"',
    b"1e20",
    b"-1",
    b"9223372036854775807",
    b"1.5e15",
    b"253402300800000",
    b"-62135596800001",
    b'"2025-01-01T00:00:00.000Z"',
    b"true",
    b"null",
)
EDGE_VALUES = (
    b"null",
    b"true",
    b"false",
    b"0",
    b"-1",
    b"[]",
    b"{}",
    b"[1]",
    b'["a"]',
    b'[{"type":1}]',
    b'{"type":["user"]}',
    b'{"type":{}}',
    b'"x"',
    b"[[]]",
    b'[null,{"a":[]}]',
    b'[1,"a",{}]',
    b'{"type":"text","text":5}',
    b'{"type":"tool_use","id":[],"input":1}',
)
EDGE_KEYS = (
    "type",
    "subtype",
    "session_id",
    "sessionId",
    "message",
    "content",
    "timestamp",
    "ts",
    "usage",
    "tools",
    "mcp_servers",
    "model",
    "id",
    "parent_tool_use_id",
    "seq",
    "event",
    "delta",
    "index",
    "is_error",
    "uuid",
    "parentUuid",
    "isSidechain",
    "toolUseResult",
    "input_tokens",
    "num_turns",
    "duration_ms",
    "total_cost_usd",
    "cost_usd",
    "agent",
)
TOKENS = (
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b"\\",
    b"\n",
    b"\r\n",
    b",",
    b":",
    b"}{",
    b"\x00" * 17,
    b"\xff",
    b"\xc3",
    b"\x1b[31m",
    b"\\u",
    b"\\ud800",
    b'{"',
    b"NaN",
    b"-",
    b"e",
    b" ",
)


def _deep(rng: random.Random, inner: bytes = b"1") -> bytes:
    depth = rng.choice(_DEEP)
    if rng.random() < 0.5:
        return b"[" * depth + inner + b"]" * depth
    return b'{"a":' * depth + inner + b"}" * depth


def _edge(rng: random.Random, key: str | None, original: Any) -> bytes:
    roll = rng.random()
    if key in ("timestamp", "ts") and roll < 0.7:
        return rng.choice(EDGE_TIMES)
    if roll < 0.15:
        return rng.choice(EDGE_NUMBERS)
    if roll < 0.3:
        return rng.choice(EDGE_STRINGS)
    if roll < 0.4:
        return rng.choice(EDGE_TIMES)
    if roll < 0.5:
        return _deep(rng, orjson.dumps(original) if rng.random() < 0.5 else b"1")
    if roll < 0.6:
        return b"[" + orjson.dumps(original) + b"]"  # the value, wrapped in a list
    if roll < 0.65:
        return orjson.dumps("x" * rng.choice((1000, 70_000)))
    return rng.choice(EDGE_VALUES)


# -- mutations -------------------------------------------------------------------

_MARK = "\x00fuzz\x00"
_MARK_JSON = orjson.dumps(_MARK)


def _paths(value: Any) -> Iterator[tuple[Any, ...]]:
    """Every path into ``value`` (a loop, and 60 levels at most: an earlier
    mutation may have nested it deeper than Python recurses)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(value, ())]
    while stack:
        node, prefix = stack.pop()
        yield prefix
        if len(prefix) >= 60:
            continue
        if isinstance(node, dict):
            stack += [(v, (*prefix, k)) for k, v in node.items()]
        elif isinstance(node, list):
            stack += [(v, (*prefix, i)) for i, v in enumerate(node)]


def _get(value: Any, path: tuple[Any, ...]) -> Any:
    for p in path:
        value = value[p]
    return value


def _set(value: Any, path: tuple[Any, ...], new: Any) -> Any:
    if not path:
        return new
    _get(value, path[:-1])[path[-1]] = new
    return value


def _lines(data: bytes) -> list[bytes]:
    return data.split(b"\n")


def m_flip(rng: random.Random, data: bytes, _: list[bytes]) -> bytes:
    if not data:
        return data
    buf = bytearray(data)
    for _i in range(rng.randint(1, 8)):
        pos = rng.randrange(len(buf))
        buf[pos] = rng.randrange(256) if rng.random() < 0.5 else rng.choice(b'{}[]",:\\\n\x00 0')
    return bytes(buf)


def m_insert(rng: random.Random, data: bytes, _: list[bytes]) -> bytes:
    pos = rng.randint(0, len(data))
    return data[:pos] + rng.choice(TOKENS) + data[pos:]


def m_truncate(rng: random.Random, data: bytes, _: list[bytes]) -> bytes:
    return data[: rng.randint(0, len(data))]


def m_cut_line(rng: random.Random, data: bytes, _: list[bytes]) -> bytes:
    """A record cut short and spliced onto the next (no newline between)."""
    lines = _lines(data)
    i = rng.randrange(len(lines))
    if lines[i]:
        lines[i] = lines[i][: rng.randrange(len(lines[i]))]
    if i + 1 < len(lines):
        lines[i : i + 2] = [lines[i] + lines[i + 1]]
    return b"\n".join(lines)


def m_join(rng: random.Random, data: bytes, _: list[bytes]) -> bytes:
    """`}{`: two records with the newline between them lost."""
    lines = _lines(data)
    if len(lines) > 1:
        i = rng.randrange(len(lines) - 1)
        lines[i : i + 2] = [lines[i] + lines[i + 1]]
    return b"\n".join(lines)


def m_duplicate(rng: random.Random, data: bytes, _: list[bytes]) -> bytes:
    lines = _lines(data)
    i = rng.randrange(len(lines))
    j = min(len(lines), i + rng.randint(1, 4))
    lines[j:j] = lines[i:j] * rng.randint(1, 3)
    return b"\n".join(lines)


def m_swap_delete(rng: random.Random, data: bytes, _: list[bytes]) -> bytes:
    lines = _lines(data)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    if rng.random() < 0.5:
        lines[i], lines[j] = lines[j], lines[i]
    else:
        del lines[i]
    return b"\n".join(lines)


def m_splice(rng: random.Random, data: bytes, others: list[bytes]) -> bytes:
    """Lines of another fixture (another source, maybe) in this one."""
    other = _lines(rng.choice(others))
    lines = _lines(data)
    pos = rng.randint(0, len(lines))
    start = rng.randrange(len(other))
    lines[pos:pos] = other[start : start + rng.randint(1, 3)]
    return b"\n".join(lines)


def m_value(rng: random.Random, data: bytes, _: list[bytes]) -> bytes:
    """A value somewhere in one record replaced by an edge value (raw bytes: some
    cannot be made by a JSON encoder, e.g. NaN, 2**64, a lone surrogate)."""
    lines = _lines(data)
    candidates = [i for i, line in enumerate(lines) if line.startswith(b"{")]
    if not candidates:
        return m_flip(rng, data, _)
    i = rng.choice(candidates)
    try:
        rec = orjson.loads(lines[i])
    except orjson.JSONDecodeError:
        return m_flip(rng, data, _)
    paths = list(_paths(rec))
    keyed = [p for p in paths if p and p[-1] in EDGE_KEYS]
    path = rng.choice(keyed) if keyed and rng.random() < 0.7 else rng.choice(paths)
    key = path[-1] if path and isinstance(path[-1], str) else None
    original = _get(rec, path)
    try:
        edge = _edge(rng, key, original)
        if rng.random() < 0.1 and path and isinstance(path[-1], str):
            parent = _get(rec, path[:-1])
            del parent[path[-1]]  # a key gone instead
            lines[i] = orjson.dumps(rec)
        else:
            lines[i] = orjson.dumps(_set(rec, path, _MARK)).replace(_MARK_JSON, edge, 1)
    except TypeError:  # a record an earlier mutation nested too deep to write
        return m_flip(rng, data, _)
    return b"\n".join(lines)


_NUMBER = re.compile(rb"(?<=[:\[,])-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?")
_STRING_START = re.compile(rb'(?<=[:\[,])"')


def m_number(rng: random.Random, data: bytes, _: list[bytes]) -> bytes:
    found = list(_NUMBER.finditer(data))
    if not found:
        return m_insert(rng, data, _)
    m = rng.choice(found)
    return data[: m.start()] + rng.choice(EDGE_NUMBERS) + data[m.end() :]


def m_unicode(rng: random.Random, data: bytes, _: list[bytes]) -> bytes:
    found = list(_STRING_START.finditer(data))
    if not found:
        return m_insert(rng, data, _)
    m = rng.choice(found)
    piece = rng.choice(EDGE_STRINGS)[1:-1]
    return data[: m.end()] + piece + data[m.end() :]


def m_nest(rng: random.Random, data: bytes, _: list[bytes]) -> bytes:
    """A value wrapped in deep nesting, or a whole line of it."""
    if rng.random() < 0.3:
        lines = _lines(data)
        lines.insert(rng.randint(0, len(lines)), b'{"type":"user","x":' + _deep(rng) + b"}")
        return b"\n".join(lines)
    found = list(_STRING_START.finditer(data))
    if not found:
        return data + _deep(rng)
    m = rng.choice(found)
    depth = rng.choice(_DEEP)
    return data[: m.start()] + b"[" * depth + b"1" + b"]" * depth + b"," + data[m.start() :]


MUTATIONS: tuple[Callable[[random.Random, bytes, list[bytes]], bytes], ...] = (
    m_flip,
    m_insert,
    m_truncate,
    m_cut_line,
    m_join,
    m_duplicate,
    m_swap_delete,
    m_splice,
    m_value,
    m_value,
    m_value,
    m_number,
    m_unicode,
    m_nest,
)


@dataclass
class Mutant:
    seed: int
    name: str  # the fixture it came from
    data: bytes
    source: str | None  # None: --source auto
    to: str
    redact: bool = True
    ops: list[str] = field(default_factory=list)
    #: Reads of these sizes, in turn (a pipe): every chunk boundary case of the
    #: reader; the output must not depend on them. Empty: whole reads.
    chunks: list[int] = field(default_factory=list)
    max_line: int | None = None  # a small limit now and then: the skipping path


class Mutator:
    def __init__(self, paths: list[Path] | None = None) -> None:
        self.paths = paths if paths is not None else fixtures()
        self.data = [p.read_bytes() for p in self.paths]

    def mutant(self, seed: int) -> Mutant:
        rng = random.Random(seed)
        i = rng.randrange(len(self.paths))
        data = self.data[i]
        ops = []
        for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
            op = rng.choice(MUTATIONS)
            data = op(rng, data, self.data)
            ops.append(op.__name__)
        source = rng.choice((None, None, *SOURCES))
        to = "claude" if rng.random() < 0.25 else "stream_v1"
        redact = rng.random() < 0.75
        name = str(self.paths[i].relative_to(TESTDATA))
        chunks = []
        if rng.random() < 0.3:
            chunks = [rng.randint(1, 300) for _ in range(rng.randint(1, 5))]
        max_line = rng.choice((64, 300, 1000, 5000)) if rng.random() < 0.15 else None
        return Mutant(seed, name, data, source, to, redact, ops, chunks, max_line)


# -- checking --------------------------------------------------------------------


@dataclass
class Outcome:
    exit_status: int  # as the command would exit
    lines: int
    failures: list[str]  # "traceback: ...", "schema: ...", "error line: ..."

    @property
    def traceback(self) -> bool:
        return any(f.startswith("traceback") for f in self.failures)


_NAMES_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+): ")


class Chunked(io.RawIOBase):
    """A stream that hands back bytes in the given sizes, in turn (like a pipe)."""

    def __init__(self, data: bytes, sizes: list[int]) -> None:
        self._data = data
        self._pos = 0
        self._sizes = sizes or [1]  # none given: a byte at a time
        self._i = 0

    def readable(self) -> bool:
        return True

    def read1(self, n: int = -1) -> bytes:
        size = self._sizes[self._i % len(self._sizes)]
        self._i += 1
        chunk = self._data[self._pos : self._pos + min(size, n if n > 0 else size)]
        self._pos += len(chunk)
        return chunk

    read = read1  # type: ignore[assignment]


def convert(m: Mutant, path: str, chunks: list[int]) -> tuple[bytes, Any, int, str | None]:
    """(output, totals, exit status, traceback or None): ``streamv1 convert``'s
    rules in-process (an InputError is exit 1, never a traceback)."""
    from streamv1.translator.output.shapes import encoder_for
    from streamv1.translator.reading.reader import MAX_LINE_BYTES
    from streamv1.translator.reading.sources import sources
    from streamv1.translator.translate.one_input import InputError, Totals, convert_stream

    out = io.BytesIO()
    totals = Totals()
    stream = Chunked(m.data, chunks) if chunks else io.BytesIO(m.data)
    try:
        convert_stream(
            stream,
            path,
            out.write,
            totals,  # type: ignore[arg-type]
            source=sources()[m.source] if m.source else None,
            clock=lambda: FIXED_NOW,
            encoder=encoder_for(m.to),
            max_line=m.max_line or MAX_LINE_BYTES,
            redact=m.redact,
        )
    except InputError:
        return out.getvalue(), totals, 1, None
    except Exception:
        return out.getvalue(), totals, 99, traceback.format_exc(limit=-4)
    return out.getvalue(), totals, 1 if totals.framing.errors else 0, None


def check(m: Mutant, path: str = "mutant.jsonl") -> Outcome:
    """Convert ``m`` in-process as ``streamv1 convert`` does; what is wrong with it."""
    from helpers import independent_validator

    from streamv1.translator.contract.validate import StreamChecker, validate_stream
    from streamv1.translator.reading.reader import MAX_LINE_BYTES

    failures: list[str] = []
    data, totals, status, trace = convert(m, path, [])
    if trace is not None:
        failures.append("traceback: " + trace)
    read_input = status != 1 or totals.framing.errors > 0  # not an InputError
    if m.chunks and trace is None:
        again, _, status2, trace2 = convert(m, path, m.chunks)
        if trace2 is not None:
            failures.append("traceback (chunked reads): " + trace2)
        elif (again, status2) != (data, status):
            failures.append(f"chunked reads {m.chunks} gave other output than whole reads")
    raw_lines = data.splitlines()
    if m.to == "stream_v1":
        checker = StreamChecker(path)
        schema = independent_validator()
        ours = 0
        for n, raw in enumerate(raw_lines, 1):
            failures += [f"schema: {v}" for v in checker.check(n, raw, True)]
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                failures.append(f"schema: {n}: not JSON ({exc})")
                continue
            failures += [f"schema: {n}: {e.message[:200]}" for e in schema.iter_errors(obj)]
            ours += _our_error_line(obj, path)
        if raw_lines:
            failures += [f"schema: {v}" for v in checker.finish()]
        reported = totals.framing.errors + totals.framing.tolerated
        if read_input and status != 99 and ours != reported:
            failures.append(
                f"error line: {reported} problems, {ours} system/error lines name {path}:LINE"
            )
    else:
        for n, raw in enumerate(raw_lines, 1):
            try:
                obj = orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                failures.append(f"schema: {n}: not JSON ({exc})")
                continue
            if not isinstance(obj, dict):
                failures.append(f"schema: {n}: not an object")
    try:
        for _ in validate_stream(io.BytesIO(m.data), path, max_line=m.max_line or MAX_LINE_BYTES):
            pass
    except Exception:
        failures.append("traceback (validate): " + traceback.format_exc(limit=-4))
    if any("internal_error" in line for line in (r.decode("utf-8", "replace") for r in raw_lines)):
        failures.append("internal error: a rule failed on this input (see its system/error)")
    return Outcome(status, len(raw_lines), failures)


def _our_error_line(obj: dict[str, Any], path: str) -> int:
    """1 for a system/error line of this input's own that names file:line in its
    message and in its extension (path, line ≥ 1); a stream_v1 input's error
    lines, passed on, name their own files."""
    if obj.get("type") != "system" or obj.get("subtype") != "error":
        return 0
    message, ext = obj.get("message"), obj.get("extension")
    if not isinstance(message, str) or not isinstance(ext, dict) or ext.get("path") != path:
        return 0
    found = _NAMES_LINE.match(message)
    line = ext.get("line")
    ok = found is not None and found["path"] == path and str(line) == found["line"]
    return 1 if ok and isinstance(line, int) and line >= 1 else 0
