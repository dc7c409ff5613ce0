"""The usage rule: what each of Gemini CLI's views counts, as a :class:`Usage`.

The chat file's ``tokens`` (per reply), stream-json's ``stats`` and the json
document's per-model ``tokens`` count the same things under other names; here
they are read once, side by side, so the three views' usage is made alike. A
count that is not a whole number ≥ 0 is a body that does not fit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streamv1.translator.model import events as ev
from streamv1.translator.reading.sources import BodyError


def reply_usage(tokens: Any) -> ev.Usage | None:
    """A reply's ``tokens``: input − cached, cached, output + thoughts + tool."""
    if not isinstance(tokens, dict):
        return None
    counts: dict[str, int] = {}
    for key in ("input", "output", "cached", "thoughts", "tool"):
        value = tokens.get(key)
        if value is None:
            counts[key] = 0
            continue
        count = ev.whole(value)
        if count is None:
            raise BodyError(f"tokens.{key} is not a whole number ≥ 0")
        counts[key] = ev.not_negative(count, f"tokens.{key}")
    cached = min(counts["cached"], counts["input"])
    return ev.Usage(
        input_tokens=counts["input"] - cached,
        output_tokens=counts["output"] + counts["thoughts"] + counts["tool"],
        cache_read=cached,
    )


def stats_usage(stats: Any, what: str) -> ev.Usage:
    """stream-json's ``stats`` (or one of its ``models``): ``input`` (= input_tokens −
    cached), ``cached``, and output = total_tokens − input_tokens (thoughts and
    tool-use tokens are in the total, not in ``output_tokens``)."""
    keys = ("total_tokens", "input_tokens", "output_tokens", "cached", "input")
    counts = _counts(stats, what, keys)
    return _prompt_usage(
        counts["input_tokens"], counts["cached"], counts["output_tokens"], counts["total_tokens"]
    )


def doc_usage(tokens: Any, what: str) -> ev.Usage:
    """The json document's per-model ``tokens``: prompt (includes cached), cached,
    total: input = prompt − cached, output = total − prompt."""
    counts = _counts(tokens, what, ("prompt", "cached", "total", "candidates"))
    return _prompt_usage(counts["prompt"], counts["cached"], counts["candidates"], counts["total"])


def _counts(value: Any, what: str, keys: Sequence[str]) -> dict[str, int]:
    """``value``'s counts under ``keys`` (an absent one is 0), checked in that order."""
    if not isinstance(value, dict):
        raise BodyError(f"{what} is {type(value).__name__}, not an object")
    counts: dict[str, int] = {}
    for key in keys:
        count = ev.whole(value.get(key, 0))
        if count is None:
            raise BodyError(f"{what}.{key} is not a whole number ≥ 0")
        counts[key] = ev.not_negative(count, f"{what}.{key}")
    return counts


def _prompt_usage(prompt: int, cached: int, output: int, total: int) -> ev.Usage:
    """A prompt count that includes the cached tokens, and a total that has output
    tokens ``output`` leaves out (thoughts, tool use): the larger of the two."""
    cached = min(cached, prompt)
    output = max(output, total - prompt)
    return ev.Usage(input_tokens=prompt - cached, output_tokens=output, cache_read=cached)
