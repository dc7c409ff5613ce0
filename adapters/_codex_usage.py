"""Codex token usage in stream_v1's keys, and what a running total grew by.

Apart because both views need the one usage rule (the module docstring of
:mod:`streamv1.adapters.codex` states it) and both meet running totals: an older
rollout's ``token_count.info.total_token_usage`` and exec's ``turn.completed.usage``.
"""

from __future__ import annotations

from typing import Any

from streamv1.translator.model.events import Usage, not_negative, whole
from streamv1.translator.reading.sources import BodyError, count_field


def _count(raw: dict[str, Any], key: str, what: str, say: bool = True) -> int:
    """A token count: 0 where absent; a negative one is 0, said (events.not_negative);
    any other value that is no whole number is a body that does not fit."""
    value = raw.get(key)
    n = whole(value)
    if n is not None:
        return not_negative(n, f"{what}.{key}", say)
    return count_field(raw, key, what) or 0


def usage_of(raw: Any, what: str, say: bool = True) -> Usage:
    """Codex usage (input includes cached; output includes reasoning) in stream_v1's
    keys: input_tokens = input − cached, cache_read = cached, cache_creation =
    cache_write, output_tokens = output."""
    if not isinstance(raw, dict):
        raise BodyError(f"{what} is {type(raw).__name__}, not an object")
    total = _count(raw, "input_tokens", what, say)
    cached = _count(raw, "cached_input_tokens", what, say)
    return Usage(
        input_tokens=max(0, total - cached),
        output_tokens=_count(raw, "output_tokens", what, say),
        cache_read=cached,
        cache_creation=_count(raw, "cache_write_input_tokens", what, say),
    )


def usage_since(total: Any, before: Any, what: str) -> Usage:
    """The usage a running total (raw, as the record gives it) says since ``before``,
    its earlier value (None: there is none): what it grew by, or the whole total
    where it did not only grow."""
    usage = usage_of(total, what)
    if before is None:
        return usage
    return _minus(usage, usage_of(before, what, say=False)) or usage


def _minus(total: Usage, before: Usage) -> Usage | None:
    """What a running total grew by; None when it did not only grow (another
    thread's total, a reset)."""
    share = Usage(
        total.input_tokens - before.input_tokens,
        total.output_tokens - before.output_tokens,
        total.cache_read - before.cache_read,
        total.cache_creation - before.cache_creation,
    )
    return share if min(share.as_dict().values()) >= 0 else None
