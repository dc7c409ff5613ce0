"""``streamv1 tail`` as a process: what it watches and where it keeps its state
when not told, and its life from the state file's lock to the last checkpoint.

The daemon (:mod:`translator.tail.daemon`) does the work; this runs it: signals
(SIGTERM and SIGINT stop it, SIGHUP reopens the output after a rotation), one
daemon per state file and socket (a socket folder it cannot use is a warning, not
a failed start), the publisher (``--publish``) started before
the first checkpoint and stopped after the last.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from streamv1.translator import logs
from streamv1.translator.exits import EXIT_PIPE, Exit, Failure, stdout_to_devnull
from streamv1.translator.fleet import bus
from streamv1.translator.hashes import sha256
from streamv1.translator.output.shapes import Encoder
from streamv1.translator.reading.sources import homes
from streamv1.translator.tail import protocol
from streamv1.translator.tail.checkpoint import CheckpointError
from streamv1.translator.tail.daemon import TailDaemon
from streamv1.translator.tail.output import OutputBusy, OutputClosed, OutputFailed, OutputSink

log = logs.get()


def watched_roots(dirs: Sequence[Path]) -> list[Path]:
    """The folders given, else every source's default folders (each agent's home,
    :func:`translator.reading.sources.homes`); absolute."""
    roots = list(dirs) or [Path(p) for p in homes()]
    return [r.expanduser().resolve() for r in roots]


def default_state_path(roots: Sequence[Path], output: Path | None, defaults: bool = False) -> Path:
    """``$XDG_STATE_HOME/streamv1/tail-<hash>.json``: one checkpoint per job (the
    folders watched and the output), so two jobs never share one. ``defaults``
    (no folder named): keyed by the first default folder alone, as releases that
    followed only that one keyed it, so an upgrade goes on from its checkpoint
    instead of reading every file again (the other agents' files are new to it)."""
    state_home = Path(os.environ.get("XDG_STATE_HOME") or Path.home() / ".local" / "state")
    keyed = list(roots[:1]) if defaults else list(roots)
    key = "\n".join([*map(str, keyed), str(output.resolve()) if output else "-"])
    digest = sha256(key.encode()).hexdigest()[:12]
    return state_home / "streamv1" / f"tail-{digest}.json"


def ingest_socket_for(given: Path | None, no_ingest: bool) -> Path | None:
    """The socket to listen on: the one given, else the default one; none with
    ``--no-ingest``."""
    return None if no_ingest else (given or protocol.default_socket())


def serve(
    roots: list[Path],
    output: Path | None,
    state_path: Path,
    published: tuple[Path, bus.BusConfig] | None,
    encoder: Callable[[], Encoder],
    defaults: bool = False,
    stdout: IO[bytes] | None = None,
    **options: Any,
) -> int:
    """Run the daemon until a signal stops it; its exit status (1 when it stopped
    with output it could not vouch for; a start that fails raises Failure). ``options``
    are :class:`TailDaemon`'s; ``published``: the output file sent, and where;
    ``stdout``: where stdout's lines go instead (the view for people)."""
    waiting = [root for root in roots if not root.is_dir()]
    if defaults:
        # No folder named: each agent's home, those not there yet (an agent never
        # run here) waited for quietly.
        log.info(
            "following every agent's home",
            dirs=",".join(map(str, roots)),
            **({"not_there_yet": ",".join(map(str, waiting))} if waiting else {}),
        )
    else:
        for root in waiting:
            log.warning("not a directory (yet); watching for it on each rescan", path=str(root))
    stop = threading.Event()
    try:
        sink = OutputSink(output.resolve() if output else None, stdout)
    except OutputBusy as exc:
        raise Failure("output busy", reason=str(exc)) from None
    except OSError as exc:
        why = (
            "a file is in the way of its folder"
            if isinstance(exc, FileExistsError | NotADirectoryError)
            else exc.strerror or str(exc)
        )
        raise Failure(
            "cannot open the output",
            path=str(output),
            reason=why,
            hint="give -o a file in a folder this user may write",
        ) from None
    daemon = TailDaemon(roots, sink, state_path, encoder=encoder, **options)

    publisher = None
    if published is not None:
        from streamv1.translator.tail.publisher_process import PublisherProcess

        publisher = PublisherProcess(published[0], bus.publish_state(state_path), published[1])
        daemon.commits.on_commit = publisher.committed
        daemon.more_status = lambda: {"publish": publisher.status()}

    def on_signal(signum: int, _frame: Any) -> None:
        log.info("stopping", signal=signal.Signals(signum).name)
        stop.set()
        daemon.wake()

    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGINT, on_signal)
    # logrotate's postrotate (or systemctl reload): the output renamed away, reopen it.
    signal.signal(signal.SIGHUP, lambda *_: daemon.request_reopen())
    try:
        daemon.lock.acquire()  # one daemon per state file, before anything is touched
    except CheckpointError as exc:
        raise Failure("checkpoint unusable", reason=str(exc)) from None
    try:
        daemon.listen()
    except OSError as exc:  # another daemon holds the socket, and so this job
        raise Failure("cannot listen", path=str(daemon.ingest_socket), reason=str(exc)) from None
    started = False
    try:
        if publisher is not None:
            publisher.start()  # before the first checkpoint, so it hears of it
        daemon.start(stop)
        started = True
        log.info(
            "tailing",
            dirs=",".join(map(str, roots)),
            state=str(state_path),
            output=str(output) if output else "-",
        )
        daemon.run(stop)
    except CheckpointError as exc:
        raise Failure("checkpoint unusable", path=str(state_path), reason=str(exc)) from None
    except OutputFailed:  # said where it happened; the last checkpoint stands
        raise Exit(1) from None
    except OutputClosed:
        pass  # the status below
    finally:
        if started:
            try:
                daemon.stop()
            except Exception as exc:  # pragma: no cover - reported, never a traceback
                raise Failure(
                    "could not write the last checkpoint", path=str(state_path), reason=str(exc)
                ) from None
        if publisher is not None:
            publisher.stop()
    if daemon.closed:
        # stdout's reader went away (| head): the job is over, quietly.
        stdout_to_devnull()
        return EXIT_PIPE
    return 1 if daemon.failed else 0
