"""The live tail daemon: agents' session folders into one stream_v1 stream.

- the process: ``serve`` (the ``tail`` command's life: state lock, defaults, the
  last checkpoint) and ``daemon`` (:class:`TailDaemon`, the loop tying the parts);
- what is read: ``inputs`` (what counts as an input), ``watching`` and ``watches``
  (kernel events, polls, sweeps), ``targets`` (which files a round reads),
  ``followed`` (the followed files: new, resumed, moved, gone), ``follower`` (one
  file: complete lines only), ``descriptors`` (the descriptor budget);
- how it is translated: ``sessions`` (a session's files in one stream),
  ``actor_ends`` (a subagent's run ends when its parent answers), ``claims`` (one
  source per session: a live stream silences its transcript);
- where it goes: ``writes`` (the output, then subscribers), ``output`` (the file or
  stdout, fsynced and locked), ``commits`` and ``checkpoint`` (fsync, then one
  SQLite transaction), ``publisher`` and ``publisher_process`` (the output on to
  JetStream);
- the socket: ``protocol``, ``ingest`` and ``streams`` (relays in, subscribers
  out, status), ``client`` and ``relay`` (its clients); ``status`` and
  ``catch_up`` (what it tells people).

May import every stage below it (reading, model, translate, output, views, fleet)
and the loose modules; never the CLI (which starts it: ``serve`` returns a status or
raises :mod:`streamv1.translator.exits`' Failure).
"""
