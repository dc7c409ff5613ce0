"""Secrets masked on the way out: which kinds there are, and how they are found.

- ``redact``: the secret kinds (ours and gitleaks') in their order, and masking a line;
- ``secret_kind``: what a kind is, and the forms the hand-written ones are built in;
- ``hand_written``: our kinds (shapes and contexts);
- ``gitleaks_kinds``: gitleaks' kinds, read from ``gitleaks.kinds.json``;
- ``gitleaks``: gitleaks' rule set (``gitleaks.toml`` here, byte for byte, with
  its licence and origin) translated into secret kinds (``gitleaks.kinds.json``):
  what is decided per rule, the files, ``python -m``; its parts ``gitleaks_regex``
  (RE2 read into a tree of byte sets), ``gitleaks_emit`` (a tree as a Python
  pattern) and ``gitleaks_patterns`` (an alternative of a rule as a pattern);
- ``scan``: where a few byte patterns occur in a buffer, in one pass (also used
  for ANSI escapes by :mod:`streamv1.translator.output.scrub`).

Imports nothing of the translator but :mod:`streamv1.translator.hashes`: what is a
secret does not depend on where a line came from or where it goes.
This file imports nothing, so a command pays only for the modules it uses.
"""
