"""Progress on long work, for a person at a terminal: files, bytes, rate and ETA on
one line of stderr (``convert`` of many files, the tail daemon's catch-up).

Drawn with rich's progress display, redrawn at most four times a second from the
working thread itself: no refresh thread, since ``convert --jobs`` forks workers.
When the view for people shares the terminal it is drawn on that view's console,
so the view's lines scroll above it instead of being cut by it. Nothing of it
exists unless the caller found a terminal to draw on.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from rich.console import Console

#: Least time between two redraws.
REDRAW = 0.25
#: One input smaller than this is read too quickly to show a line for (convert's
#: one file, the daemon's catch-up of one file).
ONE_FILE_SHOWN = 64_000_000


class ProgressLine:
    """One progress line: ``update`` it as work is done, ``close`` it at the end
    (it stays on screen, at its last state)."""

    def __init__(
        self, what: str, total_files: int, total_bytes: int, console: Console | None = None
    ) -> None:
        from rich.console import Console
        from rich.progress import (
            BarColumn,
            DownloadColumn,
            Progress,
            TextColumn,
            TimeRemainingColumn,
            TransferSpeedColumn,
        )

        self._bar = Progress(
            TextColumn("{task.description}"),
            TextColumn("{task.fields[files]}/{task.fields[total_files]} files"),
            BarColumn(),
            DownloadColumn(),
            TransferSpeedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console if console is not None else Console(stderr=True),
            auto_refresh=False,
        )
        self._task = self._bar.add_task(
            what, total=max(total_bytes, 1), files=0, total_files=total_files
        )
        self._shown = 0.0
        self._bar.start()
        self.update(0, 0, force=True)  # at once: a person sees the work has begun

    def update(self, files: int, done_bytes: int, *, force: bool = False) -> None:
        now = time.monotonic()
        if not force and now - self._shown < REDRAW:
            return
        self._shown = now
        self._bar.update(self._task, completed=done_bytes, files=files)
        self._bar.refresh()

    def close(self, files: int | None = None, done_bytes: int | None = None) -> None:
        fields: dict[str, Any] = {}
        if files is not None:
            fields["files"] = files
        if done_bytes is not None:
            fields["completed"] = done_bytes
        self._bar.update(self._task, **fields)
        self._bar.refresh()
        self._bar.stop()
