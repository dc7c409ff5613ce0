"""Which inputs are converted together: a session's files as one unit, the units in
time order, and consecutive units in groups for a worker process.

Apart from the conversion: grouping asks the sources where a file belongs
(:func:`sources.session_place`) and reads only each session's first time, never
its records; the output's order follows from it, whatever ``--jobs`` is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streamv1.translator.reading.sources import first_time, session_place
from streamv1.translator.translate.input_files import size_of

if TYPE_CHECKING:
    from streamv1.translator.translate.many_inputs import Job

#: A worker's group of sessions: about this many bytes, at most this many sessions.
GROUP_BYTES = 16_000_000
GROUP_FILES = 64


def sessions(jobs: list[Job]) -> list[list[Job]]:
    """The inputs grouped by session, each group in the order it is merged (its
    main file first), the groups in time order: a session is the unit of framing
    (a subagent's file is lines of its parent's run), and the output is the same
    whatever order the files were named or listed in. stdin and files no source
    places in a session stay alone; ``-`` keeps its place first."""
    keyed: dict[str, list[tuple[bool, Job]]] = {}
    alone: list[list[Job]] = []
    for job in jobs:
        place = session_place(job.path) if job.path != "-" else None
        if place is None:
            alone.append([job])
        else:
            keyed.setdefault(place[0], []).append((place[1], job))
    groups = alone + [
        [job for _, job in sorted(g, key=lambda m: (not m[0], m[1].path))] for g in keyed.values()
    ]
    stdin = [g for g in groups if g[0].path == "-"]
    files = [g for g in groups if g[0].path != "-"]
    for group in files:
        FIRST_TIMES[group[0].path] = first_time(group[0].path)
    files.sort(key=lambda g: (FIRST_TIMES[g[0].path], g[0].path))
    return stdin + files


#: Each session's first time, as :func:`sessions` read it to order them: the clock
#: of its lines with no time of their own (Options.clock) reads no file again for
#: it. ("" is not taken: a file still being written may have one by then.)
FIRST_TIMES: dict[str, str] = {}


def worker_groups(units: list[list[Job]], workers: int) -> list[list[list[Job]]]:
    """Consecutive sessions in groups of about GROUP_BYTES, and enough groups to
    keep every worker busy to the end (a session is never split: it is one stream)."""
    sizes = [sum(size_of(j.path) for j in unit) for unit in units]  # one stat an input
    target = max(1, min(GROUP_BYTES, sum(sizes) // (workers * 16) or 1))
    groups: list[list[list[Job]]] = []
    current: list[list[Job]] = []
    size = 0
    for unit, unit_size in zip(units, sizes, strict=True):
        current.append(unit)
        size += unit_size
        if size >= target or len(current) >= GROUP_FILES:
            groups.append(current)
            current, size = [], 0
    if current:
        groups.append(current)
    return groups
