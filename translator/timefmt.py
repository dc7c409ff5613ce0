"""Timestamps in the one form stream_v1 lines carry: RFC 3339, UTC, ms, ``Z``."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

_CANONICAL = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z")


def format_ts(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def now_ts() -> str:
    return format_ts(datetime.now(UTC))


def normalize_ts(value: Any) -> str | None:
    """A source time (ISO string, or epoch milliseconds) → canonical, else None."""
    if isinstance(value, str):
        if _CANONICAL.fullmatch(value):
            return value
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return format_ts(moment)
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return format_ts(datetime.fromtimestamp(value / 1000, UTC))
        except (OverflowError, OSError, ValueError):
            return None
    return None


def ts_millis(ts: str) -> int:
    """Milliseconds since the epoch of a canonical timestamp."""
    return round(datetime.fromisoformat(ts).timestamp() * 1000)
