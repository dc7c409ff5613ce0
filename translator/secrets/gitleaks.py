"""gitleaks' rule set, translated into secret kinds (translator/secrets/).

The secret kinds with a public, well-known shape are not ours to keep: gitleaks
(MIT) maintains ~220 of them, with the keywords, entropy floors and allowlists that
keep its false positives down. ``secrets/gitleaks.toml`` is its ``config/gitleaks.toml``
byte for byte (commit and digest in ``secrets/gitleaks.source.json``); this module
translates it into ``secrets/gitleaks.kinds.json``, which :mod:`translator.secrets.redact`
loads at import (~3 ms). Translating at every start would cost ~35 ms (tomllib
alone reads the file in ~13 ms; a start is ~120 ms), so it is done when the rule
file changes: ``scripts/update-secret-rules`` fetches a new one and runs
``python -m streamv1.translator.secrets.gitleaks``, which also writes docs/security.md's two
tables; tests/test_gitleaks.py translates the shipped file again and fails when
either differs, so neither is edited by hand.

**How a rule is translated.** Its regex (Go's RE2) is parsed here into sets of
bytes, sequences, alternatives and repeats, and written out again in Python's
``re`` syntax for bytes, so RE2's differences (``(?i)`` mid-pattern, ``\\z``,
``[[:alnum:]]``) never reach ``re``. Each alternative of a rule (and each case of a
name) is a pattern of its own, in the design of :mod:`translator.secrets.redact`:

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
  (``AGE-SECRET-KEY-1[…]{58}``), a longer run is masked as far as the pattern reads;
* ``entropy``, the rule's allowlists (``regexes``, ``stopwords``; ``paths`` mean
  nothing in a transcript) and the global allowlist are a check made on each match.

Left out, each with its reason (the table in docs/security.md): rules for a file's
path; ``COVERED``, masked by a hand-written kind in more forms (a test masks made-up
secrets of each with it); ``REFUSED``, which the translation refuses, with why
that is right (a test checks it refuses them); rules with an earlier rule's
pattern; ``LEFT_OUT``, by choice. A kind's marker is its rule id with ``_`` for
``-`` (``[REDACTED:gitlab_feed_token]``), or the name of the hand-written kind of
the same secret (``ALIASES``).
"""

from __future__ import annotations

import hashlib
import random
import re
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

ALL = frozenset(range(256))
_ALNUM = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_WORD = _ALNUM | {ord("_")}
_SPACE = frozenset(b"\t\n\f\r ")
_DIGITS = frozenset(b"0123456789")
#: bytes that never stand raw inside an encoded JSON string (or end it)
_NOT_RAW = frozenset(range(0x20)) | {ord('"'), ord("\\")}
#: a byte inside a JSON string written as an escape: its letter
_ESCAPES = {
    ord('"'): b'"',
    ord("\\"): b"\\\\",
    0x08: b"b",
    0x0C: b"f",
    0x0A: b"n",
    0x0D: b"r",
    0x09: b"t",
}

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
    "alnum": _ALNUM,
    "alpha": _ALNUM - _DIGITS,
    "digit": _DIGITS,
    "word": _WORD,
    "space": _SPACE,
    "upper": frozenset(range(65, 91)),
    "lower": frozenset(range(97, 123)),
    "xdigit": frozenset(b"0123456789abcdefABCDEF"),
}
_CLASS_ESC = {"d": _DIGITS, "w": _WORD, "s": _SPACE}
_CHAR_ESC = {"n": 0x0A, "r": 0x0D, "t": 0x09, "f": 0x0C, "v": 0x0B, "a": 0x07}


def _fold(chars: frozenset[int]) -> frozenset[int]:
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
        return Chars(_fold(frozenset({byte})) if ci else frozenset({byte}), byte)

    def escape(self, ci: bool) -> Node:
        c = self.peek()
        self.i += 1
        if c in "bBAz":
            return Anchor(c)
        if c.lower() in _CLASS_ESC:
            chars = _CLASS_ESC[c.lower()]
            return Chars(ALL - chars if c.isupper() else chars)
        byte = self.escaped_byte(c)
        return Chars(_fold(frozenset({byte})) if ci else frozenset({byte}), byte)

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
            out = _fold(out)
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


def _items(node: Node) -> tuple[Node, ...]:
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
    if isinstance(node, Chars):
        return node.set
    if isinstance(node, Anchor):
        return frozenset()
    if isinstance(node, Seq):
        out: frozenset[int] = frozenset()
        for item in node.items:
            out |= firsts(item)
            if not nullable(item):
                break
        return out
    if isinstance(node, Alt):
        return frozenset().union(*(firsts(b) for b in node.branches))
    if isinstance(node, Rep):
        return firsts(node.item)
    return firsts(node.body)


def lasts(node: Node) -> frozenset[int]:
    if isinstance(node, Seq):
        out: frozenset[int] = frozenset()
        for item in reversed(node.items):
            out |= lasts(item)
            if not nullable(item):
                break
        return out
    if isinstance(node, Alt):
        return frozenset().union(*(lasts(b) for b in node.branches))
    if isinstance(node, Rep):
        return lasts(node.item)
    if isinstance(node, Cap):
        return lasts(node.body)
    return firsts(node)


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


def _sanitize(node: Node) -> Node:
    """The node with every set kept to bytes that stand raw in a JSON string."""
    if isinstance(node, Chars):
        chars = node.set - _NOT_RAW
        if not chars:
            raise Unsupported("a byte a JSON string escapes (a quote, a backslash, a control)")
        return Chars(chars, node.lit if node.lit in chars else None)
    if isinstance(node, Seq):
        return Seq(tuple(_sanitize(i) for i in node.items))
    if isinstance(node, Alt):
        kept = []
        for b in node.branches:
            try:
                kept.append(_sanitize(b))
            except Unsupported:
                continue
        if not kept:
            raise Unsupported("a byte a JSON string escapes (a quote, a backslash, a control)")
        return Alt(tuple(kept)) if len(kept) > 1 else kept[0]
    if isinstance(node, Rep):
        return Rep(_sanitize(node.item), node.lo, node.hi, node.lazy)
    if isinstance(node, Cap):
        return Cap(node.index, _sanitize(node.body))
    return node


# -- a tree → Python re (bytes) ------------------------------------------------------


def _byte(c: int) -> bytes:
    return bytes([c]) if c in _ALNUM or c == ord("_") else b"\\x%02x" % c


def charset(chars: frozenset[int]) -> bytes:
    """A set of bytes as a pattern (a literal, or a class of ranges): the common
    syntax of re and Hyperscan."""
    if len(chars) == 1:
        return _byte(next(iter(chars)))
    if not chars:
        raise Unsupported("an empty set")
    out = []
    ordered = sorted(chars)
    start = prev = ordered[0]
    for c in [*ordered[1:], -1]:
        if c == prev + 1:
            prev = c
            continue
        out.append(
            _byte(start)
            if start == prev
            else _byte(start) + (b"" if prev == start + 1 else b"-") + _byte(prev)
        )
        start = prev = c
    return b"[" + b"".join(out) + b"]"


def emit(node: Node, follow: frozenset[int], keep: bool = False, hs: bool = False) -> bytes:
    """``node`` as a Python pattern; ``follow``: the bytes that may come after it.

    A repeat of a set is possessive when no byte of its set may follow (then giving
    bytes back can never let the rest match); an unbounded repeat that could give
    back is refused (:class:`Unsupported`). ``keep``: text around the secret, where
    a set's quote or whitespace may also be an escape in the encoded line. ``hs``:
    for a core (Hyperscan's syntax: nothing possessive, no look-arounds)."""
    if isinstance(node, Chars):
        if not keep:
            return charset(node.set)
        raw = node.set - _NOT_RAW | (node.set & {ord('"')})
        escaped = [_ESCAPES[c] for c in sorted(node.set) if c in _ESCAPES]
        if not escaped:
            return charset(raw)
        alts = ([charset(raw)] if raw else []) + [
            b"\\\\" + b"[" + b"".join(b"\\x%02x" % e[-1] for e in escaped) + b"]"
        ]
        return b"(?:" + b"|".join(alts) + b")"
    if isinstance(node, Anchor):
        return {"b": b"\\b", "B": b"\\B", "^": b"^", "$": b"$", "A": b"\\A", "z": b"\\Z"}[node.kind]
    if isinstance(node, Cap):
        return emit(node.body, follow, keep, hs)
    if isinstance(node, Seq):
        items = node.items
        after = [follow] * len(items)  # what may come after each item
        for n in range(len(items) - 2, -1, -1):
            nxt = items[n + 1]
            after[n] = firsts(nxt) | (after[n + 1] if nullable(nxt) else frozenset())
        return b"".join(
            emit(
                item,
                frozenset()
                if n + 1 < len(items) and _gives_nothing(item, items[n + 1], after[n + 1])
                else after[n],
                keep,
                hs,
            )
            for n, item in enumerate(items)
        )
    if isinstance(node, Alt):
        return b"(?:" + b"|".join(emit(b, follow, keep, hs) for b in node.branches) + b")"
    if node.lazy:
        raise Unsupported("a lazy repeat")
    item = node.item
    again = node.hi is None or node.hi > 1  # (then the item may follow itself)
    body = emit(item, (firsts(item) if again else frozenset()) | follow, keep, hs)
    if not (isinstance(item, Chars) and not keep):
        body = b"(?:" + body + b")"
    if node.lo == node.hi:
        return body + (b"" if node.lo == 1 else b"{%d}" % node.lo)
    quant = (
        b"?"
        if (node.lo, node.hi) == (0, 1)
        else b"{%d,%s}" % (node.lo, b"" if node.hi is None else b"%d" % node.hi)
    )
    if isinstance(item, Chars) and not item.set & follow:
        return body + quant + (b"" if hs else b"+")
    if node.hi is None and not hs:
        raise Unsupported("an unbounded repeat that the rest may have to take bytes back from")
    return body + quant


def _gives_nothing(item: Node, nxt: Node, after: frozenset[int]) -> bool:
    """A repeat of a set followed by an optional repeat of a set that holds every byte
    the two share (gitleaks' ``[ \\t\\w.-]{0,20}[\\s'"]{0,3}=``, sharing spaces): what the
    first gave back the second could take, and no more, so the first may be
    possessive when none of its bytes may come after the second (``after``)."""
    return (
        isinstance(item, Rep)
        and isinstance(item.item, Chars)
        and isinstance(nxt, Rep)
        and nxt.lo == 0
        and isinstance(nxt.item, Chars)
        and item.item.set & firsts(nxt) <= nxt.item.set
        and not item.item.set & after
    )


# -- rules → kinds ---------------------------------------------------------------------

#: rule id -> the hand-written kind of the same secret (its marker name)
ALIASES = {
    "age-secret-key": "age_secret_key",
    "sendgrid-api-token": "sendgrid_api_key",
    "aws-access-token": "aws_access_key",
    "stripe-access-token": "stripe_key",
    "slack-webhook-url": "slack_webhook",
    "slack-config-access-token": "slack_token",
    "slack-app-token": "slack_token",
    "huggingface-access-token": "huggingface_token",
    "telegram-bot-api-token": "telegram_bot_token",
    "vault-service-token": "vault_token",
    "vault-batch-token": "vault_token",
    "digitalocean-refresh-token": "digitalocean_token",  # (its hex in either case)
}

#: rule id -> the hand-written kind that masks every match of it (tests/test_gitleaks.py
#: checks each example); left out
COVERED = {
    "anthropic-admin-api-key": "anthropic_api_key",
    "anthropic-api-key": "anthropic_api_key",
    "openai-api-key": "openai_api_key",
    "github-app-token": "github_token",
    "github-fine-grained-pat": "github_token",
    "github-oauth": "github_token",
    "github-pat": "github_token",
    "github-refresh-token": "github_token",
    "gitlab-cicd-job-token": "gitlab_token",
    "gitlab-deploy-token": "gitlab_token",
    "gitlab-feature-flag-client-token": "gitlab_token",
    "gitlab-incoming-mail-token": "gitlab_token",
    "gitlab-kubernetes-agent-token": "gitlab_token",
    "gitlab-oauth-app-secret": "gitlab_token",
    "gitlab-pat": "gitlab_token",
    "gitlab-pat-routable": "gitlab_token",
    "gitlab-ptt": "gitlab_token",
    "gitlab-runner-authentication-token": "gitlab_token",
    "gitlab-runner-authentication-token-routable": "gitlab_token",
    "gitlab-scim-token": "gitlab_token",
    "gcp-api-key": "google_api_key",
    "npm-access-token": "npm_token",
    "pypi-upload-token": "pypi_token",
    "digitalocean-access-token": "digitalocean_token",
    "digitalocean-pat": "digitalocean_token",
    "twilio-api-key": "twilio_api_key",
    "slack-bot-token": "slack_token",
    "slack-legacy-bot-token": "slack_token",
    "slack-legacy-token": "slack_token",
    "slack-legacy-workspace-token": "slack_token",
    "slack-user-token": "slack_token",
    "slack-config-refresh-token": "slack_token",
    "azure-ad-client-secret": "azure_client_secret",
}

#: rules left out by choice (they translate): why
LEFT_OUT = {
    "generic-api-key": "any value bound to a name holding access, auth, key, secret, token, "
    "password… (1,400 stopwords keep its false positives down in "
    "source trees); the named kinds (`password`, `api_key`, "
    "`secret_key`, `token`) do this with stand-in rules made for prose "
    "and code",
    "jwt": 'every JWT starts `eyJ` (base64 of `{"`), and the hand-written `jwt` masks '
    "those, unsigned ones too, where a run of their characters starts; this rule's "
    "`ey` and any other byte is no JWT, and it would also start inside an identifier",
}

#: rules the translation refuses (tests/test_gitleaks.py checks it does): why that is
#: right, or what masks their secrets instead
REFUSED = {
    "private-key": "the hand-written `private_key` is stronger: it masks a block cut off "
    "before its END line, escaped newlines, YAML blocks and key lines "
    "arriving one by one; this rule reads lazily to the END line "
    "(`[\\s\\S-]{64,}?`: not linear)",
    "curl-auth-header": "reads `.*?` over up to five lines to find `-H`: not linear; the "
    "header itself is masked by `bearer_token`, `http_auth` and "
    "`api_key`",
    "curl-auth-user": "reads `.*` over up to five lines to find `-u`: not linear; "
    "`curl -u user:…` and `--user` are masked by `password`",
    "aws-amazon-bedrock-api-key-short-lived": "matches only the token's fixed prefix "
    "(`bedrock-api-key-YmVkcm9jay5hbWF6b25hd3Mu"
    "Y29t`): masking it would leave the secret",
    "facebook-access-token": "no literal in it (15 digits, `|` or `%`, then 27–40 of a "
    "class): `re` would try it at every byte; and any such run "
    "would be masked, `facebook` or not",
    "sourcegraph-access-token": "its third alternative is any 40 hex digits (no literal to "
    "start from): every git commit id would be masked",
}

_CORE_BYTES = 24
_EXAMPLE_TRIES = 40


@dataclass
class Kind:
    """One pattern of a kept rule, as redact.py builds a SecretKind of it."""

    rule: str
    name: str
    core: bytes
    source: bytes
    example: str
    head: int = 0
    head_chars: bytes = b""
    entropy: float | None = None
    allow: tuple[bytes, ...] = ()  # (patterns on the secret)
    allow_match: tuple[bytes, ...] = ()  # (patterns on the whole match)
    stopwords: tuple[str, ...] = ()
    least: int = 0  # the fewest bytes the secret has (not written: it orders the kinds)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "rule": self.rule,
            "name": self.name,
            "core": self.core.decode("latin-1"),
            "source": self.source.decode("latin-1"),
            "example": self.example,
        }
        if self.head:
            out["head"] = self.head
            out["head_chars"] = self.head_chars.decode("latin-1")
        if self.entropy is not None:
            out["entropy"] = self.entropy
        if self.allow:
            out["allow"] = [p.decode("latin-1") for p in self.allow]
        if self.allow_match:
            out["allow_match"] = [p.decode("latin-1") for p in self.allow_match]
        if self.stopwords:
            out["stopwords"] = list(self.stopwords)
        return out


def _is_terminator(node: Node) -> bool:
    """gitleaks' end (or start) of a secret: ``\\b``, ``$``, or a choice of single
    bytes and escapes (``(?:[\\x60'"\\s;]|\\\\[nr]|$)``)."""
    if isinstance(node, Anchor):
        return True
    if isinstance(node, Chars):
        return True
    if isinstance(node, Cap):
        return False
    if isinstance(node, Alt):
        return all(
            isinstance(b, Anchor | Chars)
            or (
                isinstance(b, Seq)
                and len(b.items) == 2
                and b.items[0] == Chars(frozenset({0x5C}), 0x5C)
            )
            for b in node.branches
        )
    return False


def _skippable(node: Node) -> bool:
    """What may stand before a rule's start and is not kept: ``\\b``, a lazy
    ``[\\w.-]{0,50}?``, a choice of single bytes (gitleaks' left boundary)."""
    return (
        isinstance(node, Anchor)
        or (isinstance(node, Rep) and node.lazy)
        or (isinstance(node, Alt) and _is_terminator(node))
    )


def _expand(node: Node) -> list[Seq]:
    """A rule's alternatives, each a sequence: an alternative at the start (of the
    rule, or of the secret's group) is split into the patterns it stands for."""
    if isinstance(node, Alt):
        return [x for b in node.branches for x in _expand(b)]
    items = _flatten(_items(node))
    i = 0
    while i < len(items) and _skippable(items[i]):
        i += 1
    if i == len(items):
        return [Seq(tuple(items))]
    first = items[i]
    if isinstance(first, Alt):
        return [
            x
            for b in first.branches
            for x in _expand(Seq((*items[:i], *_flatten(_items(b)), *items[i + 1 :])))
        ]
    if isinstance(first, Cap):
        inner = _expand(first.body)
        if len(inner) > 1:
            return [Seq((*items[:i], Cap(first.index, body), *items[i + 1 :])) for body in inner]
    return [Seq(tuple(items))]


def _flatten(items: tuple[Node, ...]) -> list[Node]:
    out: list[Node] = []
    for item in items:
        if isinstance(item, Seq):
            out += _flatten(item.items)
        else:
            out.append(item)
    return out


def _secret_at(items: list[Node], group: int | None) -> int | None:
    """Where the secret's group is among the top-level items (None: the whole match)."""
    caps = [i for i, item in enumerate(items) if isinstance(item, Cap)]
    if group is not None:
        caps = [i for i in caps if isinstance(items[i], Cap) and items[i].index == group]  # type: ignore[union-attr]
    return caps[0] if caps else None


def _uncap(node: Node) -> Node:
    if isinstance(node, Cap):
        return _uncap(node.body)
    if isinstance(node, Seq):
        return Seq(tuple(_uncap(i) for i in node.items))
    if isinstance(node, Alt):
        return Alt(tuple(_uncap(b) for b in node.branches))
    if isinstance(node, Rep):
        return Rep(_uncap(node.item), node.lo, node.hi, node.lazy)
    return node


@dataclass
class _Start:
    """How a pattern starts: a literal, and what it reads back."""

    literal: bytes
    behind: bytes  # a look-behind after the literal (b"" for none)
    back: frozenset[int]  # the bytes that stand before the literal, read back
    fixed: int  # how many of them
    rest: list[Node]  # the items after the start


def _variants(items: list[Node], named: bool) -> list[list[Node]]:
    """A start of case-blind letters written out: for a name, lower/capitalised
    (first byte either case) and upper case; for a prefix, as the rule writes it."""
    run = 0
    while run < len(items) and isinstance(items[run], Chars):
        run += 1
    head = [i for i in items[:run] if isinstance(i, Chars)]
    folded = [
        c
        for c in head
        if c.lit is not None and len(c.set) == 2 and _fold(frozenset({c.lit})) == c.set
    ]
    if not folded:
        return [items]
    if not named:
        return [
            [
                Chars(frozenset({c.lit}), c.lit) if c in folded and c.lit is not None else c
                for c in head
            ]
            + items[run:]
        ]
    lower: list[Node] = []
    upper: list[Node] = []
    for n, c in enumerate(head):
        if c in folded and c.lit is not None:
            lo, up = c.lit | 0x20, c.lit & ~0x20
            lower.append(c if n == 0 else Chars(frozenset({lo}), lo))
            upper.append(Chars(frozenset({up}), up))
        else:
            lower.append(c)
            upper.append(c)
    return [lower + items[run:], upper + items[run:]]


_MIN_LITERAL = 2
_MAX_HEAD = 64


def _start(items: list[Node]) -> _Start:
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
        while n < len(items) and isinstance(items[n], Chars) and len(items[n].set) == 1:  # type: ignore[union-attr]
            lit += bytes(items[n].set)  # type: ignore[union-attr]
            n += 1
        if len(lit) >= (_MIN_LITERAL if k <= 1 else _MIN_LITERAL + 1):
            if k:
                behind = b"(?<=" + emit(Seq(tuple(items[:k])), ALL) + _literal(lit) + b")"
            return _Start(lit, behind, back, fixed, items[n:])
        item = items[k]
        if isinstance(item, Chars):
            back |= item.set
            fixed += 1
        elif isinstance(item, Rep) and isinstance(item.item, Chars) and item.lo == item.hi:
            back |= item.item.set
            fixed += item.lo
        else:
            break
        if fixed > _MAX_HEAD:
            break
        k += 1
    raise Unsupported("no literal of two bytes or more to start from")


def _lead(width_: int, before: frozenset[int] = _ALNUM) -> bytes:
    """The boundary rule (docs/security.md; as redact._lead): the ``width_`` bytes
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
    own = firsts(Seq(tuple(start.rest))) - _NOT_RAW if start.rest else frozenset()
    mine = frozenset(start.literal)
    return _ALNUM | (mine & own) if own and mine <= own else _ALNUM


def _core(start: _Start, rest: list[Node]) -> bytes:
    """The byte before (the boundary rule, as a core can say it: ``os.environ``
    holds no ``s.`` token), the literal and up to _CORE_BYTES of its shape after it
    (no look-arounds: Hyperscan takes it). The more of the shape, the fewer lines
    whose core hits for nothing (a ``https://`` that is no Teams webhook)."""
    lead = b"" if start.fixed else (b"(?:" + charset(ALL - _before(start)) + rb"|\\[nrtbf])")
    return lead + b"".join(_byte(c) for c in start.literal) + _shape(rest)


def _shape(items: list[Node] | tuple[Node, ...]) -> bytes:
    """Up to _CORE_BYTES of sets and repeats of them from the start of ``items``."""
    out = b""
    room = _CORE_BYTES
    for item in items:
        if room <= 0:
            break
        if isinstance(item, Chars):
            out += charset(item.set)
            room -= 1
        elif isinstance(item, Rep) and isinstance(item.item, Chars) and item.lo > 0:
            take = min(item.lo, room)
            fixed = item.hi == item.lo or take < item.lo
            out += charset(item.item.set) + (b"{%d}" % take if fixed else b"{%d,}" % take)
            room -= take
            if take < item.lo:
                break
        elif isinstance(item, Alt) and all(
            all(isinstance(c, Chars) for c in _items(b)) for b in item.branches
        ):
            out += emit(item, ALL, hs=True)  # (a choice of words: live|test)
            room -= width(item)[0]
        else:
            break
    return out


def _keep_core(variant: list[Node], secret: Seq) -> bytes:
    """A name's core: the name (its first byte either case), what the pattern reads
    up to the secret, as Hyperscan reads it, and the secret's start. A name alone
    (``lob``, ``message``, ``xray``) is in every other line of prose; the name, its
    ``=`` and 16 bytes of a secret's shape are not."""
    keep = Seq(tuple(variant))
    return emit(keep, firsts(secret), keep=True, hs=True) + _shape(secret.items)


def _guard(secret: Node) -> tuple[bytes, frozenset[int]]:
    """The end of a secret: it does not go on (the bytes of its last set, and ASCII
    letters and digits)."""
    stop = lasts(secret) | _ALNUM
    stop -= _NOT_RAW
    return b"(?!" + charset(stop) + b")", stop


_MARKER_GUARD = rb"(?!\[REDACTED:)"


@dataclass
class _Pattern:
    core: bytes
    source: bytes
    head: int
    head_chars: bytes
    #: what a match of it looks like (its example is made from them): the text
    #: before the secret, the secret, the text after it
    shape: tuple[Node, Node, Node]

    @property
    def least(self) -> int:
        return width(self.shape[1])[0]


def _translate_branch(branch: Seq, rule: dict[str, Any]) -> list[_Pattern]:
    """The patterns of one alternative: one, or one per case of its name."""
    items = _flatten(branch.items)
    at = _secret_at(items, rule.get("secretGroup"))
    if at is None:
        before: list[Node] = []
        secret_items = items
        after: list[Node] = []
    else:
        cap = items[at]
        assert isinstance(cap, Cap)
        before, secret_items, after = (
            items[:at],
            _flatten(_items(_uncap(cap.body))),
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
    while secret_items and _skippable(secret_items[0]):
        secret_items = secret_items[1:]
    while secret_items and (
        isinstance(secret_items[-1], Anchor)
        or (at is None and isinstance(secret_items[-1], Alt) and _is_terminator(secret_items[-1]))
    ):
        secret_items = secret_items[:-1]
        ended = True
    if not before:  # an optional part before a prefix: the secret is what follows
        while secret_items and nullable(secret_items[0]):
            secret_items = secret_items[1:]
    secret_items = [_sanitize(_uncap(i)) for i in secret_items]
    if not secret_items:
        raise Unsupported("an empty secret")
    secret = Seq(tuple(secret_items))
    if all(isinstance(i, Chars) and len(i.set) == 1 for i in secret_items):
        raise Unsupported("the secret is a fixed literal")
    guard, stop = _guard(secret) if ended else (b"", ALL)
    after_nodes = [_uncap(i) for i in after]
    look = b""
    follow = ALL - stop  # (nothing, when nothing need follow)
    if after_nodes:
        tail = Seq(tuple(after_nodes))
        if width(tail)[1] is None:
            raise Unsupported("an unbounded context after the secret")
        look = b"(?=" + emit(tail, ALL, keep=True) + b")"
        follow = firsts(tail)
    out = []
    if before:
        body = emit(secret, follow)
        for variant in _variants([_uncap(i) for i in before], named=True):
            start = _start(variant)
            keep = emit(Seq(tuple(start.rest)), firsts(secret), keep=True) if start.rest else b""
            source = (
                b"(?P<keep>"
                + _literal(start.literal)
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
                _Pattern(
                    _keep_core(variant, secret),
                    source,
                    0,
                    b"",
                    (Seq(tuple(variant)), secret, Seq(tuple(after_nodes))),
                )
            )
        return out
    (variant,) = _variants(secret_items, named=False)
    start = _start(variant)
    rest = emit(Seq(tuple(start.rest)), follow) if start.rest else b""
    source = (
        b"(?P<secret>"
        + _literal(start.literal)
        + start.behind
        + _lead(len(start.literal) + start.fixed, _before(start))
        + rest
        + b")"
        + guard
        + look
    )
    return [
        _Pattern(
            _core(start, start.rest),
            source,
            start.fixed,
            bytes(sorted(start.back)),
            (Seq(()), Seq(tuple(variant)), Seq(tuple(after_nodes))),
        )
    ]


def _literal(text: bytes) -> bytes:
    return b"".join(_byte(c) for c in text)


# -- examples ------------------------------------------------------------------------

_PRINTABLE = frozenset(range(0x21, 0x7F)) - _NOT_RAW


def _pick(chars: frozenset[int], rng: random.Random) -> int:
    for pool in (chars & _ALNUM, chars & _PRINTABLE, chars):
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


# -- the whole rule set ----------------------------------------------------------------


@dataclass
class Translation:
    source: dict[str, str]
    kinds: list[Kind]
    left_out: list[tuple[str, str]]  # (rule id, reason)
    global_allow: tuple[bytes, ...]
    global_stopwords: tuple[str, ...]

    def to_json(self) -> bytes:
        doc = {
            "generated": "by python -m streamv1.translator.secrets.gitleaks from gitleaks.toml: "
            "do not edit",
            "source": self.source,
            "global_allow": [p.decode("latin-1") for p in self.global_allow],
            "global_stopwords": list(self.global_stopwords),
            "kinds": [k.to_json() for k in self.kinds],
            "left_out": [{"rule": r, "reason": why} for r, why in self.left_out],
        }
        return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"


def _allow_pattern(regex: str) -> bytes:
    """An allowlist regex, translated (no JSON-string limits: it reads a decoded match)."""
    node = parse(regex)
    return _plain(node)


def _plain(node: Node) -> bytes:
    """A tree as a Python pattern, as written (greedy, no possessives)."""
    if isinstance(node, Chars):
        return charset(node.set)
    if isinstance(node, Anchor):
        return emit(node, ALL)
    if isinstance(node, Cap):
        return b"(?:" + _plain(node.body) + b")"
    if isinstance(node, Seq):
        return b"".join(_plain(i) for i in node.items)
    if isinstance(node, Alt):
        return b"(?:" + b"|".join(_plain(b) for b in node.branches) + b")"
    body = b"(?:" + _plain(node.item) + b")"
    quant = b"{%d,%s}" % (node.lo, b"" if node.hi is None else b"%d" % node.hi)
    return body + quant + (b"?" if node.lazy else b"")


def _checks(rule: dict[str, Any]) -> tuple[tuple[bytes, ...], tuple[bytes, ...], tuple[str, ...]]:
    """A rule's allowlists that can apply to a transcript: (on the secret, on the
    match, stopwords). An allowlist of paths (alone, or with AND) never applies."""
    secret: list[bytes] = []
    match: list[bytes] = []
    stop: list[str] = []
    for allow in rule.get("allowlists", []):
        if allow.get("paths") and (
            allow.get("condition") == "AND" or not (allow.get("regexes") or allow.get("stopwords"))
        ):
            continue
        target = allow.get("regexTarget", "secret")
        if target == "line":
            continue  # (only generic-api-key has one; it is left out)
        for regex in allow.get("regexes", []):
            (match if target == "match" else secret).append(_allow_pattern(regex))
        stop += allow.get("stopwords", [])
    return tuple(secret), tuple(match), tuple(stop)


def _example(
    pattern: _Pattern, kind: Kind, seed: int, globals_: tuple[tuple[bytes, ...], tuple[str, ...]]
) -> str | None:
    """A made-up match of a pattern (a name, ``=``, the secret; or the secret): one
    its core finds, its pattern matches and its checks pass. None if no try does."""
    from streamv1.translator.secrets import redact  # (the SecretKind it becomes)

    before, secret, after = pattern.shape
    for attempt in range(_EXAMPLE_TRIES):
        rng = random.Random(seed * 1000 + attempt)
        text = (
            generate(before, rng, least=True)
            + generate(secret, rng)
            + generate(after, rng, least=True)
        )
        try:
            example = text.decode("ascii")
        except UnicodeDecodeError:
            continue
        made = redact.from_json(kind.to_json() | {"example": example}, *globals_)
        if redact.marker(made.name) not in redact.mask(made.probe, [made]):
            continue
        if not re.search(made.core, made.probe):
            continue
        return example
    return None


def _rule_seed(rule_id: str) -> int:
    return int.from_bytes(hashlib.sha256(rule_id.encode()).digest()[:4], "big")


def translate_rule(
    rule: dict[str, Any], globals_: tuple[tuple[bytes, ...], tuple[str, ...]] = ((), ())
) -> list[Kind]:
    """Every alternative of a rule as a kind (:class:`Unsupported` when one does not
    fit)."""
    regex = rule.get("regex")
    if not regex:
        raise Unsupported("no regex (a file name only)")
    name = ALIASES.get(rule["id"], rule["id"].replace("-", "_"))
    allow, allow_match, stopwords = _checks(rule)
    kinds: list[Kind] = []
    seed = _rule_seed(rule["id"])
    for branch in _expand(parse(regex)):
        for pattern in _translate_branch(branch, rule):
            re.compile(pattern.source)
            kind = Kind(
                rule["id"],
                name,
                pattern.core,
                pattern.source,
                "",
                pattern.head,
                pattern.head_chars,
                rule.get("entropy"),
                allow,
                allow_match,
                stopwords,
                pattern.least,
            )
            example = _example(pattern, kind, seed + len(kinds), globals_)
            if example is None:
                raise Unsupported("no made-up example passes its own pattern and checks")
            kind.example = example
            kinds.append(kind)
    return kinds


def translate(toml: bytes, source: dict[str, str]) -> Translation:
    config = tomllib.loads(toml.decode("utf-8"))
    glob = config.get("allowlist", {})
    global_allow = tuple(_allow_pattern(r) for r in glob.get("regexes", []))
    global_stop = tuple(glob.get("stopwords", []))
    prefix: list[Kind] = []
    named: list[Kind] = []
    left: list[tuple[str, str]] = []
    owner: dict[bytes, str] = {}  # a pattern -> the first rule that has it
    for rule in config["rules"]:
        rid = rule["id"]
        if rid in LEFT_OUT:
            left.append((rid, LEFT_OUT[rid]))
            continue
        if rid in COVERED:
            left.append((rid, f"covered: the hand-written `{COVERED[rid]}` masks it in more forms"))
            continue
        if rule.get("path"):
            left.append(
                (
                    rid,
                    "applies only to files at a path (`"
                    + rule["path"]
                    + "`); a transcript line has none",
                )
            )
            continue
        try:
            kinds = translate_rule(rule, (global_allow, global_stop))
        except Unsupported as e:
            why = REFUSED.get(rid)
            left.append((rid, f"{why} (not translated: {e})" if why else f"not translated: {e}"))
            continue
        first = {owner.get(k.source) for k in kinds}
        if None not in first:
            left.append(
                (
                    rid,
                    "the same pattern as `"
                    + "`, `".join(sorted(first))  # type: ignore[arg-type]
                    + "` (a match is masked as that)",
                )
            )
            continue
        for kind in kinds:
            owner.setdefault(kind.source, rid)
            (named if b"(?P<keep>" in kind.source else prefix).append(kind)
    # A secret's own shape before a name's (a prefix token is masked as itself), and
    # a longer secret before a shorter one (FLWSECK_TEST-… of 12 is the start of one
    # of 32: the shorter, open-ended, would mask only that start).
    prefix.sort(key=lambda k: -k.least)
    named.sort(key=lambda k: -k.least)
    return Translation(source, prefix + named, left, global_allow, global_stop)


def made_up(rule: dict[str, Any], seed: int = 0) -> list[str]:
    """A made-up secret for each alternative of a rule, translated or not (what
    tests/test_gitleaks.py masks with the hand-written kinds of ``COVERED``)."""
    out = []
    for branch in _expand(parse(rule["regex"])):
        items = _flatten(branch.items)
        at = _secret_at(items, rule.get("secretGroup"))
        if at is None:
            while items and _skippable(items[0]):
                items = items[1:]
            while items and (
                isinstance(items[-1], Anchor)
                or (isinstance(items[-1], Alt) and _is_terminator(items[-1]))
            ):
                items = items[:-1]
        secret = items[at] if at is not None else Seq(tuple(items))
        out.append(generate(_sanitize(_uncap(secret)), random.Random(seed)).decode("latin-1"))
    return out


# -- docs/security.md ---------------------------------------------------------------


def _cell(text: str, keep: int = 24) -> str:
    """An example, cut short (a docs table shows the shape, not a whole token)."""
    short = text if len(text) <= keep else text[:keep] + "…"
    return "`" + short.replace("|", "\\|").replace("`", "'") + "`"


def render_kinds(t: Translation) -> str:
    """The kept rules, one row per marker."""
    rows: dict[str, tuple[list[str], str]] = {}
    for kind in t.kinds:
        rules, example = rows.setdefault(kind.name, ([], kind.example))
        if kind.rule not in rules:
            rules.append(kind.rule)
    lines = [
        "| kind (the marker) | gitleaks rule | example (made up, cut short) |",
        "|---|---|---|",
    ]
    for name in sorted(rows):
        rules, example = rows[name]
        lines.append(f"| `{name}` | {', '.join(rules)} | {_cell(example)} |")
    return "\n".join(lines) + "\n"


def render_left_out(t: Translation) -> str:
    lines = ["| gitleaks rule | why it is left out |", "|---|---|"]
    lines += [
        "| " + rule + " | " + why.replace("|", "\\|") + " |" for rule, why in sorted(t.left_out)
    ]
    return "\n".join(lines) + "\n"


def _block(name: str) -> re.Pattern[str]:
    begin, end = f"<!-- BEGIN gitleaks:{name} -->\n", f"<!-- END gitleaks:{name} -->"
    return re.compile(f"({re.escape(begin)})(.*?)({re.escape(end)})", re.S)


BLOCKS = {"kinds": render_kinds, "left-out": render_left_out}


def rewrite_docs(text: str, t: Translation) -> str:
    """docs/security.md with its gitleaks tables made from the translation."""
    for name, render in BLOCKS.items():
        table = render(t)

        def fill(m: re.Match[str], table: str = table) -> str:
            return m.group(1) + table + m.group(3)

        text = _block(name).sub(fill, text)
    return text


def doc_blocks(text: str) -> dict[str, str]:
    """The gitleaks tables docs/security.md carries now."""
    return {name: m.group(2) for name in BLOCKS if (m := _block(name).search(text))}


# -- files ------------------------------------------------------------------------------

RULES = "gitleaks.toml"
KINDS = "gitleaks.kinds.json"
SOURCE = "gitleaks.source.json"


def folder() -> Path:
    """Where the rule file, its origin and its translation are: beside this module."""
    return Path(__file__).parent


def load() -> tuple[bytes, dict[str, str]]:
    """The shipped rule file and its origin (``commit``, ``sha256``, …)."""
    source: dict[str, str] = orjson.loads((folder() / SOURCE).read_bytes())
    return (folder() / RULES).read_bytes(), source


def build() -> Translation:
    """The shipped rule file, translated now."""
    return translate(*load())


def main(argv: list[str]) -> int:
    """Write secrets/gitleaks.kinds.json from secrets/gitleaks.toml, and the tables
    of docs/security.md (another path as the argument); ``--check``: only say
    whether both are up to date."""
    check = "--check" in argv
    docs = Path(next((a for a in argv if not a.startswith("--")), "docs/security.md"))
    data, source = load()
    if hashlib.sha256(data).hexdigest() != source.get("sha256"):
        print(
            f"{RULES}: its sha256 is not the one in {SOURCE} (edited by hand? fetch it "
            "with scripts/update-secret-rules)",
            file=sys.stderr,
        )
        return 1
    t = translate(data, source)
    out = t.to_json()
    doc = docs.read_text("utf-8") if docs.exists() else None
    new_doc = rewrite_docs(doc, t) if doc is not None else None
    if doc is not None and set(doc_blocks(doc)) != set(BLOCKS):
        print(
            f"{docs}: no <!-- BEGIN gitleaks:… --> block for "
            f"{', '.join(sorted(set(BLOCKS) - set(doc_blocks(doc))))}",
            file=sys.stderr,
        )
        return 1
    if check:
        stale = [str(folder() / KINDS)] if (folder() / KINDS).read_bytes() != out else []
        stale += [str(docs)] if new_doc != doc else []
        if stale:
            print(
                f"not {RULES} translated: {', '.join(stale)}; run python -m "
                "streamv1.translator.secrets.gitleaks",
                file=sys.stderr,
            )
            return 1
        return 0
    (folder() / KINDS).write_bytes(out)
    if new_doc is not None and new_doc != doc:
        docs.write_text(new_doc, "utf-8")
    rules = {k.rule for k in t.kinds}
    print(
        f"{KINDS}: {len(rules)} rules kept as {len(t.kinds)} patterns, {len(t.left_out)} left out",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
