"""Translator state as plain JSON: what the tail daemon's checkpoints carry.

A restart goes on mid-run from the state an adapter, the framer and the encoder
had. Pickle would do it in one line and is ruled out: loading a pickle runs code
(anyone who can write the state file would run code in the daemon), and it ties
the file to class layouts, so an upgrade crashes or re-reads files. Instead:

* Only classes registered here (:func:`persisted`) are written or read; loading
  builds them with ``object.__new__`` and sets their fields. Nothing else is ever
  constructed, and no code named by the file is run.
* Each part (adapter, framer, encoder, the translation around them) carries its
  own ``STATE_VERSION``. A version the running code does not know is not loaded:
  the caller replays the input instead (:mod:`translator.tail.follower`).
* ``tests/test_state.py`` records each part's shape (the classes and field names
  its state reaches) per version, so changing a shape without a new version fails
  the suite, not a user's restart.

The encoding: JSON values stand for themselves, except where JSON has no form of
its own: ``{"$t": [...]}`` a tuple, ``{"$s": [...]}`` a set, ``{"$c": [[k, n]...]}``
a Counter, ``{"$q": [...], "max": n}`` a deque, ``{"$d": [[k, v]...]}`` a dict
whose keys are not all plain strings, ``{"$o": "name", "i": n, "f": {...}}`` a
registered object, ``{"$r": n}`` the same object again (identity is kept: an
adapter's run may sit in a dict and a list at once).
"""

from __future__ import annotations

import dataclasses
from collections import Counter, deque
from collections.abc import Callable
from typing import Any, TypeVar

JSON = dict[str, Any]
T = TypeVar("T", bound=type)

_OURS = "streamv1."
#: Modules that moved since their classes' names were first written: a checkpoint
#: keeps the first name, so one written before a move loads after it and back.
_WRITTEN_AS = {
    "translator.model.events": "translator.events",
    "translator.model.framing": "translator.framing",
    "translator.reading.sources": "translator.sources",
}
_BY_NAME: dict[str, type] = {}
_NAME: dict[type, str] = {}


class StateError(ValueError):
    """A state this code cannot load (another version, or damaged)."""


def persisted(cls: T) -> T:
    """Register a class whose instances may be part of a checkpoint."""
    # Names are kept as they were before the package moved under ``streamv1.`` and
    # into folders by stage, so a checkpoint written by either layout loads in the other.
    module = cls.__module__.removeprefix(_OURS)
    name = f"{_WRITTEN_AS.get(module, module)}.{cls.__qualname__}"
    _BY_NAME[name] = cls
    _NAME[cls] = name
    return cls


def _fields(obj: Any) -> list[str]:
    if dataclasses.is_dataclass(obj):
        return [f.name for f in dataclasses.fields(obj)]
    slots = [s for c in type(obj).__mro__ for s in getattr(c, "__slots__", ())]
    return slots + list(getattr(obj, "__dict__", ()))


def dump(value: Any) -> Any:
    """``value`` as plain JSON (raises StateError on a type it may not hold, or a
    value nested too deep to walk)."""
    try:
        return _Dumper().dump(value)
    except RecursionError as exc:
        raise StateError("state nested too deep to write") from exc


def load(data: Any) -> Any:
    """The value :func:`dump` wrote (raises StateError when it is not one)."""
    try:
        return _Loader().load(data)
    except StateError:
        raise
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, RecursionError) as exc:
        raise StateError(f"damaged state ({exc!r})") from exc


class _Dumper:
    def __init__(self) -> None:
        self.ids: dict[int, int] = {}
        self.keep: list[Any] = []  # the objects numbered (so their ids stay theirs)

    def dump(self, v: Any) -> Any:
        kind = type(v)
        if v is None or kind in (str, int, float, bool):
            return v
        if kind is list:
            return [self.dump(x) for x in v]
        if kind is dict:
            if all(type(k) is str and not k.startswith("$") for k in v):
                return {k: self.dump(x) for k, x in v.items()}
            return {"$d": [[self.dump(k), self.dump(x)] for k, x in v.items()]}
        if kind is tuple:
            return {"$t": [self.dump(x) for x in v]}
        if kind is set or kind is frozenset:
            return {"$s": sorted((self.dump(x) for x in v), key=repr)}
        if kind is Counter:
            return {"$c": [[self.dump(k), n] for k, n in v.items()]}
        if kind is deque:
            return {"$q": [self.dump(x) for x in v], "max": v.maxlen}
        name = _NAME.get(kind)
        if name is None:
            raise StateError(f"{kind.__module__}.{kind.__qualname__} is not a persisted type")
        seen = self.ids.get(id(v))
        if seen is not None:
            return {"$r": seen}
        number = self.ids[id(v)] = len(self.keep)
        self.keep.append(v)
        fields = {f: self.dump(getattr(v, f)) for f in _fields(v)}
        return {"$o": name, "i": number, "f": fields}


class _Loader:
    def __init__(self) -> None:
        self.objects: dict[int, Any] = {}

    def load(self, v: Any) -> Any:
        if isinstance(v, list):
            return [self.load(x) for x in v]
        if not isinstance(v, dict):
            return v
        if not any(k.startswith("$") for k in v):
            return {k: self.load(x) for k, x in v.items()}
        for tag, build in _TAGS.items():
            if tag in v:
                return build(self, v)
        raise StateError(f"unknown state tag in {sorted(v)!r}")

    def obj(self, v: JSON) -> Any:
        cls = _BY_NAME.get(v["$o"])
        if cls is None:
            raise StateError(f"{v['$o']} is not a persisted type of this release")
        out: Any = object.__new__(cls)
        self.objects[int(v["i"])] = out  # before its fields: they may point back at it
        for name, raw in v["f"].items():
            object.__setattr__(out, name, self.load(raw))
        return out


_TAGS: dict[str, Callable[[_Loader, JSON], Any]] = {
    "$r": lambda ld, v: ld.objects[int(v["$r"])],
    "$o": _Loader.obj,
    "$t": lambda ld, v: tuple(ld.load(x) for x in v["$t"]),
    "$s": lambda ld, v: {_hashable(ld.load(x)) for x in v["$s"]},
    "$c": lambda ld, v: Counter({_hashable(ld.load(k)): int(n) for k, n in v["$c"]}),
    "$q": lambda ld, v: deque((ld.load(x) for x in v["$q"]), v.get("max")),
    "$d": lambda ld, v: {_hashable(ld.load(k)): ld.load(x) for k, x in v["$d"]},
}


def _hashable(v: Any) -> Any:
    hash(v)  # a TypeError here is a damaged state, reported as such
    return v


def shape(data: Any, out: dict[str, set[str]] | None = None) -> dict[str, set[str]]:
    """The classes a dumped state reaches and their field names (for the test that
    a shape never changes under the same version)."""
    out = {} if out is None else out
    if isinstance(data, list):
        for x in data:
            shape(x, out)
    elif isinstance(data, dict):
        if "$o" in data:
            out.setdefault(data["$o"], set()).update(data["f"])
            shape(list(data["f"].values()), out)
        else:
            for k, x in data.items():
                if k != "max":
                    shape(x, out)
    return out
