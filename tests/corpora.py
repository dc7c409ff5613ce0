"""The real Claude Code captures the tests read: both views (print-mode stdout and
the durable files) of each scenario, from ../shared's two corpora and our own
trimmed captures in testdata/captures."""

from __future__ import annotations

from pathlib import Path

from conftest import CAPTURES, CORPUS_2_1_332, CORPUS_FEATURES

from streamv1.translator.reading.discover import walk_paths

CORPORA = {"basic": CORPUS_2_1_332, "features": CORPUS_FEATURES, "ours": CAPTURES}


def scenario_ids() -> list[str]:
    """``<corpus>/<scenario>`` for every scenario present."""
    out = []
    for name, root in CORPORA.items():
        if root.exists():
            out += [f"{name}/{p.name}" for p in sorted(root.iterdir()) if p.is_dir()]
    return out


def scenario_dir(scenario_id: str) -> Path:
    corpus, name = scenario_id.split("/", 1)
    return CORPORA[corpus] / name


def stream_files(folder: Path) -> list[Path]:
    return sorted(folder.glob("stream*.jsonl"))


def durable_files(folder: Path) -> list[Path]:
    projects = folder / "projects"
    return [Path(p) for p in walk_paths(str(projects))] if projects.exists() else []


def all_inputs() -> list[str]:
    """Every print-mode and durable file of every scenario, as ``<id>::<relpath>``."""
    out = []
    for sid in scenario_ids():
        folder = scenario_dir(sid)
        for path in stream_files(folder) + durable_files(folder):
            out.append(f"{sid}::{path.relative_to(folder)}")
    return out


def input_path(name: str) -> Path:
    sid, rel = name.split("::", 1)
    return scenario_dir(sid) / rel
