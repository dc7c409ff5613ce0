"""gitleaks' regexes (Go's RE2) read into a tree of byte sets, and what a tree matches.

:mod:`translator.secrets.gitleaks` translates a rule by reading its regex here into
sets of bytes, sequences, alternatives, repeats and groups, so RE2's differences
from Python's ``re`` (``(?i)`` mid-pattern, ``\\z``, ``[[:alnum:]]``) are gone before
anything is written out (:mod:`translator.secrets.gitleaks_emit`). Apart from the
translation because it is the one part that knows RE2's syntax; the rest works on
the tree: which bytes a node can start or end with, how wide it is, and made-up
bytes it matches (the kinds' examples).
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

ALL = frozenset(range(256))
ALNUM = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_WORD = ALNUM | {ord("_")}
_SPACE = frozenset(b"\t\n\f\r ")
_DIGITS = frozenset(b"0123456789")
#: bytes that never stand raw inside an encoded JSON string (or end it)
NOT_RAW = frozenset(range(0x20)) | {ord('"'), ord("\\")}

# -- RE2 → a tree of byte sets ---------------------------------------------------


@dataclass(frozen=True)
class Chars:
    """One byte of ``set``; ``lit``: the byte as the rule writes it, if a literal."""

    set: frozenset[int]
    lit: int | None = None


@dataclass(frozen=True)
class Seq:
    items: tuple[Node, ...]


@dataclass(frozen=True)
class Alt:
    branches: tuple[Node, ...]


@dataclass(frozen=True)
class Rep:
    item: Node
    lo: int
    hi: int | None
    lazy: bool = False


@dataclass(frozen=True)
class Cap:
    index: int
    body: Node


@dataclass(frozen=True)
class Anchor:
    kind: str  # b B ^ $ A z


Node = Chars | Seq | Alt | Rep | Cap | Anchor


class Unsupported(ValueError):
    """A rule's regex uses what this translation does not take."""


_POSIX = {
    "alnum": ALNUM,
    "alpha": ALNUM - _DIGITS,
    "digit": _DIGITS,
    "word": _WORD,
    "space": _SPACE,
    "upper": frozenset(range(65, 91)),
    "lower": frozenset(range(97, 123)),
    "xdigit": frozenset(b"0123456789abcdefABCDEF"),
}
_CLASS_ESC = {"d": _DIGITS, "w": _WORD, "s": _SPACE}
_CHAR_ESC = {"n": 0x0A, "r": 0x0D, "t": 0x09, "f": 0x0C, "v": 0x0B, "a": 0x07}


def fold(chars: frozenset[int]) -> frozenset[int]:
    return chars | {c ^ 0x20 for c in chars if 65 <= c <= 90 or 97 <= c <= 122}


class _Parser:
    """RE2's syntax, as far as gitleaks' rules use it."""

    def __init__(self, text: str) -> None:
        self.s = text
        self.i = 0
        self.groups = 0

    def parse(self) -> Node:
        node = self.alt({"i": False, "s": False})
        if self.i != len(self.s):
            raise Unsupported(f"unbalanced ')' at {self.i}")
        return node

    def peek(self) -> str:
        return self.s[self.i] if self.i < len(self.s) else ""

    def alt(self, flags: dict[str, bool]) -> Node:
        branches = [self.seq(flags)]
        while self.peek() == "|":
            self.i += 1
            branches.append(self.seq(flags))
        return branches[0] if len(branches) == 1 else Alt(tuple(branches))

    def seq(self, flags: dict[str, bool]) -> Node:
        items: list[Node] = []
        while self.peek() not in ("", "|", ")"):
            if self.s.startswith("(?", self.i):
                m = re.compile(r"\(\?(-?[is]+|[is]+-[is]+)\)").match(self.s, self.i)
                if m:  # flags for the rest of this group
                    self.i = m.end()
                    _set_flags(flags, m.group(1))
                    continue
            atom = self.atom(flags)
            items.append(self.quantified(atom))
        return items[0] if len(items) == 1 else Seq(tuple(items))

    def quantified(self, atom: Node) -> Node:
        c = self.peek()
        lo: int
        hi: int | None
        if c == "*":
            lo, hi = 0, None
        elif c == "+":
            lo, hi = 1, None
        elif c == "?":
            lo, hi = 0, 1
        elif c == "{" and (m := re.compile(r"\{(\d+)(,(\d*))?\}").match(self.s, self.i)):
            lo = int(m.group(1))
            hi = lo if m.group(2) is None else (int(m.group(3)) if m.group(3) else None)
            self.i = m.end() - 1
        else:
            return atom
        self.i += 1
        lazy = self.peek() == "?"
        if lazy:
            self.i += 1
        if self.peek() in ("*", "+", "?"):
            raise Unsupported("a repeat of a repeat")
        return Rep(atom, lo, hi, lazy)

    def atom(self, flags: dict[str, bool]) -> Node:
        c = self.peek()
        self.i += 1
        ci = flags["i"]
        if c == "(":
            inner = dict(flags)
            index = 0
            if self.s.startswith("?:", self.i):
                self.i += 2
            elif self.s.startswith("?P<", self.i):
                self.i = self.s.index(">", self.i) + 1
                self.groups += 1
                index = self.groups
            elif self.peek() == "?":
                m = re.compile(r"\?(-?[is]+|[is]+-[is]+):").match(self.s, self.i)
                if not m:
                    raise Unsupported(f"group syntax at {self.i}")
                _set_flags(inner, m.group(1))
                self.i = m.end()
            else:
                self.groups += 1
                index = self.groups
            body = self.alt(inner)
            if self.peek() != ")":
                raise Unsupported("unclosed group")
            self.i += 1
            return Cap(index, body) if index else body
        if c == "[":
            return Chars(self.klass(ci))
        if c == "\\":
            return self.escape(ci)
        if c == ".":
            return Chars(ALL if flags["s"] else ALL - {0x0A})
        if c in "^$":
            return Anchor(c)
        byte = ord(c)
        if byte > 0x7F:
            raise Unsupported("a non-ASCII literal")
        return Chars(fold(frozenset({byte})) if ci else frozenset({byte}), byte)

    def escape(self, ci: bool) -> Node:
        c = self.peek()
        self.i += 1
        if c in "bBAz":
            return Anchor(c)
        if c.lower() in _CLASS_ESC:
            chars = _CLASS_ESC[c.lower()]
            return Chars(ALL - chars if c.isupper() else chars)
        byte = self.escaped_byte(c)
        return Chars(fold(frozenset({byte})) if ci else frozenset({byte}), byte)

    def escaped_byte(self, c: str) -> int:
        if c == "x":
            if self.peek() == "{":
                end = self.s.index("}", self.i)
                value = int(self.s[self.i + 1 : end], 16)
                self.i = end + 1
            else:
                value = int(self.s[self.i : self.i + 2], 16)
                self.i += 2
            return value
        if c in _CHAR_ESC:
            return _CHAR_ESC[c]
        if c.isalnum():
            raise Unsupported(f"escape \\{c}")
        return ord(c)

    def klass(self, ci: bool) -> frozenset[int]:
        negate = self.peek() == "^"
        if negate:
            self.i += 1
        chars: set[int] = set()
        first = True
        while True:
            c = self.peek()
            if c == "":
                raise Unsupported("unclosed class")
            if c == "]" and not first:
                self.i += 1
                break
            first = False
            if self.s.startswith("[:", self.i):
                end = self.s.index(":]", self.i)
                chars |= _POSIX[self.s[self.i + 2 : end]]
                self.i = end + 2
                continue
            self.i += 1
            if c == "\\":
                e = self.peek()
                self.i += 1
                if e.lower() in _CLASS_ESC:
                    sub = _CLASS_ESC[e.lower()]
                    chars |= (ALL - sub) if e.isupper() else sub
                    continue
                low = self.escaped_byte(e)
            else:
                low = ord(c)
            if self.peek() == "-" and self.i + 1 < len(self.s) and self.s[self.i + 1] != "]":
                self.i += 1
                h = self.peek()
                self.i += 1
                high = self.escaped_byte(self._next()) if h == "\\" else ord(h)
                if high < low:
                    raise Unsupported("a reversed range")
                chars |= set(range(low, high + 1))
            else:
                chars.add(low)
        out = frozenset(chars)
        if ci:
            out = fold(out)
        return ALL - out if negate else out

    def _next(self) -> str:
        c = self.peek()
        self.i += 1
        return c


def _set_flags(flags: dict[str, bool], spec: str) -> None:
    on, _, off = spec.partition("-")
    for f in on:
        flags[f] = True
    for f in off:
        flags[f] = False


def parse(regex: str) -> Node:
    return _Parser(regex).parse()


# -- what a node can match -----------------------------------------------------------


def items_of(node: Node) -> tuple[Node, ...]:
    return node.items if isinstance(node, Seq) else (node,)


def nullable(node: Node) -> bool:
    if isinstance(node, Chars):
        return False
    if isinstance(node, Anchor):
        return True
    if isinstance(node, Seq):
        return all(nullable(i) for i in node.items)
    if isinstance(node, Alt):
        return any(nullable(b) for b in node.branches)
    if isinstance(node, Rep):
        return node.lo == 0 or nullable(node.item)
    return nullable(node.body)


def firsts(node: Node) -> frozenset[int]:
    """The bytes a match of ``node`` can start with."""
    return _edge(node, front=True)


def lasts(node: Node) -> frozenset[int]:
    """The bytes a match of ``node`` can end with."""
    return _edge(node, front=False)


def _edge(node: Node, front: bool) -> frozenset[int]:
    """``firsts`` or ``lasts``: one walk, a sequence read from its front or its back
    as far as the first item that cannot match nothing."""
    if isinstance(node, Chars):
        return node.set
    if isinstance(node, Anchor):
        return frozenset()
    if isinstance(node, Seq):
        out: frozenset[int] = frozenset()
        for item in node.items if front else reversed(node.items):
            out |= _edge(item, front)
            if not nullable(item):
                break
        return out
    if isinstance(node, Alt):
        return frozenset().union(*(_edge(b, front) for b in node.branches))
    if isinstance(node, Rep):
        return _edge(node.item, front)
    return _edge(node.body, front)


def width(node: Node) -> tuple[int, int | None]:
    """The fewest and most bytes a node matches (None: no bound)."""
    if isinstance(node, Chars):
        return 1, 1
    if isinstance(node, Anchor):
        return 0, 0
    if isinstance(node, Seq | Alt):
        parts = [width(i) for i in (node.items if isinstance(node, Seq) else node.branches)]
        if isinstance(node, Seq):
            lo = sum(p[0] for p in parts)
            hi = None if any(p[1] is None for p in parts) else sum(p[1] or 0 for p in parts)
        else:
            lo = min(p[0] for p in parts)
            hi = None if any(p[1] is None for p in parts) else max(p[1] or 0 for p in parts)
        return lo, hi
    if isinstance(node, Rep):
        lo, hi = width(node.item)
        return lo * node.lo, (None if node.hi is None or hi is None else hi * node.hi)
    return width(node.body)


# -- examples ------------------------------------------------------------------------

_PRINTABLE = frozenset(range(0x21, 0x7F)) - NOT_RAW


def _pick(chars: frozenset[int], rng: random.Random) -> int:
    for pool in (chars & ALNUM, chars & _PRINTABLE, chars):
        if pool:
            return rng.choice(sorted(pool))
    raise Unsupported("an empty set")


def generate(node: Node, rng: random.Random, least: bool = False) -> bytes:
    """Bytes ``node`` matches, made up: a literal as written, random bytes of a set,
    the first alternative, and of a repeat its least (``least``: around the
    secret) or 16 (within bounds)."""
    if isinstance(node, Chars):
        if node.lit is not None and node.lit in node.set:
            return bytes([node.lit])
        if len(node.set) > 128 and ord(".") in node.set:
            return b"."  # (an unescaped "." of a host name: any byte, written as a dot)
        return bytes([_pick(node.set, rng)])
    if isinstance(node, Anchor):
        return b""
    if isinstance(node, Seq):
        return b"".join(generate(i, rng, least) for i in node.items)
    if isinstance(node, Alt):
        return generate(node.branches[0], rng, least)
    if isinstance(node, Cap):
        return generate(node.body, rng, least)
    if node.lo == node.hi or least:
        n = node.lo
    elif node.lo == 0 and node.hi is not None and node.hi <= 3:
        n = 0
    else:
        n = max(node.lo, min(node.hi if node.hi is not None else 16, 16))
    return b"".join(generate(node.item, rng, least) for _ in range(n))
