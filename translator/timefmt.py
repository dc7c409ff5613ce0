"""Timestamps in the one form stream_v1 lines carry: RFC 3339, UTC, ms, ``Z``."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

# ASCII digits only (a str pattern's \d takes any Unicode digit); spelled out, it
# also matches faster, and this runs for nearly every record.
_is_canonical = re.compile(r"\d\d\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d\d\dZ", re.ASCII).fullmatch


def format_ts(moment: datetime) -> str:
    moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


def now_ts() -> str:
    return format_ts(datetime.now(UTC))


def normalize_ts(value: Any) -> str | None:
    """A source time (ISO string, or epoch milliseconds) → canonical, else None."""
    if isinstance(value, str):
        if _is_canonical(value):
            return value
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        return format_ts(moment)
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _from_millis(value)
    return None


# Epoch-ms sources (stella) stamp every event, and events come many to a second:
# the formatted second is kept, so most calls only add the milliseconds.
_last_second: int | None = None
_last_prefix = ""


def _from_millis(value: float) -> str | None:
    global _last_second, _last_prefix
    try:
        millis = math.floor(value)  # the millisecond it falls in
        second, ms = divmod(millis, 1000)
        if second != _last_second:
            moment = datetime.fromtimestamp(second, UTC)
            _last_prefix = moment.strftime("%Y-%m-%dT%H:%M:%S.")
            _last_second = second
    except (OverflowError, OSError, ValueError):
        return None
    return f"{_last_prefix}{ms:03d}Z"


def ts_millis(ts: str) -> int:
    """Milliseconds since the epoch of a canonical timestamp."""
    return round(datetime.fromisoformat(ts).timestamp() * 1000)
