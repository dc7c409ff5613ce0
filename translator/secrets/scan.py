"""Where a few byte patterns occur in a buffer, in one pass.

Every byte of output is searched for the rare things that need work (ANSI escapes,
secrets to mask). One ``bytes.find`` per pattern runs at ~1.2 GB/s, so each extra
pattern would cost a full pass; Hyperscan (Intel's SIMD multi-pattern matcher)
finds all of them in one pass over a whole buffer of lines, which is what keeps
the checks inside the batch throughput target. Where the wheel is not installed,
a ``re`` alternation gives the same answers, slower (the tests run both).

Each pattern reports its first match only (Hyperscan's single-match flag, one
``re.search``): the caller needs to know *which* patterns a line holds, and a line
of megabytes of ``AKIA`` would otherwise call back into Python a million times.

Compiling the pattern set takes Hyperscan tens of milliseconds, as long as a small
conversion runs, so the compiled database is cached on disk
(``$XDG_CACHE_HOME/streamv1``), keyed by the patterns and the Hyperscan version;
a cache that cannot be read or written only costs the compile. A database that
finds nothing masks nothing, so a cached one is used only when it is verified
(:func:`_load`); in doubt it is compiled anew.
"""

from __future__ import annotations

import importlib
import os
import re
import stat
from collections.abc import Callable, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

from streamv1.translator.hashes import blake2b  # (not hashlib: no OpenSSL at start)

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
        probes: Sequence[bytes] | None = None,
    ) -> None:
        """``probes``: for each pattern, a buffer it matches; a cached database
        must find each pattern in its probe before it is trusted."""
        if engine is None:
            engine = "hyperscan" if hyperscan is not None else "re"
        self.engine = engine
        self.patterns = list(patterns)
        self.caseless = list(caseless) if caseless is not None else [False] * len(patterns)
        self._found: list[tuple[int, int]] = []
        if engine == "hyperscan":
            if hyperscan is None:
                raise RuntimeError("the hyperscan engine is not installed")
            self._db: Any = _database(self.patterns, self.caseless, probes)
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
        """(pattern index, end offset) of the first match of each pattern found in
        ``data`` (empty: nothing to do)."""
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
            m = pattern.search(data)
            if m is not None:
                out.append((i, m.end()))
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


#: The cached database's digest, in a file beside it with this suffix.
DIGEST_SUFFIX = ".b2"


def digest_of(blob: bytes) -> str:
    return blake2b(blob, digest_size=32).hexdigest()


def _database(patterns: list[bytes], caseless: list[bool], probes: Sequence[bytes] | None) -> Any:
    flags = [
        hyperscan.HS_FLAG_SINGLEMATCH | (hyperscan.HS_FLAG_CASELESS if c else 0) for c in caseless
    ]
    named = (getattr(hyperscan, "__version__", "?"), os.uname().machine, patterns, flags)
    key = blake2b(repr(named).encode(), digest_size=12).hexdigest()
    cache = _cache_dir() / f"scan-{key}.hsdb"
    loaded = _load(cache, probes)
    if loaded is not None:
        return loaded
    db = hyperscan.Database(mode=hyperscan.HS_MODE_BLOCK)
    db.compile(
        expressions=patterns, ids=list(range(len(patterns))), elements=len(patterns), flags=flags
    )
    _store(db, cache)
    return db


def _load(cache: Path, probes: Sequence[bytes] | None) -> Any:
    """The cached database, or None when it cannot be trusted.

    Trusted when the folder and both files are ours and writable by no one else,
    the database's SHA-256 is the one written beside it when it was compiled (a
    database copied over it from elsewhere, or cut short, does not match), and it
    finds every pattern in its probe (one rewritten together with its digest, or
    compiled from other patterns, does not). Anything else: compile anew.
    """
    digest = cache.with_suffix(DIGEST_SUFFIX)
    try:
        if not (
            _private(cache.parent, stat.S_ISDIR)
            and _private(cache, stat.S_ISREG)
            and _private(digest, stat.S_ISREG)
        ):
            return None
        blob = cache.read_bytes()
        if digest_of(blob) != digest.read_text().strip():
            return None
        loaded = hyperscan.loadb(blob, hyperscan.HS_MODE_BLOCK)
        loaded.scratch = hyperscan.Scratch(loaded)  # a loaded database comes without one
        if probes is not None and not _answers(loaded, probes):
            return None
        return loaded
    except Exception:  # absent, damaged, or made on another CPU
        return None


def _private(path: Path, kind: Callable[[int], bool]) -> bool:
    """Of this kind (a link is not followed), ours, and no one else may write it."""
    st = path.lstat()
    return kind(st.st_mode) and st.st_uid == os.getuid() and not st.st_mode & 0o022


def _answers(db: Any, probes: Sequence[bytes]) -> bool:
    """Does every pattern match its probe? (Each probe padded past SHORT.)"""
    for i, probe in enumerate(probes):
        found: set[int] = set()

        def on_match(
            pattern: int, start: int, end: int, flags: int, context: Any, found: set[int] = found
        ) -> None:
            found.add(pattern)

        db.scan(b" " * SHORT + probe + b" " * SHORT, match_event_handler=on_match)
        if i not in found:
            return False
    return True


def _store(db: Any, cache: Path) -> None:
    """The database, then its digest, each written whole (temp file, rename)."""
    try:
        cache.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        blob = hyperscan.dumpb(db)
        for path, data in (
            (cache, blob),
            (cache.with_suffix(DIGEST_SUFFIX), digest_of(blob).encode()),
        ):
            tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)
    except OSError:
        pass  # no cache here: the next start compiles again


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "streamv1"
