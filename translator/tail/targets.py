"""Which files a round of the tail daemon reads, and the discovery of new ones.

File events alone get missed now and then: every ``rescan_every`` seconds the
watched folders are walked again, a new folder is looked into at once, and each
round looks at a share of every file (the sweep). Apart from the daemon's loop,
which reads what this chose; new files are begun here, before the round's reads
(:class:`translator.tail.followed.Followed`), so that a file of a session followed
already joins it before that session's lines of the round are framed.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

from streamv1.translator.tail.followed import Followed
from streamv1.translator.tail.follower import FileFollower
from streamv1.translator.tail.inputs import Inputs
from streamv1.translator.tail.sessions import Sessions
from streamv1.translator.tail.watching import FileEvents, Sweep, Unwatched


@dataclass(eq=False)
class Targets:
    followers: Mapping[str, FileFollower]
    files: Followed
    inputs: Inputs
    sessions: Sessions
    events: FileEvents
    unwatched: Unwatched
    sweep: Sweep  # a share of every file a round
    rescan_every: float

    def __post_init__(self) -> None:
        self._last_rescan = -1e18
        self.repoll: set[str] = set()  # polls that found no descriptor: next round

    def choose(self, now: float, changed: set[str] | None, rescan: bool) -> list[str]:
        """The files to read this round, in order: new files first (one of a session
        followed already joins it before that session's lines of this round are
        framed: a subagent's file, appearing with its parent's lines that follow
        it), then the changed ones, what a rescan found, a share of every file
        (the sweep), the unwatched folders' files, the polls that found no
        descriptor last round, and every other file of the sessions among them."""
        files = self.files
        # A new folder (a new project, a folder of nested actors) is looked into at once: its
        # files may have been written before its watch was in place.
        new_dirs = (
            sorted(p for p in changed if p not in self.followers and os.path.isdir(p))
            if changed
            else []
        )
        for path, new in list(files.deferred.items()):
            files.deferred.pop(path)
            if path not in self.followers:
                files.add(path, new)
        found: list[str] = []  # files a rescan of this round began to follow
        if rescan or now - self._last_rescan >= self.rescan_every:
            found = self.rescan()
            self._last_rescan = now
        elif new_dirs:
            found = self.rescan(new_dirs)
        chosen: dict[str, None]
        if rescan:
            chosen = dict.fromkeys(self.followers)
            self.sweep.restart(now)
        else:
            added = [
                path
                for path in sorted(changed or ())
                if path not in self.followers
                and self.inputs.wanted(path)
                and files.add(path, new=True) is not None
            ]
            chosen = dict.fromkeys(
                [p for p in changed or () if p in self.followers and p not in added] + added
            )
            chosen.update(dict.fromkeys(found))
            chosen.update(dict.fromkeys(self.sweep.take(now, self.followers, self.rescan_every)))
        if self.sessions.replays:
            self.sessions.replay()  # before any of their files reads on
        chosen.update(dict.fromkeys(self._poll_unwatched(now)))
        chosen.update(dict.fromkeys(self.repoll))
        self.repoll.clear()
        if self.sessions.merges and chosen:
            chosen.update(dict.fromkeys(self.sessions.with_members(chosen)))
        return list(chosen)

    def rescan(self, folders: list[str] | None = None) -> list[str]:
        """Look for new files: under every root, or (``folders``) only in those.
        Returns the files it began to follow."""
        seen: set[str] = set()
        if folders is None:
            seen.update(self.inputs.walk())
        for folder in folders or ():
            seen.update(p for p in self.inputs.walk(inside=folder) if self.inputs.wanted(p))
        mine = self.inputs.outputs_among(seen)
        found = [
            path
            for path in sorted(seen - mine - set(self.followers))
            if self.files.add(path, new=not self.files.first_scan) is not None
        ]
        if folders is None:
            self.files.first_scan = False
            self._check_watches()
        return found

    def _check_watches(self) -> None:
        if self.events.watcher is not None:
            self.unwatched.check(
                [os.path.dirname(p) for p in self.followers] + [str(r) for r in self.inputs.roots]
            )

    def _poll_unwatched(self, now: float) -> list[str]:
        """The files of unwatched folders, and new ones there, every FAST_POLL."""
        due = self.unwatched.due(now)
        if not due:
            return []
        folders = set(due)
        targets = [p for p in self.followers if os.path.dirname(p) in folders]
        for folder in due:
            try:
                names = os.listdir(folder)
            except OSError:
                continue
            for name in names:
                path = os.path.join(folder, name)
                if (
                    path not in self.followers
                    and self.inputs.wanted(path)
                    and os.path.isfile(path)
                    and self.files.add(path, new=True) is not None
                ):
                    targets.append(path)
        return targets
