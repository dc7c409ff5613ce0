"""The progress line of a batch conversion: files and bytes done, for a terminal only.

Apart from the conversion: it hears what was read (:class:`Counted` wraps an input
file) and which inputs are done, and :mod:`translator.progress` draws it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO, TYPE_CHECKING, Any

from streamv1.translator.progress import ONE_FILE_SHOWN
from streamv1.translator.translate.input_files import size_of

if TYPE_CHECKING:
    from streamv1.translator.progress import ProgressLine
    from streamv1.translator.translate.many_inputs import Job

#: One input this big is waited for long enough (seconds) to show progress inside it.
PROGRESS_ONE_FILE = ONE_FILE_SHOWN


class Progress:
    """files, MB, rate and ETA on one stderr line, for a terminal only
    (translator.progress draws it)."""

    def __init__(self, jobs: list[Job], enabled: bool, console: Any = None) -> None:
        self.enabled = enabled and (
            len(jobs) > 1 or (bool(jobs) and size_of(jobs[0].path) > PROGRESS_ONE_FILE)
        )
        self.total_files = len(jobs)
        # Sizes only for a display that shows them: a stat an input otherwise wasted.
        self._sizes = {j: size_of(j.path) for j in jobs} if self.enabled else {}
        self.total_bytes = sum(self._sizes[j] for j in jobs) if self.enabled else 0
        self.files = 0
        self.bytes = 0
        self._inside = 0  # bytes read of the file in hand
        self._line: ProgressLine | None = None
        if self.enabled:
            from streamv1.translator.progress import ProgressLine

            self._line = ProgressLine("convert", self.total_files, self.total_bytes, console)

    def read(self, n: int) -> None:
        """Bytes read inside a file: a single large input shows progress too."""
        self._inside += n
        if self._line is not None:
            self._line.update(self.files, self.bytes + self._inside)

    def done(self, job: Job) -> None:
        if self._line is None:
            return
        self.files += 1
        self.bytes += self._sizes.get(job, 0)
        self._inside = 0
        self._line.update(self.files, self.bytes)

    def close(self) -> None:
        if self._line is not None:
            self._line.close(self.files, self.bytes)
            self._line = None


class Counted:
    """A file that tells ``read`` how many bytes each read took (the reader reads
    1 MiB at a time, so this costs one call a megabyte)."""

    def __init__(self, raw: IO[bytes], read: Callable[[int], None]) -> None:
        self._raw, self._read = raw, read

    def read1(self, n: int = -1) -> bytes:
        data = self._raw.read1(n)  # type: ignore[attr-defined]
        self._read(len(data))
        return bytes(data)

    def read(self, n: int = -1) -> bytes:
        data = self._raw.read(n)
        self._read(len(data))
        return data

    def __getattr__(self, name: str) -> Any:
        return getattr(self._raw, name)
