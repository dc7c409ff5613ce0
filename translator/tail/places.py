"""One session in two places, live: the daemon frames it once.

The rule is :mod:`translator.reading.copies`' (``convert`` keeps it too): files of
one session name in two places (a hard link, a copied project folder) whose bytes
are one the other's, or begin it, are one session, framed from the file that
leads; the other place's files are left out, said once. Live, the place followed
first leads. A place found later leads instead when it holds more:

- at once when the leading place has read nothing yet (the first scan meets the
  shorter copy first: its followers are dropped, nothing was framed);
- by a take-over when the session went on in the other place (a copied folder
  the CLI writes on in) and its main file is all of it: its follower goes on in
  the longer file from where it was, as a rename over it goes on (it must begin
  with the bytes read);
- otherwise (a session of several files read already) both are framed, with a
  warning: the one case where a session's lines can come twice.

Files of one name whose bytes differ are two sessions: both framed, warned of.
A left-out file is judged again when it changes (its events, the rescans), at
the cost of one ``stat`` while it does not.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

from streamv1.translator.reading import copies
from streamv1.translator.reading.sources import session_place
from streamv1.translator.tail.follower import FileFollower, open_file

if TYPE_CHECKING:
    from streamv1.translator.tail.followed import Followed


_DIFFER = "one session in two places whose files differ: both framed"
_BOTH = "one session in two places, both written on: both framed"


class Places:
    def __init__(self, files: Followed) -> None:
        self.files = files
        #: A place left out (its session key) → the key of the place that leads.
        self.left_out: dict[str, str] = {}
        #: Session name → the keys whose main file is followed.
        self._names: dict[str, set[str]] = {}
        #: A left-out main file → (its inode, size, mtime; the leader's path, size)
        #: when it was judged: judged again only when one of them changed.
        self._judged: dict[str, tuple[int, int, int, str, int]] = {}
        self._warned: set[tuple[str, str]] = set()

    # -- the index of places followed ----------------------------------------------

    def followed(self, key: str | None) -> None:
        """The place ``key`` has (or no longer has) its main file followed."""
        if key is None:
            return
        names = self._names.setdefault(copies.session_name(key), set())
        if key in self.files.sessions.mains:
            names.add(key)
        else:
            names.discard(key)

    # -- a file found ----------------------------------------------------------------

    def judge(self, path: str) -> FileFollower | bool:
        """Before ``path`` is followed: True when it is left out (a file of a place
        another leads), a follower when the leading place's follower took it
        over (it goes on there), False to follow it as any file."""
        if not self.left_out and not self._names.get(copies.session_name(path)):
            return False  # no place of that name followed, none left out: one look saved
        place = session_place(path)
        if place is None:
            return False
        key, is_main = place
        if not is_main:
            main = next((key + s for s in (".jsonl", ".json") if os.path.isfile(key + s)), None)
            if main is None or main in self.files.followers:
                return False
            return self._judge_main(main, key) is True  # its place is left out
        return self._judge_main(path, key)

    def _judge_main(self, path: str, key: str) -> FileFollower | bool:
        for other in sorted(self._names.get(copies.session_name(key), ())):
            main = self.files.sessions.mains.get(other)
            leader = self.files.followers.get(main) if main is not None else None
            if other == key or leader is None:
                continue
            cached = self._cached(path, leader)
            if cached is not None:
                return cached
            relation = copies.relation(path, leader.path)
            if relation is None:
                continue
            if relation == copies.DIFFERENT:
                self._warn(
                    path, leader.path, "one session in two places whose files differ: both framed"
                )
                continue
            if copies.size(path) <= copies.size(leader.path):
                return self._leave_out(path, key, other, leader)
            return self._lead(path, key, other, leader)
        self.left_out.pop(key, None)
        return False

    def _cached(self, path: str, leader: FileFollower) -> bool | None:
        """The last verdict on ``path`` (left out) while neither file changed."""
        was = self._judged.get(path)
        if was is None:
            return None
        try:
            st = os.stat(path)
        except OSError:
            return None
        now = (st.st_ino, st.st_size, st.st_mtime_ns, leader.path, copies.size(leader.path))
        return True if now == was else None

    def _leave_out(self, path: str, key: str, other: str, leader: FileFollower) -> bool:
        if self.left_out.get(key) != other:
            self.files.log.info(
                "one session in two places; framed once, from the file that leads",
                path=path,
                leader=leader.path,
            )
        self.left_out[key] = other
        try:
            st = os.stat(path)
            self._judged[path] = (
                st.st_ino,
                st.st_size,
                st.st_mtime_ns,
                leader.path,
                copies.size(leader.path),
            )
        except OSError:
            self._judged.pop(path, None)
        return True

    def _lead(self, path: str, key: str, other: str, leader: FileFollower) -> FileFollower | bool:
        """``path`` holds more than the leading place's main file and begins with all
        of it: it leads from now on, if that can be done without a line twice."""
        files = self.files
        members = sorted(files.sessions.members.get(other, {leader.path}))
        followers = [f for m in members if (f := files.followers.get(m)) is not None]
        if all(f.offset == 0 and not f.translation.framed for f in followers):
            for m in members:  # nothing read: the longer place leads from its start
                files.forget(m)
            self._swap(key, other)
            return False
        if members == [leader.path] and self._begins_as_read(path, leader):
            self._swap(key, other)
            self._judged.pop(path, None)
            self.left_out.pop(key, None)
            was = leader.path
            taken = files.take_over(leader, path)
            self.followed(other)
            self.followed(key)
            self.left_out[other] = key
            files.log.info(
                "one session in two places; the other holds more, followed on there",
                path=path,
                was=was,
            )
            return taken
        self._warn(path, leader.path, _BOTH)
        return False

    def _swap(self, key: str, other: str) -> None:
        self.left_out.pop(key, None)
        self.left_out[other] = key
        self.followed(other)

    @staticmethod
    def _begins_as_read(path: str, leader: FileFollower) -> bool:
        fd = open_file(path)
        if fd is None:
            return False
        try:
            return leader.begins_as_read(fd, leader.fd)
        finally:
            os.close(fd)

    def _warn(self, path: str, other: str, what: str) -> None:
        if (path, other) not in self._warned:
            self._warned.add((path, other))
            self.files.log.warning(what, path=path, other=other)
