"""One row per session, read off stream_v1 lines: what ``streamv1 sessions`` shows.

It reads the stream, not the sources: any input ``convert`` reads (and a stream_v1
file, such as the tail's output) is converted first and summed here, so every
source's sessions are counted by one rule. A session's tokens are every actor's
API messages, once each: the sum of its results' ``model_usage`` (a result
without one: its ``usage``), which is what the framer counts per message id. Its
cost is the sum of what its results state (``total_cost_usd``: print mode's own
figure), marked ``stated``. A run that states none is priced from its tokens
(translator.views.prices: the list prices of a maintained database, Claude Code's 1 hour
cache writes at their own rate), marked ``computed``. The two are also given
apart, so the CLI's own figure stays told from ours.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from streamv1.translator.model.catalog import stated_cost
from streamv1.translator.timefmt import ts_millis
from streamv1.translator.views import prices

USAGE_KEYS = ("input_tokens", "output_tokens", "cache_read", "cache_creation")


def tokens(usage: Any) -> dict[str, int]:
    """A line's usage object as counts: a key that is no whole number ≥ 0 (a line
    not made by this release: a negative count made a negative session cost) is
    left out, as absent."""
    if not isinstance(usage, dict):
        return {}
    return {k: v for k in USAGE_KEYS if type(v := usage.get(k)) is int and v >= 0}


@dataclass(slots=True)
class Row:
    session_id: str
    agent: str | None = None
    project: str | None = None
    started: str | None = None
    ended: str | None = None
    runs: int = 0
    turns: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    errors: int = 0
    usage: dict[str, int] = field(default_factory=lambda: dict.fromkeys(USAGE_KEYS, 0))
    stated_cost: float = 0.0
    costed_runs: int = 0
    computed_cost: float = 0.0
    priced_runs: int = 0
    priced_as: set[str] = field(default_factory=set)
    unpriced: set[str] = field(default_factory=set)
    provider: str | None = None
    # The open run's 1 hour cache writes by model (None: a line that names none),
    # each API message once: priced at their own rate when the run's result comes.
    run_1h: dict[str | None, int] = field(default_factory=dict)
    run_searches: dict[str | None, int] = field(default_factory=dict)  # web searches
    run_messages: set[str] = field(default_factory=set)
    last_stated: float | None = None  # the last total_cost_usd (a running total)
    # Every run's tokens at list prices (None once a model has none): tells whether
    # the stated figures already cover the runs that state none.
    priced_all: float | None = 0.0

    def as_json(self) -> dict[str, Any]:
        first, last = ts_millis(self.started or ""), ts_millis(self.ended or "")
        cost, source = self._cost()
        return {
            "session_id": self.session_id,
            "agent": self.agent,
            "project": self.project,
            "started": self.started,
            "ended": self.ended,
            "duration_ms": last - first if first is not None and last is not None else None,
            "runs": self.runs,
            "turns": self.turns,
            "tool_calls": self.tool_calls,
            "tool_errors": self.tool_errors,
            "errors": self.errors,
            "usage": dict(self.usage),
            "cost_usd": cost,
            # Where it comes from: "stated" (the source's own figure), "computed"
            # (list prices of its tokens), both, and ", partly" when some runs have
            # neither (a model the price database does not know: unpriced_models).
            "cost_source": source,
            # Both figures, apart: what the source states (its running totals read
            # as the runs' shares), and what all the session's tokens cost at list
            # prices (None where a model has no price).
            "cost_stated_usd": round(self.stated_cost, 10) if self.costed_runs else None,
            "cost_computed_usd": (
                round(self.priced_all, 10) if self.priced_all is not None and self.runs else None
            ),
            "priced_as": sorted(self.priced_as),
            "unpriced_models": sorted(self.unpriced),
        }

    def _cost(self) -> tuple[float | None, str | None]:
        """The cost that stands, and where it comes from: what the source states
        stands; runs that state none are priced, unless the stated figure already
        is what every run's tokens cost (a running total the last runs did not
        repeat, as a session file's cost-state record)."""
        unstated = self.runs - self.costed_runs
        if not self.costed_runs:
            if not self.priced_runs:
                return None, None
            partly = ", partly" if self.priced_runs < self.runs else ""
            return round(self.computed_cost, 10), "computed" + partly
        if not unstated or (
            self.priced_all and abs(self.stated_cost - self.priced_all) <= 0.005 * self.priced_all
        ):
            return round(self.stated_cost, 10), "stated"
        partly = ", partly" if self.priced_runs < unstated else ""
        return (
            round(self.stated_cost + self.computed_cost, 10),
            ("stated+computed" if self.priced_runs else "stated") + partly,
        )


class Ledger:
    """Rows by session id, in the order sessions first appear."""

    def __init__(self) -> None:
        self.rows: dict[str, Row] = {}

    def feed(self, line: dict[str, Any]) -> None:
        sid = line.get("session_id")
        if not isinstance(sid, str):
            return
        row = self.rows.get(sid)
        if row is None:
            row = self.rows[sid] = Row(sid)
        ts = line.get("ts")
        if isinstance(ts, str):
            if row.started is None or ts < row.started:
                row.started = ts
            if row.ended is None or ts > row.ended:
                row.ended = ts
        kind = line.get("type")
        if kind == "assistant":
            self._cache_1h(row, line)
        if kind == "assistant" or kind == "user":
            for block in (line.get("message") or {}).get("content") or ():
                if not isinstance(block, dict):
                    continue
                if block.get("type") == "tool_use":
                    row.tool_calls += 1
                elif block.get("type") == "tool_result" and block.get("is_error") is True:
                    row.tool_errors += 1
        elif kind == "system" and line.get("subtype") == "init":
            agent = line.get("agent")
            if row.agent is None and isinstance(agent, dict):
                row.agent = agent.get("name")
            if isinstance(agent, dict) and isinstance(agent.get("provider"), str):
                row.provider = agent["provider"]
            if line.get("parent_tool_use_id") is None:
                row.run_1h, row.run_searches, row.run_messages = {}, {}, set()
            if row.project is None and isinstance(line.get("cwd"), str):
                row.project = line["cwd"]
        elif kind == "result":
            self._result(row, line)

    @staticmethod
    def _result(row: Row, line: dict[str, Any]) -> None:
        row.runs += 1
        if isinstance(line.get("num_turns"), int):
            row.turns += line["num_turns"]
        if line.get("is_error") is True:
            row.errors += 1
        per_model = line.get("model_usage")
        usages = (
            list(per_model.values())
            if isinstance(per_model, dict) and per_model
            else [line.get("usage")]
        )
        for usage in usages:
            for key, count in tokens(usage).items():
                row.usage[key] += count
        cost = line.get("total_cost_usd")
        models = (
            {m: tokens(u) if isinstance(u, dict) else u for m, u in per_model.items()}
            if isinstance(per_model, dict)
            else {}
        )
        own = Ledger._price(row, models, tokens(line.get("usage")), quiet=True)
        row.priced_all = None if own is None or row.priced_all is None else row.priced_all + own
        if (stated := stated_cost(cost)) is not None:
            Ledger._stated(row, stated, own)
        else:
            priced = Ledger._price(row, models, tokens(line.get("usage")))
            if priced is not None:
                row.computed_cost += priced
                row.priced_runs += 1
        row.run_1h, row.run_searches, row.run_messages = {}, {}, set()

    @staticmethod
    def _stated(row: Row, cost: float, own: float | None) -> None:
        """The CLI's ``total_cost_usd`` is its process's running total (every run
        of a streaming-input process so far, as its ``modelUsage`` is): a run's
        share is the difference to the last figure when that difference is what
        the run's own tokens cost (or, with no price to tell by, when the figure
        did not fall); otherwise a process of its own, taken whole."""
        share, last = cost, row.last_stated
        if (
            last is not None
            and cost >= last
            and (own is None or abs(cost - last - own) <= abs(cost - own))
        ):
            share = cost - last
        row.last_stated = cost
        row.stated_cost += share
        row.costed_runs += 1

    @staticmethod
    def _price(
        row: Row, per_model: dict[str, Any], usage: Any, quiet: bool = False
    ) -> float | None:
        """A run's tokens at list prices, model by model; None when a model has no
        price (said in ``unpriced`` unless ``quiet``). A run with no tokens costs 0."""
        total, one = 0.0, len(per_model) == 1
        if not per_model:
            empty = not isinstance(usage, dict) or not any(
                isinstance(usage.get(k), int) and usage[k] for k in USAGE_KEYS
            )
            if not empty and not quiet:
                row.unpriced.add("(no model named)")
            return 0.0 if empty else None
        for model, used in per_model.items():
            if not isinstance(used, dict):
                continue
            hour = row.run_1h.get(model, 0) + (row.run_1h.get(None, 0) if one else 0)
            searches = row.run_searches.get(model, 0) + (
                row.run_searches.get(None, 0) if one else 0
            )
            found = prices.cost_usd(model, row.provider, used, hour, searches)
            if found is None:
                if not quiet:
                    row.unpriced.add(model)
                return None
            total += found[0]
            row.priced_as.add(found[1])
        return total

    @staticmethod
    def _cache_1h(row: Row, line: dict[str, Any]) -> None:
        """What a line's source recorded beyond stream_v1's four usage keys (Claude
        Code keeps the API's usage in the line's extension): its 1 hour cache
        writes and its server-side web searches, each message once."""
        raw = (line.get("extension") or {}).get("message")
        usage = raw.get("usage") if isinstance(raw, dict) else None
        if not isinstance(usage, dict):
            return
        split, server = usage.get("cache_creation"), usage.get("server_tool_use")
        hour = split.get("ephemeral_1h_input_tokens") if isinstance(split, dict) else None
        searches = server.get("web_search_requests") if isinstance(server, dict) else None
        hour = hour if isinstance(hour, int) and hour > 0 else 0
        searches = searches if isinstance(searches, int) and searches > 0 else 0
        if not hour and not searches:
            return
        mid = (line.get("message") or {}).get("id")
        if isinstance(mid, str):
            if mid in row.run_messages:
                return
            row.run_messages.add(mid)
        model = raw.get("model") if isinstance(raw, dict) else None
        key = model if isinstance(model, str) else None
        row.run_1h[key] = row.run_1h.get(key, 0) + hour
        row.run_searches[key] = row.run_searches.get(key, 0) + searches


# -- filters --------------------------------------------------------------------------

_RELATIVE = re.compile(r"(\d+(?:\.\d+)?)\s*(s|m|min|h|d|w)", re.IGNORECASE)
_UNITS = {"s": "seconds", "m": "minutes", "min": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_when(text: str, now: datetime | None = None) -> datetime:
    """A time a person types: an RFC 3339 / ISO date or time (a date alone is its
    midnight, UTC unless an offset is given), ``today``, ``yesterday``, or a span
    ago (``30m``, ``2h``, ``3d``, ``1w``). ValueError for anything else."""
    now = now or datetime.now(UTC)
    word = text.strip().lower()
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if word == "today":
        return midnight
    if word == "yesterday":
        return midnight - timedelta(days=1)
    rel = _RELATIVE.fullmatch(word)
    if rel is not None:
        try:
            return now - timedelta(**{_UNITS[rel.group(2).lower()]: float(rel.group(1))})
        except OverflowError:  # (99999999999d: before year 1)
            raise ValueError(f"{text!r} goes back past year 1") from None
    try:
        when = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ValueError(
            f"{text!r} is no time: give a date or time (2026-12-01, 2026-12-01T10:00Z), "
            "today, yesterday, or a span ago (30m, 2h, 3d, 1w)"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=UTC)


@dataclass(slots=True, frozen=True)
class Filter:
    """Which sessions to show: each given criterion must hold."""

    since: datetime | None = None
    until: datetime | None = None
    project: str | None = None  # a substring of the session's cwd
    agent: str | None = None  # the agent's name (claude-code, codex, gemini-cli, ...)
    session: str | None = None  # a prefix of the session id

    def keeps(self, row: Row) -> bool:
        if self.session is not None and not row.session_id.startswith(self.session):
            return False
        if self.agent is not None and row.agent != self.agent:
            return False
        if self.project is not None and self.project not in (row.project or ""):
            return False
        # A session is in a time window when it overlaps it.
        if self.since is not None and (row.ended is None or _at(row.ended) < self.since):
            return False
        return not (
            self.until is not None and (row.started is None or _at(row.started) > self.until)
        )


def _at(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


# -- the table ------------------------------------------------------------------------

_COLUMNS = (
    "session",
    "agent",
    "project",
    "started",
    "duration",
    "runs",
    "turns",
    "tools",
    "errors",
    "tokens",
    "cost",
)


def table(rows: Iterable[Row]) -> list[str]:
    """Rows sorted by start, aligned, with a totals line: for people (no colour)."""
    listed = sorted(rows, key=lambda r: r.started or "")
    body = [_cells(r) for r in listed]
    total = Row("total")
    for r in listed:
        total.runs += r.runs
        total.turns += r.turns
        total.tool_calls += r.tool_calls
        total.errors += r.errors + r.tool_errors
        for key in USAGE_KEYS:
            total.usage[key] += r.usage[key]
        total.stated_cost += r.stated_cost
        total.costed_runs += r.costed_runs
        total.computed_cost += r.computed_cost
        total.priced_runs += r.priced_runs
    foot = _cells(total)
    foot[0], foot[3], foot[4] = f"{len(listed)} sessions", "", ""
    grid = [list(_COLUMNS), *body, foot]
    widths = [max(len(row[i]) for row in grid) for i in range(len(_COLUMNS))]
    right = {5, 6, 7, 8, 9, 10}

    def fmt(cells: list[str]) -> str:
        return "  ".join(
            c.rjust(w) if i in right else c.ljust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ).rstrip()

    rule = "  ".join("-" * w for w in widths)
    lines = [fmt(grid[0]), rule, *map(fmt, body), rule, fmt(foot)]
    lines.append(
        f"cost: stated by the source for {total.costed_runs} of {total.runs} runs, "
        f"computed (~) from list prices (genai-prices {prices.version()}) for "
        f"{total.priced_runs}"
        + (
            f", none for {left}"
            if (left := total.runs - total.costed_runs - total.priced_runs)
            else ""
        )
    )
    return lines


def _cells(r: Row) -> list[str]:
    j = r.as_json()
    tokens = sum(r.usage.values())
    mark = "~" if r.priced_runs else ""  # computed, in part or whole
    project = r.project or ""
    if len(project) > 40:
        project = "…" + project[-39:]
    return [
        r.session_id[:8],
        r.agent or "",
        project,
        (r.started or "")[:16].replace("T", " "),
        _duration(j["duration_ms"]),
        str(r.runs),
        str(r.turns),
        str(r.tool_calls),
        str(r.errors + r.tool_errors),
        f"{tokens:,}",
        f"{mark}${j['cost_usd']:.4f}" if j["cost_usd"] is not None else "-",
    ]


def _duration(ms: int | None) -> str:
    if ms is None:
        return ""
    s = ms // 1000
    return f"{s // 3600}h{s % 3600 // 60:02d}m" if s >= 3600 else f"{s // 60}m{s % 60:02d}s"
