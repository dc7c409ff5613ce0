"""Which followed files hold a file descriptor, within a budget.

A daemon follows thousands of files but may hold only so many descriptors (half
the soft ``ulimit -n``). A follower holds one while its file is being written (a
read costs no open then, and a file replaced under it can still be read to its
end); it gives it back when its file has been quiet for FD_IDLE_SECONDS, when the
budget is exceeded (the least lately read first), or when ``open`` finds none
left. A follower whose run is open but holds no descriptor is *parked*: watched
for idleness by name, so idle-close still ends its run.

Only the holders and the parked are looked at in a round, never every follower:
at 10,000 files a look at each was 10 ms of every quiet second (#23 item 4).
"""

from __future__ import annotations

import resource
from collections.abc import Mapping
from typing import Any, Protocol

#: Followers idle this long give their file descriptor back.
FD_IDLE_SECONDS = 120.0


def fd_budget() -> int:
    """How many followers may hold a descriptor at once: half the soft limit (the
    rest is for sockets, the watcher, checkpoints), never under 16."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 4096
    return max(16, soft // 2)


class Holder(Protocol):
    """What this needs of a follower (:class:`translator.tail.follower.FileFollower`)."""

    path: str
    fd: int | None
    last_data: float

    @property
    def run_open(self) -> bool: ...

    def close_fd(self) -> None: ...


class Descriptors:
    def __init__(self, budget: int, log: Any) -> None:
        self.budget = budget
        self.log = log
        #: Followers that may hold a descriptor, in the order they took it (a dict:
        #: the order runs are closed in must not depend on where objects live).
        self.holding: dict[Any, None] = {}
        self.parked: set[str] = set()  # open runs of followers holding none
        self.exhausted = 0  # times open() found the process out of descriptors

    def opened(self, follower: Holder) -> None:
        """A follower polled: it may hold a descriptor now."""
        if follower.fd is not None:
            self.holding[follower] = None

    def park(self, follower: Holder) -> None:
        """A follower with an open run and no descriptor (resumed, or given back)."""
        self.parked.add(follower.path)

    def to_watch(self, followers: Mapping[str, Any]) -> list[Any]:
        """The followers to look at for idleness this round: the holders, then the
        parked (the set of each pruned of those gone or changed)."""
        self.holding = {
            f: None for f in self.holding if f.fd is not None and followers.get(f.path) is f
        }
        parked = [followers[p] for p in sorted(self.parked) if p in followers]
        self.parked = {f.path for f in parked if f.fd is None and f.run_open}
        return list(self.holding) + [f for f in parked if f.fd is None]

    def quiet(self, follower: Holder, now: float) -> None:
        """A follower with no open run: its descriptor back once its file is quiet."""
        if follower.fd is not None and now - follower.last_data >= FD_IDLE_SECONDS:
            follower.close_fd()

    def trim(self) -> None:
        """Over budget (``--from start`` over a big archive: every file's run is open
        until idle-close): the least lately read give theirs back, down to 3/4."""
        holding = [f for f in self.holding if f.fd is not None]
        if len(holding) <= self.budget:
            return
        holding.sort(key=lambda f: f.last_data)
        for follower in holding[: len(holding) - self.budget * 3 // 4]:
            self.give_back(follower)

    def give_back(self, follower: Holder) -> None:
        """Close a follower's descriptor; an open run stays watched for idleness."""
        follower.close_fd()
        self.holding.pop(follower, None)
        if follower.run_open:
            self.parked.add(follower.path)

    def out_of_descriptors(self, followers: Mapping[str, Any], keep: Any = None) -> bool:
        """open() found no descriptor left: every follower's but ``keep``'s given
        back, the budget halved. Logged once; counted (``fd_exhausted``) every
        time. False if none was held (nothing to free: try later)."""
        self.exhausted += 1
        held = [f for f in followers.values() if f.fd is not None and f is not keep]
        if self.exhausted == 1:
            self.log.warning(
                "out of file descriptors (ulimit -n); giving idle ones back and going on "
                "(logged once; counted as fd_exhausted)",
                held=len(held),
                budget=self.budget,
            )
        for follower in held:
            self.give_back(follower)
        self.budget = max(16, min(self.budget, len(held) // 2))
        return bool(held)
