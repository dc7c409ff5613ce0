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

from streamv1.translator.events import Event, Problem
from streamv1.translator.mapping import Row
from streamv1.translator.state import persisted


@persisted
@dataclass(slots=True)
class Where:
    """Where a source record came from, for errors that name file:line."""

    path: str
    line: int


class BodyError(ValueError):
    """A known record type whose body does not fit: rule 2, fail loudly."""


def expect_strings(record: dict[str, Any], keys: tuple[str, ...]) -> None:
    """The keys that say what a record is and whose it is (its type, its session)
    are strings where present: a list or an object there is a body that does not
    fit (BodyError), not a type to look up or a session to file lines under."""
    for key in keys:
        value = record.get(key)
        if value is not None and not isinstance(value, str):
            raise BodyError(f"{key} is {type(value).__name__}, not a string")


def body_problem(
    message: str, record: dict[str, Any], where: Where, session: str | None, ts: str | None
) -> Problem:
    """The system/error for a record that does not fit; the record kept whole."""
    return Problem(
        message, where.path, where.line, ts=ts, session_id=session, extension={"record": record}
    )


def time_problem(key: str, value: Any, where: Where, session: str | None) -> Problem:
    """The system/error for a time a record gives that is no RFC 3339 time (year
    0, a month 13, past 9999 once its offset is applied, not a time at all): the
    record is still translated, its line taking the time of the line before;
    the time is never passed on as it is."""
    shown = value if isinstance(value, str) else repr(value)
    if len(shown) > 100:
        shown = shown[:100] + "…"
    said = repr(shown) if isinstance(value, str) else shown
    return Problem(
        f"{key} {said} is not a time stream_v1 can carry (RFC 3339, years 0001-9999); "
        "the line takes the time of the line before",
        where.path, where.line, session_id=session, kind="invalid_timestamp",
        extension={"value": shown},
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
    from streamv1 import adapters

    found: dict[str, Source] = {}
    for info in sorted(pkgutil.iter_modules(adapters.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{adapters.__name__}.{info.name}")
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
