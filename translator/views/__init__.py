"""What people read off stream_v1 lines.

- ``ledger``: one row per session (``streamv1 sessions``), and its filters;
- ``prices``: what tokens cost where a source states no cost (genai-prices);
- ``pretty``: the view for a person at a terminal (``--format pretty``).

Reads stream_v1 lines only (with the line splitter, and the catalog's reading of a
stated cost): a view never sees a source's records, so every source looks alike in it.
This file imports nothing, so a command pays only for the modules it uses.
"""
