"""What the tail daemon reads: the transcripts under its watched folders, never
its own output; and the walks of those folders.

One place decides what is an input, because many ask: a rescan, the unwatched
folders' poll, a session's main file begun for a file of it, a moved file's new
path, the start's look for checkpointed files gone.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from streamv1.translator.reading.discover import is_transcript, stays_inside, walk_paths
from streamv1.translator.tail.output import OutputSink


class Inputs:
    def __init__(
        self, roots: list[Path], follow_symlinks: bool, sink: OutputSink, log: Any
    ) -> None:
        self.roots = roots
        self.follow_symlinks = follow_symlinks
        self._sink = sink
        self.log = log
        self._out_base = os.sep + sink.path.name if sink.path is not None else ""
        self._output_dev = os.stat(sink.path).st_dev if sink.path is not None else -1
        self._said_output_inside = False
        self._unreadable: set[str] = set()  # folders said to be unreadable

    def wanted(self, path: str) -> bool:
        return not self.is_output(path) and any(
            is_transcript(path, str(root)) and stays_inside(path, str(root), self.follow_symlinks)
            for root in self.roots
        )

    def is_output(self, path: str) -> bool:
        """The daemon's own output (inside a watched folder: ``tail DIR -o
        DIR/stream.jsonl``) is never an input: read back, it was appended again
        and again until the disk was full (#23 item 9)."""
        if self._sink.path is None:
            return False
        if path == str(self._sink.path):
            return True
        if not path.endswith(self._out_base):
            return False  # (the same file under another folder spelling: same name)
        try:
            st = os.stat(path)
        except OSError:
            return False
        return st.st_ino == self._sink.ino and st.st_dev == self._output_dev

    def outputs_among(self, paths: set[str]) -> set[str]:
        """Those of ``paths`` that are the daemon's output: said once, never read."""
        mine = {p for p in paths if self.is_output(p)}
        if mine and not self._said_output_inside:
            self._said_output_inside = True
            self.log.warning(
                "the output is inside a watched folder; it is never read as an input",
                path=self._sink.name,
            )
        return mine

    def walk(self, inside: str | None = None) -> Iterator[str]:
        """The transcript files under every watched folder, or (``inside``) only
        those in that folder below each (:func:`translator.reading.discover.walk_paths`)."""
        for root in self.roots:
            if inside is None:
                yield from walk_paths(str(root), self.follow_symlinks, self.unreadable)
            else:
                yield from walk_paths(
                    str(root), self.follow_symlinks, self.unreadable, inside=inside
                )

    def unreadable(self, folder: str, exc: OSError) -> None:
        """A folder the walk cannot list (no permission): said once, on one line
        naming it; the other folders are followed, and each rescan looks again."""
        if folder not in self._unreadable:
            self._unreadable.add(folder)
            self.log.warning(
                "cannot read this folder; its files are followed once it can be read "
                "(looked at again on each rescan)",
                path=folder,
                reason=exc.strerror or str(exc),
            )
