"""One alternative of a gitleaks rule, as a pattern in the design of
:mod:`translator.secrets.redact`.

Apart from the rule set (:mod:`translator.secrets.gitleaks`: which rules, their
checks, the files) and from the regex syntax (:mod:`translator.secrets.gitleaks_regex`,
:mod:`translator.secrets.gitleaks_emit`) because this is the one place that decides
where a secret is in a rule's match and where its pattern starts, reads and ends.
Each alternative of a rule (and each case of a name) is a pattern of its own:

* it starts with a literal, so ``re`` skips to candidates at memchr speed: the
  secret's own prefix (``glft-``) as gitleaks writes it, or, for a secret known by
  a name (gitleaks' "semi-generic" rules: ``twitter… = <secret>``), the name in
  lower/capitalised and in upper case (``witter`` with ``[Tt]`` read back;
  ``TWITTER``). What stands before the literal at a fixed width
  (``[a-z0-9]{14}.atlasv1.``) is read back by a look-behind (and taken into the
  secret: ``head``). gitleaks' lazy ``[\\w.-]{0,50}?`` before a name matches
  anything and is left out, as is an optional part before a prefix
  (``(?:https?://)?``);
* its core, what the one Hyperscan scan looks for, is that literal and up to 8
  bytes of fixed shape after it;
* after the literal every repeat is bounded, or possessive where nothing after it
  could take back what it read; any other repeat is refused (it could read a line
  again and again);
* a secret stays inside one JSON string (its sets lose ``"``, ``\\`` and control
  bytes); around a name, quotes may be escaped (``\\"``) and ``\\t``, ``\\n`` are
  escapes, as in the encoded line;
* it starts where docs/security.md's boundary rule says (not after an ASCII letter
  or digit, nor after a byte of its prefix that is a byte of the secret too:
  ``.SG.``), not at gitleaks' ``\\b``; where gitleaks says where it ends (its
  terminator: a quote, a space, ``;``, or ``\\b``) it ends where its bytes do, so
  paths, URLs and query strings are masked too; where gitleaks says nothing
  (``AGE-SECRET-KEY-1[…]{58}``), a longer run is masked as far as the pattern reads.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from streamv1.translator.secrets import gitleaks_regex as rx
from streamv1.translator.secrets.gitleaks_emit import byte, charset, emit, literal, sanitize

_CORE_BYTES = 24


def _is_terminator(node: rx.Node) -> bool:
    """gitleaks' end (or start) of a secret: ``\\b``, ``$``, or a choice of single
    bytes and escapes (``(?:[\\x60'"\\s;]|\\\\[nr]|$)``)."""
    if isinstance(node, rx.Anchor):
        return True
    if isinstance(node, rx.Chars):
        return True
    if isinstance(node, rx.Cap):
        return False
    if isinstance(node, rx.Alt):
        return all(
            isinstance(b, rx.Anchor | rx.Chars)
            or (
                isinstance(b, rx.Seq)
                and len(b.items) == 2
                and b.items[0] == rx.Chars(frozenset({0x5C}), 0x5C)
            )
            for b in node.branches
        )
    return False


def _skippable(node: rx.Node) -> bool:
    """What may stand before a rule's start and is not kept: ``\\b``, a lazy
    ``[\\w.-]{0,50}?``, a choice of single bytes (gitleaks' left boundary)."""
    return (
        isinstance(node, rx.Anchor)
        or (isinstance(node, rx.Rep) and node.lazy)
        or (isinstance(node, rx.Alt) and _is_terminator(node))
    )


def _bare(items: list[rx.Node], whole: bool) -> tuple[list[rx.Node], bool]:
    """A secret's items without gitleaks' start of it (``\\b``, a lazy run) and its
    end (``$``, ``\\b``; of a whole match, a terminator too), and whether an end was
    taken off."""
    while items and _skippable(items[0]):
        items = items[1:]
    ended = False
    while items and (
        isinstance(items[-1], rx.Anchor)
        or (whole and isinstance(items[-1], rx.Alt) and _is_terminator(items[-1]))
    ):
        items = items[:-1]
        ended = True
    return items, ended


def expand(node: rx.Node) -> list[rx.Seq]:
    """A rule's alternatives, each a sequence: an alternative at the start (of the
    rule, or of the secret's group) is split into the patterns it stands for."""
    if isinstance(node, rx.Alt):
        return [x for b in node.branches for x in expand(b)]
    items = _flatten(rx.items_of(node))
    i = 0
    while i < len(items) and _skippable(items[i]):
        i += 1
    if i == len(items):
        return [rx.Seq(tuple(items))]
    first = items[i]
    if isinstance(first, rx.Alt):
        return [
            x
            for b in first.branches
            for x in expand(rx.Seq((*items[:i], *_flatten(rx.items_of(b)), *items[i + 1 :])))
        ]
    if isinstance(first, rx.Cap):
        inner = expand(first.body)
        if len(inner) > 1:
            return [
                rx.Seq((*items[:i], rx.Cap(first.index, body), *items[i + 1 :])) for body in inner
            ]
    return [rx.Seq(tuple(items))]


def _flatten(items: tuple[rx.Node, ...]) -> list[rx.Node]:
    out: list[rx.Node] = []
    for item in items:
        if isinstance(item, rx.Seq):
            out += _flatten(item.items)
        else:
            out.append(item)
    return out


def _secret_at(items: list[rx.Node], group: int | None) -> int | None:
    """Where the secret's group is among the top-level items (None: the whole match)."""
    caps = [i for i, item in enumerate(items) if isinstance(item, rx.Cap)]
    if group is not None:
        caps = [i for i in caps if isinstance(items[i], rx.Cap) and items[i].index == group]  # type: ignore[union-attr]
    return caps[0] if caps else None


def _uncap(node: rx.Node) -> rx.Node:
    if isinstance(node, rx.Cap):
        return _uncap(node.body)
    if isinstance(node, rx.Seq):
        return rx.Seq(tuple(_uncap(i) for i in node.items))
    if isinstance(node, rx.Alt):
        return rx.Alt(tuple(_uncap(b) for b in node.branches))
    if isinstance(node, rx.Rep):
        return rx.Rep(_uncap(node.item), node.lo, node.hi, node.lazy)
    return node


@dataclass
class _Start:
    """How a pattern starts: a literal, and what it reads back."""

    literal: bytes
    behind: bytes  # a look-behind after the literal (b"" for none)
    back: frozenset[int]  # the bytes that stand before the literal, read back
    fixed: int  # how many of them
    rest: list[rx.Node]  # the items after the start


def _variants(items: list[rx.Node], named: bool) -> list[list[rx.Node]]:
    """A start of case-blind letters written out: for a name, lower/capitalised
    (first byte either case) and upper case; for a prefix, as the rule writes it."""
    run = 0
    while run < len(items) and isinstance(items[run], rx.Chars):
        run += 1
    head = [i for i in items[:run] if isinstance(i, rx.Chars)]
    folded = [
        c
        for c in head
        if c.lit is not None and len(c.set) == 2 and rx.fold(frozenset({c.lit})) == c.set
    ]
    if not folded:
        return [items]
    if not named:
        return [
            [
                rx.Chars(frozenset({c.lit}), c.lit) if c in folded and c.lit is not None else c
                for c in head
            ]
            + items[run:]
        ]
    lower: list[rx.Node] = []
    upper: list[rx.Node] = []
    for n, c in enumerate(head):
        if c in folded and c.lit is not None:
            lo, up = c.lit | 0x20, c.lit & ~0x20
            lower.append(c if n == 0 else rx.Chars(frozenset({lo}), lo))
            upper.append(rx.Chars(frozenset({up}), up))
        else:
            lower.append(c)
            upper.append(c)
    return [lower + items[run:], upper + items[run:]]


_MIN_LITERAL = 2
_MAX_HEAD = 64


def _start(items: list[rx.Node]) -> _Start:
    """The pattern's literal start: its first run of single bytes (two or more), with
    what stands before it (sets and fixed repeats of them, 64 bytes at most) read
    back by a look-behind."""
    k = 0
    back: frozenset[int] = frozenset()
    behind = b""
    fixed = 0
    while k < len(items):
        n = k
        lit = b""
        while n < len(items) and isinstance(items[n], rx.Chars) and len(items[n].set) == 1:  # type: ignore[union-attr]
            lit += bytes(items[n].set)  # type: ignore[union-attr]
            n += 1
        if len(lit) >= (_MIN_LITERAL if k <= 1 else _MIN_LITERAL + 1):
            if k:
                behind = b"(?<=" + emit(rx.Seq(tuple(items[:k])), rx.ALL) + literal(lit) + b")"
            return _Start(lit, behind, back, fixed, items[n:])
        item = items[k]
        if isinstance(item, rx.Chars):
            back |= item.set
            fixed += 1
        elif isinstance(item, rx.Rep) and isinstance(item.item, rx.Chars) and item.lo == item.hi:
            back |= item.item.set
            fixed += item.lo
        else:
            break
        if fixed > _MAX_HEAD:
            break
        k += 1
    raise rx.Unsupported("no literal of two bytes or more to start from")


def _lead(width_: int, before: frozenset[int] = rx.ALNUM) -> bytes:
    """The boundary rule (docs/security.md; as secret_kind.boundary): the ``width_`` bytes
    just read do not follow a byte of ``before`` (ASCII letters and digits), or
    follow a JSON escape."""
    n = b"{%d}" % width_
    return (
        b"(?:(?<!"
        + charset(before)
        + rb"[\x00-\xff]"
        + n
        + rb")|(?<=\\[nrtbf][\x00-\xff]"
        + n
        + rb"))"
    )


def _before(start: _Start) -> frozenset[int]:
    """What a prefix may not follow: an ASCII letter or digit; and, where the
    prefix's own bytes are bytes of the secret (``SG.`` before ``[\\w.=-]{66}``),
    one of those (``.``): else a line of ``SG.SG.SG.…`` would be read 66 bytes again
    at every ``SG.``, and a run of a secret's bytes holds no second start of it."""
    own = rx.firsts(rx.Seq(tuple(start.rest))) - rx.NOT_RAW if start.rest else frozenset()
    mine = frozenset(start.literal)
    return rx.ALNUM | (mine & own) if own and mine <= own else rx.ALNUM


def _core(start: _Start, rest: list[rx.Node]) -> bytes:
    """The byte before (the boundary rule, as a core can say it: ``os.environ``
    holds no ``s.`` token), the literal and up to _CORE_BYTES of its shape after it
    (no look-arounds: Hyperscan takes it). The more of the shape, the fewer lines
    whose core hits for nothing (a ``https://`` that is no Teams webhook)."""
    lead = b"" if start.fixed else (b"(?:" + charset(rx.ALL - _before(start)) + rb"|\\[nrtbf])")
    return lead + b"".join(byte(c) for c in start.literal) + _shape(rest)


def _shape(items: list[rx.Node] | tuple[rx.Node, ...]) -> bytes:
    """Up to _CORE_BYTES of sets and repeats of them from the start of ``items``."""
    out = b""
    room = _CORE_BYTES
    for item in items:
        if room <= 0:
            break
        if isinstance(item, rx.Chars):
            out += charset(item.set)
            room -= 1
        elif isinstance(item, rx.Rep) and isinstance(item.item, rx.Chars) and item.lo > 0:
            take = min(item.lo, room)
            fixed = item.hi == item.lo or take < item.lo
            out += charset(item.item.set) + (b"{%d}" % take if fixed else b"{%d,}" % take)
            room -= take
            if take < item.lo:
                break
        elif isinstance(item, rx.Alt) and all(
            all(isinstance(c, rx.Chars) for c in rx.items_of(b)) for b in item.branches
        ):
            out += emit(item, rx.ALL, hs=True)  # (a choice of words: live|test)
            room -= rx.width(item)[0]
        else:
            break
    return out


def _keep_core(variant: list[rx.Node], secret: rx.Seq) -> bytes:
    """A name's core: the name (its first byte either case), what the pattern reads
    up to the secret, as Hyperscan reads it, and the secret's start. A name alone
    (``lob``, ``message``, ``xray``) is in every other line of prose; the name, its
    ``=`` and 16 bytes of a secret's shape are not."""
    keep = rx.Seq(tuple(variant))
    return emit(keep, rx.firsts(secret), keep=True, hs=True) + _shape(secret.items)


def _guard(secret: rx.Node) -> tuple[bytes, frozenset[int]]:
    """The end of a secret: it does not go on (the bytes of its last set, and ASCII
    letters and digits)."""
    stop = rx.lasts(secret) | rx.ALNUM
    stop -= rx.NOT_RAW
    return b"(?!" + charset(stop) + b")", stop


_MARKER_GUARD = rb"(?!\[REDACTED:)"


@dataclass
class Pattern:
    core: bytes
    source: bytes
    head: int
    head_chars: bytes
    #: what a match of it looks like (its example is made from them): the text
    #: before the secret, the secret, the text after it
    shape: tuple[rx.Node, rx.Node, rx.Node]

    @property
    def least(self) -> int:
        return rx.width(self.shape[1])[0]


def translate_branch(branch: rx.Seq, rule: dict[str, Any]) -> list[Pattern]:
    """The patterns of one alternative: one, or one per case of its name."""
    items = _flatten(branch.items)
    at = _secret_at(items, rule.get("secretGroup"))
    if at is None:
        before: list[rx.Node] = []
        secret_items = items
        after: list[rx.Node] = []
    else:
        cap = items[at]
        assert isinstance(cap, rx.Cap)
        before, secret_items, after = (
            items[:at],
            _flatten(rx.items_of(_uncap(cap.body))),
            items[at + 1 :],
        )
    # gitleaks' start and end of a secret become the boundary rule
    while before and _skippable(before[0]):
        before = before[1:]
    # (where gitleaks says where a secret ends, it ends where its bytes do; where
    # it does not, a longer run is masked as far as the pattern reads)
    ended = False
    while after and _is_terminator(after[-1]):
        after = after[:-1]
        ended = True
    secret_items, cut = _bare(secret_items, whole=at is None)
    ended = ended or cut
    if not before:  # an optional part before a prefix: the secret is what follows
        while secret_items and rx.nullable(secret_items[0]):
            secret_items = secret_items[1:]
    secret_items = [sanitize(_uncap(i)) for i in secret_items]
    if not secret_items:
        raise rx.Unsupported("an empty secret")
    secret = rx.Seq(tuple(secret_items))
    if all(isinstance(i, rx.Chars) and len(i.set) == 1 for i in secret_items):
        raise rx.Unsupported("the secret is a fixed literal")
    guard, stop = _guard(secret) if ended else (b"", rx.ALL)
    after_nodes = [_uncap(i) for i in after]
    look = b""
    follow = rx.ALL - stop  # (nothing, when nothing need follow)
    if after_nodes:
        tail = rx.Seq(tuple(after_nodes))
        if rx.width(tail)[1] is None:
            raise rx.Unsupported("an unbounded context after the secret")
        look = b"(?=" + emit(tail, rx.ALL, keep=True) + b")"
        follow = rx.firsts(tail)
    out = []
    if before:
        body = emit(secret, follow)
        for variant in _variants([_uncap(i) for i in before], named=True):
            start = _start(variant)
            keep = (
                emit(rx.Seq(tuple(start.rest)), rx.firsts(secret), keep=True) if start.rest else b""
            )
            source = (
                b"(?P<keep>"
                + literal(start.literal)
                + start.behind
                + keep
                + b")(?P<secret>"
                + _MARKER_GUARD
                + body
                + b")"
                + guard
                + look
            )
            out.append(
                Pattern(
                    _keep_core(variant, secret),
                    source,
                    0,
                    b"",
                    (rx.Seq(tuple(variant)), secret, rx.Seq(tuple(after_nodes))),
                )
            )
        return out
    (variant,) = _variants(secret_items, named=False)
    start = _start(variant)
    rest = emit(rx.Seq(tuple(start.rest)), follow) if start.rest else b""
    source = (
        b"(?P<secret>"
        + literal(start.literal)
        + start.behind
        + _lead(len(start.literal) + start.fixed, _before(start))
        + rest
        + b")"
        + guard
        + look
    )
    return [
        Pattern(
            _core(start, start.rest),
            source,
            start.fixed,
            bytes(sorted(start.back)),
            (rx.Seq(()), rx.Seq(tuple(variant)), rx.Seq(tuple(after_nodes))),
        )
    ]


def made_up(rule: dict[str, Any], seed: int = 0) -> list[str]:
    """A made-up secret for each alternative of a rule, translated or not (what
    tests/test_gitleaks.py masks with the hand-written kinds of ``COVERED``)."""
    out = []
    for branch in expand(rx.parse(rule["regex"])):
        items = _flatten(branch.items)
        at = _secret_at(items, rule.get("secretGroup"))
        if at is None:
            items, _ = _bare(items, whole=True)
        secret = items[at] if at is not None else rx.Seq(tuple(items))
        out.append(rx.generate(sanitize(_uncap(secret)), random.Random(seed)).decode("latin-1"))
    return out
