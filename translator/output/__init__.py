"""The output side: framed stream_v1 lines → the bytes that may leave.

- ``shapes``: what ``--to`` names, one module per shape (stream_v1, claude);
- ``encode``: a line → one compact JSON object and one newline;
- ``scrub``: encoded lines → bytes with no ANSI escapes and no secrets (the
  secrets themselves are :mod:`streamv1.translator.secrets`'s).

May import the model and secrets; knows nothing of sources.
This file imports nothing, so a command pays only for the modules it uses.
"""
