"""translator.hashes gives hashlib's digests (checkpoints and state file names
written before keep matching) without loading OpenSSL."""

from __future__ import annotations

import hashlib
import subprocess
import sys

from hypothesis import given
from hypothesis import strategies as st

from streamv1.translator import hashes


@given(st.binary(), st.integers(1, 64))
def test_the_digests_are_hashlibs(data: bytes, size: int) -> None:
    assert hashes.sha256(data).hexdigest() == hashlib.sha256(data).hexdigest()
    assert (
        hashes.blake2b(data, digest_size=size).hexdigest()
        == hashlib.blake2b(data, digest_size=size).hexdigest()
    )


def test_convert_and_tail_load_no_openssl() -> None:
    """The tail daemon's memory is held to convert's (tests/test_tail.py): hashlib's
    OpenSSL in one and not the other put it past 1.5x."""
    loaded = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys\n"
            "from streamv1.translator.cli import app\n"
            "from streamv1.translator.tail import serve, checkpoint\n"
            "from streamv1.adapters import stella\n"
            "print('_hashlib' in sys.modules)",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    assert loaded == ["False"]
