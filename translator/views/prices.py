"""What tokens cost, from a maintained price database (genai-prices), where the
source states no cost of its own.

Why genai-prices: it is pydantic's maintained list of model prices, taken from the
providers' pages and checked against them in its own CI. It has Anthropic's 5
minute and 1 hour cache-write prices and context tiers, it ships a snapshot (no
network at run time), and it is a plain-Python wheel. A table typed here would be
out of date by the next model. It is imported on the first cost computed: it
brings pydantic (~0.2 s), which no conversion should pay.

stream_v1's usage keys map onto it like this. Its ``input_tokens`` is every input
token, cached ones included, so it gets ``input_tokens + cache_read +
cache_creation``. ``cache_read`` is read from the cache, ``cache_creation`` is
written to it, and of that the 1 hour writes where the source says which (Claude
Code's ``cache_creation.ephemeral_1h_input_tokens``). A server-side web search is
priced per request (Claude Code's ``server_tool_use.web_search_requests``).
"""

from __future__ import annotations

from functools import cache
from typing import Any

#: stream_v1's provider names → genai-prices' provider ids (the same, where absent).
_PROVIDERS = {"google": "google", "anthropic": "anthropic", "openai": "openai"}


def version() -> str:
    import genai_prices

    return str(getattr(genai_prices, "__version__", "?"))


def cost_usd(
    model: str,
    provider: str | None,
    usage: dict[str, int],
    cache_write_1h: int = 0,
    web_searches: int = 0,
) -> tuple[float, str] | None:
    """The list price in USD of ``usage`` (stream_v1's four keys) on ``model``, and
    the database's model it was priced as (its patterns match dated and renamed
    variants: say which one); None when the database has no price for it."""
    calc = _calculator(model, _PROVIDERS.get(provider or "", provider))
    if calc is None:
        return None
    found: tuple[float, str] = calc(usage, cache_write_1h, web_searches)
    return found


@cache
def _calculator(model: str, provider: str | None) -> Any:
    """The model's price per token of each kind, at its base tier: stream_v1 carries
    a run's tokens, not each API call's context size, and a tier (Anthropic's
    long-context price past 200K input tokens) is a call's, never a sum's. Priced
    whole, a long session's total input would cross it and be billed at the
    long-context rate throughout (public corpus: 1.85x the list price). The unit
    prices are read off the database with small probes, so they are its prices."""
    from decimal import Decimal

    from genai_prices import Usage, calc_price

    def probe(**kw: int) -> tuple[Decimal, str]:
        found = calc_price(Usage(**kw), model_ref=model, provider_id=provider)
        return Decimal(found.total_price), str(found.model.id)

    n = 1000
    try:
        plain, name = probe(input_tokens=n)
    except LookupError:  # no price for this model (or provider) in the database
        return None

    def per(default: Decimal, count: int, **kw: int) -> Decimal:
        """One kind's unit price; where the database prices it not at all (a model
        without cache prices), the fallback it would bill it at."""
        try:
            return probe(**kw)[0] / count
        except (LookupError, ValueError, TypeError):
            return default

    unit = {"input": plain / n}
    unit["read"] = per(unit["input"], n, input_tokens=n, cache_read_tokens=n)
    unit["write"] = per(unit["input"], n, input_tokens=n, cache_write_tokens=n)
    unit["write_1h"] = per(
        unit["write"], n, input_tokens=n, cache_write_tokens=n, cache_write_1h_tokens=n
    )
    unit["output"] = per(Decimal(0), n, output_tokens=n)
    unit["search"] = per(Decimal(0), 1, web_searches=1)

    def price(
        usage: dict[str, int], cache_write_1h: int, web_searches: int = 0
    ) -> tuple[float, str]:
        write = usage.get("cache_creation", 0)
        hour = min(cache_write_1h, write)
        total = (
            unit["input"] * usage.get("input_tokens", 0)
            + unit["read"] * usage.get("cache_read", 0)
            + unit["write"] * (write - hour)
            + unit["write_1h"] * hour
            + unit["output"] * usage.get("output_tokens", 0)
            + unit["search"] * web_searches
        )
        return float(total), name

    return price
