"""The start-up catch-up's progress line, for a person at a terminal: how many
files and bytes the watched folders hold past their checkpoints, and how much of
that is read by now.

Shown only when there is more to read than a glance (more than one file, or a
large one). Apart from the daemon's loop: it counts what the reads did and
changes nothing they do.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from streamv1.translator.progress import ONE_FILE_SHOWN
from streamv1.translator.reading.discover import walk_paths
from streamv1.translator.tail import checkpoint as cp
from streamv1.translator.tail.follower import FileFollower
from streamv1.translator.tail.inputs import Inputs

if TYPE_CHECKING:
    from streamv1.translator.progress import ProgressLine


class CatchUp:
    def __init__(self, view: Callable[[int, int], ProgressLine] | None) -> None:
        #: For a person at a terminal: makes the start-up catch-up's progress line
        #: (files, bytes behind), shown while ``start`` reads what the files hold.
        self.view = view
        self._line: ProgressLine | None = None
        self._caught = [0, 0]  # files, bytes read in the catch-up
        self._read_from = self._poll_from = 0  # the follower in hand: counted to, began at

    def begin(self, inputs: Inputs, resume: Mapping[str, cp.FileMark], start_at_end: bool) -> None:
        """The catch-up's progress line, when one is wanted and there is more to
        read than a glance: what the files hold past their checkpoints (``--from
        end``: nothing, for a new file)."""
        if self.view is None:
            return
        files = behind = 0
        for root in inputs.roots:
            for path in walk_paths(str(root), inputs.follow_symlinks) if root.is_dir() else ():
                try:
                    size = os.stat(path).st_size
                except OSError:
                    continue
                mark = resume.get(path)
                done = mark.offset if mark is not None else size if start_at_end else 0
                if size > done:
                    files, behind = files + 1, behind + size - done
        if files <= 1 and behind <= ONE_FILE_SHOWN:
            return
        self._caught = [0, 0]
        self._line = self.view(files, behind)

    def polling(self, follower: FileFollower) -> None:
        """A poll of ``follower`` begins: its reads are counted from here."""
        self._read_from = self._poll_from = follower.offset

    def read(self, follower: FileFollower, whole: bool) -> None:
        """What was read of the follower in hand (``whole``: its poll is over)."""
        if self._line is None:
            return
        read = max(0, follower.offset - self._read_from)
        self._read_from = follower.offset
        self._caught[0] += whole and follower.offset > self._poll_from
        self._caught[1] += read
        self._line.update(*self._caught)

    def end(self) -> None:
        if self._line is not None:
            self._line.close(*self._caught)
            self._line = None
