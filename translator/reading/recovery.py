"""Damaged lines: every complete record that can be found on one, and the rest
reported as :class:`Damage`.

The reader (:mod:`translator.reading.reader`) parses a whole line with orjson; a
line that is no JSON object by itself (or too long for orjson to try) comes here,
its NUL bytes taken out. Damage seen in real Claude Code files
(anthropics/claude-code #52387, #81843): ``}{`` (two records with the newline
between them missing), a truncated record spliced onto the start of the next one,
a cut-off final line (a process killed mid-write), bytes that are not UTF-8.

Recovery reads with the stdlib decoder, which can say where a parse broke and go
on from any offset; what it reads is then held to orjson's rules (:func:`unfit`,
:func:`fix_surrogates`), so a record reads the same whichever decoder read it. The
reader's JSON document path shares that decoder and those rules.

Apart from the reader because it is the cold path: a clean file never calls it.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

#: The most of an unreadable fragment kept in its report.
FRAGMENT_CHARS = 2000

WS = " \t\r\n"
_SURROGATE = re.compile("[\ud800-\udfff]")


def _parse_int(digits: str) -> Any:
    """orjson's rule for integers, in the stdlib decoder of the recovery path: a
    long one becomes a float (infinite when it does not fit a double, refused by
    :func:`unfit`), and ``int()`` never meets 4,300 digits (it raises there)."""
    return int(digits) if len(digits) < 40 else float(digits)


DECODER = json.JSONDecoder(parse_int=_parse_int)


#: Deeper than either decoder reads (orjson: 1,024 levels; the stdlib's: the
#: interpreter's recursion limit, ~1,000).
TOO_DEEP = "nested too deep to read (over ~1,000 levels)"


@dataclass(slots=True)
class Damage:
    """Part of a line that could not be read as a JSON object."""

    reason: str
    fragment: str
    lost: bool = True  # False: the record was kept (e.g. bytes replaced), only reported
    tolerated: bool = False  # a cut-off final line: counted, not an error
    kind: str | None = None  # the system/error's kind, where the default does not say it
    extension: dict[str, Any] | None = None  # more to report (a skipped line's length)


def recover(data: bytes, terminated: bool) -> Iterator[dict[str, Any] | Damage]:
    """The records on a damaged line, in order, with a report for each part that is
    none (``terminated``: the line ended with its newline, as all but a cut-off
    final line do)."""
    items = _objects(data, terminated)
    return items if terminated else _tolerate(items)


def _objects(data: bytes, terminated: bool) -> Iterator[dict[str, Any] | Damage]:
    """The line's objects; bytes that are not UTF-8 are replaced first, and said."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        text = data.decode("utf-8", errors="replace")
        yield Damage(f"invalid UTF-8 at byte {exc.start}; replaced with U+FFFD", "", lost=False)
    yield from _split_objects(text, terminated)


def _tolerate(items: Iterator[dict[str, Any] | Damage]) -> Iterator[dict[str, Any] | Damage]:
    """A cut-off final line: a process killed mid-write leaves a partial object at
    the end. When no record at all is found on it, its damage is one tolerated
    report (a multi-byte character it cut in two is part of the same cut)."""
    held: list[Damage] = []
    for item in items:
        if type(item) is dict:
            yield from held
            held = []
            yield item
            yield from items
            return
        held.append(item)  # type: ignore[arg-type]
    if held:
        fragment = next((d.fragment for d in held if d.fragment), "")
        yield Damage("truncated final line", fragment, tolerated=True)


def _split_objects(text: str, terminated: bool) -> Iterator[dict[str, Any] | Damage]:
    """Find every complete JSON object on the line (``}{`` joins, splices).

    A newline is written after a complete record, so a terminated line ends with
    one: an object that runs to the end of a terminated line is a record. On a
    cut-off final line it may be a nested object of the cut record instead, so it
    only counts there when another object follows it.

    Linear time on any line: every decode attempt is charged to a budget of a few
    times the line's length; once it is spent, the rest of the line is one
    unreadable fragment (a line of 100k nested objects would otherwise be parsed
    again from each of its 100k starts).
    """
    pos = 0
    end = len(text)
    last = end  # just past the last character that is not white space
    while last > 0 and text[last - 1] in WS:
        last -= 1
    first = True
    budget = _Budget(4 * end + 65536)
    escapes = "\\ud" in text or "\\uD" in text  # lone surrogates need one
    while pos < end:
        while pos < end and text[pos] in WS:
            pos += 1
        if pos >= end:
            break
        value, stop, failed_at, why = budget.decode(text, pos)
        if first and stop == last and type(value) is not dict:
            # The whole line is one value, not an object (as orjson would have said).
            yield Damage("not a JSON object", _cut(text, pos, min(stop, pos + 200)))
            return
        first = False
        if stop > pos and type(value) is dict:
            reason = unfit(value)
            if reason is None:
                if escapes and fix_surrogates(value):
                    yield Damage("lone surrogate escape replaced with U+FFFD", "", lost=False)
                yield value
            else:
                yield Damage(reason, _cut(text, pos, stop))
            pos = stop
            continue
        # Not an object from here. Where the parse broke is where a spliced record
        # begins (a `{` where a `,` was due); else look for the next object start.
        nxt = _splice_start(text, pos, failed_at, budget)
        if nxt < 0:
            nxt = _next_object_start(text, pos + 1, terminated, budget)
        yield Damage(why or "unreadable JSON fragment", _cut(text, pos, nxt))
        pos = nxt


class _Budget:
    """What the recovery of one line may still spend on decode attempts (chars)."""

    __slots__ = ("left",)

    def __init__(self, chars: int) -> None:
        self.left = chars

    def decode(self, text: str, pos: int) -> tuple[Any, int, int, str | None]:
        """(value, stop, where it failed, why when the reason is not plain syntax);
        stop is -1 on failure."""
        try:
            value, stop = DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            self.left -= exc.pos - pos + 1
            return None, -1, exc.pos, None
        except RecursionError:
            self.left -= len(text) - pos  # how far it went is not known: all of it
            return None, -1, -1, TOO_DEEP
        self.left -= stop - pos
        return value, stop, -1, None


def _splice_start(text: str, pos: int, failed_at: int, budget: _Budget) -> int:
    """The start of the record a truncated one was spliced onto, or -1."""
    if failed_at <= pos or failed_at >= len(text.rstrip(WS)) or budget.left <= 0:
        return -1  # ran out of input: a cut-off record, nothing spliced after it
    start = text.rfind("{", pos + 1, failed_at + 1)
    if start < 0:
        return -1
    value, stop, _, _ = budget.decode(text, start)
    if stop < 0:
        return -1
    rest = text[stop : stop + 64].lstrip(WS)
    return start if isinstance(value, dict) and (not rest or rest[0] == "{") else -1


def _next_object_start(text: str, pos: int, terminated: bool, budget: _Budget) -> int:
    """The next ``{"`` that starts a whole record, or the end of the text.

    A whole record is a complete object followed by nothing or by another object:
    an object nested inside a truncated record (a content block, say) is followed by
    the rest of its parent instead, so it is never mistaken for a record.
    """
    while budget.left > 0:
        i = text.find('{"', pos)
        if i < 0:
            return len(text)
        value, stop, _, _ = budget.decode(text, i)
        if stop < 0:
            pos = i + 1
            continue
        rest = text[stop : stop + 64].lstrip(WS)
        if isinstance(value, dict) and ((not rest and terminated) or rest[:1] == "{"):
            return i
        pos = i + 1
    return len(text)


def unfit(value: Any) -> str | None:
    """Why a record the stdlib decoder read (the recovery path) is not one orjson
    would have read, or None: NaN or an infinity (``NaN``, ``Infinity``,
    ``1e400``: orjson refuses them, and writes NaN as null). An integer beyond 64
    bits is made a float, as orjson reads it. (Depth is the encoder's concern:
    :func:`translator.output.encode.encode`.)
    """
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        items = node.items() if type(node) is dict else enumerate(node)
        for key, child in items:
            kind = type(child)
            if kind is dict or kind is list:
                stack.append(child)
            elif kind is float:
                if not math.isfinite(child):
                    return "number out of range (NaN, Infinity or beyond a double)"
            elif kind is int and not -(2**63) <= child < 2**64:
                node[key] = float(child)  # (below 40 digits: always a finite double)
    return None


def fix_surrogates(value: Any) -> int:
    """Lone surrogates (``\\ud800`` escapes with no pair) → U+FFFD, in place; how
    many strings changed. orjson refuses them (it writes only valid UTF-8); the
    stdlib decoder of the recovery path reads them. Node writes them for a string
    cut inside a surrogate pair, so the record is kept, as with invalid UTF-8."""
    fixed = 0
    stack: list[Any] = [value]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            if any(_SURROGATE.search(k) for k in node):
                items = [(_SURROGATE.sub("\ufffd", k), v) for k, v in node.items()]
                node.clear()
                node.update(items)
                fixed += 1
            keys: Any = list(node)
        else:
            keys = range(len(node))
        for key in keys:
            child = node[key]
            kind = type(child)
            if kind is str:
                if _SURROGATE.search(child):
                    node[key] = _SURROGATE.sub("\ufffd", child)
                    fixed += 1
            elif kind is dict or kind is list:
                stack.append(child)
    return fixed


def _cut(text: str, start: int, stop: int) -> str:
    """A fragment for its report: at most FRAGMENT_CHARS of it."""
    if stop - start <= FRAGMENT_CHARS:
        return text[start:stop]
    return text[start : start + FRAGMENT_CHARS] + "…"
