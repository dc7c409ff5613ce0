"""Each source's mapping table, kept once: by its adapter (``SOURCE.mapping``, a
``MAPPING`` in the adapter's module or, for a large one, its ``_<source>_mapping``).

docs/mapping.md carries every table between markers, written by
``python -m streamv1.translator.reading.mapping`` (and a test fails when the file and
the adapters differ); each row is also tested in-process (tests/test_mapping_tables.py), one
example per row key, so a table cannot drift from what the adapter does.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Row:
    """One source record type and what it becomes (Markdown in both columns)."""

    key: str  # a short stable name; the row's example in the table test uses it
    record: str
    becomes: str


def render(rows: tuple[Row, ...], heading: str = "source record") -> str:
    lines = [f"| {heading} | becomes |", "|---|---|"]
    lines += [f"| {row.record} | {row.becomes} |" for row in rows]
    return "\n".join(lines) + "\n"


def _block(name: str) -> re.Pattern[str]:
    begin, end = f"<!-- BEGIN mapping:{name} -->\n", f"<!-- END mapping:{name} -->"
    return re.compile(f"({re.escape(begin)})(.*?)({re.escape(end)})", re.S)


def rewrite(text: str) -> str:
    """docs/mapping.md with every source's table block made from its adapter."""
    from streamv1.translator.reading.sources import sources

    for name, source in sources().items():
        if source.mapping:
            table = render(source.mapping)

            def fill(match: re.Match[str], table: str = table) -> str:
                return match.group(1) + table + match.group(3)

            text = _block(name).sub(fill, text)
    return text


def missing_blocks(text: str) -> list[str]:
    from streamv1.translator.reading.sources import sources

    return [n for n, s in sources().items() if s.mapping and not _block(n).search(text)]


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("docs/mapping.md")
    text = path.read_text("utf-8")
    missing = missing_blocks(text)
    if missing:
        print(f"{path}: no table block for {', '.join(missing)}", file=sys.stderr)
        return 1
    path.write_text(rewrite(text), "utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
