"""The adapter contract and the registry that finds adapters by themselves.

Every module in the ``adapters`` package whose name does not start with ``_``
defines ``SOURCE``, a :class:`Source`. Adding a source means adding one such module
(plus its fixtures): nothing here or in the CLI changes.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from typing import Any, Protocol

from streamv1.translator.model.events import JSON, Event, Problem, whole
from streamv1.translator.reading.files import open_regular
from streamv1.translator.reading.mapping import Row
from streamv1.translator.state import persisted


@persisted
@dataclass(slots=True)
class Where:
    """Where a source record came from, for errors that name file:line."""

    path: str
    line: int


class BodyError(ValueError):
    """A known record type whose body does not fit: rule 2, fail loudly."""


#: What a record's naming keys may be (``type(v) in STR_OR_NONE``: the hot path's
#: check, before :func:`expect_strings` says which one does not fit).
STR_OR_NONE = (str, type(None))


def expect_strings(record: dict[str, Any], keys: tuple[str, ...]) -> None:
    """The keys that say what a record is and whose it is (its type, its session)
    are strings where present: a list or an object there is a body that does not
    fit (BodyError), not a type to look up or a session to file lines under."""
    for key in keys:
        str_field(record, key)


# -- a record's fields, read by table -------------------------------------------------

#: What a field of a record type must be, in a :data:`Spec`: a type (``str``,
#: ``int``, ``bool``, ...; ``object`` takes any value), or a function given the value
#: and the field's name as errors show it, that returns the value to use and raises
#: BodyError where it does not fit (:func:`string`: any other value is as good as
#: absent).
Kind = type | Callable[[Any, str], Any]
#: A record type's fields, in the order they are checked: key → :data:`Kind`.
Spec = Mapping[str, Kind]


def take(record: Mapping[str, Any], spec: Spec, what: str = "") -> tuple[JSON, JSON]:
    """The fields ``spec`` names, and the rest of the record (its other keys, in
    their order, for the line's extension).

    A field the record does not have (or has as null) is None. A field of a type
    that does not fit is a body that does not fit: BodyError
    ``"<what>.<key> is <its type>, not <type>"`` for the first such field (true and
    false are no numbers)."""
    fields: JSON = {}
    for key, kind in spec.items():
        value = record.get(key)
        if value is not None and kind is not object:
            if type(kind) is not type:
                value = kind(value, _named(what, key))
            elif not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
                raise BodyError(
                    f"{_named(what, key)} is {type(value).__name__}, not {kind.__name__}"
                )
        fields[key] = value
    return fields, rest(record, spec)


def rest(record: Mapping[str, Any], used: Collection[str]) -> JSON:
    """The record's keys a mapping did not use, in their order: what goes into the
    line's extension rather than being dropped."""
    if len(used) > 2 * len(record):
        return {k: v for k, v in record.items() if k not in used}
    # A copy less the used keys (the order kept): half the time of the
    # comprehension on the short records of streams, and it runs for nearly each.
    left = dict(record)
    for key in used:
        left.pop(key, None)
    return left


# -- a record's fields, one at a time (the adapters' readers, written once) -------------


def _named(what: str, key: str) -> str:
    return f"{what}.{key}" if what else key


def str_field(
    record: Mapping[str, Any], key: str, what: str = "", required: bool = False
) -> str | None:
    """A string field, None where absent or null; any other value is a body that does
    not fit (``<what>.<key> is int, not a string``; ``<what>: no <key>`` when
    ``required``). ``what`` names the record in errors; empty, the key alone."""
    value = record.get(key)
    if value is None:
        if required:
            raise BodyError(f"{what}: no {key}" if what else f"no {key}")
        return None
    if not isinstance(value, str):
        raise BodyError(f"{_named(what, key)} is {type(value).__name__}, not a string")
    return value


def count_field(record: Mapping[str, Any], key: str, what: str = "") -> int | None:
    """A whole number ≥ 0 (``3.0`` is 3), None where absent or null; anything else is
    a body that does not fit (``<what>.<key> is -1, not a whole number ≥ 0``)."""
    value = record.get(key)
    if value is None:
        return None
    n = whole(value)
    if n is None or n < 0:
        shown = repr(value) if isinstance(value, int | float | str | bool) else type(value).__name__
        raise BodyError(f"{_named(what, key)} is {shown[:40]}, not a whole number ≥ 0")
    return n


def string(value: Any, name: str = "") -> str | None:
    """A string read loosely: any other value is as good as absent (None)."""
    return value if isinstance(value, str) else None


def number(value: Any, name: str = "") -> int | float | None:
    """A number read loosely (true and false are no numbers): anything else, None."""
    return value if isinstance(value, int | float) and not isinstance(value, bool) else None


def array(value: Any, name: str = "") -> list[Any] | None:
    """A list read loosely: anything else, None."""
    return value if isinstance(value, list) else None


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
        where.path,
        where.line,
        session_id=session,
        kind="invalid_timestamp",
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
    # ends them as EOF would); ``settle()`` (events), asked while it holds them each
    # time its session's files are framed together: what it decided meanwhile from
    # the other files (translator.translate.session).


# -- sniff scores: how sure a source is that a record is one of its own -----------------
# Auto-detection takes the source most sure of a record: at DECISIVE or more it
# starts that source at once; below, it looks at more records first.

#: A key only this source writes (a session file's ``sessionId``; stream_v1's ``seq``).
CERTAIN = 100
#: A record type, or a document's shape, that only this source writes.
OWN_TYPE = 95
#: One of this source's record types with the keys it writes, which another source
#: could share: enough to start the source.
DECISIVE = 90
#: This source's unless a surer one says otherwise (a bare ``text`` event).
LIKELY = 80
#: This source's layout with a type it does not list (a new record type).
POSSIBLE = 50
#: A last guess: a record with a type and nothing that says whose.
GUESS = 10
#: Not this source's.
NOT_MINE = 0


def _no_homes(env: Mapping[str, str], home: str) -> list[str]:
    return []


def _nothing(parts: Sequence[str]) -> bool:
    return False


@dataclass(slots=True, frozen=True)
class Files:
    """Where a source's agent keeps its files and which of them are its transcripts
    (#24: a source owns its files; discovery, the daemon and batch grouping ask).

    ``parts`` are a path's components below the folder being walked (a file's
    name last), so a rule sees as much of the layout as the walk does."""

    #: The folders the agent writes its transcripts into by default, given the
    #: environment and the user's home (the CLI's own overrides first, as the CLI
    #: reads them): what ``tail`` with no folder follows and ``convert`` with no
    #: path converts. Folders that do not exist yet are fine (they are waited for).
    homes: Callable[[Mapping[str, str], str], list[str]] = _no_homes
    #: A file this source reads that is not ``*.jsonl`` (every ``*.jsonl`` is
    #: looked at already): Gemini's older ``chats/session-*.json`` documents.
    reads: Callable[[Sequence[str]], bool] = _nothing
    #: A folder or file of this agent's that is no transcript (its bookkeeping),
    #: never an input wherever it is walked: Claude Code's ``tool-results/``,
    #: Codex's ``history.jsonl``. A folder it skips is not entered.
    skips: Callable[[Sequence[str]], bool] = _nothing


@dataclass(slots=True, frozen=True)
class Source:
    name: str
    description: str
    #: How sure this source is that a record is one of its own: one of the scores
    #: above. A cheap look at keys, never a parse of the file.
    sniff: Callable[[dict[str, Any]], int]
    #: A new adapter for one input, given its path ("-" for stdin) and the session
    #: id to use where the input's records carry none (``--session-id``).
    open: Callable[[str, str | None], Adapter]
    #: The session id an input's path implies, used before its first record.
    session_hint: Callable[[str], str | None] = lambda path: None
    #: What each record type becomes: docs/mapping.md's table for this source is
    #: made from it, and each row has its example in the table test.
    mapping: tuple[Row, ...] = ()
    #: The session a file on disk is one file of, where this source keeps a session
    #: in several files (a main file and its nested actors' files): a key the files
    #: of one session share (their folder included, so a copy elsewhere is another
    #: session). Files with one key are converted as one stream, the main file's
    #: framing theirs. None: the file stands alone. It may read the file's head.
    session_of: Callable[[str], str | None] = lambda path: None
    #: Is this file the main one of session ``key`` (its framing frames the others)?
    #: By default: the key is the main file's path without its suffix.
    is_main: Callable[[str, str], bool] = lambda path, key: os.path.splitext(path)[0] == key
    #: Files whose nested actor a stream_v1 line of this file says is done (its
    #: spawning call answered), given the file's path and the line: the daemon ends
    #: their runs then, as batch conversion does at their files' end.
    ended_by: Callable[[str, dict[str, Any]], list[str]] = lambda path, line: []
    #: Where the agent keeps its files (:class:`Files`).
    files: Files = Files()


@cache
def sources() -> dict[str, Source]:
    from streamv1 import adapters
    from streamv1.translator.registry import registered

    return {source.name: source for source in registered(adapters, "SOURCE", Source)}


def sniff(record: dict[str, Any]) -> tuple[Source | None, int]:
    """The source most sure of this record, and its score."""
    best: Source | None = None
    score = 0
    for source in sources().values():
        s = source.sniff(record)
        if s > score:
            best, score = source, s
    return best, score


def session_place(path: str) -> tuple[str, bool] | None:
    """The session some source gives a file on disk, and whether the file is its
    main one (:attr:`Source.session_of`, :attr:`Source.is_main` of the first source
    that knows it), in one look: a source may read the file's head to tell."""
    for source in sources().values():
        key = source.session_of(path)
        if key is not None:
            return key, source.is_main(path, key)
    return None


def is_main_file(path: str, key: str) -> bool:
    """Is ``path`` the main file of the session ``key``?"""
    return session_place(path) == (key, True)


def session_of(path: str) -> str | None:
    """The session key some source gives a file on disk (:attr:`Source.session_of`:
    the first source that knows it)."""
    place = session_place(path)
    return place[0] if place is not None else None


def ended_by(path: str, line: dict[str, Any]) -> list[str]:
    """Files whose nested actor this line of ``path`` says is done
    (:attr:`Source.ended_by` of every source that keeps sessions in several files)."""
    found: list[str] = []
    for source in sources().values():
        found += source.ended_by(path, line)
    return found


def homes(env: Mapping[str, str] | None = None, home: str | None = None) -> list[str]:
    """Every source's default folders (:attr:`Files.homes`), once each, in the
    sources' order: what ``tail`` with no folder follows."""
    env = os.environ if env is None else env
    home = home if home is not None else os.path.expanduser("~")
    found: list[str] = []
    for source in sources().values():
        for folder in source.files.homes(env, home):
            if folder not in found:
                found.append(folder)
    return found


#: How much of a file :func:`first_time` looks at.
_HEAD = 65536


def first_time(path: str) -> str:
    """The first record time among a file's first lines (``timestamp`` or ``ts``,
    normalized), "" when there is none: the order sessions are written in."""
    import orjson

    from streamv1.translator.timefmt import normalize_ts

    try:
        with open_regular(path) as fh:
            head = fh.read(_HEAD)
    except OSError:
        return ""
    for raw in head.split(b"\n")[:200]:
        if b'"timestamp"' not in raw and b'"ts"' not in raw and b"\\u" not in raw:
            continue  # no time key, even escaped: nothing to parse (print mode has none)
        try:
            record = orjson.loads(raw)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict):
            for key in ("timestamp", "ts"):
                ts = normalize_ts(record.get(key))
                if ts is not None:
                    return ts
    return ""


def input_clock(
    path: str, fallback: Callable[[], str], first: str | None = None
) -> Callable[[], str]:
    """The time for lines whose source has none (a print-mode init, a file of
    summaries), for an input read from a file: its first record time, else the
    file's modification time, never the clock at conversion, so converting the
    same bytes twice gives the same bytes. Looked up once, when first needed;
    ``fallback`` where the file gives nothing (it is gone). ``first``: the file's
    :func:`first_time`, where the caller has it already (batch.sessions)."""
    found: list[str] = []

    def clock() -> str:
        if not found:
            import os

            from streamv1.translator.timefmt import normalize_ts

            ts = first if first is not None else first_time(path)
            if not ts:
                try:
                    ts = normalize_ts(int(os.stat(path).st_mtime * 1000)) or ""
                except OSError:
                    ts = ""
            found.append(ts or fallback())
        return found[0]

    return clock
