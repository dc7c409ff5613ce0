"""One module per source. Each defines ``SOURCE`` (see :mod:`translator.reading.sources`)
and documents its source's record catalog in its docstring. Modules whose names
start with ``_`` are shared helpers, not sources."""
