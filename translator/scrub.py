"""Encoded lines → the bytes that may leave: no ANSI escapes, no secrets.

Every encoder (both ``--to`` shapes) hands its bytes through a :class:`Scrubber`,
so whatever sink they reach (convert's output, the tail daemon's output, its
subscribers) gets them clean. One scan (:mod:`translator.scan`) looks for the ANSI
marks and every secret kind's core at once; only a line that hits is decoded or
rewritten, so a clean line is passed on as it is. (Scanning per line, not per
buffer of lines, measured cheaper: no buffer to assemble.)
"""

from __future__ import annotations

from translator import redact
from translator.encode import CSI8, ESC, clean_ansi
from translator.scan import Scanner, literal

_ANSI_PATTERNS = [literal(ESC), literal(CSI8)]
_ANSI_IDS = frozenset({0, 1})


class Scrubber:
    """``redact=False`` (``--no-redact``) keeps the ANSI half only."""

    def __init__(self, redact_secrets: bool = True, engine: str | None = None) -> None:
        self.redact = redact_secrets
        kinds = redact.KINDS if redact_secrets else ()
        self._kinds = kinds
        self.scanner = Scanner(
            [*_ANSI_PATTERNS, *(k.core for k in kinds)],
            caseless=[False, False, *(k.caseless for k in kinds)],
            engine=engine,
        )
        self._matches = self.scanner.matches

    def __call__(self, data: bytes) -> bytes:
        """Scrub a buffer of whole lines (each ending in a newline)."""
        found = self._matches(data)
        if not found:
            return data
        spans: dict[int, set[int]] = {}
        for pattern, end in found:
            start = data.rfind(b"\n", 0, max(end - 1, 0)) + 1
            spans.setdefault(start, set()).add(pattern)
        out: list[bytes] = []
        pos = 0
        for start in sorted(spans):
            stop = data.find(b"\n", start)
            stop = len(data) if stop < 0 else stop + 1
            out.append(data[pos:start])
            out.append(self.line(data[start:stop], spans[start]))
            pos = stop
        out.append(data[pos:])
        return b"".join(out)

    def line(self, line: bytes, patterns: set[int] | frozenset[int] | None = None) -> bytes:
        """One line, given the patterns that hit it (None: scan it first)."""
        if patterns is None:
            patterns = self.scanner.hits(line)
        if patterns & _ANSI_IDS:
            line = clean_ansi(line)
            # what a removed escape joined may now read as a secret
            patterns = self.scanner.hits(line) if self._kinds else frozenset()
        kinds = [k for i, k in enumerate(self._kinds, start=len(_ANSI_PATTERNS)) if i in patterns]
        return redact.mask(line, kinds) if kinds else line


_DEFAULT: dict[bool, Scrubber] = {}


def scrubber(redact_secrets: bool = True) -> Scrubber:
    """The process's scrubber for this setting (its pattern database built once)."""
    if redact_secrets not in _DEFAULT:
        _DEFAULT[redact_secrets] = Scrubber(redact_secrets)
    return _DEFAULT[redact_secrets]
