"""``streamv1 service``: the systemd user unit for ``streamv1 tail``."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from streamv1.translator import logs
from streamv1.translator.exits import Failure

log = logs.get()


@click.command()
@click.argument("action", type=click.Choice(["install", "print"]))
@click.option("--force", is_flag=True, help="Replace a unit file that is there already.")
def service(action: str, force: bool) -> None:
    """The systemd user unit for ``streamv1 tail``, with the absolute path of this
    streamv1: ``print`` shows it, ``install`` writes it to
    ~/.config/systemd/user/streamv1.service."""
    import shutil
    from importlib import resources

    exe = shutil.which("streamv1", path=os.path.dirname(sys.argv[0]) or None)
    exe = os.path.realpath(exe or sys.argv[0])
    shipped = resources.files("streamv1.translator").joinpath("systemd/streamv1.service")
    template = shipped.read_text()
    unit = for_systemd(template.replace("@STREAMV1@", exe), _systemd_version())
    if action == "print":
        sys.stdout.write(unit)
        return
    config = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    target = Path(config) / "systemd" / "user" / "streamv1.service"
    if target.exists() and not force and _read(target) != unit:
        raise Failure("a different unit is there already; --force replaces it", path=str(target))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(unit)
    except OSError as exc:
        raise Failure(
            "cannot write the unit", path=str(target), reason=exc.strerror or str(exc)
        ) from None
    log.info("unit written", path=str(target), exec=exe)
    sys.stderr.write(
        "next:\n  systemctl --user daemon-reload && systemctl --user enable --now streamv1\n"
        '  loginctl enable-linger "$USER"   # keep it running while you are logged out\n'
    )


#: Unit keys newer than some systemd still in use (Debian 12 has 252): the version
#: that knows each. An older systemd warns of each at every load and ignores it.
_NEWER_KEYS = {"RestartSteps": 254, "RestartMaxDelaySec": 254}


def for_systemd(unit: str, version: int | None) -> str:
    """The unit as this machine's systemd reads it: a key it does not know is left
    as a comment saying why (the restart wait stays the flat RestartSec there)."""
    if version is None:
        return unit
    out = []
    for line in unit.splitlines(keepends=True):
        key = line.split("=", 1)[0].strip()
        needs = _NEWER_KEYS.get(key)
        if needs is not None and version < needs:
            line = f"# (systemd {version} has no {key}: needs {needs}) {line}"
        out.append(line)
    return "".join(out)


def _systemd_version() -> int | None:
    """The version of the systemd here (``systemctl --version``), None if none."""
    import subprocess

    try:
        proc = subprocess.run(
            ["systemctl", "--version"], capture_output=True, text=True, timeout=5, check=False
        )
    except (OSError, subprocess.SubprocessError):
        return None
    words = proc.stdout.split()
    return (
        int(words[1]) if len(words) > 1 and words[0] == "systemd" and words[1].isdigit() else None
    )


def _read(target: Path) -> str | None:
    """The unit there, if it is a regular file of a unit's size (a FIFO there must
    not hang ``service install``): None otherwise, as a different unit."""
    from streamv1.translator.reading.files import read_regular

    try:
        return read_regular(target, 1 << 20, follow=True).decode("utf-8", "replace")
    except OSError:
        return None
