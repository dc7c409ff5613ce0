"""Where a few byte patterns occur in a buffer, in one pass.

Every byte of output is searched for the rare things that need work (ANSI escapes,
secrets to mask). One ``bytes.find`` per pattern runs at ~1.2 GB/s, so each extra
pattern would cost a full pass; Hyperscan (Intel's SIMD multi-pattern matcher)
finds all of them in one pass over a whole buffer of lines, which is what keeps
the checks inside the batch throughput target. Where the wheel is not installed,
a ``re`` alternation gives the same answers, slower (the tests run both).

Compiling the pattern set takes Hyperscan tens of milliseconds, as long as a small
conversion runs, so the compiled database is cached on disk
(``$XDG_CACHE_HOME/streamv1``), keyed by the patterns and the Hyperscan version;
a cache that cannot be read or written only costs the compile.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import re
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

hyperscan: Any
try:
    hyperscan = importlib.import_module("hyperscan")
except ImportError:  # pragma: no cover - platforms without a wheel
    hyperscan = None


def literal(text: bytes) -> bytes:
    """A pattern matching exactly these bytes (every byte escaped: safe in both engines)."""
    return b"".join(b"\\x%02x" % byte for byte in text)


class Scanner:
    """Reports which patterns (by index) match where; nothing else.

    Patterns are bytes regexes in the common subset of Python ``re`` and Hyperscan
    (no back-references, no look-arounds). A match only says "look here": callers
    do the exact work on the few lines that hit.
    """

    def __init__(
        self,
        patterns: Sequence[bytes],
        caseless: Sequence[bool] | None = None,
        engine: str | None = None,
    ) -> None:
        if engine is None:
            engine = "hyperscan" if hyperscan is not None else "re"
        self.engine = engine
        self.patterns = list(patterns)
        self.caseless = list(caseless) if caseless is not None else [False] * len(patterns)
        self._found: list[tuple[int, int]] = []
        if engine == "hyperscan":
            if hyperscan is None:
                raise RuntimeError("the hyperscan engine is not installed")
            self._db: Any = _database(self.patterns, self.caseless)
            self._scan = self._db.scan
        self._fast = engine == "hyperscan"
        self._handler = self._on_match  # one bound method, not one a call

    @cached_property
    def _each(self) -> list[re.Pattern[bytes]]:
        # The re engine's patterns (short buffers use them too), compiled on first
        # use: with Hyperscan most runs never need them, and compiling costs a start.
        return [
            re.compile(p, re.IGNORECASE if c else 0)
            for p, c in zip(self.patterns, self.caseless, strict=True)
        ]

    def _on_match(self, pattern: int, start: int, end: int, flags: int, context: Any) -> None:
        self._found.append((pattern, end))

    def matches(self, data: bytes) -> list[tuple[int, int]]:
        """(pattern index, end offset) of the matches in ``data`` (empty: nothing to do).

        Every line holding a match is reported by at least one of them.
        """
        if not data:
            return _NONE  # (Hyperscan refuses an empty buffer)
        if self._fast and len(data) >= SHORT:
            self._scan(data, match_event_handler=self._handler)
            if not self._found:
                return _NONE
            found, self._found = self._found, []
            return found
        out: list[tuple[int, int]] = []
        for i, pattern in enumerate(self._each):
            out.extend((i, m.end()) for m in pattern.finditer(data))
        return out

    def hits(self, data: bytes) -> frozenset[int]:
        """The indexes of the patterns found in ``data``."""
        return frozenset(i for i, _ in self.matches(data))


_NONE: list[tuple[int, int]] = []

#: Buffers shorter than this are searched with re. Hyperscan 0.9.1 (as bundled)
#: was seen to miss a literal at the end of a buffer under ~40 bytes when the set
#: also held a bounded repeat (tests/test_scan.py keeps the case). Every output
#: line is longer than this, so it costs nothing.
SHORT = 64


def _database(patterns: list[bytes], caseless: list[bool]) -> Any:
    flags = [hyperscan.HS_FLAG_CASELESS if c else 0 for c in caseless]
    key = hashlib.sha256(
        repr((getattr(hyperscan, "__version__", "?"), os.uname().machine, patterns, flags)).encode()
    ).hexdigest()[:24]
    cache = _cache_dir() / f"scan-{key}.hsdb"
    try:
        loaded = hyperscan.loadb(cache.read_bytes(), hyperscan.HS_MODE_BLOCK)
        loaded.scratch = hyperscan.Scratch(loaded)  # a loaded database comes without one
        return loaded
    except Exception:  # absent, damaged, or made on another CPU: compile anew
        pass
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(expressions=patterns, ids=list(range(len(patterns))), elements=len(patterns),
               flags=flags)
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        tmp = cache.with_name(f"{cache.name}.{os.getpid()}.tmp")
        tmp.write_bytes(hyperscan.dumpb(db))
        os.replace(tmp, cache)
    except OSError:
        pass  # no cache here: the next start compiles again
    return db


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "streamv1"
