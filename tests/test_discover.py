"""Which files a directory holds for conversion: transcripts, in a reproducible
order, without Claude Code's own bookkeeping."""

from __future__ import annotations

from pathlib import Path

import pytest

from streamv1.translator.discover import walk_paths

S = "5eccd76e-a2bd-46d3-9ac7-285807858239"


def _tree(root: Path, names: list[str]) -> None:
    for name in names:
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")


@pytest.mark.parametrize("trailing_slash", [False, True])
def test_transcripts_in_order_and_bookkeeping_left_out(
    tmp_path: Path, trailing_slash: bool
) -> None:
    root = tmp_path / "projects"
    _tree(
        root,
        [
            f"-home-u-p/{S}.jsonl",
            f"-home-u-p/{S}/subagents/agent-a1.jsonl",
            f"-home-u-p/{S}/subagents/agent-a1.meta.json",
            f"-home-u-p/{S}/subagents/workflows/w1/agent-a2.jsonl",  # kept: under subagents
            f"-home-u-p/{S}/workflows/state.jsonl",  # workflow state, not a transcript
            f"-home-u-p/{S}/tool-results/r.jsonl",
            "-home-u-p/journal.jsonl",
            "-home-u-p/node_modules/x.jsonl",
            "-home-u-p/a.jsonl",
        ],
    )
    given = str(root) + ("/" if trailing_slash else "")
    found = [p[len(given) :].lstrip("/") for p in walk_paths(given)]
    assert found == [
        f"-home-u-p/{S}.jsonl",
        f"-home-u-p/{S}/subagents/agent-a1.jsonl",
        f"-home-u-p/{S}/subagents/workflows/w1/agent-a2.jsonl",
        "-home-u-p/a.jsonl",
    ]


def test_a_root_inside_subagents_or_named_workflows_is_walked_as_given(tmp_path: Path) -> None:
    # Only folders below the root count: its own name and place do not.
    root = tmp_path / "subagents" / "workflows"
    _tree(root, ["agent-a1.jsonl", "workflows/x.jsonl"])
    assert [Path(p).name for p in walk_paths(str(root))] == ["agent-a1.jsonl"]
