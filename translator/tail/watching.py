"""How the daemon learns that a file changed: kernel events, a fast poll of the
folders the kernel does not watch, and a sweep under both.

* :class:`FileEvents` — inotify through watchfiles' notifier, on a thread of its
  own that only hands paths over; a round of events it cannot deliver (a file name
  that is not UTF-8) is a rescan, not a dead thread.
* :class:`Unwatched` — folders of followed files inotify does not watch (its
  watches ran out): said once with what to do, counted, and their files polled
  every FAST_POLL seconds instead of waiting for the rescan (#23 item 5).
* :class:`Sweep` — every followed file looked at once a ``rescan_every`` (events
  get missed), a slice a round rather than all in one (#23 item 4: at 10,000 files
  one round of all was 100 ms, an append's latency with it).
"""

from __future__ import annotations

import os
import queue
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from streamv1.translator.tail import watches

#: How often the files of folders inotify does not watch are polled (seconds).
FAST_POLL = 1.0


class FileEvents:
    def __init__(self, roots: list[str], log: Any, wake: Callable[[], None]) -> None:
        self.roots = roots
        self.log = log
        self.wake = wake
        self.watcher: Any = None  # the notifier, once watching
        self.errors = 0  # rounds of events lost (status watch_errors)
        self._changes: queue.SimpleQueue[set[str]] = queue.SimpleQueue()

    def start(self, stop: Any) -> bool:
        """Watches in place now, on this thread (not lazily inside the watching
        thread, as ``watchfiles.watch`` would), so whatever is written from here on
        is an event. False when watching is unavailable (rescans remain)."""
        from watchfiles._rust_notify import RustNotify

        roots = [r for r in self.roots if os.path.isdir(r)]
        if self.watcher is not None:
            return True
        if not roots:
            return False
        try:
            self.watcher = RustNotify(roots, False, False, 300, True, True)
        except Exception as exc:  # out of descriptors or inotify watches
            self.log.error(
                "file watching unavailable; new lines are found by the rescan", reason=str(exc)
            )
            return False
        threading.Thread(target=self._run, args=(stop,), name="watch", daemon=True).start()
        return True

    def changed(self) -> set[str]:
        """The paths events named since the last call."""
        paths: set[str] = set()
        while True:
            try:
                paths |= self._changes.get_nowait()
            except queue.Empty:
                return paths

    def _run(self, stop: Any) -> None:
        while not stop.is_set():
            try:
                changes = self.watcher.watch(50, 10, 1000, stop)
            except Exception as exc:  # watchfiles cannot decode a non-UTF-8 file name
                # The round's events are lost, not the thread: a rescan finds what
                # they were about (#23 item 10: the thread died, and with it every
                # later event).
                self.errors += 1
                if self.errors == 1:
                    self.log.warning(
                        "file events lost; rescanning instead (said once; counted as watch_errors)",
                        reason=f"{type(exc).__name__}: {exc}",
                    )
                self._changes.put(set(self.roots))
                self.wake()
                stop.wait(0.05)
                continue
            if changes == "stop":
                return
            if isinstance(changes, set) and changes:
                self._changes.put({path for _, path in changes})
                self.wake()


class Unwatched:
    def __init__(self, log: Any) -> None:
        self.log = log
        self.folders: list[str] = []
        self._last = -1e18

    def check(self, folders: Iterable[str]) -> None:
        """Which of ``folders`` the kernel does not watch (asked of
        /proc/self/fdinfo: :mod:`translator.tail.watches`)."""
        watched = watches.watched()
        if watched is None:
            return
        missing = []
        for folder in sorted(set(folders)):
            try:
                st = os.stat(folder)
            except OSError:
                continue
            # A folder this user may not list is not watched for want of permission,
            # not of watches (the walk says so, once, naming it); polling it finds nothing.
            if (st.st_dev, st.st_ino) not in watched and _listable(folder):
                missing.append(folder)
        if missing and not self.folders:
            limit = watches.max_watches()
            self.log.warning(
                "folders not watched: the kernel's inotify watches ran out; their files are "
                "polled instead. Raise the limit (sysctl -w "
                "fs.inotify.max_user_watches=524288) and restart",
                path=missing[0],
                folders=len(missing),
                max_user_watches=limit,
                poll_s=f"{FAST_POLL:g}",
            )
        self.folders = missing

    def due(self, now: float) -> list[str]:
        """The unwatched folders, when their FAST_POLL is up (else none)."""
        if not self.folders or now - self._last < FAST_POLL:
            return []
        self._last = now
        return list(self.folders)


def _listable(folder: str) -> bool:
    return os.access(
        folder, os.R_OK | os.X_OK, effective_ids=os.access in os.supports_effective_ids
    )


class Sweep:
    def __init__(self, now: float) -> None:
        self.last = now
        self._order: list[str] = []
        self._at = 0
        self._owed = 0.0

    def restart(self, now: float) -> None:
        """Every file was just polled (a full rescan)."""
        self.last = now

    def take(self, now: float, followed: Mapping[str, Any], every: float) -> list[str]:
        """The next slice: as many files as the time since the last slice is of
        ``every``, in a fixed order renewed at each pass."""
        share = (now - self.last) / every if every > 0 else 1.0
        if share <= 0 or not followed:
            return []
        self.last = now
        if self._at >= len(self._order):
            self._order, self._at = list(followed), 0
        # A share of a file is carried to the next round: n files over ``every``
        # seconds are n polls, not one a round whatever n (nor ceil(n/every)).
        self._owed = min(self._owed + len(self._order) * share, float(len(self._order)))
        k = int(self._owed)
        self._owed -= k
        taken = self._order[self._at : self._at + k]
        self._at += k
        return [p for p in taken if p in followed]
