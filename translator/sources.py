"""The adapter contract and the registry that finds adapters by themselves.

Every module in the ``adapters`` package whose name does not start with ``_``
defines ``SOURCE``, a :class:`Source`. Adding a source means adding one such module
(plus its fixtures): nothing here or in the CLI changes.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from translator.events import Event, Problem
from translator.mapping import Row
from translator.state import persisted


@persisted
@dataclass(slots=True)
class Where:
    """Where a source record came from, for errors that name file:line."""

    path: str
    line: int


class BodyError(ValueError):
    """A known record type whose body does not fit: rule 2, fail loudly."""


def body_problem(
    message: str, record: dict[str, Any], where: Where, session: str | None, ts: str | None
) -> Problem:
    """The system/error for a record that does not fit; the record kept whole."""
    return Problem(
        message, where.path, where.line, ts=ts, session_id=session, extension={"record": record}
    )


class Adapter(Protocol):
    """Translates one input's records, in order, into neutral events."""

    def feed(self, record: dict[str, Any], where: Where) -> Iterable[Event]: ...

    def finish(self) -> Iterable[Event]:
        """The input is over (EOF): emit what was held back."""
        ...

    # Optional: ``holding`` (bool), True while the adapter holds back a run's events
    # that only more input or ``finish`` releases (the tail daemon's idle-close then
    # ends them as EOF would).


@dataclass(slots=True, frozen=True)
class Source:
    name: str
    description: str
    #: How sure (0-100) this source is that a record is one of its own. A cheap
    #: look at keys, never a parse of the file: 100 decides at once.
    sniff: Callable[[dict[str, Any]], int]
    #: A new adapter for one input, given its path ("-" for stdin) and the session
    #: id to use where the input's records carry none (``--session-id``).
    open: Callable[[str, str | None], Adapter]
    #: The session id an input's path implies, used before its first record.
    session_hint: Callable[[str], str | None] = lambda path: None
    #: What each record type becomes: docs/mapping.md's table for this source is
    #: made from it, and each row has its example in the table test.
    mapping: tuple[Row, ...] = ()


@cache
def sources() -> dict[str, Source]:
    import adapters

    found: dict[str, Source] = {}
    for info in sorted(pkgutil.iter_modules(adapters.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"adapters.{info.name}")
        source = getattr(module, "SOURCE", None)
        if isinstance(source, Source):
            found[source.name] = source
    return found


def sniff(record: dict[str, Any]) -> tuple[Source | None, int]:
    """The source most sure of this record, and its score."""
    best: Source | None = None
    score = 0
    for source in sources().values():
        s = source.sniff(record)
        if s > score:
            best, score = source, s
    return best, score
