"""The neutral model and its framing: what adapters produce, and the runs it becomes.

- ``events``: the neutral events (messages, deltas, tool calls, run starts and
  ends, notes), the one vocabulary between adapters and the framer;
- ``framing``: neutral events → stream_v1 runs (system/init first, monotonic
  ``seq``, exactly one result last), knowing the catalog and nothing of sources;
  ``results``: what a run counts toward its result, the result line, and the
  closing summary's totals;
- ``catalog``: the builders of each stream_v1 line type.

Imports only the loose modules beside this folder (state, timefmt): every other
stage depends on this one, so it depends on none of them.
This file imports nothing, so a command pays only for the modules it uses.
"""
