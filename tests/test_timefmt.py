"""Source times → the one form stream_v1 lines carry (RFC 3339, UTC, ms, ``Z``)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamv1.translator.timefmt import format_ts, normalize_ts


@pytest.mark.parametrize(
    ("given", "expected"),
    [
        ("2025-10-08T12:34:56.789Z", "2025-10-08T12:34:56.789Z"),  # canonical: as it is
        ("2025-10-08T12:34:56.789+00:00", "2025-10-08T12:34:56.789Z"),
        ("2025-10-08T14:34:56.789123+02:00", "2025-10-08T12:34:56.789Z"),
        ("2025-10-08T12:34:56", "2025-10-08T12:34:56.000Z"),  # no zone: UTC
        (1759926896789, "2025-10-08T12:34:56.789Z"),  # epoch milliseconds
        (1759926896789.9, "2025-10-08T12:34:56.789Z"),
        # Digits of other scripts have the canonical shape but are no time.
        ("\u0662025-10-08T12:34:56.789Z", None),
        ("2025-10-08T12:34:56.78\u0669Z", None),
        ("yesterday", None),
        (True, None),
        (None, None),
    ],
)
def test_normalize_ts(given: object, expected: str | None) -> None:
    assert normalize_ts(given) == expected


def _reference_millis(value: float) -> str | None:
    """Epoch milliseconds formatted the slow, obvious way (no cached seconds)."""
    import math
    from datetime import UTC, datetime, timedelta

    try:
        millis = math.floor(value)
        moment = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=millis)
        return format_ts(moment)
    except (OverflowError, ValueError):
        return None


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.integers(min_value=-62135596800000, max_value=253402300799999),
            st.integers(min_value=1796036400000, max_value=1796036500000),  # seconds met again
            st.floats(min_value=-1e14, max_value=2.5e14, allow_nan=False),
        ),
        min_size=1,
        max_size=30,
    )
)
def test_epoch_millis_are_the_reference_in_any_order(values: list[float]) -> None:
    # Each second's prefix is cached: the cache must never give another second's.
    for value in values:
        assert normalize_ts(value) == _reference_millis(value), value


def test_epoch_millis_past_the_calendar_are_no_time() -> None:
    assert normalize_ts(253402300800000) is None  # year 10000
    assert normalize_ts(10**30) is None
    assert normalize_ts(float("inf")) is None
