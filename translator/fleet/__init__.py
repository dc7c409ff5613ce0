"""The fleet stream: stream_v1 lines on NATS JetStream for a whole team.

- ``bus``: the fleet's settings, cheap to import (every command declares its
  options): the NATS options, the stream's configuration, subject tokens, errors;
- ``messages``: a line as a JetStream message: its subject, id, headers and
  the protocol frame a batch sends it in;
- ``connection``: reaching the server: connecting, making the stream, waiting
  out what waiting mends;
- ``jetstream``: once-only sending (:class:`jetstream.Sender`);
- ``transfer``: what the commands do with it: publish a converted file, and read
  the stream back (``subscribe --from``).

Imports only the loose modules beside this folder (exits: how an interrupted
transfer is told); the tail daemon's publisher imports this, never the other way.
This file imports nothing, so a command pays only for the modules it uses.
"""
