"""Translator state as plain JSON (translator.state): a translation stopped at any
line and restored from its JSON snapshot goes on exactly as one that never
stopped; each part's layout is pinned to its version; nothing but registered types
is ever built from a state file."""

from __future__ import annotations

import io
import json
from collections import Counter, deque
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import ROOT
from goldens import cases, source_of
from helpers import FIXED_NOW

from streamv1.translator.model.framing import Framer
from streamv1.translator.output.shapes import encoder_for
from streamv1.translator.reading.reader import read_parsed
from streamv1.translator.reading.sources import sources
from streamv1.translator.state import StateError, dump, load, shape
from streamv1.translator.translate.translation import STATE_VERSION, Totals, Translation

SHAPES = ROOT / "tests" / "state_shapes.json"


def _inputs() -> list[tuple[Path, str | None]]:
    out: list[tuple[Path, str | None]] = [(c, source_of(c)) for c in cases()]
    out += [(p, None) for p in sorted((ROOT / "testdata" / "captures").rglob("*.jsonl"))]
    return out


def _translate(path: Path, source: str | None, to: str, stop_every: int) -> tuple[bytes, list[Any]]:
    """Translate ``path``; every ``stop_every`` lines (0: never) snapshot, go through
    JSON bytes, and go on in a brand-new Translation restored from them."""
    out = io.BytesIO()
    src = sources()[source] if source else None

    def fresh() -> Translation:
        return Translation(
            str(path),
            out.write,
            Totals(),
            source=src,
            clock=lambda: FIXED_NOW,
            encoder=encoder_for(to),
        )

    translation = fresh()
    snaps: list[Any] = []
    with path.open("rb") as fh:
        for n, parsed in enumerate(read_parsed(fh, str(path)), 1):
            translation.feed(parsed)
            if stop_every and n % stop_every == 0:
                snap = orjson.loads(orjson.dumps(translation.snapshot()))
                snaps.append(snap)
                translation = fresh()
                translation.restore(snap)
    translation.finish()
    return out.getvalue(), snaps


@pytest.mark.parametrize("to", ["stream_v1", "claude"])
@pytest.mark.parametrize("case", _inputs(), ids=lambda c: str(c[0].relative_to(ROOT / "testdata")))
def test_stopping_at_every_line_changes_nothing(case: tuple[Path, str | None], to: str) -> None:
    path, source = case
    whole, _ = _translate(path, source, to, 0)
    stopped, snaps = _translate(path, source, to, 1)
    assert stopped == whole
    assert snaps, "the input has lines"


def _all_shapes() -> dict[str, dict[str, list[str]]]:
    """Per part and version, the classes its states reach and their fields."""
    found: dict[str, dict[str, set[str]]] = {}
    for path, source in _inputs():
        for snap in _translate(path, source, "claude", 1)[1]:
            parts = {
                "translation": {
                    k: v for k, v in snap.items() if k not in ("adapter", "framer", "encoder")
                },
                f"framer@{Framer.STATE_VERSION}": snap["framer"]["state"],
            }
            if snap["adapter"] is not None:
                name = snap["adapter"]["state"]["$o"]
                parts[f"{name}@{snap['adapter']['version']}"] = snap["adapter"]["state"]
            enc = encoder_for("claude")
            parts[f"{type(enc).__name__}@{enc.STATE_VERSION}"] = {
                "$o": "encoder",
                "i": 0,
                "f": snap["encoder"]["state"],
            }
            parts[f"translation@{STATE_VERSION}"] = parts.pop("translation")
            for part, data in parts.items():
                got = found.setdefault(part, {})
                if isinstance(data, dict) and "$o" not in data:
                    got.setdefault("(top)", set()).update(data)
                for cls, fields in shape(data).items():
                    got.setdefault(cls, set()).update(fields)
    return {p: {c: sorted(f) for c, f in sorted(v.items())} for p, v in sorted(found.items())}


def test_a_state_layout_never_changes_under_the_same_version() -> None:
    """A field added, renamed or dropped in any part's state must come with a new
    STATE_VERSION for that part: an old checkpoint is then replayed, not misread.
    (After bumping it, record the new layout: ``python tests/test_state.py``.)"""
    recorded = json.loads(SHAPES.read_text())
    now = _all_shapes()
    for part, layout in now.items():
        name = part.rpartition("@")[0]
        older = {p: v for p, v in recorded.items() if p.rpartition("@")[0] == name}
        assert part in recorded, (
            f"{part}: new layout version; record it with python tests/test_state.py"
            if older
            else f"{part}: a new part; record it with python tests/test_state.py"
        )
        for cls, fields in layout.items():
            assert fields == recorded[part].get(cls), (
                f"{part}: {cls} now has fields {fields}, recorded "
                f"{recorded[part].get(cls)}: bump the part's STATE_VERSION"
            )


def test_only_registered_types_are_built() -> None:
    evil = {"$o": "os.system", "i": 0, "f": {}}
    with pytest.raises(StateError, match="not a persisted type"):
        load(evil)
    with pytest.raises(StateError, match="not a persisted type"):
        dump(Path("/etc"))
    with pytest.raises(StateError, match="unknown state tag"):
        load({"$exec": "x"})


def test_the_codec_keeps_types_and_identity() -> None:
    from streamv1.translator.model.events import Usage

    u = Usage(1, 2, 3, 4)
    value = {
        "plain": [1, "a", None, 1.5, True],
        "$odd": 1,
        (1, "x"): {3, 4},
        "c": Counter({"a": 2}),
        "q": deque([1, 2], 5),
        "same": [u, u],
    }
    back = load(orjson.loads(orjson.dumps(dump(value))))
    assert back == value
    assert back["same"][0] is back["same"][1]
    assert back["q"].maxlen == 5


def test_a_part_in_an_unknown_version_is_refused_whole() -> None:
    path = ROOT / "testdata" / "claude-session" / "print_mode_bash.jsonl"
    snap = _translate(path, "claude-session", "stream_v1", 5)[1][0]
    for part in ("adapter", "framer", "encoder"):
        bad = json.loads(json.dumps(snap))
        bad[part]["version"] += 1
        t = Translation(str(path), lambda b: None, Totals())
        with pytest.raises(StateError, match="version"):
            t.restore(bad)
        assert t.adapter is None and t.lines == 0  # nothing half-loaded


if __name__ == "__main__":
    # Record the layouts as they are now (after a deliberate, version-bumped change).
    import sys

    sys.path.insert(0, str(Path(__file__).parent))
    recorded = json.loads(SHAPES.read_text()) if SHAPES.exists() else {}
    recorded.update(_all_shapes())
    SHAPES.write_text(json.dumps(recorded, indent=1, sort_keys=True) + "\n")
    print(f"recorded {len(recorded)} part layouts in {SHAPES}")
