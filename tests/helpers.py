"""In-process conversion and independent checking for the tests."""

from __future__ import annotations

import io
import json
from functools import cache
from pathlib import Path
from typing import Any

import orjson
from jsonschema import Draft202012Validator

from streamv1.translator.contract.validate import StreamChecker, schema_text
from streamv1.translator.reading.sources import sources
from streamv1.translator.translate.one_input import Totals, convert_stream

FIXED_NOW = "2026-01-01T00:00:00.000Z"


def convert_bytes(
    data: bytes, path: str = "input.jsonl", source: str | None = None, to: str = "stream_v1"
) -> tuple[bytes, Totals]:
    from streamv1.translator.output.shapes import encoder_for

    out = io.BytesIO()
    totals = Totals()
    src = sources()[source] if source else None
    convert_stream(
        io.BytesIO(data),
        path,
        out.write,
        totals,
        source=src,
        clock=lambda: FIXED_NOW,
        encoder=encoder_for(to),
    )
    return out.getvalue(), totals


def convert_file(
    path: Path, source: str | None = None, to: str = "stream_v1"
) -> tuple[bytes, Totals]:
    return convert_bytes(path.read_bytes(), str(path), source, to)


def convert_session_files(
    paths: list[Path], to: str = "stream_v1", source: str | None = None
) -> tuple[bytes, Totals]:
    """Files converted together as ``streamv1 convert`` converts them: grouped by
    session, each session one stream, sessions in time order."""
    from streamv1.translator.translate import many_inputs

    out = io.BytesIO()
    jobs = [many_inputs.Job(str(p)) for p in paths]
    options = many_inputs.Options(source=source, fixed_now=FIXED_NOW, to=to)
    totals = many_inputs.run(jobs, out, options, workers=1, progress=False)
    return out.getvalue(), totals


def tree_violations(lines: list[dict[str, Any]]) -> list[str]:
    """The nested actors make a tree: each line's parent_tool_use_id names a tool
    call seen before it in its session, and none is its own parent."""
    seen: dict[Any, set[str]] = {}
    found = []
    for number, line in enumerate(lines, 1):
        session = line.get("session_id")
        parent = line.get("parent_tool_use_id")
        calls = seen.setdefault(session, set())
        message = line.get("message")
        blocks = message.get("content") if isinstance(message, dict) else None
        own = [
            b.get("id") for b in blocks or [] if isinstance(b, dict) and b.get("type") == "tool_use"
        ]
        if parent is not None:
            if parent in own:
                found.append(f"{number}: {parent} is its own parent")
            elif parent not in calls and line.get("subtype") != "init":
                found.append(f"{number}: parent_tool_use_id {parent} names no tool call before it")
        calls.update(i for i in own if isinstance(i, str))
    return found


def lines_of(data: bytes) -> list[dict[str, Any]]:
    return [orjson.loads(line) for line in data.splitlines()]


def framing_violations(data: bytes, name: str = "out") -> list[str]:
    checker = StreamChecker(name)
    found = []
    raw_lines = data.split(b"\n")
    if raw_lines and raw_lines[-1] == b"":
        raw_lines.pop()
    for number, raw in enumerate(raw_lines, 1):
        found += [str(v) for v in checker.check(number, raw, True)]
    found += [str(v) for v in checker.finish()]
    return found


@cache
def independent_validator() -> Draft202012Validator:
    """A validator built straight from the schema file, not through translator."""
    return Draft202012Validator(json.loads(schema_text()))


def schema_violations(data: bytes) -> list[str]:
    v = independent_validator()
    return [
        f"{n}: {e.message[:200]}"
        for n, line in enumerate(data.splitlines(), 1)
        for e in v.iter_errors(json.loads(line))
    ]


def state_doc(path: Path) -> Any:
    """The tail daemon's checkpoint as one JSON document (its database exported)."""
    from streamv1.translator.tail import checkpoint

    return checkpoint.export(path)


def write_state_doc(path: Path, doc: Any) -> None:
    """A checkpoint written as a JSON document (as an earlier release wrote it, or a
    mutated export): the daemon reads it and turns it into its database."""
    for stale in (path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        stale.unlink(missing_ok=True)
    path.write_text(json.dumps(doc))
