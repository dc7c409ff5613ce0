"""Golden files for every adapter (regenerate: python tests/goldens.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from goldens import TESTDATA, cases, expected_path, render
from helpers import framing_violations, schema_violations


@pytest.mark.parametrize("case", cases(), ids=lambda p: str(p.relative_to(TESTDATA)))
def test_golden(case: Path) -> None:
    expected = expected_path(case)
    assert expected.exists(), f"no golden for {case}: run python tests/goldens.py"
    out, _ = render(case)
    assert out.decode() == expected.read_text("utf-8")


@pytest.mark.parametrize("case", cases(), ids=lambda p: str(p.relative_to(TESTDATA)))
def test_golden_output_is_valid(case: Path) -> None:
    data = expected_path(case).read_bytes()
    assert framing_violations(data) == []
    assert schema_violations(data) == []


def test_every_adapter_has_goldens() -> None:
    from streamv1.translator.reading.sources import sources

    covered = {p.relative_to(TESTDATA).parts[0] for p in cases()}
    assert set(sources()) <= covered
