"""The ``streamv1`` command, a module per command.

- ``start``: the console script's entry point; it imports nothing of ours until
  SIGINT is held back (see its docstring).
- ``app``: the command group and ``run``, the one place that turns how a command
  ended (a status it returned, :mod:`streamv1.translator.exits`, a usage error, a
  closed stdout, Ctrl-C, a bug) into one line on stderr and an exit status.
- ``options``: the options more than one command takes, each declared once.
- ``shared``: what more than one command does at run time (stdout's view, Ctrl-C
  while converting, the terminal checks).
- ``convert``, ``sessions``, ``validate``, ``tail``, ``relay``, ``subscribe``,
  ``status``, ``service``: one command each.

A command module may import ``options`` and ``shared`` (and ``sessions`` the
conversion of ``convert``), never ``app``. Nothing here is imported by the
translator itself. This file imports nothing, so that ``start`` stays light.
"""
