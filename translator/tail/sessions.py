"""One session, one stream, live: the files of a session (a main file and its
nested actors') are framed by the main file's translation, their records merged
in time order (:mod:`translator.translate.session`), as ``convert`` groups them.

A file joins its session when it is followed (the sources tell its key and
whether it is the main file); the merge is made when a second file of the
session is followed, or when the main file spawns a nested actor whose own file
has not begun (its lines past the spawn wait ACTOR_WAIT seconds for that file).
A session whose main file's state could not be read is replayed with all its
files to the checkpoint. Apart from the daemon's loop: this is the grouping, the
loop only says which files were read.
"""

from __future__ import annotations

import functools
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from streamv1.translator.reading.sources import session_of, session_place
from streamv1.translator.tail import checkpoint as cp
from streamv1.translator.tail.follower import FileFollower
from streamv1.translator.tail.writes import Writes
from streamv1.translator.translate.session import Part, SessionMerge

#: How long, live, a file's lines past its call spawning a nested actor wait for
#: the actor's own file to begin (translator.translate.session: the actor's task_started
#: belongs before them, where batch conversion puts it by time). The agents write
#: that file as the actor begins, so it is seldom waited for at all.
ACTOR_WAIT = 5.0


@dataclass(eq=False)
class Sessions:
    followers: Mapping[str, FileFollower]
    writes: Writes
    now: Callable[[], float]
    log: Any
    #: Begins to follow the main file of a session (its key) one of whose other
    #: files came first: that file's path then, or None.
    follow_main: Callable[[str], str | None]

    def __post_init__(self) -> None:
        # Made when a second file of a session is followed: key → (the merge, the
        # main file's path). path → its session key.
        self.merges: dict[str, tuple[SessionMerge, str]] = {}
        self.key_of: dict[str, str] = {}
        self.members: dict[str, set[str]] = {}  # key → its files followed
        self.mains: dict[str, str] = {}  # key → its main file, when followed
        self.deferring = False  # inside a round's reads: sessions framed at its end
        self._due: set[str] = set()
        # Sessions whose merge holds batches (waiting for a spawner, or past a call
        # spawning an actor whose file has not begun): drained again each round. Per
        # session, the spawning calls waited for, and since when.
        self.holding: set[str] = set()
        self._awaited: dict[str, dict[str, float]] = {}
        self.replays: set[str] = set()  # sessions whose files are to be replayed together

    # -- framing -----------------------------------------------------------------------

    def flush(self, follower: FileFollower) -> int:
        """The follower's lines written, then its session's (at the round's end
        while the round's reads go on)."""
        n = self.writes.flush_lines(follower)
        key = self.key_of.get(follower.path)
        if key is not None and key in self.merges:
            if self.deferring:
                self._due.add(key)
            else:
                n += self.frame(key)
        return n

    def frame_due(self) -> int:
        """At a round's end: each session its reads brought records to, and each
        that holds some back, framed in time order across its files (what one
        file brought before another's earlier line)."""
        written = 0
        for key in sorted(self._due | self.holding):
            written += self.frame(key)
        self._due.clear()
        return written

    def frame(self, key: str) -> int:
        """What a session's files handed in, framed by its main file's translation
        (time order across them), written."""
        found = self.merges.get(key)
        if found is None:
            return 0
        merge, main = found
        if not merge.pending:
            self.holding.discard(key)
            self._awaited.pop(key, None)
            return 0
        try:
            merge.drain(live=True, patient=functools.partial(self._patient, key, self.now()))
        except Exception as exc:
            # The merge itself failed (framing failures end their run inside it):
            # the session's run ends with it said, what waited is dropped with it
            # (counted in the error line), and the other sessions go on.
            waiting = sum(len(p.batches) for p in merge.parts)
            for part in merge.parts:
                part.batches.clear()
            merge.owner.fail(exc, f"merging the session's files ({waiting} batches waiting)")
        if merge.pending:
            self.holding.add(key)
        else:
            self.holding.discard(key)
            self._awaited.pop(key, None)  # nothing waits: a later spawn's wait starts anew
        # Every file of the session has a new mark too, not only the one read: a
        # drain frames batches other files handed in and teaches a file that holds
        # its actor's lines its spawner (learn_spawner). Checkpointed as they were
        # before, those lines came again after a restart (the three-agent tail
        # test: a Gemini subagent's six lines twice).
        for part in merge.parts:
            follower = self.followers.get(part.translation.path)
            if follower is not None:
                follower.dirty = True
        owner = self.followers.get(main)
        if owner is None:
            return 0
        owner.dirty = True  # its framer's state moved (lines, or counts only)
        return self.writes.flush_lines(owner)

    def _patient(self, key: str, now: float, part: Part, tool: str) -> bool:
        """Do the lines of ``part`` past its call ``tool``, which spawned an actor
        whose file has not begun, still wait for it? For ``ACTOR_WAIT`` seconds from
        when they were first held, if the file was written lately; a file older
        than that is an archive, whose actors' files would be here by now."""
        awaited = self._awaited.setdefault(key, {})
        since = awaited.get(tool)
        if since is None:
            since = now if _written_lately(part.translation.path, ACTOR_WAIT) else -ACTOR_WAIT
            awaited[tool] = since
            if since == now:
                self.log.debug(
                    "lines wait for a nested actor's file to begin",
                    path=part.translation.path,
                    tool_use_id=tool,
                )
        return now - since < ACTOR_WAIT

    # -- files join and leave ------------------------------------------------------------

    def _merge_of(self, key: str, main: str) -> tuple[SessionMerge, str]:
        found = self.merges.get(key)
        if found is None:
            owner = self.followers[main].translation
            found = (SessionMerge(owner), main)
            self.merges[key] = found
            owner.extra["session"] = "owner"  # checkpointed: a restart knows it
            self.followers[main].dirty = True
        return found

    def join(self, path: str, follower: FileFollower) -> None:
        """A file of a session whose main file is followed: its lines are lines of
        that session's runs (a subagent's, inside its parent's)."""
        place = session_place(path)
        if place is None:
            return
        key, is_main = place
        self.key_of[path] = key
        self.members.setdefault(key, set()).add(path)
        if is_main:
            self.mains[key] = path
            if follower.translation.batches is not None:
                self._merge_of(key, path)  # it held batches at its checkpoint: they wait on
            return  # the owner: a merge is made when a second file joins (or a spawn)
        main = self.mains.get(key)
        if main is None:
            # Its main file may just not be followed yet (a walk lists Gemini's
            # chats/<session>/<agent>.jsonl before chats/session-….jsonl): that one
            # first, so this file joins its session, as convert groups them.
            main = self.follow_main(key)
        if main is None or main not in self.followers:
            return  # its main file is not followed: it stands alone, as convert frames it
        found = self._merge_of(key, main)
        found[0].join(follower.translation)
        follower.translation.extra["session"] = "part"
        follower.dirty = True

    def is_merged(self, path: str, follower: FileFollower) -> bool:
        """Is the follower's translation a part of its session's merge?"""
        found = self.merges.get(self.key_of.get(path, ""))
        return found is not None and any(
            follower.translation is p.translation for p in found[0].parts
        )

    def spawned_in(self, path: str) -> None:
        """A main file says it spawned a nested actor whose own file is not followed
        yet: its session's merge is made now, so what follows the spawn waits for
        that file to begin (translator.translate.session)."""
        key = self.key_of.get(path)
        if key is not None and self.mains.get(key) == path:
            self._merge_of(key, path)

    def leave(self, path: str, follower: FileFollower | None) -> None:
        key = self.key_of.pop(path, None)
        if key is None:
            return
        members = self.members.get(key, set())
        members.discard(path)
        if not members:
            self.members.pop(key, None)
        if self.mains.get(key) == path:
            del self.mains[key]
        found = self.merges.get(key)
        if found is None or follower is None:
            return
        merge, main = found
        if path == main:
            merge.dissolve()
            del self.merges[key]
            self.holding.discard(key)
            self._awaited.pop(key, None)
        else:
            merge.leave(follower.translation)
        self.writes.flush_lines(self.followers.get(main))

    def rekey(self, old: str, path: str) -> None:
        """A moved file's place in its session (its folder, and so its key, moved)."""
        key = self.key_of.pop(old, None)
        if key is None:
            return
        new_key = session_of(path) or key
        self.key_of[path] = new_key
        members = self.members.pop(key, set())
        members.discard(old)
        self.members.setdefault(new_key, set()).update({*members, path})
        if self.mains.get(key) == old:
            del self.mains[key]
            self.mains[new_key] = path
        elif key in self.mains and new_key not in self.mains:
            self.mains[new_key] = self.mains.pop(key)
        found = self.merges.pop(key, None)
        if found is not None:
            merge, main = found
            self.merges[new_key] = (merge, path if main == old else main)

    # -- what the loop asks ----------------------------------------------------------------

    def with_members(self, chosen: Iterable[str]) -> list[str]:
        """Every file of the sessions among ``chosen`` files: read in the same
        round, their records are merged with all that is on disk by now (a
        subagent's last lines, written before its parent's answer to it)."""
        return [
            m
            for t in list(chosen)
            if (k := self.key_of.get(t)) in self.merges
            for m in sorted(self.members.get(k, ()))
        ]

    def last_data(self, follower: FileFollower) -> float:
        """When the follower's run last heard of anything: for a session's main
        file, the latest of its files (a subagent working keeps its parent's run
        open)."""
        key = self.key_of.get(follower.path, "")
        found = self.merges.get(key)
        if found is None or found[1] != follower.path:
            return follower.last_data
        return max(
            [follower.last_data]
            + [f.last_data for p in self.members.get(key, ()) if (f := self.followers.get(p))]
        )

    # -- replays -------------------------------------------------------------------------

    def replay(self) -> None:
        """Sessions whose main file's state could not be read: every file of the
        session is read again from its start to its checkpoint, merged into the
        main file's framer, every line framed dropped (the output has them): the
        framer's run (its seq, usage, counts) is rebuilt from all of them. (Two
        actors' lines may have been framed in another order live: the state is the
        same, since it counts lines, sums usage and knows the last message.)"""
        for key in sorted(self.replays):
            main = self.mains.get(key)
            owner = self.followers.get(main) if main is not None else None
            if owner is None:
                continue
            found = self.merges.get(key)
            if found is None:
                found = (SessionMerge(owner.translation), owner.path)
                self.merges[key] = found
            merge = found[0]
            owner.translation.extra["session"] = "owner"
            parts = [
                self.followers[p]
                for p in sorted(self.members.get(key, ()))
                if p != owner.path and p in self.followers
            ]
            for part in parts:
                mark = part.pending_replay or part.mark()
                merge.leave(part.translation)
                part.translation = part.fresh_translation()
                part.translation.extra["session"] = "part"
                joined = merge.join(part.translation)
                joined.skip = _skip(mark)
                part.replay_in_session(mark)
            target = owner.pending_replay or owner.mark()
            own = merge.part_of(owner.translation)
            if own is not None:
                own.skip = _skip(target)
            # Each file's first lines, as many as its mark counts, are in the output
            # and dropped; what waited for its spawner then waits again.
            owner.replay_in_session(target, functools.partial(merge.drain, live=True))
            for p in merge.parts:
                p.skip = 0
            self.log.info(
                "session replayed to the checkpoint with its files",
                path=owner.path,
                files=len(parts) + 1,
            )
        self.replays.clear()


def _written_lately(path: str, within: float) -> bool:
    try:
        return time.time() - os.stat(path).st_mtime < within
    except OSError:
        return False


def _skip(mark: cp.FileMark) -> int:
    """How many lines of a file a session's replay drops: those its mark counts as
    written; all it makes, for a mark that does not count them (v1)."""
    return mark.framed if mark.framed is not None else 1 << 62
