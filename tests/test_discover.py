"""Which files a directory holds for conversion: transcripts, in a reproducible
order, without Claude Code's own bookkeeping."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from streamv1.translator.reading.discover import is_transcript, walk_paths
from streamv1.translator.reading.sources import homes

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


_NAMES = [
    "a.jsonl",
    "journal.jsonl",
    "x.json",
    "agent-1.jsonl",
    "history.jsonl",
    "session-1.json",
    "n.txt",
]
_DIRS = ["p", "subagents", "workflows", "tool-results", ".git", "chats", "s"]


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    st.lists(
        st.tuples(st.lists(st.sampled_from(_DIRS), max_size=4), st.sampled_from(_NAMES)),
        min_size=1,
        max_size=12,
    )
)
def test_one_rule_for_events_and_walks(
    tmp_path_factory: pytest.TempPathFactory, files: list[tuple[list[str], str]]
) -> None:
    """What the daemon asks of each file event (is_transcript) is what a walk of
    the folder lists, for any tree of the sources' names, and a walk of a folder
    inside it lists what it holds of the whole walk."""
    root = tmp_path_factory.mktemp("tree")
    paths = []
    for dirs, name in files:
        path = root.joinpath(*dirs, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("{}\n")
        paths.append(str(path))
    listed = walk_paths(str(root))
    assert sorted(p for p in set(paths) if is_transcript(p, str(root))) == sorted(listed)
    for dirs, _ in files:
        if dirs:
            inside = str(root.joinpath(*dirs))
            assert walk_paths(str(root), inside=inside) == [
                p for p in listed if p.startswith(inside + os.sep)
            ]


def test_every_home_with_its_own_override(tmp_path: Path) -> None:
    """Each source names its agent's default folders, its CLI's override first."""
    home = str(tmp_path)
    assert homes({}, home)[0] == os.path.join(home, ".claude", "projects")
    assert homes({"CLAUDE_CONFIG_DIR": "/c"}, home)[0] == "/c/projects"
