"""Source times → the one form stream_v1 lines carry (RFC 3339, UTC, ms, ``Z``)."""

from __future__ import annotations

import pytest

from streamv1.translator.timefmt import normalize_ts


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
