"""A tree of byte sets (:mod:`translator.secrets.gitleaks_regex`) written as a Python
``re`` pattern for bytes.

Apart from the reading because this is where the design of
:mod:`translator.secrets.redact` is enforced on every repeat: what may be read
twice is made possessive or refused (:class:`~translator.secrets.gitleaks_regex.Unsupported`),
and a pattern stays inside one JSON string of the encoded line (:func:`sanitize`;
around a name, a quote or a space may be an escape). Cores are written here too,
in the syntax Hyperscan shares with ``re`` (``hs``).
"""

from __future__ import annotations

from streamv1.translator.secrets import gitleaks_regex as rx

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


def sanitize(node: rx.Node) -> rx.Node:
    """The node with every set kept to bytes that stand raw in a JSON string."""
    if isinstance(node, rx.Chars):
        chars = node.set - rx.NOT_RAW
        if not chars:
            raise rx.Unsupported("a byte a JSON string escapes (a quote, a backslash, a control)")
        return rx.Chars(chars, node.lit if node.lit in chars else None)
    if isinstance(node, rx.Seq):
        return rx.Seq(tuple(sanitize(i) for i in node.items))
    if isinstance(node, rx.Alt):
        kept = []
        for b in node.branches:
            try:
                kept.append(sanitize(b))
            except rx.Unsupported:
                continue
        if not kept:
            raise rx.Unsupported("a byte a JSON string escapes (a quote, a backslash, a control)")
        return rx.Alt(tuple(kept)) if len(kept) > 1 else kept[0]
    if isinstance(node, rx.Rep):
        return rx.Rep(sanitize(node.item), node.lo, node.hi, node.lazy)
    if isinstance(node, rx.Cap):
        return rx.Cap(node.index, sanitize(node.body))
    return node


def byte(c: int) -> bytes:
    return bytes([c]) if c in rx.ALNUM or c == ord("_") else b"\\x%02x" % c


def charset(chars: frozenset[int]) -> bytes:
    """A set of bytes as a pattern (a literal, or a class of ranges): the common
    syntax of re and Hyperscan."""
    if len(chars) == 1:
        return byte(next(iter(chars)))
    if not chars:
        raise rx.Unsupported("an empty set")
    out = []
    ordered = sorted(chars)
    start = prev = ordered[0]
    for c in [*ordered[1:], -1]:
        if c == prev + 1:
            prev = c
            continue
        out.append(
            byte(start)
            if start == prev
            else byte(start) + (b"" if prev == start + 1 else b"-") + byte(prev)
        )
        start = prev = c
    return b"[" + b"".join(out) + b"]"


def emit(node: rx.Node, follow: frozenset[int], keep: bool = False, hs: bool = False) -> bytes:
    """``node`` as a Python pattern; ``follow``: the bytes that may come after it.

    A repeat of a set is possessive when no byte of its set may follow (then giving
    bytes back can never let the rest match); an unbounded repeat that could give
    back is refused (:class:`Unsupported`). ``keep``: text around the secret, where
    a set's quote or whitespace may also be an escape in the encoded line. ``hs``:
    for a core (Hyperscan's syntax: nothing possessive, no look-arounds)."""
    if isinstance(node, rx.Chars):
        if not keep:
            return charset(node.set)
        raw = node.set - rx.NOT_RAW | (node.set & {ord('"')})
        escaped = [_ESCAPES[c] for c in sorted(node.set) if c in _ESCAPES]
        if not escaped:
            return charset(raw)
        alts = ([charset(raw)] if raw else []) + [
            b"\\\\" + b"[" + b"".join(b"\\x%02x" % e[-1] for e in escaped) + b"]"
        ]
        return b"(?:" + b"|".join(alts) + b")"
    if isinstance(node, rx.Anchor):
        return {"b": b"\\b", "B": b"\\B", "^": b"^", "$": b"$", "A": b"\\A", "z": b"\\Z"}[node.kind]
    if isinstance(node, rx.Cap):
        return emit(node.body, follow, keep, hs)
    if isinstance(node, rx.Seq):
        items = node.items
        after = [follow] * len(items)  # what may come after each item
        for n in range(len(items) - 2, -1, -1):
            nxt = items[n + 1]
            after[n] = rx.firsts(nxt) | (after[n + 1] if rx.nullable(nxt) else frozenset())
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
    if isinstance(node, rx.Alt):
        return b"(?:" + b"|".join(emit(b, follow, keep, hs) for b in node.branches) + b")"
    if node.lazy:
        raise rx.Unsupported("a lazy repeat")
    item = node.item
    again = node.hi is None or node.hi > 1  # (then the item may follow itself)
    body = emit(item, (rx.firsts(item) if again else frozenset()) | follow, keep, hs)
    if not (isinstance(item, rx.Chars) and not keep):
        body = b"(?:" + body + b")"
    if node.lo == node.hi:
        return body + (b"" if node.lo == 1 else b"{%d}" % node.lo)
    quant = (
        b"?"
        if (node.lo, node.hi) == (0, 1)
        else b"{%d,%s}" % (node.lo, b"" if node.hi is None else b"%d" % node.hi)
    )
    if isinstance(item, rx.Chars) and not item.set & follow:
        return body + quant + (b"" if hs else b"+")
    if node.hi is None and not hs:
        raise rx.Unsupported("an unbounded repeat that the rest may have to take bytes back from")
    return body + quant


def _gives_nothing(item: rx.Node, nxt: rx.Node, after: frozenset[int]) -> bool:
    """A repeat of a set followed by an optional repeat of a set that holds every byte
    the two share (gitleaks' ``[ \\t\\w.-]{0,20}[\\s'"]{0,3}=``, sharing spaces): what the
    first gave back the second could take, and no more, so the first may be
    possessive when none of its bytes may come after the second (``after``)."""
    return (
        isinstance(item, rx.Rep)
        and isinstance(item.item, rx.Chars)
        and isinstance(nxt, rx.Rep)
        and nxt.lo == 0
        and isinstance(nxt.item, rx.Chars)
        and item.item.set & rx.firsts(nxt) <= nxt.item.set
        and not item.item.set & after
    )


def plain(node: rx.Node) -> bytes:
    """A tree as a Python pattern, as written (greedy, no possessives)."""
    if isinstance(node, rx.Chars):
        return charset(node.set)
    if isinstance(node, rx.Anchor):
        return emit(node, rx.ALL)
    if isinstance(node, rx.Cap):
        return b"(?:" + plain(node.body) + b")"
    if isinstance(node, rx.Seq):
        return b"".join(plain(i) for i in node.items)
    if isinstance(node, rx.Alt):
        return b"(?:" + b"|".join(plain(b) for b in node.branches) + b")"
    body = b"(?:" + plain(node.item) + b")"
    quant = b"{%d,%s}" % (node.lo, b"" if node.hi is None else b"%d" % node.hi)
    return body + quant + (b"?" if node.lazy else b"")


def literal(text: bytes) -> bytes:
    return b"".join(byte(c) for c in text)
