"""Which inputs are converted together: a session's files as one unit, the units in
time order, and consecutive units in groups for a worker process.

Apart from the conversion: grouping asks the sources where a file belongs
(:func:`sources.session_place`) and reads only each session's first time, never
its records; the output's order follows from it, whatever ``--jobs`` is.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from streamv1.translator import logs
from streamv1.translator.reading import copies
from streamv1.translator.reading.sources import first_time, session_place
from streamv1.translator.translate.input_files import size_of

if TYPE_CHECKING:
    from streamv1.translator.translate.many_inputs import Job

log = logs.get()

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
    groups = alone + _framed_once(
        [[job for _, job in sorted(g, key=lambda m: (not m[0], m[1].path))] for g in keyed.values()]
    )
    stdin = [g for g in groups if g[0].path == "-"]
    files = [g for g in groups if g[0].path != "-"]
    for group in files:
        FIRST_TIMES[group[0].path] = first_time(group[0].path)
    files.sort(key=lambda g: (FIRST_TIMES[g[0].path], g[0].path))
    return stdin + files


def _framed_once(units: list[list[Job]]) -> list[list[Job]]:
    """One session in two places (a hard link, a copied project folder: one session
    name, bytes one of which begins the other) is converted once, from the place
    whose main file (a unit's first) leads (:mod:`translator.reading.copies`); the
    other places are left out, each said once. Files that differ are all kept,
    warned of. Only sessions a source places (a session id in the name)."""
    by_name: dict[str, list[int]] = {}
    for i, unit in enumerate(units):
        by_name.setdefault(copies.session_name(unit[0].path), []).append(i)
    dropped: set[int] = set()
    for found in by_name.values():
        if len(found) < 2:
            continue
        mains = {units[i][0].path: i for i in found}
        lead = copies.leader(mains)
        for path, i in sorted(mains.items()):
            if path == lead:
                continue
            if copies.relation(path, lead) == copies.SAME:
                dropped.add(i)
                log.info(
                    "one session in two places; converted once, from the file that leads",
                    path=path,
                    leader=lead,
                    files_left_out=len(units[i]),
                )
            else:
                log.warning(
                    "one session in two places whose files differ: both converted",
                    path=path,
                    other=lead,
                )
    return [unit for i, unit in enumerate(units) if i not in dropped]


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
