"""streamv1 installs beside a distribution that owns the top-level names
``adapters`` and ``translator`` (AdapterHub's ``adapters`` is one) and leaves it
whole: nothing of it is overwritten on install or deleted on uninstall, and the
adapter registry never imports its modules.

The wheel is built the way a user's pip builds it (from the sdist, with the
project's own backend) and installed with pip into a fresh venv. The venv reaches
streamv1's dependencies through a path entry to this environment's site-packages,
so the test needs no network.
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import sysconfig
import tarfile
from pathlib import Path

import orjson
import pytest
from conftest import ROOT
from helpers import framing_violations, schema_violations

SAMPLE = ROOT / "translator" / "samples"
SHOUT = "DUMMY-DISTRIBUTION-WAS-IMPORTED"


def _build(backend_call: str, source: Path, out: Path) -> Path:
    out.mkdir(exist_ok=True)
    subprocess.run(
        [
            sys.executable,
            "-c",
            f"from setuptools import build_meta; build_meta.{backend_call}({str(out)!r})",
        ],
        cwd=source,
        check=True,
        capture_output=True,
    )
    [built] = [p for p in out.iterdir() if p.suffix in (".whl", ".gz")]
    return built


def _streamv1_wheel(tmp: Path) -> Path:
    sdist = _build("build_sdist", ROOT, tmp / "sdist")
    with tarfile.open(sdist) as tar:
        tar.extractall(tmp / "src", filter="data")
    [tree] = (tmp / "src").iterdir()
    return _build("build_wheel", tree, tmp / "wheel")


def _dummy_wheel(tmp: Path) -> Path:
    """A distribution shipping top-level ``adapters`` and ``translator`` packages
    whose every module announces its import on stdout."""
    root = tmp / "dummy"
    for top in ("adapters", "translator"):
        (root / top).mkdir(parents=True)
        for module in ("__init__", "claude_session", "cli", "sources"):
            (root / top / f"{module}.py").write_text(
                f"print({SHOUT!r}, __name__)\nOWNER = 'dummy'\n"
            )
    (root / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n'
        '[project]\nname = "adapters-dummy"\nversion = "1.3.0"\n'
        '[tool.setuptools]\npackages = ["adapters", "translator"]\n'
    )
    return _build("build_wheel", root, tmp / "dummy-wheel")


def _dummy_files(site: Path) -> dict[str, str]:
    return {
        str(p.relative_to(site)): hashlib.sha256(p.read_bytes()).hexdigest()
        for top in ("adapters", "translator")
        for p in sorted((site / top).glob("*.py"))
    }


@pytest.mark.skipif(sys.platform != "linux", reason="venv layout checked on Linux")
def test_installs_beside_a_distribution_owning_adapters_and_translator(tmp_path: Path) -> None:
    ours = _streamv1_wheel(tmp_path)
    dummy = _dummy_wheel(tmp_path)

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, capture_output=True)
    python = venv / "bin" / "python"
    site = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            check=True,
            capture_output=True,
            text=True,
        ).stdout.strip()
    )
    # Dependencies (orjson, click, ...) from this environment, without its streamv1:
    # a path entry, not a site dir, so its editable-install hook is not run.
    (site / "zz-test-deps.pth").write_text(sysconfig.get_path("purelib") + "\n")

    def pip(*args: str) -> None:
        subprocess.run(
            [str(python), "-m", "pip", "--disable-pip-version-check", "-q", *args],
            check=True,
            capture_output=True,
        )

    def dummy_still_imports() -> None:
        proc = subprocess.run(
            [
                str(python),
                "-c",
                "import adapters, translator; print(adapters.OWNER, translator.OWNER)",
            ],
            capture_output=True,
            text=True,
            check=False,
            cwd=tmp_path,
        )
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines()[-1] == "dummy dummy"

    pip("install", "--no-index", "--no-deps", str(dummy))
    before = _dummy_files(site)
    assert len(before) == 8
    dummy_still_imports()

    pip("install", "--no-index", "--no-deps", str(ours))
    assert _dummy_files(site) == before, "installing streamv1 changed the other's files"
    assert (site / "streamv1" / "translator" / "cli" / "app.py").is_file()
    assert not (site / "streamv1" / "__init__.py").exists()  # a namespace of ours alone

    proc = subprocess.run(
        [str(venv / "bin" / "streamv1"), "convert", str(SAMPLE / "claude-session-sample.jsonl")],
        capture_output=True,
        check=False,
        timeout=120,
        cwd=tmp_path,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    assert SHOUT.encode() not in proc.stdout + proc.stderr
    assert all(orjson.loads(x) for x in proc.stdout.splitlines())
    assert schema_violations(proc.stdout) == [] and framing_violations(proc.stdout) == []
    sources = subprocess.run(
        [
            str(python),
            "-c",
            "from streamv1.translator.reading.sources import sources; print(sorted(sources()))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert SHOUT not in sources.stdout
    assert "claude-session" in sources.stdout

    pip("uninstall", "-y", "streamv1")
    assert _dummy_files(site) == before, "uninstalling streamv1 removed the other's files"
    # pip leaves the namespace folder itself behind, empty.
    assert [p for p in (site / "streamv1").rglob("*") if p.is_file()] == []
    dummy_still_imports()
