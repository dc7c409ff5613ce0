"""Adding a source is one module plus its fixtures.

A toy source (a line format made up here) is written at test time as one module
in a folder put on the adapters package's path: nothing else changes, yet the
registry finds it, ``convert`` sniffs it from its records, and what it translates
comes out as stream_v1 that passes the schema and the framing rules.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers import convert_file, framing_violations, lines_of, schema_violations

from streamv1 import adapters
from streamv1.translator.reading.sources import CERTAIN, NOT_MINE, sources

#: The whole of the toy source: what a contributor writes for a new one.
TOY_MODULE = '''
"""toy: a made-up line format. Each line is one object with a "toy" key:
"hello" starts a run, "say" is the agent's text, "bye" ends the run."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from streamv1.translator.model.events import Event, Message, RunEnd, RunStart, Unrecognized
from streamv1.translator.reading.mapping import Row
from streamv1.translator.reading.sources import (
    CERTAIN,
    NOT_MINE,
    BodyError,
    Source,
    Spec,
    Where,
    body_problem,
    take,
)
from streamv1.translator.timefmt import normalize_ts

#: A toy line's fields (any other key goes into the line's extension).
LINE: Spec = {"toy": str, "at": str, "text": str, "turns": int}


def sniff(record: dict[str, Any]) -> int:
    return CERTAIN if isinstance(record.get("toy"), str) else NOT_MINE


class ToyAdapter:
    def __init__(self, path: str, session_id: str | None = None) -> None:
        self.session = session_id or "toy-session"

    def feed(self, record: dict[str, Any], where: Where) -> Iterable[Event]:
        try:
            line, rest = take(record, LINE)
        except BodyError as exc:  # rule 2: a known line whose body does not fit
            return [body_problem(str(exc), record, where, self.session, None)]
        kind, ts = line["toy"], normalize_ts(line["at"])
        if kind == "hello":
            return [RunStart(self.session, ts, "toy", "toy-labs", extension=rest)]
        if kind == "say":
            text = {"type": "text", "text": line["text"] or ""}
            return [Message("assistant", self.session, ts, [text], extension=rest)]
        if kind == "bye":
            return [RunEnd(self.session, ts, subtype="success", num_turns=line["turns"],
                           extension=rest)]
        return [Unrecognized(kind, self.session, ts, record)]  # rule 1: kept whole

    def finish(self) -> Iterable[Event]:
        return []


SOURCE = Source(
    name="toy",
    description="a made-up line format (tests/test_registry.py)",
    sniff=sniff,
    open=ToyAdapter,
    mapping=(
        Row("hello", "`hello`", "`system/init`"),
        Row("say", "`say`", "`assistant` text"),
        Row("bye", "`bye`", "`result/success` with `num_turns` = `turns`"),
    ),
)
'''

#: Its fixture: a run, with a line of a type it does not know and one that does not fit.
TOY_FIXTURE = b"""\
{"toy": "hello", "at": "2026-01-01T10:00:00Z", "project": "demo"}
{"toy": "say", "at": "2026-01-01T10:00:01Z", "text": "Hello from the toy."}
{"toy": "wave", "at": "2026-01-01T10:00:02Z"}
{"toy": "say", "at": "2026-01-01T10:00:03Z", "text": 42}
{"toy": "bye", "at": "2026-01-01T10:00:04Z", "turns": 1}
"""

BUILT_IN = {"claude-session", "claude-stream", "codex", "gemini", "stella", "stream_v1"}


@contextmanager
def toy_source(tmp_path: Path) -> Iterator[Path]:
    """The toy module in a folder on ``streamv1.adapters.__path__``, for the block;
    the path, the registry and the imported module as they were afterwards."""
    folder = tmp_path / "more_adapters"
    folder.mkdir()
    (folder / "toy.py").write_text(TOY_MODULE)
    importlib.invalidate_caches()
    adapters.__path__.append(str(folder))
    sources.cache_clear()
    try:
        yield folder
    finally:
        adapters.__path__.remove(str(folder))
        sys.modules.pop(f"{adapters.__name__}.toy", None)
        sources.cache_clear()


def test_one_module_on_the_path_is_one_more_source(tmp_path: Path) -> None:
    assert set(sources()) == BUILT_IN
    with toy_source(tmp_path):
        found = sources()
        assert set(found) == BUILT_IN | {"toy"}
        assert found["toy"].sniff({"toy": "hello"}) == CERTAIN
        assert all(s.sniff({"toy": "hello"}) == NOT_MINE for n, s in found.items() if n != "toy")
    assert set(sources()) == BUILT_IN  # gone with its module: nothing else was touched


def test_the_toy_is_sniffed_and_converted_end_to_end(tmp_path: Path) -> None:
    fixture = tmp_path / "session.toy.jsonl"
    fixture.write_bytes(TOY_FIXTURE)
    with toy_source(tmp_path):
        out, totals = convert_file(fixture)  # no --source: told by its records
    assert totals.sources == {"toy": 1}
    assert schema_violations(out) == []
    assert framing_violations(out) == []
    lines = lines_of(out)
    assert [(x["type"], x.get("subtype")) for x in lines] == [
        ("system", "init"),
        ("assistant", None),
        ("system", "unrecognized"),
        ("system", "error"),
        ("result", "success"),
    ]
    init, said, unknown, error, end = lines
    assert init["agent"] == {"name": "toy", "provider": "toy-labs"}
    assert init["extension"] == {"project": "demo"}
    assert said["message"]["content"] == [{"type": "text", "text": "Hello from the toy."}]
    assert unknown["extension"]["record"] == {"toy": "wave", "at": "2026-01-01T10:00:02Z"}
    assert error["message"].endswith(":4: text is int, not str")
    assert end["num_turns"] == 1
    assert end["extension"]["unrecognized"] == {"wave": 1}
