"""Secrets masked on the way out: every encoded line, whatever its shape or sink.

The unified stream leaves the machine (dashboards, CI logs, eval harnesses), so no
key, token or password may ride on it. The masker works on the *encoded* line:
orjson writes a string's secret-like characters (letters, digits, ``-_./+=:@``)
as they are, so a secret in any string, at any depth, is the same bytes in the
line. Each kind's pattern stays inside one JSON string (no unescaped quote can
match), so the masked line is still valid JSON, and the marker keeps the kind:
``[REDACTED:aws_access_key]``. docs/security.md lists every kind and form.

Each kind has a *core*: a pattern every match of its exact pattern contains, in the
syntax both Python's ``re`` and Hyperscan take. The cores go into the one scan every
line gets anyway (:mod:`translator.secrets.scan`); only a line a core hit runs that kind's
exact patterns. Exact patterns begin with one literal, so ``re`` skips to candidates
at memchr speed (a choice of first bytes, ``[Pp]assword``, makes it try every byte:
~40x slower): the left-boundary test is a look-behind placed *after* the literal,
and a name is written once per casing (``password``, ``Password``, ``PASSWORD``).

**Where a secret may start** (the boundary rule). A kind recognised by its prefix
(``ghp_``, ``sk-ant-``, ``AKIA``, ``glpat-``, ``AIza``, ``xoxb-``, ...) starts where
the prefix does not follow an ASCII letter or digit: after ``= / . + - _ : @``, a
quote, a space or a JSON escape such as ``\\n``, so ``TOKEN=ghp_…``,
``/secrets/xoxb-…`` and ``foo_ghp_…`` are all masked, while ``task-runner`` holds no
``sk-`` key. Two kinds have no prefix of their own and start only where a run of
their characters starts (not after a letter, a digit, ``-`` or ``_``): JWTs and
Discord bot tokens.

**Linear time, whatever the line.** A pattern is tried at every candidate, and a
line can be megabytes of candidates (``sk-sk-sk-…``). So after the literal every
pattern either fails within a bounded number of bytes, or succeeds and consumes
what it read, or fails having read a run that holds no other candidate (possessive
quantifiers, ``*+``: nothing is read twice). The one test that would have to read a
long run again (does this ``sk-`` run hold a digit?) is made in Python on the match
(:attr:`SecretKind.check`).

**Cut in C.** A line can also be megabytes of short secrets (``password=a1b2 …``),
and a Python call per match costs more than the rest of a line's conversion. So a
pattern is either the secret and nothing else (``re.sub`` with the marker), or
``(?P<keep>…)(?P<secret>…)`` (``re.split``, then every secret piece swapped for the
marker); only the few kinds with a Python check go match by match, and those at
most :data:`CHECKED` matches a line (a line with more is a flood: all its matches
are masked, unchecked, in C).

**gitleaks' kinds.** ~170 more kinds are gitleaks' rule set, translated by
:mod:`translator.secrets.gitleaks` into this design (a literal start, a core, bounded or
possessive reads) and loaded from ``secrets/gitleaks.kinds.json`` (:data:`GITLEAKS`):
they run between the shapes above and the contexts (``Bearer``, URLs, names).

**Where it is.** What a kind is and the forms ours are built in:
:mod:`translator.secrets.secret_kind`; our kinds: :mod:`translator.secrets.hand_written`;
gitleaks' read back: :mod:`translator.secrets.gitleaks_kinds`. Here: every kind in
the order it is applied, and masking a line, the one part every output line runs
through (:mod:`translator.output.scrub` calls :func:`mask`).
"""

from __future__ import annotations

from streamv1.translator.secrets import gitleaks_kinds, hand_written
from streamv1.translator.secrets.secret_kind import SecretKind

GITLEAKS: tuple[SecretKind, ...] = gitleaks_kinds.load()
KINDS: tuple[SecretKind, ...] = hand_written.SHAPES + GITLEAKS + hand_written.CONTEXTS

#: Every kind's name, in the order first met.
NAMES: tuple[str, ...] = tuple(dict.fromkeys(k.name for k in KINDS))


def marker(kind: str) -> bytes:
    return b"[REDACTED:" + kind.encode() + b"]"


def mask(data: bytes, kinds: list[SecretKind]) -> bytes:
    """Replace every secret of the given kinds (in their order) with its marker; what
    an exact pattern matches before the secret (a key name, a URL's user) stays."""
    for kind in kinds:
        cut = kind.cut
        data = _each(kind, data) if cut == "each" else _in_c(kind, data, cut)
    return data


def _in_c(kind: SecretKind, data: bytes, cut: str) -> bytes:
    if cut == "sub":
        return kind.exact.sub(marker(kind.name), data)
    parts = kind.exact.split(data)
    if len(parts) > 1:
        # text, keep, secret, text, keep, secret, ..., text
        parts[2::3] = [marker(kind.name)] * (len(parts) // 3)
        return b"".join(parts)
    return data


#: how many matches of one kind in one line are checked in Python; a line with more
#: is a flood (megabytes of near-secrets), and all its matches are masked unchecked,
#: in C where the pattern allows (masking more is the safe side): its cost stays
#: that of the C cut, whatever the line
CHECKED = 256


def _each(kind: SecretKind, data: bytes) -> bytes:
    """Match by match, for kinds with a Python check or a head."""
    pieces: list[bytes] = []
    pos = 0
    check = kind.check
    left = CHECKED
    floor = kind.head
    chars = kind.head_chars
    mark = marker(kind.name)
    for m in kind.exact.finditer(data):
        start, end = m.span("secret")
        if floor:  # (the head: bytes of head_chars just before, read back in C)
            head = data[max(start - floor, pos) : start]
            start -= len(head) - len(head.rstrip(chars))
        if check is not None:
            left -= 1
            if left < 0:
                if kind.in_c is not None:
                    return _in_c(kind, data, kind.in_c)
                check = None
            elif not check(data[start:end], m):
                continue  # the shape without the substance (hyphenated words, say)
        pieces.append(data[pos:start])
        pieces.append(mark)
        pos = end
    if not pieces:
        return data
    pieces.append(data[pos:])
    return b"".join(pieces)
