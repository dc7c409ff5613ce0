"""The contract: the locked stream_v1 JSON Schema (``stream-json.schema.json``, a
copy of ADR-0050's, kept identical by a test) and ``validate``, which checks a
stream against it and against the framing rules a schema cannot express.

May import the reader (to read what it checks); nothing that writes lines, so a
validator never agrees with the code it checks by sharing it.
This file imports nothing, so a command pays only for the modules it uses.
"""
