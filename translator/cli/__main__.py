"""``python -m streamv1.translator.cli`` is the same command as ``streamv1`` (where
the console script is not on PATH); tests/test_cli.py holds it to that."""

from streamv1.translator.cli.start import run

run()
