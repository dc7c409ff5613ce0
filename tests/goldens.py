"""Golden files: ``testdata/<source>/<case>.jsonl`` beside ``<case>.expected.jsonl``.

Each case is converted by the installed ``streamv1`` command, from the repository
root, with ``--source <source>`` and a fixed ``--now`` so the output is the same on
every machine. Regenerate them all (after a deliberate change) with::

    python tests/goldens.py
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
TESTDATA = ROOT / "testdata"
FIXED_NOW = "2026-01-01T00:00:00.000Z"


def cases() -> list[Path]:
    return sorted(
        p
        for p in TESTDATA.rglob("*.jsonl")
        if not p.name.endswith(".expected.jsonl")
        and p.relative_to(TESTDATA).parts[0] not in ("stdin", "captures", "tail")
    )


def expected_path(case: Path) -> Path:
    return case.with_name(case.name[: -len(".jsonl")] + ".expected.jsonl")


def source_of(case: Path) -> str:
    return case.relative_to(TESTDATA).parts[0]


def command() -> str:
    found = shutil.which("streamv1", path=str(Path(sys.executable).parent)) or shutil.which(
        "streamv1"
    )
    if found is None:
        raise SystemExit("streamv1 is not installed: pip install -e '.[test]'")
    return found


def render(case: Path) -> tuple[bytes, int]:
    proc = subprocess.run(
        [
            command(),
            "--log-level",
            "error",
            "convert",
            "--source",
            source_of(case),
            "--now",
            FIXED_NOW,
            str(case.relative_to(ROOT)),
        ],
        cwd=ROOT,
        capture_output=True,
        check=False,
    )
    return proc.stdout, proc.returncode


def main() -> None:
    for case in cases():
        out, _ = render(case)
        expected_path(case).write_bytes(out)
        print(f"wrote {expected_path(case).relative_to(ROOT)}")


if __name__ == "__main__":
    main()
