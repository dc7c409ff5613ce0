"""The translation: records → adapter → framer → encoded, scrubbed lines.

- ``translation``: one input's translation (:class:`Translation`), the part
  that both batch conversion and the tail daemon run, and its checkpointable state;
- ``session``: one session, one stream: the events of a session's files (the
  parent and its subagents) meet in one framer;
- ``one_input``: converting one input, or one session's files, to a sink;
- ``many_inputs``: converting many inputs, serially or in worker processes,
  grouped by session;
- ``select``: which runs ``convert --since/--until/--project/--agent/--session``
  keeps, a whole run at a time.

May import reading, model, output, views (the ledger's filters) and the loose
modules; never tail, fleet or cli, which are built on it.
This file imports nothing, so a command pays only for the modules it uses.
"""
