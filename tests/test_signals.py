"""Signals reach the fleet's event loops however early they come (fleet.
_run_noting_signals): a SIGINT before the loop's own handlers exist is noted,
never turned into a cancel that the work may swallow (nats-py's connect did: a CI
run's subscribe, sent SIGINT at start under load, never ended)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from streamv1.translator.exits import Interrupted
from streamv1.translator.fleet import transfer


async def _swallows_cancels(stopped: list[int]) -> str:
    for _ in range(30):  # 3 s at most
        with contextlib.suppress(asyncio.CancelledError):  # as nats-py's connect did
            await asyncio.sleep(0.1)
        if stopped:
            raise Interrupted(stopped[0])
    return "the signal was lost"


@pytest.mark.parametrize("cancel", [False, True])
def test_a_signal_before_the_loops_handlers_is_not_lost(
    monkeypatch: pytest.MonkeyPatch, cancel: bool
) -> None:
    real = asyncio.current_task

    def current_task(loop: Any = None) -> Any:
        # Inside the loop, before its signal handlers are installed: the moment
        # asyncio.run's own SIGINT handler (cancel the main task) used to get it.
        signal.raise_signal(signal.SIGINT)
        return real(loop)

    monkeypatch.setattr(asyncio, "current_task", current_task)
    with pytest.raises(Interrupted) as caught:
        transfer._run_noting_signals(_swallows_cancels, cancel=cancel)
    assert caught.value.signum == signal.SIGINT


def test_the_handlers_before_it_are_back_after_it() -> None:
    before = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)

    async def work(stopped: list[int]) -> int:
        return 7

    assert transfer._run_noting_signals(work) == 7
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


def test_a_signal_cancels_a_wait_while_the_work_says_so() -> None:
    # subscribe's connect (nats-py retries a failed first connect for ever) is
    # cancelled by a signal; from the first fetch on, only noted.
    connecting = [True]

    async def work(stopped: list[int]) -> str:
        loop = asyncio.get_running_loop()
        loop.call_later(0.2, signal.raise_signal, signal.SIGINT)
        await asyncio.sleep(30)  # a connect that never succeeds
        return "not cancelled"

    with pytest.raises(Interrupted):
        transfer._run_noting_signals(work, cancel=lambda: connecting[0])

    async def fetching(stopped: list[int]) -> str:
        connecting[0] = False
        loop = asyncio.get_running_loop()
        loop.call_later(0.1, signal.raise_signal, signal.SIGINT)
        await asyncio.sleep(0.4)  # not cancelled: it ends at its next step
        return f"noted {[int(s) for s in stopped]}"

    assert transfer._run_noting_signals(fetching, cancel=lambda: connecting[0]) == "noted [2]"


def test_a_command_no_signal_ends_is_stopped_hard_saying_where() -> None:
    import subprocess
    import sys
    import time

    code = (
        "import time\nfrom streamv1.translator.fleet import transfer\n"
        "transfer._stop_within(0.3, 2)\n"
        "while True:\n    time.sleep(0.05)  # a wait no signal reaches\n"
    )
    began = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, timeout=30)
    assert time.monotonic() - began < 10
    assert done.returncode == 130
    assert b"did not end the command in 0.3 s; stopped hard (it was at" in done.stderr
    assert b"Traceback" not in done.stderr


def test_a_conversion_signal_whose_raise_was_swallowed_still_ends_it() -> None:
    """convert's handler raises Interrupted at once, and notes the signal: a raise
    that code below swallowed (a Ctrl-C 0.2 s into a 4,000-file convert --jobs 2 was
    lost so, and the conversion ran to its end with status 0) still ends it, at the
    next input or, at the latest, where the conversion returns."""
    from streamv1.translator.cli.shared import signals_interrupt

    # (the innermost: a library's own except clause that takes the raise)
    with (
        pytest.raises(Interrupted) as stopped,
        signals_interrupt(),
        contextlib.suppress(Interrupted),
    ):
        signal.raise_signal(signal.SIGINT)
    assert stopped.value.signum == signal.SIGINT


def test_an_interrupt_is_not_an_exception_an_except_exception_takes() -> None:
    """Raised wherever the main thread is, it must pass an ``except Exception`` (the
    translation turns an adapter's exception into system/error and goes on)."""
    caught = []
    with pytest.raises(Interrupted):
        try:
            raise Interrupted(signal.SIGTERM)
        except Exception as exc:
            caught.append(exc)
    assert caught == []


def test_ctrl_c_while_sessions_reads_ends_it_as_ctrl_c(streamv1_bin: str, tmp_path: Path) -> None:
    """``sessions`` converts through convert's handler but says no summary of its own:
    a Ctrl-C ended it with 70 and "internal error: Interrupted"; now 130, quietly."""
    from conftest import ROOT

    data = (ROOT / "testdata" / "claude-session" / "interactive_four_turns.jsonl").read_bytes()
    for k in range(2000):
        (tmp_path / f"f{k}.jsonl").write_bytes(data)
    proc = subprocess.Popen(
        [streamv1_bin, "sessions", str(tmp_path)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    time.sleep(1.0)
    if proc.poll() is not None:
        pytest.skip("sessions ended before the signal (a fast machine)")
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=30)
    assert proc.returncode == 130, err
    assert b"internal error" not in err and b"Traceback" not in err


def test_a_raise_lost_in_the_last_input_still_says_what_was_converted(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The note is looked at after the last input too, and the Interrupted raised
    there carries the totals so far (the "interrupted" summary line's figures)."""
    from conftest import ROOT

    from streamv1.translator import exits
    from streamv1.translator.cli.shared import signals_interrupt
    from streamv1.translator.translate import many_inputs

    real = many_inputs.convert_unit

    def lost_at_the_end(*args: Any, **kw: Any) -> None:
        real(*args, **kw)
        exits.NOTED.append(signal.SIGTERM)  # taken, its raise lost on the way

    monkeypatch.setattr(many_inputs, "convert_unit", lost_at_the_end)
    sample = ROOT / "testdata" / "claude-session" / "print_mode_bash.jsonl"
    with pytest.raises(Interrupted) as got, open(os.devnull, "wb") as sink, signals_interrupt():
        many_inputs.run(
            [many_inputs.Job(str(sample))],
            many_inputs.Sink(sink, "null"),
            many_inputs.Options(None),
            1,
            progress=False,
        )
    assert got.value.signum == signal.SIGTERM
    assert got.value.totals is not None and got.value.totals.files == 1
