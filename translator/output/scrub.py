"""Encoded lines → the bytes that may leave: no ANSI escapes, no secrets.

Every encoded line, whatever its ``--to`` shape, passes a :class:`Scrubber` where
:class:`~streamv1.translator.translate.translation.Translation` writes it, so whatever sink it
reaches (convert's output, the tail daemon's output, its subscribers) gets it
clean. One scan (:mod:`translator.secrets.scan`) looks for the ANSI marks and every secret
kind's core at once; only a line that hits is decoded or rewritten, so a clean
line is passed on as it is. (Scanning per line, not per
buffer of lines, measured cheaper: no buffer to assemble.)

The scan names the patterns a buffer holds, not every place they match (a line of
megabytes of ``AKIA`` would be a million matches to go through): a buffer of one
line, the translation's case, goes to :meth:`Scrubber.line` with them; a buffer of
several lines that hit is asked again line by line, so each byte is scanned at
most twice and no match is traced back to its line's start.
"""

from __future__ import annotations

import orjson

from streamv1.translator.output.encode import CSI8, ESC, clean_ansi
from streamv1.translator.secrets import redact
from streamv1.translator.secrets.scan import Scanner, literal

_ANSI_PATTERNS = [literal(ESC), literal(CSI8)]
_ANSI_PROBES = [b'{"text":"\\u001b[31mred"}\n', '{"text":"\x9b2K"}\n'.encode()]
_ANSI_IDS = frozenset({0, 1})
#: Clean lines in a row after which gathered lines are scanned a buffer at a time.
WHOLE_AFTER = 256


class Scrubber:
    """``redact=False`` (``--no-redact``) keeps the ANSI half only."""

    def __init__(self, redact_secrets: bool = True, engine: str | None = None) -> None:
        self.redact = redact_secrets
        kinds = redact.KINDS if redact_secrets else ()
        self._kinds = kinds
        self.scanner = Scanner(
            [*_ANSI_PATTERNS, *(k.core for k in kinds)],
            engine=engine,
            probes=[*_ANSI_PROBES, *(k.probe for k in kinds)],
        )
        self._matches = self.scanner.matches
        #: Clean lines in a row scrubbed one by one (see :meth:`gathered`).
        self.clean_run = WHOLE_AFTER

    def __call__(self, data: bytes) -> bytes:
        """Scrub a buffer of whole lines (each ending in a newline)."""
        found = self._matches(data)  # (inline, not via dirty: each daemon line comes here)
        return self._scrubbed(data, found) if found else data

    def gathered(self, data: bytes) -> bytes:
        """A line about to be gathered into a buffer (batch conversion), scrubbed
        now, one by one: the caller does so while :attr:`clean_run` is below
        :data:`WHOLE_AFTER`, and otherwise leaves the line to its buffer's scan. A
        buffer that hits is scanned twice, whole and line by line, so after a hit
        lines are scrubbed one by one until WHOLE_AFTER clean ones in a row say
        hits are rare again. The hint is the process's: an archive of small files
        keeps it from file to file."""
        cleaned = self.dirty(data)
        if cleaned is None:
            self.clean_run += 1
            return data
        self.clean_run = 0
        return cleaned

    def dirty(self, data: bytes) -> bytes | None:
        """A buffer of whole lines scrubbed, or None when nothing in it hit (it
        passes as it is): a caller can tell how often its buffers need work."""
        found = self._matches(data)
        return self._scrubbed(data, found) if found else None

    def _scrubbed(self, data: bytes, found: list[tuple[int, int]]) -> bytes:
        """A buffer the scan found patterns in, scrubbed (one line: with them)."""
        first = data.find(b"\n")
        if first < 0 or first == len(data) - 1:
            return self.line(data, {pattern for pattern, _ in found})
        line = self.line
        return b"".join([line(each) for each in data.splitlines(keepends=True)])

    def line(self, line: bytes, patterns: set[int] | frozenset[int] | None = None) -> bytes:
        """One line, given the patterns that hit it (None: scan it first)."""
        if patterns is None:
            patterns = self.scanner.hits(line)
        if patterns & _ANSI_IDS:
            line = clean_ansi(line)
            # what a removed escape joined may now read as a secret
            patterns = self.scanner.hits(line) if self._kinds else frozenset()
        # (by the patterns that hit, in the kinds' order: there are hundreds of kinds)
        first = len(_ANSI_PATTERNS)
        kinds = [self._kinds[i - first] for i in sorted(patterns) if i >= first]
        return redact.mask(line, kinds) if kinds else line


_DEFAULT: dict[bool, Scrubber] = {}


def scrubber(redact_secrets: bool = True) -> Scrubber:
    """The process's scrubber for this setting (its pattern database built once)."""
    if redact_secrets not in _DEFAULT:
        _DEFAULT[redact_secrets] = Scrubber(redact_secrets)
    return _DEFAULT[redact_secrets]


def scrub_text(text: str) -> str:
    """Text for a person that quotes input (``validate``'s messages), scrubbed as
    an output line is: the kinds read it as a JSON string holds it. A file name's
    undecodable bytes (lone surrogates) are read as ``\\xNN``."""
    try:
        data = orjson.dumps({"text": text}) + b"\n"
    except TypeError:
        try:
            raw = text.encode("utf-8", "surrogateescape")
        except UnicodeEncodeError:  # (a surrogate no undecodable byte makes)
            raw = text.encode("utf-8", "backslashreplace")
        text = raw.decode("utf-8", "backslashreplace")
        data = orjson.dumps({"text": text}) + b"\n"
    clean = scrubber(True)(data)
    return text if clean == data else str(orjson.loads(clean)["text"])
