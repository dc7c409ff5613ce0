"""Exactly once, framed once (issue #39, class 6): a pause longer than
``--idle-close``, a session file replaced by rename, one session in two files.
In-process daemons on the tests' clock (tests/tailing.py): no sleeps."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from helpers import convert_file, convert_session_files
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


# -- one session in two places ----------------------------------------------------------------

NAME = "90b90b6f-cd35-43f6-923d-d9255e2f4ab2.jsonl"  # FOUR's session, named as Claude names it


def _two_places(tmp: Path) -> tuple[Path, Path]:
    a = tmp / "projects" / "a" / NAME
    b = tmp / "projects" / "b" / NAME
    a.parent.mkdir(parents=True)
    b.parent.mkdir(parents=True)
    return a, b


def _append(path: Path, data: bytes) -> None:
    with path.open("ab") as fh:
        fh.write(data)


def _convert_places(tmp: Path) -> bytes:
    return convert_session_files(sorted((tmp / "projects").rglob("*.jsonl")))[0]


@pytest.mark.parametrize("how", ["hard link", "copy, the original goes on", "copy goes on"])
def test_one_session_in_two_places_is_framed_once_live(tmp_path: Path, how: str) -> None:
    """A hard link, or a project folder copied while the session runs: the same
    session id in two files was framed from both, its runs twice and interleaved.
    Now the place followed first leads, and a copy that goes on takes over."""
    src = _lines(FOUR)
    a, b = _two_places(tmp_path)
    third = len(src) // 3
    a.write_bytes(b"".join(src[:third]))
    clock = Clock()
    d = daemon(tmp_path, clock)
    d.tick(changed={str(a)})
    if how == "hard link":
        os.link(a, b)
    else:
        shutil.copy(a, b)
    written = b if how == "copy goes on" else a
    for k in range(third, len(src), 4):
        _append(written, b"".join(src[k : k + 4]))
        d.tick(changed={str(a), str(b)})
    d.tick(rescan=True)
    clock.t += 700
    d.tick()
    d.stop()
    out = tail_output(tmp_path / "out.jsonl")
    assert out == convert_file(written, "claude-session")[0]
    assert out == _convert_places(tmp_path)  # convert keeps the same rule


@pytest.mark.parametrize("longer", ["a", "b"])
def test_at_start_the_place_holding_more_leads(tmp_path: Path, longer: str) -> None:
    src = _lines(FOUR)
    a, b = _two_places(tmp_path)
    full, short = (a, b) if longer == "a" else (b, a)
    full.write_bytes(b"".join(src))
    short.write_bytes(b"".join(src[: len(src) // 2]))
    clock = Clock()
    d = daemon(tmp_path, clock)
    d.tick(rescan=True)
    clock.t += 700
    d.tick()
    d.stop()
    out = tail_output(tmp_path / "out.jsonl")
    assert out == convert_file(full, "claude-session")[0] == _convert_places(tmp_path)


def test_one_session_name_in_two_places_whose_files_differ_is_framed_from_both(
    tmp_path: Path,
) -> None:
    src = _lines(FOUR)
    a, b = _two_places(tmp_path)
    a.write_bytes(b"".join(src))
    b.write_bytes(b"".join(src).replace(b'"text":"', b'"text":"X', 1))
    clock = Clock()
    d = daemon(tmp_path, clock)
    d.tick(rescan=True)
    clock.t += 700
    d.tick()
    d.stop()
    out = tail_output(tmp_path / "out.jsonl")
    assert out.count(b'"subtype":"init"') == 8  # two sessions, as convert has them
    assert sorted(out.splitlines()) == sorted(_convert_places(tmp_path).splitlines())


def test_a_copied_folder_of_a_session_with_subagents_is_framed_once(tmp_path: Path) -> None:
    """Its subagents' files are left out with their place: framed from the leading
    place only, nested in its runs, as convert frames them."""
    from tailing import LAYOUT, SID

    for place in ("a", "b"):
        shutil.copytree(LAYOUT, tmp_path / "projects" / place, ignore=_no_expected)
    clock = Clock()
    d = daemon(tmp_path, clock)
    d.tick(rescan=True)
    clock.t += 700
    d.tick()
    d.stop()
    out = tail_output(tmp_path / "out.jsonl")
    lead = tmp_path / "projects" / "a"
    alone = convert_session_files([lead / f"{SID}.jsonl", *sorted((lead / SID).rglob("*.jsonl"))])[
        0
    ]
    assert out == alone == _convert_places(tmp_path)
    assert b'"parent_tool_use_id":"toolu_' in out


def _no_expected(_: str, names: list[str]) -> list[str]:
    return [n for n in names if n.endswith(".expected.jsonl")]
