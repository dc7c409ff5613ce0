"""The input side: bytes → lines → records, and which files hold them.

- ``lines``: the one splitter (bytes in pieces → newline-terminated lines);
  ``reader``: lines → JSON records, with damaged lines recovered or reported
  (``recovery``: the records found on a damaged line, and what could not be read).
- ``discover``: which files a path names; ``sources``: the adapter contract, the
  registry that finds adapters (``streamv1.adapters``) by themselves, and the field
  readers every adapter shares; ``mapping``: each source's mapping table, as the
  adapter keeps it, rendered for docs/mapping.md.

May import the neutral model (:mod:`streamv1.translator.model`) and the loose
modules beside this folder; never framing's consumers (translate, output, tail).
This file imports nothing, so a command pays only for the modules it uses.
"""
