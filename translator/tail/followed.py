"""Which files the tail daemon follows, and from where.

A file found is followed from its checkpoint, from its start, or (``--from end``
at the first scan) from its end; a checkpointed file changed or gone while the
daemon was down has its open run closed from the state. A file moved (its folder
renamed, or the file) is followed on at its new path from where it was, known by
its inode and head; a file gone is forgotten after its last lines; one no source
reads, or that we may not read, is left alone until it changes. When descriptors
run out a file waits for the next round, nothing about it decided.

Apart from the daemon's loop: this is the bookkeeping of followers (paths,
inodes, checkpoint marks not yet taken up); the loop decides when to look.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamv1.translator.reading.files import open_regular
from streamv1.translator.reading.sources import is_main_file, session_of
from streamv1.translator.state import StateError, load
from streamv1.translator.tail import checkpoint as cp
from streamv1.translator.tail.actor_ends import ActorEnds
from streamv1.translator.tail.commits import Commits
from streamv1.translator.tail.descriptors import Descriptors
from streamv1.translator.tail.follower import FileFollower, NoDescriptors, Unfollowable
from streamv1.translator.tail.inputs import Inputs
from streamv1.translator.tail.places import Places
from streamv1.translator.tail.sessions import Sessions
from streamv1.translator.translate.translation import STATE_VERSION, InputError


@dataclass(eq=False)
class Followed:
    followers: dict[str, FileFollower]
    make: Callable[[str], FileFollower]  # a new follower of a path (not yet begun)
    inputs: Inputs
    sessions: Sessions
    actors: ActorEnds
    commits: Commits
    fds: Descriptors
    start_at_end: bool
    log: Any

    def __post_init__(self) -> None:
        self.first_scan = True  # --from end skips what files held before it only
        self.resume: dict[str, cp.FileMark] = {}  # checkpointed files not followed yet
        self._resume_by_inode: dict[int, str] | None = None  # made when first asked
        self._resumed_sessions: Counter[str] = Counter()  # checkpointed files a session
        self.deferred: dict[str, bool] = {}  # path → new: to add when descriptors free up
        self._by_inode: dict[int, str] = {}  # inode → followed path (a move keeps it)
        #: This round's walk for files gone from their paths (inode → a path not
        #: followed), made when the first such file has no descriptor to ask.
        self._unfollowed: dict[int, str] | None = None
        #: Files no source could tell the session of before their first line was
        #: complete: asked again when it is, before that line is read.
        self._unjoined: set[str] = set()
        self.starting = False  # the first scan: discoveries summed up, not one line each
        self.discovered: Counter[str] = Counter()
        self.places = Places(self)  # one session in two places: which leads

    def resume_from(self, saved: cp.Checkpoint) -> None:
        """The files a checkpoint marks, each taken up when it is found."""
        self.resume = dict(saved.files)
        self._resumed_sessions = Counter(k for p in self.resume if (k := session_of(p)) is not None)
        self.first_scan = not saved.scanned

    def new_round(self) -> None:
        self._unfollowed = None

    # -- a file found ----------------------------------------------------------------------

    def add(self, path: str, new: bool) -> FileFollower | None:
        """Follow ``path``: from its checkpoint, its start, or (``--from end`` at the
        first scan) its end. None when no descriptor could be had (tried again next
        round; nothing about the file is decided until then)."""
        if path in self.followers:
            return self.followers[path]  # (a session's main file, begun for a file of it)
        try:
            return self._follow(path, new)
        except (_GoneMeanwhile, _LeftOut):
            return None
        except Unfollowable as exc:
            placeholder = self.make(path)  # its mark, if any, stays for later
            placeholder.started, placeholder.new = False, new
            self.followers[path] = placeholder
            self.unreadable(placeholder, str(exc), retry=True)
            return None
        except NoDescriptors:
            if self.fds.out_of_descriptors(self.followers):
                try:
                    return self._follow(path, new)
                except NoDescriptors:
                    pass
            self.deferred[path] = new
            return None

    def follow_main(self, key: str) -> str | None:
        """Begin to follow the main file of session ``key`` now, if it is there and
        not followed (by the contract's default, the key is its path without its
        suffix; a source keying otherwise frames its files in the order found)."""
        for suffix in (".jsonl", ".json"):
            path = key + suffix
            if (
                path not in self.followers
                and os.path.isfile(path)
                and self.inputs.wanted(path)
                and is_main_file(path, key)
            ):
                self.add(path, new=not self.first_scan)
                return self.sessions.mains.get(key)
        return None

    def _follow(self, path: str, new: bool) -> FileFollower:
        moved = self._moved_here(path)
        if moved is not None:
            return moved
        judged = self.places.judge(path)  # one session in two places: framed once
        if judged is True:
            raise _LeftOut(path)
        if isinstance(judged, FileFollower):
            return judged
        follower = self.make(path)
        mark = self.resume.get(path)
        moved_mark = False
        if mark is None and self.resume:
            mark = self._moved_mark(path)
            moved_mark = mark is not None
        if mark is not None and follower.is_file_of(mark):
            key = session_of(path)
            # A file of a session framed together at the checkpoint (its main file
            # framed the others' lines): if its state cannot be read, the session's
            # files are replayed together (Sessions.replay), so the main file's
            # framer is rebuilt from all of them.
            was = _session_role(mark)
            together = was == "owner" or (key is not None and key in self.sessions.replays)
            try:
                state = follower.resume(mark, replay=not together)
            except FileNotFoundError:  # gone between the two looks
                if not moved_mark:
                    # Moved away (its folder renamed while the daemon starts) or
                    # deleted: its mark stays, for its new path to find by inode; the
                    # first scan's end closes it if no path does (close_vanished).
                    self._resume_by_inode = None
                    raise _GoneMeanwhile(path) from None
                follower = self.make(path)
                self._close_lost(path, mark)
                state = "gone since the checkpoint"
            except InputError as exc:
                self.unreadable(follower, str(exc), retry=False)
                state = "unreadable"
            if moved_mark:
                follower.dirty = True  # its mark, under its new name
            now_ino = _ino(path)
            if now_ino and follower.ino and now_ino != follower.ino and not moved_mark:
                # Written again whole under its name (a rename over it) while the
                # daemon was down, beginning as read: followed on from the mark.
                follower.ino, follower.dirty = now_ino, True
                state += "; replaced by a file beginning as read, followed on"
            if follower.pending_replay is not None and key is not None:
                self.sessions.replays.add(key)
            elif (
                state.startswith("replayed")
                and was is None
                and key is not None
                and self._resumed_sessions.get(key, 0) > 1
                and _older_release(mark)
            ):
                # Framed by an older release, each file of its session alone: its
                # open runs end at the checkpoint as they were framed; from here on
                # it is one stream with its session's other files.
                follower.close_runs()
            self.actors.resumed(path, follower)
            if follower.run_open:
                self.fds.park(follower)  # no descriptor yet: watched for idleness by name
        elif mark is not None and not moved_mark and not os.path.lexists(path):
            self._resume_by_inode = None
            raise _GoneMeanwhile(path)  # as above: moved away since the scan's look
        elif mark is not None:
            self._close_lost(path, mark)
            state = "changed since the checkpoint; its open run closed, from its start"
        elif self.start_at_end and not new:
            follower.skip_to_end()
            state = "from its end"
        else:
            state = "from its start"
        self.resume.pop(path, None)
        self.followers[path] = follower
        if follower.ino:
            self._by_inode[follower.ino] = path
        self.sessions.join(path, follower)
        self.places.followed(self.sessions.key_of.get(path))
        if path not in self.sessions.key_of and not _has_a_line(path):
            # A source may need the file's first record to tell its session (a
            # nested actor's file naming its parent): asked again once it is there.
            self._unjoined.add(path)
        waiting = follower.translation.batches
        if waiting is not None and not self.sessions.is_merged(path, follower):
            # Checkpointed waiting for a session that is not followed now: framed alone.
            follower.translation.batches = None
            for batch in waiting:
                follower.translation.frame(batch)
        if self.starting:
            # Thousands at a real user's start: one summary line (start), each at debug.
            self.discovered[state.split(";")[0].split(" (")[0]] += 1
            self.log.debug("file discovered", path=path, how=state)
        else:
            self.log.info("file discovered", path=path, how=state)
        self.sessions.flush(follower)  # what a replay released (a run held back before)
        return follower

    # -- what a poll found -----------------------------------------------------------------

    def polled(self, follower: FileFollower) -> None:
        """A poll read the follower's file: its inode is known as its path's."""
        if follower.ino and self._by_inode.get(follower.ino) != follower.path:
            self._by_inode[follower.ino] = follower.path

    def join_when_told(self, follower: FileFollower) -> None:
        """A file no source could tell the session of: joined once its first line
        is complete, before that line is read."""
        if follower.path in self._unjoined and _has_a_line(follower.path):
            self._unjoined.discard(follower.path)
            self.sessions.join(follower.path, follower)

    def left_alone(self, follower: FileFollower) -> bool:
        """A file that could not be read: still left alone (its permissions and
        kind as they were)?"""
        return follower.retry_sig is None or _sig(follower.path) == follower.retry_sig

    def unreadable(self, follower: FileFollower, reason: str, retry: bool) -> int:
        """A file no source reads (as ``convert`` would refuse it), or one we may not
        read (permissions, a FIFO): said once, then left alone; what it made before
        stands. The second kind is tried again when its mode, owner or kind change."""
        follower.broken = reason
        follower.retry_sig = _sig(follower.path) if retry else None
        follower.close_fd()
        follower.out.clear()
        self.log.error("this file is not followed", path=follower.path, reason=reason)
        return 0

    def forget(self, path: str) -> None:
        self._unjoined.discard(path)
        key = self.sessions.key_of.get(path)
        self.sessions.leave(path, self.followers.get(path))
        self.places.followed(key)
        follower = self.followers.pop(path, None)
        if follower is not None:
            follower.close_fd()
            if self._by_inode.get(follower.ino) == path:
                del self._by_inode[follower.ino]
        self.actors.forget(path)
        self.commits.row_gone(path)

    # -- moves -------------------------------------------------------------------------

    def _moved_here(self, path: str) -> FileFollower | None:
        """A file that is one already followed, moved (its folder renamed, or the
        file): the same inode and device, no longer at its old path. Its follower
        goes on at the new path, from where it was (#23 item 6: a renamed project
        folder read every file again from byte 0, every turn twice)."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        old = self._by_inode.get(st.st_ino)
        if old is None or old == path or os.path.exists(old):
            return None
        follower = self.followers.get(old)
        if follower is None or follower.ino != st.st_ino or not follower.is_same_head(path):
            return None
        return self.take_over(follower, path)

    def moved_from(self, follower: FileFollower) -> FileFollower | None:
        """A followed file found gone may have moved before its new path was seen
        (the model test: a file moved again while the daemon started; it was read
        again from byte 0 at its new path, its lines twice). Where it is now: the
        path its open descriptor has (the kernel follows a rename), else a walk of
        the watched folders for its inode; taken over when the head is the same."""
        found: str | None = None
        if follower.fd is not None:
            with contextlib.suppress(OSError):
                found = os.readlink(f"/proc/self/fd/{follower.fd}")
                if found.endswith(" (deleted)"):
                    return None  # unlinked: gone indeed
        if found is None and follower.ino:
            if self._unfollowed is None:  # one walk a round, however many are gone
                self._unfollowed = {}
                for p in self.inputs.walk():
                    if p not in self.followers and (ino := _ino(p)):
                        self._unfollowed[ino] = p
            found = self._unfollowed.get(follower.ino)
        if (
            found is None
            or found == follower.path
            or found in self.followers
            or not self.inputs.wanted(found)
            or _ino(found) != follower.ino
            or not follower.is_same_head(found)
        ):
            return None
        return self.take_over(follower, found)

    def take_over(self, follower: FileFollower, path: str) -> FileFollower:
        """``follower``'s file is at ``path`` now: it goes on there, from where it was."""
        old = follower.path
        self.followers.pop(old)
        self.commits.row_gone(old)
        self.sessions.rekey(old, path)
        follower.path = follower.translation.path = path
        follower.dirty = True
        self.followers[path] = follower
        self._by_inode[follower.ino] = path
        self.log.info("file moved; followed on from where it was", path=path, was=old)
        return follower

    def _moved_mark(self, path: str) -> cp.FileMark | None:
        """At start: a checkpointed file moved while the daemon was down (its folder
        renamed): the mark of the same inode whose path is gone."""
        try:
            st = os.stat(path)
        except OSError:
            return None
        if self._resume_by_inode is None:
            self._resume_by_inode = {m.ino: p for p, m in self.resume.items()}
        old = self._resume_by_inode.get(st.st_ino)
        mark = self.resume.get(old) if old is not None else None
        if old is None or mark is None or old == path or os.path.exists(old):
            return None
        self.resume.pop(old)
        self.commits.row_gone(old)
        self.log.info(
            "file moved while the daemon was down; followed on from its checkpoint",
            path=path,
            was=old,
        )
        return mark

    # -- files gone while the daemon was down ----------------------------------------------

    def _close_lost(self, path: str, mark: cp.FileMark) -> None:
        """A file deleted or rewritten while the daemon was down: its checkpointed run
        is closed as a live deletion closes it (from the state; the file is not read)."""
        self.resume.pop(path, None)
        self.commits.row_gone(path)
        if mark.state is None:
            self.log.warning(
                "file gone or changed since a checkpoint of an older release; its open run "
                "cannot be closed (no state this release reads)",
                path=path,
            )
            return
        lost = self.make(path)
        try:
            lost.translation.restore(mark.state)
        except ValueError as exc:
            self.log.warning(
                "file gone or changed since the checkpoint; its open run cannot be closed",
                path=path,
                reason=str(exc),
            )
            return
        lost.close_runs()
        if self.sessions.flush(lost):
            self.log.info(
                "file gone or changed since the checkpoint; its open run closed", path=path
            )

    def close_vanished(self) -> None:
        """After the first scan: checkpointed files no scan found are gone, if the
        folder they were under is there (a folder not there yet, or not mounted, keeps
        its files' marks until it is)."""
        left = self._not_taken_up()
        lost = {m.ino: p for p, m in left.items() if m.ino and not os.path.lexists(p)}
        if lost:
            # Moved while the daemon started (after the scan listed its folder): at
            # its new path, it goes on from its mark (_moved_mark), not from byte 0.
            for p in self.inputs.walk():
                if p not in self.followers and _ino(p) in lost and self.inputs.wanted(p):
                    self.add(p, new=False)
            left = self._not_taken_up()
        for root in self.inputs.roots:
            mine = [p for p in self.resume if p.startswith(os.path.join(root, ""))]
            if mine and not any(os.path.lexists(p) for p in mine) and _empty(root):
                # Not one of its checkpointed files is there, and nothing else: the
                # folder is missing, or an empty mount point (not mounted yet).
                self.log.warning(
                    "none of the checkpointed files under this folder is "
                    "there; keeping their marks until they are",
                    path=str(root),
                    files=len(mine),
                )
                for p in mine:
                    left.pop(p, None)
        for path, mark in left.items():
            if not os.path.lexists(path) or not self.inputs.wanted(path):
                self._close_lost(path, mark)

    def _not_taken_up(self) -> dict[str, cp.FileMark]:
        """The checkpoint's marks no file followed (or waiting for a descriptor) took."""
        return {
            p: m
            for p, m in self.resume.items()
            if p not in self.followers and p not in self.deferred
        }


class _GoneMeanwhile(Exception):
    """A checkpointed file gone between the scan's look and its resume."""


class _LeftOut(Exception):
    """A file of a session another place leads (translator.tail.places)."""


def _older_release(mark: cp.FileMark) -> bool:
    """Was this mark's translation written by a release that framed each file of
    a session alone (before one stream a session)?"""
    return not isinstance(mark.state, dict) or mark.state.get("version", 0) < STATE_VERSION


def _session_role(mark: cp.FileMark) -> str | None:
    """The part a file played in its session's one stream at the checkpoint
    ("owner": its framer framed the session; "part"), None for an older release's
    checkpoint or a file that stood alone."""
    extra = mark.state.get("extra") if isinstance(mark.state, dict) else None
    if not isinstance(extra, dict):
        return None
    try:
        role = load(extra).get("session")
    except (StateError, AttributeError):
        return None
    return role if role in ("owner", "part") else None


def _sig(path: str) -> tuple[int, ...] | None:
    """What must change for a file we may not read to be tried again."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mode, st.st_uid, st.st_gid, st.st_ino, st.st_ctime_ns)


def _empty(folder: Path) -> bool:
    """A folder that is not there, or holds nothing at all."""
    try:
        with os.scandir(folder) as entries:
            return next(entries, None) is None
    except OSError:
        return True


def _ino(path: str) -> int:
    """The inode at ``path`` (0 when there is none)."""
    try:
        return os.stat(path).st_ino
    except OSError:
        return 0


def _has_a_line(path: str) -> bool:
    """Does the file hold a complete first line (what a source may read to tell
    which session the file is one of)?"""
    try:
        with open_regular(path) as fh:
            return fh.readline(1 << 20).endswith(b"\n")
    except OSError:
        return False
