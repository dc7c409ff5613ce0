"""The session id a durable file's path implies (``<session>.jsonl``, or a file
under ``<session>/subagents/``), worked out on strings: the same answers as the
pathlib form it replaced, for any path."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from streamv1.adapters._claude_session_discovery import _UUIDISH, session_hint

UUID = "5eccd76e-a2bd-46d3-9ac7-285807858239"


def _pathlib_hint(path: str) -> str | None:
    p = Path(path)
    match = _UUIDISH.search(p.stem)
    if match and match.end() == len(p.stem):
        return match.group(0)
    for parent in p.parents:
        if parent.name == "subagents" and _UUIDISH.fullmatch(parent.parent.name):
            return parent.parent.name
    return None


_PARTS = st.sampled_from(
    [
        UUID,
        "subagents",
        "agent-a1.jsonl",
        f"{UUID}.jsonl",
        f"x-{UUID}.jsonl",
        f"{UUID}x.jsonl",
        f"{UUID}.meta.json",
        "workflows",
        ".",
        "",
        "projects",
        "-home-user",
    ]
)


@given(st.booleans(), st.lists(_PARTS, min_size=1, max_size=7))
def test_same_answers_as_the_pathlib_form(absolute: bool, parts: list[str]) -> None:
    path = ("/" if absolute else "") + "/".join(parts)
    assert session_hint(path) == _pathlib_hint(path)


def test_the_cases_that_name_a_session() -> None:
    assert session_hint(f"/p/{UUID}.jsonl") == UUID
    assert session_hint(f"/p/{UUID}/subagents/agent-a1.jsonl") == UUID
    assert session_hint(f"/p/{UUID}/subagents/workflows/w/agent-a1.jsonl") == UUID
    assert session_hint("/p/agent-a1.jsonl") is None
