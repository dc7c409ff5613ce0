"""Timestamps in the one form stream_v1 lines carry: RFC 3339, UTC, ms, ``Z``."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime
from typing import Any

# ASCII digits only (a str pattern's \d takes any Unicode digit); spelled out, it
# also matches faster, and this runs for nearly every record. Each field in its
# range (year 0000 and a month 13 are not times: they passed on, and broke every
# later sum of durations); a day past 28 is checked by a real parse.
_is_canonical = re.compile(
    r"(?!0000)\d\d\d\d-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])"
    r"T(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d\d\dZ",
    re.ASCII,
).fullmatch


_MONTHS_OF_30 = frozenset({"04", "06", "09", "11"})


def format_ts(moment: datetime) -> str:
    """Canonical form. Raises OverflowError when the moment in UTC falls outside
    years 1-9999 (9999-12-31T23:59:59-05:00). The year always has four digits
    (strftime's ``%Y`` writes year 999 as "999", which is no RFC 3339 time)."""
    m = moment.astimezone(UTC)
    return (
        f"{m.year:04d}-{m.month:02d}-{m.day:02d}T{m.hour:02d}:{m.minute:02d}:{m.second:02d}"
        f".{m.microsecond // 1000:03d}Z"
    )


def now_ts() -> str:
    return format_ts(datetime.now(UTC))


def normalize_ts(value: Any) -> str | None:
    """A source time (ISO string, or epoch milliseconds) → canonical, else None."""
    if isinstance(value, str):
        if _is_canonical(value):
            day = value[8:10]
            if day <= "28" or (
                value[5:7] != "02" and (day != "31" or value[5:7] not in _MONTHS_OF_30)
            ):
                return value
            # February 29-31, or the 31st of a 30-day month: a real parse decides.
        try:
            moment = datetime.fromisoformat(value)
            if moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            return format_ts(moment)
        except (ValueError, OverflowError):
            return None
    if isinstance(value, int | float) and not isinstance(value, bool):
        return _from_millis(value)
    return None


# Epoch-ms sources (stella) stamp every event, and events come many to a second:
# each second's formatted prefix is kept (a few thousand: streams merged from
# several files, or runs replayed, go back and forth between seconds), so most
# calls only add the milliseconds.
_PREFIXES: dict[int, str] = {}
_PREFIXES_KEPT = 4096


def _from_millis(value: float) -> str | None:
    try:
        if type(value) is int:
            second, ms = divmod(value, 1000)
        else:
            second, ms = divmod(math.floor(value), 1000)  # the millisecond it falls in
        prefix = _PREFIXES.get(second)
        if prefix is None:
            prefix = format_ts(datetime.fromtimestamp(second, UTC))[:-4]
            if len(_PREFIXES) >= _PREFIXES_KEPT:
                _PREFIXES.clear()
            _PREFIXES[second] = prefix
    except (OverflowError, OSError, ValueError):
        return None
    return f"{prefix}{ms:03d}Z"


def ts_millis(ts: str) -> int | None:
    """Milliseconds since the epoch of a canonical timestamp (None if it is not one)."""
    try:
        return round(datetime.fromisoformat(ts).timestamp() * 1000)
    except (ValueError, OverflowError, OSError):
        return None
