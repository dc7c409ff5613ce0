"""Secrets masked on the way out: which kinds there are, and how they are found.

- ``redact``: the secret kinds (ours and gitleaks') and masking a line;
- ``gitleaks``: gitleaks' rule set (``gitleaks.toml`` here, byte for byte, with
  its licence and origin) translated into secret kinds (``gitleaks.kinds.json``);
- ``scan``: where a few byte patterns occur in a buffer, in one pass (also used
  for ANSI escapes by :mod:`streamv1.translator.output.scrub`).

Imports nothing of the translator but :mod:`streamv1.translator.hashes`: what is a
secret does not depend on where a line came from or where it goes.
This file imports nothing, so a command pays only for the modules it uses.
"""
