"""Logs on stderr, one line each, same keys everywhere (``path``, ``line``,
``session_id``, ``source``). stdout carries events only.

Every event is a fixed string, the same wherever it is logged; what varies goes in
fields (structlog's advice, and ruff's G rules keep it so). ``reason`` is the field
for why it happened (an OSError's text, an exception's message): the console line
shows it after the event, ``event: reason``; ``hint`` (what to do about it) comes
first in the parentheses, without its key.

Two formats. ``json`` (the daemon's default off a terminal, read by machines) is
structlog's: level, ISO timestamp, the event and its keys as one JSON object.
``console`` is one readable line, ``streamv1: error: path:line: event: reason (hint; k=v)``,
written directly: importing structlog costs ~40 ms (asyncio comes with it), as
much as converting a few megabytes, and a conversion that logs one bad input
should not pay it. structlog is imported on the first JSON event, not at start-up.
"""

from __future__ import annotations

import sys
from collections.abc import MutableMapping
from typing import Any

# The stdlib logging module's numbers, without importing it for four constants.
DEBUG, INFO, WARNING, ERROR = 10, 20, 30, 40
_LEVELS = {"debug": DEBUG, "info": INFO, "warning": WARNING, "error": ERROR}

_level: int = INFO
_fmt: str = "console"
_real: Any = None
#: The last error logged (its time, event and path): what ``status`` shows a person.
last_error: dict[str, Any] | None = None
#: Credentials this process was given (a bus password, token, seed): masked in
#: every line by their value, whatever they look like (:func:`secret`).
_secrets: dict[str, Any] = {}
#: Shorter than this, a credential is masked only where it stands alone (not as
#: a letter of a word): a one-letter token must not erase that letter everywhere.
_WHOLE = 6


def _render(method: str, event: MutableMapping[str, Any]) -> str:
    """The console line."""
    message = str(event.pop("event", ""))
    reason = event.pop("reason", None)
    if reason is not None:
        message = f"{message}: {reason}"
    path = event.pop("path", None)
    line = event.pop("line", None)
    where = ""
    if path is not None:
        where = f"{path}:{line}: " if line is not None else f"{path}: "
    hint = event.pop("hint", None)
    extra = " ".join(f"{k}={_value(v)}" for k, v in event.items() if k != "level")
    if hint is not None:
        extra = f"{hint}; {extra}" if extra else str(hint)
    text = f"streamv1: {method}: {where}{message}"
    if extra:
        text += f" ({extra})"
    return text.replace("\n", "\\n").replace("\x1b", "\\x1b")


def _value(v: Any) -> str:
    s = str(v)
    return repr(s) if (" " in s or not s) else s


def configure(level: str = "info", fmt: str = "console") -> None:
    """``fmt``: "console" (one readable line) or "json" (one JSON object a line)."""
    global _real, _level, _fmt
    _level = _LEVELS.get(level, INFO)
    _fmt = fmt
    _real = None
    if fmt == "json":
        # Now, not at the first event: that may come when the process is out of
        # file descriptors (the daemon's own warning about it), and an import
        # needs one.
        _structlog()


def settings() -> tuple[str, str]:
    """(level, format) as :func:`configure` took them: what a helper process of
    ours is configured with, so its lines read as the rest."""
    level = next((name for name, n in _LEVELS.items() if n == _level), "info")
    return level, _fmt


def _structlog() -> Any:
    global _real
    if _real is None:
        import structlog

        structlog.configure(
            processors=[
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                structlog.processors.JSONRenderer(),
            ],
            wrapper_class=structlog.make_filtering_bound_logger(_level),
            logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
            cache_logger_on_first_use=False,
        )
        _real = structlog.get_logger()
    return _real


def secret(*values: str | None) -> None:
    """Mask these values in every line logged from now on. The look-based scrubber
    below knows API keys by their shape; a bus password or a three-letter token has
    none, so the values themselves are the key (#39)."""
    import re

    for value in values:
        if not value or value in _secrets:
            continue
        if len(value) >= _WHOLE:
            _secrets[value] = None
        else:
            _secrets[value] = re.compile(
                r"(?<![A-Za-z0-9])" + re.escape(value) + r"(?![A-Za-z0-9])"
            )


def conceal(text: str) -> str:
    """``text`` with every credential given to :func:`secret` as ``***``."""
    for value, bounded in _secrets.items():
        if value in text:
            text = text.replace(value, "***") if bounded is None else bounded.sub("***", text)
    return text


def _concealed(value: Any) -> Any:
    if isinstance(value, str):
        return conceal(value)
    if isinstance(value, dict):
        return {k: _concealed(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_concealed(v) for v in value]
    if isinstance(value, (int, float, bool)) or value is None:
        return value
    text = str(value)  # an exception, a path: as it will be shown
    shown = conceal(text)
    return value if shown == text else shown


def _masked(event: str, kw: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The event with secrets masked, as every output line is: logs reach the
    journal, and an event may quote a record's value or a relayed command line.
    Always on (``--no-redact`` is about the output, not the logs)."""
    import orjson

    from streamv1.translator.output.scrub import scrubber

    if _secrets:
        event, kw = conceal(event), {k: _concealed(v) for k, v in kw.items()}
    try:
        data = orjson.dumps({"event": event, **kw}, default=str) + b"\n"
    except TypeError:
        # A file name that is no UTF-8 (os.fsdecode's surrogates): shown with its
        # bytes escaped (bad\xff.jsonl), never a traceback (#23 item 10).
        event, kw = printable(event), {k: printable(v) for k, v in kw.items()}
        data = orjson.dumps({"event": event, **kw}, default=str) + b"\n"
    clean = scrubber(True)(data)
    if clean == data:
        return event, kw
    fields = orjson.loads(clean)
    return str(fields.pop("event", event)), fields


def printable(value: Any) -> Any:
    """A string with lone surrogates (a path's undecodable bytes) as text a JSON
    encoder takes: those bytes as ``\\xNN``; anything else as it is."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            raw = value.encode("utf-8", "surrogateescape")
            return raw.decode("utf-8", "backslashreplace")
    return value


class Logger:
    """Filters by level first; a written event is rendered (console) or handed to
    structlog (json). An event is a string; its keys are the event's fields."""

    def _emit(self, level: int, method: str, event: str, **kw: Any) -> None:
        if level < _level:
            return
        event, kw = _masked(event, kw)
        if level >= ERROR:
            global last_error
            import time

            last_error = {
                "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "event": event,
                "path": kw.get("path"),
            }
        if _fmt == "console":
            sys.stderr.write(_render(method, {"event": event, **kw}) + "\n")
            sys.stderr.flush()
        else:
            getattr(_structlog(), method)(event, **kw)

    def debug(self, event: str, **kw: Any) -> None:
        self._emit(DEBUG, "debug", event, **kw)

    def info(self, event: str, **kw: Any) -> None:
        self._emit(INFO, "info", event, **kw)

    def warning(self, event: str, **kw: Any) -> None:
        self._emit(WARNING, "warning", event, **kw)

    def error(self, event: str, **kw: Any) -> None:
        self._emit(ERROR, "error", event, **kw)


_LOGGER = Logger()


def get() -> Logger:
    """The one logger (its type lets the type checker check every log call)."""
    return _LOGGER
