"""gitleaks' kinds, as the masking uses them: read from ``gitleaks.kinds.json``.

:mod:`translator.secrets.gitleaks` translates gitleaks' rule set into that file
when the rules change; here each kind of it becomes a :class:`SecretKind` whose
check is the rule's entropy floor and allowlists (and the global allowlist).
Apart from the translation so that a start reads a file (~3 ms) and imports no
translator, and apart from the hand-written kinds because these are data read
back, not tables of ours.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import orjson

from streamv1.translator.secrets.secret_kind import Check, SecretKind


def entropy(data: bytes) -> float:
    """Shannon entropy in bits per byte, as gitleaks computes it."""
    n = len(data)
    if not n:
        return 0.0
    return -sum(k / n * math.log2(k / n) for k in map(data.count, set(data)))


@cache
def _either(patterns: tuple[bytes, ...]) -> re.Pattern[bytes] | None:
    """One pattern for a list of them (one search a match, not one each)."""
    return re.compile(b"|".join(b"(?:" + p + b")" for p in patterns)) if patterns else None


def _allowed(
    floor: float | None,
    allow: tuple[bytes, ...],
    allow_match: tuple[bytes, ...],
    stopwords: tuple[bytes, ...],
) -> Check:
    """A gitleaks rule's tests of a match: its entropy floor, its allowlists and the
    global one (what they allow is no secret: ``${VAR}``, ``xxxx…``, ``true``)."""

    compiled: list[re.Pattern[bytes] | None] = []  # (on first use: most never run)

    def check(secret: bytes, m: re.Match[bytes]) -> bool:
        if floor is not None and entropy(secret) < floor:
            return False
        if stopwords:
            low = secret.lower()
            if any(word in low for word in stopwords):
                return False
        if not compiled:
            compiled.extend((_either(allow), _either(allow_match)))
        on_secret, on_match = compiled
        if on_secret is not None and on_secret.search(secret):
            return False
        return on_match is None or not on_match.search(m[0])

    return check


def from_json(
    spec: dict[str, Any], global_allow: Sequence[bytes] = (), global_stopwords: Sequence[str] = ()
) -> SecretKind:
    """A kind of secrets/gitleaks.kinds.json (written by translator/secrets/gitleaks.py);
    the global allowlist is every kind's."""

    def raw(key: str) -> bytes:
        return str(spec.get(key, "")).encode("latin-1")

    allow = tuple(p.encode("latin-1") for p in spec.get("allow", ())) + tuple(global_allow)
    allow_match = tuple(p.encode("latin-1") for p in spec.get("allow_match", ()))
    stop = tuple(w.lower().encode() for w in (*spec.get("stopwords", ()), *global_stopwords))
    check = _allowed(spec.get("entropy"), allow, allow_match, stop)
    return SecretKind(
        spec["name"],
        raw("core"),
        raw("source"),
        spec["example"],
        check,
        head=int(spec.get("head", 0)),
        head_chars=raw("head_chars"),
        rule=spec["rule"],
    )


def load() -> tuple[SecretKind, ...]:
    """gitleaks' kinds, as translated (~3 ms: read and built; each compiled when a
    line first needs it)."""
    # (beside this module: importlib.resources would import zipfile, ~4 ms)
    doc = orjson.loads((Path(__file__).parent / "gitleaks.kinds.json").read_bytes())
    glob = tuple(p.encode("latin-1") for p in doc["global_allow"])
    return tuple(from_json(k, glob, doc["global_stopwords"]) for k in doc["kinds"])
