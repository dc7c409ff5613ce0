"""Exactly once, framed once (issue #39, class 6): a pause longer than
``--idle-close``, a session file replaced by rename, one session in two files.
In-process daemons on the tests' clock (tests/tailing.py): no sleeps."""

from __future__ import annotations

from pathlib import Path

from helpers import convert_file
from tailing import SESSION, Clock, daemon, tail_output

FOUR = SESSION / "interactive_four_turns.jsonl"


def _lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def test_a_pause_longer_than_idle_close_reads_what_is_on_disk_before_closing(
    tmp_path: Path,
) -> None:
    """Ctrl-Z or a frozen VM: the clock jumps past ``idle_close`` and the bytes
    written meanwhile are on disk, but no event said so yet (the sweep's share of
    the files is small). The run was closed as idle first (an interrupted result),
    then went on as a second run; now the file is looked at before it is closed."""
    src = _lines(FOUR)
    target = tmp_path / "projects" / "p" / "s.jsonl"
    target.parent.mkdir(parents=True)
    cut = len(src) // 3
    target.write_bytes(b"".join(src[:cut]))
    clock = Clock()
    d = daemon(tmp_path, clock, idle_close=10, rescan_every=1000)
    d.tick(changed={str(target)})
    assert d.followers[str(target)].run_open  # a turn under way
    with target.open("ab") as fh:
        fh.write(b"".join(src[cut:]))
    clock.t += 60  # the pause
    d.tick()  # the first round after it: no event read yet
    d.tick(changed={str(target)})
    clock.t += 60
    d.tick()
    d.stop()
    assert tail_output(tmp_path / "out.jsonl") == convert_file(target, "claude-session")[0]


def _rename_over(target: Path, data: bytes) -> None:
    """What ``sed -i``, an editor's save, rsync and Syncthing do: a new file (a new
    inode) written beside, renamed over the old name."""
    tmp = target.with_name(target.name + ".tmp")
    tmp.write_bytes(data)
    before = target.stat().st_ino
    tmp.replace(target)
    assert target.stat().st_ino != before


def test_a_file_written_again_whole_by_a_rename_is_followed_on_live_and_across_a_restart(
    tmp_path: Path,
) -> None:
    """The same leading bytes plus more, under a new inode: it was read again from
    its start, every turn twice (41 lines for convert's 22). Now it is followed on
    from where the old file ended, live and when it happened while the daemon was
    down (the checkpoint's digests decide)."""
    src = _lines(FOUR)
    target = tmp_path / "projects" / "p" / "s.jsonl"
    target.parent.mkdir(parents=True)
    a, b = len(src) // 3, 2 * len(src) // 3
    target.write_bytes(b"".join(src[:a]) + src[a][:50])  # and half a line
    clock = Clock()
    d = daemon(tmp_path, clock)
    d.tick(changed={str(target)})
    _rename_over(target, b"".join(src[:b]))  # live
    d.tick(changed={str(target)})
    d.stop()
    _rename_over(target, b"".join(src))  # while the daemon is down
    d = daemon(tmp_path, clock)
    d.tick(changed={str(target)})
    d.tick(rescan=True)
    clock.t += 700  # idle-close ends the last run, as convert's end of file does
    d.tick()
    d.stop()
    assert tail_output(tmp_path / "out.jsonl") == convert_file(target, "claude-session")[0]


def test_a_file_replaced_by_other_bytes_is_read_from_its_start(tmp_path: Path) -> None:
    """Only a file that begins with the bytes read goes on: another one (the same
    head, a changed middle) is a new file, read whole, live and across a restart."""
    src = _lines(FOUR)
    target = tmp_path / "projects" / "p" / "s.jsonl"
    target.parent.mkdir(parents=True)
    half = len(src) // 2
    target.write_bytes(b"".join(src[:half]))
    clock = Clock()
    d = daemon(tmp_path, clock)
    d.tick(changed={str(target)})
    d.stop()
    changed = b"".join(src[:half]).replace(b'"text":"', b'"text":"X', 1)
    assert changed != b"".join(src[:half]) and changed[:1024] == b"".join(src[:1024])[:1024]
    _rename_over(target, changed + b"".join(src[half:]))
    d = daemon(tmp_path, clock)
    d.tick(changed={str(target)})
    clock.t += 700
    d.tick()
    out = tail_output(tmp_path / "out.jsonl")
    whole = convert_file(target, "claude-session")[0]
    assert out.endswith(whole)  # the new file, read from its start
    live = b"".join(src[:half]).replace(b'"text":"', b'"text":"Y', 1)
    _rename_over(target, live)
    d.tick(changed={str(target)})
    clock.t += 700
    d.tick()
    d.stop()
    assert tail_output(tmp_path / "out.jsonl").endswith(convert_file(target, "claude-session")[0])
