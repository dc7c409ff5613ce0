"""One session, one stream: the events of a session's files meet in one framer.

A session is the unit of framing (ADR-0050: a nested actor's lines are lines of the
run it was spawned in). Each file of a session keeps its own reader and adapter
(its :class:`~translator.translate.translation.Translation`); the first file's framer frames
them all. Each translation hands its events here, one batch per record, and the
merge frames the batches in time order: at each step the earliest (ties: the
order the files were joined in, the main file first), except that a nested
actor's batch waits for the tool call that spawned it while another file could
still bring that call. So a subagent's lines come after its spawning call and
inside the run it was spawned in, in batch conversion and in the daemon alike.
Live, a file's batch that follows its call spawning an actor another file holds
(the source's :class:`~translator.model.events.Spawn`) also waits, a while, for that
actor's start: the daemon may read the actor's file only after its parent's
answer, and the actor's ``task_started`` belongs before it, where batch
conversion's time order puts it.

The merge knows events, not sources: a batch's time is its first event's ``ts``,
its actor's spawner is its events' ``parent_tool_use_id``, a tool call is a
``tool_use`` block of a message.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from streamv1.translator.model.events import Event, Message, Note, RunStart, Spawn
from streamv1.translator.translate.translation import Translation

#: The owner's checkpointed ``extra`` key: the spawning calls of the actors begun
#: in the session (a restarted merge knows them as framed).
SPAWNERS = "spawners"


@dataclass(slots=True, eq=False)
class Part:
    """A file of a session: its translation's batches not framed yet, and the time
    they are ordered by (the last time seen, for a batch that has none)."""

    translation: Translation
    rank: int
    batches: deque[list[Event]] = field(default_factory=deque)
    key: str = ""
    #: How many of the next lines this file's batches make are dropped unseen: a
    #: replay after a restart drops exactly the lines of each file that are in the
    #: output already (its checkpointed ``framed``), whatever order they were in.
    skip: int = 0

    def head_key(self) -> str:
        for event in self.batches[0]:
            ts = getattr(event, "ts", None)
            if isinstance(ts, str):
                self.key = ts
                break
        return self.key


class SessionMerge:
    """The files of one session, framed by the first one's translation."""

    def __init__(self, owner: Translation) -> None:
        self.owner = owner
        self.parts: list[Part] = []
        #: Tool calls framed so far (those of the owner's open run, and the spawners
        #: of the actors begun in the session, when the merge is made mid-run or
        #: after a restart): a nested actor's batch waits for its spawner's.
        self.seen_tools: set[str] = owner.framer.tool_calls()
        self.seen_tools.update(owner.extra.get(SPAWNERS, ()))
        # Actors the owner began before the merge was made (inline, in its own file)
        # have begun: a Spawn for one of them waits for nothing.
        begun = [t for t in owner.framer.actors_begun() if t not in owner.extra.get(SPAWNERS, ())]
        if begun:
            owner.extra.setdefault(SPAWNERS, []).extend(begun)
        owner.merge = self
        self.join(owner)

    def join(self, translation: Translation) -> Part:
        """One more file of the session: its events come here from now on (and
        those it held at a checkpoint, waiting for their spawner, first)."""
        part = Part(translation, len(self.parts), key=translation.framer.last_ts or "")
        if translation.batches:
            part.batches.extend(translation.batches)
        translation.batches = part.batches
        self.parts.append(part)
        return part

    def leave(self, translation: Translation) -> None:
        """A file that is no longer followed: what it handed in is framed first."""
        self.drain()
        for part in [p for p in self.parts if p.translation is translation]:
            self.parts.remove(part)
            translation.batches = None

    def dissolve(self) -> None:
        """The owner is no longer followed: what waits is framed, and each file
        frames its own lines from now on."""
        self.drain()
        for part in self.parts:
            part.translation.batches = None
        self.owner.merge = None
        self.parts.clear()

    @property
    def pending(self) -> bool:
        return any(p.batches for p in self.parts)

    def step(
        self, may_bring: Callable[[Part], bool], patient: Callable[[Part, str], bool] | None = None
    ) -> bool:
        """Frame the next batch; False when none waits. ``may_bring(part)``: could
        that part still hand in a tool call it has not handed in yet?
        ``patient(part, tool_use_id)`` (live only): does the part's next batch, past
        its call spawning an actor that has not begun, still wait for it?"""
        ready = [p for p in self.parts if p.batches]
        if patient is not None:
            ready = [p for p in ready if not self._awaits_actor(p, patient)]
        if not ready:
            return False
        if len(ready) > 1 or any(may_bring(p) for p in self.parts if not p.batches):
            waiting = [p for p in ready if self._waits(p, may_bring)]
            ready = [p for p in ready if p not in waiting] or ready
        part = min(ready, key=lambda p: (p.head_key(), p.rank))
        if self._waits(part, may_bring) and not self._forced:
            return False  # every batch waits for a spawner that may still come
        batch = part.batches.popleft()
        for event in batch:
            if type(event) is Message:
                for block in event.content:
                    if block.get("type") == "tool_use" and isinstance(block.get("id"), str):
                        self.seen_tools.add(block["id"])
            elif type(event) is RunStart and event.parent_tool_use_id is not None:
                spawners = self.owner.extra.setdefault(SPAWNERS, [])
                if event.parent_tool_use_id not in spawners:
                    spawners.append(event.parent_tool_use_id)  # checkpointed with it
        owner = self.owner
        owner.skip, before = part.skip, owner.framed
        owner.origin = part.translation if part.translation is not owner else None
        try:
            owner.frame(batch)
        finally:
            owner.origin = None
        part.skip, owner.skip = owner.skip, 0
        if part.translation is not owner:
            # Each file counts the lines its own batches made (its checkpoint's
            # ``framed``), though the owner framed them.
            made = owner.framed - before
            owner.framed -= made
            part.translation.framed += made
        return True

    def part_of(self, translation: Translation) -> Part | None:
        return next((p for p in self.parts if p.translation is translation), None)

    _forced = True  # batch conversion: when every batch waits, the earliest goes

    def drain(self, live: bool = False, patient: Callable[[Part, str], bool] | None = None) -> None:
        """Frame every batch handed in. ``live`` (the daemon, between rounds): a
        nested actor's batch whose spawning call has not been framed waits for it
        while the session's other files are followed (they may still write it);
        it is checkpointed with its file. Otherwise (a file's end, the run closed)
        what waits goes too, in time order. ``patient``: :meth:`step`'s."""
        self._introduce()
        self._forced = not live
        try:
            while self.step(lambda part: live, patient if live else None):
                pass
        finally:
            self._forced = True

    def _introduce(self) -> None:
        """A file whose adapter holds its actor's lines until it learns the actor's
        spawner (a subagent without a sidecar) learns it from a task_notification
        another file is about to frame (its ``task_id`` and spawning call), so its
        lines are framed in their time, before that notification. And a file whose
        adapter can decide, as the others grow, that what it holds is no run's
        (``settle``: a Claude Code 2.0.x Warmup agent file) hands in what that makes
        now, before the other files' batches past it are framed."""
        for part in self.parts:
            adapter = part.translation.adapter
            settle = getattr(adapter, "settle", None)
            if settle is not None and getattr(adapter, "holding", False):
                settled = settle()
                if settled:
                    part.translation.push(settled)
        holding = [
            p
            for p in self.parts
            if getattr(p.translation.adapter, "learn_spawner", None) is not None
            and getattr(p.translation.adapter, "holding", False)
        ]
        if not holding:
            return
        for part in self.parts:
            for batch in part.batches:
                for event in batch:
                    if not (isinstance(event, Note) and event.subtype == "task_notification"):
                        continue
                    task, task_id = event.fields.get("task"), event.fields.get("task_id")
                    tool = task.get("tool_use_id") if isinstance(task, dict) else None
                    if not (isinstance(task_id, str) and isinstance(tool, str)):
                        continue
                    for other in holding:
                        if other is not part:
                            learn = getattr(other.translation.adapter, "learn_spawner", None)
                            released = learn(task_id, tool) if learn is not None else None
                            if released:
                                other.translation.push(released)

    def _awaits_actor(self, part: Part, patient: Callable[[Part, str], bool]) -> bool:
        """Does the part's next batch wait for an actor to begin? What comes before
        the :class:`Spawn` in it (the spawning call itself) is split off and goes."""
        begun = self.owner.extra.get(SPAWNERS, ())
        batch = part.batches[0]
        for at, event in enumerate(batch):
            if (
                type(event) is Spawn
                and event.tool_use_id not in begun
                and patient(part, event.tool_use_id)
            ):
                if at == 0:
                    return True
                part.batches[0] = batch[:at]
                part.batches.insert(1, batch[at:])
                return False
        return False

    def _waits(self, part: Part, may_bring: Callable[[Part], bool]) -> bool:
        for event in part.batches[0]:
            parent = getattr(event, "parent_tool_use_id", None)
            if parent is not None and parent not in self.seen_tools:
                return any((q.batches or may_bring(q)) for q in self.parts if q is not part)
        return False
