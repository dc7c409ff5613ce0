"""Digests from the interpreter's own modules, not hashlib's.

hashlib loads OpenSSL's ``_hashlib`` at import: 4-5 ms of every start and a few
MB of memory (the test that holds the tail daemon's memory to convert's saw it),
for digests that CPython's builtin BLAKE2 and SHA-2 give the same. hashlib's
are the fallback for a Python built without them."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

try:
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - CPython builds it unless told not to
    from hashlib import blake2b


def _sha256() -> Callable[..., Any]:
    for name in ("_sha2", "_sha256"):  # (Python 3.12 and later, 3.11)
        try:
            found: Callable[..., Any] = importlib.import_module(name).sha256
            return found
        except (ImportError, AttributeError):
            continue
    import hashlib  # pragma: no cover

    return hashlib.sha256  # pragma: no cover


sha256 = _sha256()

__all__ = ["blake2b", "sha256"]
