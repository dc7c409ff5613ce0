"""Which folders the kernel really watches for this process (inotify).

When inotify's watches run out (``fs.inotify.max_user_watches``), the file
watcher goes on with the folders it got and says nothing of the others: their
appends wait for the next rescan (#23 item 5: 21 of 50 folders unwatched, with
nothing logged). The kernel lists every watch of an inotify descriptor in
``/proc/self/fdinfo``, so what is watched is read there, whoever made the
watches, and compared with the folders that should be.
"""

from __future__ import annotations

import os
import re

_WATCH = re.compile(r"^inotify wd:\S+ ino:([0-9a-f]+) sdev:([0-9a-f]+)", re.M)


def watched() -> set[tuple[int, int]] | None:
    """(device, inode) of every folder this process's inotify descriptors watch;
    None where there is no inotify descriptor to read (not Linux, no watcher)."""
    found: set[tuple[int, int]] = set()
    any_inotify = False
    try:
        fds = os.listdir("/proc/self/fd")
    except OSError:
        return None
    for fd in fds:
        try:
            if os.readlink(f"/proc/self/fd/{fd}") != "anon_inode:inotify":
                continue
            with open(f"/proc/self/fdinfo/{fd}") as fh:
                info = fh.read()
        except OSError:
            continue
        any_inotify = True
        for ino, sdev in _WATCH.findall(info):
            found.add((_kernel_dev(int(sdev, 16)), int(ino, 16)))
    return found if any_inotify else None


def _kernel_dev(sdev: int) -> int:
    """fdinfo's ``sdev`` is the kernel's dev_t (major << 20 | minor); stat's
    st_dev is the user-space encoding: the same device, told as os.makedev does."""
    return os.makedev(sdev >> 20, sdev & 0xFFFFF)


def max_watches() -> int | None:
    try:
        with open("/proc/sys/fs/inotify/max_user_watches") as fh:
            return int(fh.read().strip())
    except (OSError, ValueError):
        return None
