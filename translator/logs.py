"""Logs are structlog events on stderr, one line each, same keys everywhere
(``path``, ``line``, ``session_id``, ``source``). stdout carries events only."""

from __future__ import annotations

import logging
import sys
from collections.abc import MutableMapping
from typing import Any

import structlog

_LEVELS = {
    "debug": logging.DEBUG,
    "info": logging.INFO,
    "warning": logging.WARNING,
    "error": logging.ERROR,
}


def _render(_logger: Any, method: str, event: MutableMapping[str, Any]) -> str:
    message = str(event.pop("event", ""))
    path = event.pop("path", None)
    line = event.pop("line", None)
    where = ""
    if path is not None:
        where = f"{path}:{line}: " if line is not None else f"{path}: "
    extra = " ".join(f"{k}={_value(v)}" for k, v in event.items() if k != "level")
    text = f"streamv1: {method}: {where}{message}"
    if extra:
        text += f" ({extra})"
    return text.replace("\n", "\\n").replace("\x1b", "\\x1b")


def _value(v: Any) -> str:
    s = str(v)
    return repr(s) if (" " in s or not s) else s


def configure(level: str = "info", fmt: str = "console") -> None:
    """``fmt``: "console" (one readable line) or "json" (one JSON object a line)."""
    renderer: Any = _render
    pre: list[Any] = [structlog.processors.add_log_level]
    if fmt == "json":
        pre.append(structlog.processors.TimeStamper(fmt="iso", utc=True))
        renderer = structlog.processors.JSONRenderer()
    structlog.configure(
        processors=[*pre, renderer],
        wrapper_class=structlog.make_filtering_bound_logger(_LEVELS.get(level, logging.INFO)),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def get() -> Any:
    return structlog.get_logger()
