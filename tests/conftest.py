from __future__ import annotations

import shutil
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# A suite started in the background of a shell without job control (`.ci/run &`)
# inherits SIGINT ignored, and every command it starts would too: a test that sends
# SIGINT to a command still starting (test_fleet's Ctrl-C tests) then waits for
# ever, since an ignored signal is not even noted. The tests are about Ctrl-C at a
# terminal, where SIGINT is not ignored: that is the disposition they get.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

ROOT = Path(__file__).resolve().parent.parent
SHARED = ROOT.parent / "shared"
CORPUS_2_1_332 = SHARED / "corpus" / "claude-code-2.1.332"
CORPUS_FEATURES = SHARED / "corpus" / "claude-code-2.1.332-features"
PUBLIC = SHARED / "corpus" / "public"
#: Our own captures (the harness in ../shared/harness/claude-capture, trimmed):
#: shipped, so they are tested even without ../shared.
CAPTURES = ROOT / "testdata" / "captures"

sys.path.insert(0, str(Path(__file__).resolve().parent))


def need(path: Path) -> Path:
    """Skip cleanly when ../shared (the team's corpus) is not beside the checkout."""
    if not path.exists():
        pytest.skip(f"{path} is not present (clone without ../shared)")
    return path


@pytest.fixture(autouse=True)
def _no_process_left() -> Iterator[None]:
    """A daemon or subscriber a test started (tailing.started) is killed after it,
    when the test failed before stopping it."""
    yield
    import tailing

    tailing.kill_started()


@pytest.fixture(scope="session")
def streamv1_bin() -> str:
    """The installed console script: end-to-end tests run what users run."""
    found = shutil.which("streamv1", path=str(Path(sys.executable).parent))
    found = found or shutil.which("streamv1")
    if found is None:
        pytest.fail("the streamv1 command is not installed (pip install -e '.[test]')")
    return found


# `pytest --hypothesis-profile=deep` runs the property tests much longer (by hand).
from hypothesis import settings  # noqa: E402

settings.register_profile("deep", max_examples=2000, deadline=None)
settings.register_profile("ci", deadline=None)
settings.load_profile("ci")
