"""The translation: records → adapter → framer → encoded, scrubbed lines.

- ``translation``: one input's translation (:class:`Translation`), the part
  that both batch conversion and the tail daemon run, and its checkpointable state;
- ``session``: one session, one stream: the events of a session's files (the
  parent and its subagents) meet in one framer;
- ``one_input``: converting one input, or one session's files, to a sink;
- ``many_inputs``: converting many inputs, serially or in worker processes,
  grouped by session;
- ``grouping``: which inputs go together: a session's files, sessions in time
  order, consecutive sessions in a worker's group;
- ``input_files``: what an input file is checked for before it is converted
  (not JSON lines, another source's records than ``--source`` names), its size;
- ``sinks``: where the lines go: stdout or ``-o FILE`` (whole or not at all), a
  worker's spool file copied in, the output's own errors;
- ``batch_progress``: the progress line of a batch conversion;
- ``select``: which runs ``convert --since/--until/--project/--agent/--session``
  keeps, a whole run at a time.

May import reading, model, output, views (the ledger's filters) and the loose
modules; never tail, fleet or cli, which are built on it.
This file imports nothing, so a command pays only for the modules it uses.
"""
