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


def cost_usd(model: str, provider: str | None, usage: dict[str, int],
             cache_write_1h: int = 0, web_searches: int = 0) -> tuple[float, str] | None:
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
    from genai_prices import Usage, calc_price

    def price(usage: dict[str, int], cache_write_1h: int,
              web_searches: int = 0) -> tuple[float, str]:
        read, write = usage.get("cache_read", 0), usage.get("cache_creation", 0)
        billed = Usage(input_tokens=usage.get("input_tokens", 0) + read + write,
                       cache_read_tokens=read, cache_write_tokens=write,
                       cache_write_1h_tokens=min(cache_write_1h, write),
                       output_tokens=usage.get("output_tokens", 0),
                       web_searches=web_searches)
        found = calc_price(billed, model_ref=model, provider_id=provider)
        return float(found.total_price), str(found.model.id)

    try:
        price({"input_tokens": 1}, 0)
    except LookupError:  # no price for this model (or provider) in the database
        return None
    return price
