"""The neutral event model: what adapters produce and the framer consumes.

Adapters know their source and translate its records into these events; they never
build output lines, count seq, or decide run framing. The framer
(:mod:`translator.model.framing`) knows the stream_v1 catalog and nothing about sources.

Payloads that end up inside catalog lines (content blocks, tool_use_result,
extension) are already catalog-shaped dicts: an adapter maps the *fields* of its
source, the framer maps *runs*.

``ts`` on every event is an RFC 3339 string (UTC, milliseconds, ``Z``) taken from
the source record, or ``None`` when the record carries no time of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from streamv1.translator.state import persisted

JSON = dict[str, Any]

#: The largest magnitude of a count a line carries (tokens, durations, turns):
#: orjson writes 64-bit integers, so a count past this, or a sum of counts, could
#: be read but not written.
MAX_COUNT = 2**63 - 1


def tool_use(call_id: str | None, name: str | None, tool_input: Any) -> JSON:
    """A tool call as message content: the one block every source's call becomes
    (Claude's own shape, which stream_v1 carries)."""
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


def whole(value: Any) -> int | None:
    """``value`` as a whole number a line can carry: an int (not a bool) or a float
    with no fraction, within ±MAX_COUNT; None for anything else (``1e300`` made an
    int has 301 digits and no JSON encoder of ours writes it)."""
    kind = type(value)
    if kind is int:
        return value if -MAX_COUNT <= value <= MAX_COUNT else None
    if kind is float and value.is_integer() and -MAX_COUNT <= value <= MAX_COUNT:
        return int(value)
    return None


#: Token counts a usage reader found negative, since the translation last took
#: them: each is counted as 0, and the translation says it (a system/error naming
#: the record's file:line) after the record's events. A count is never negative: a
#: negative one made a negative session cost and a negative total.
NEGATIVE_COUNTS: list[str] = []


def not_negative(count: int, name: str, say: bool = True) -> int:
    """A token count as a line may carry it: ``count``, or 0 where it is negative
    (noted for :func:`negative_counts` unless ``say`` is false: a value read again,
    said where it was first read)."""
    if count >= 0:
        return count
    if say:
        NEGATIVE_COUNTS.append(f"{name} is {count}, not a token count (counted as 0)")
    return 0


def negative_counts() -> list[str]:
    """What :func:`not_negative` noted since the last call (and no more)."""
    if not NEGATIVE_COUNTS:
        return []
    said = NEGATIVE_COUNTS[:]
    NEGATIVE_COUNTS.clear()
    return said


def _saturate(value: int) -> int:
    return value if -MAX_COUNT <= value <= MAX_COUNT else (MAX_COUNT if value > 0 else -MAX_COUNT)


class ImpossibleState(RuntimeError):
    """A state the code holds impossible was reached (input no rule foresaw, or a
    bug): raised where an ``assert`` would stand, so the translation's nets make it
    the session's problem line (translation.fail), never a traceback, and
    ``python -O`` cannot skip the check."""


@persisted
@dataclass(slots=True)
class Usage:
    """Token accounting of one API message, in the catalog's vocabulary."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read: int = 0
    cache_creation: int = 0

    def add(self, other: Usage) -> None:
        """Sums stop at ±MAX_COUNT: each count fits 64 bits, and so does the total."""
        self.input_tokens = _saturate(self.input_tokens + other.input_tokens)
        self.output_tokens = _saturate(self.output_tokens + other.output_tokens)
        self.cache_read = _saturate(self.cache_read + other.cache_read)
        self.cache_creation = _saturate(self.cache_creation + other.cache_creation)

    def as_dict(self) -> dict[str, int]:
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cache_read": self.cache_read,
            "cache_creation": self.cache_creation,
        }


@persisted
@dataclass(slots=True)
class RunStart:
    """A prompt → result turn begins (becomes system/init)."""

    session_id: str
    ts: str | None
    agent_name: str
    provider: str
    model: str | None = None
    agent_role: str | None = None
    cwd: str | None = None
    tools: list[str] | None = None
    mcp_servers: list[JSON] | None = None
    partial_messages: bool = False
    parent_tool_use_id: str | None = None
    extension: JSON = field(default_factory=dict)
    #: What the source says of a nested actor's task (its ``task_id``, description,
    #: type, ...): a run start with a ``parent_tool_use_id`` inside an open run is
    #: that run's ``system/task_started`` line, and this is its payload.
    task: JSON = field(default_factory=dict)
    #: A nested actor whose spawning tool_use is not known (no parent_tool_use_id is
    #: invented for it): a name for it that its lines share, so its start, lines and
    #: end are still told apart from the run's own actor.
    actor: str | None = None


@persisted
@dataclass(slots=True)
class Message:
    """A completed assistant message part, or a user line (tool results)."""

    role: str  # "assistant" | "user"
    session_id: str
    ts: str | None
    content: list[JSON]
    message_id: str | None = None
    parent_tool_use_id: str | None = None
    tool_use_result: Any = None
    has_tool_use_result: bool = False
    model: str | None = None
    stop_reason: str | None = None
    usage: Usage | None = None
    extension: JSON = field(default_factory=dict)
    #: A nested actor's line whose spawning tool_use is not known: it carries no
    #: parent_tool_use_id (never invented) but is not the run's own actor either
    #: (:attr:`RunStart.actor`).
    actor: str | None = None


@persisted
@dataclass(slots=True)
class Delta:
    """A partial delta (stream_event line, partial_messages_v1)."""

    session_id: str
    ts: str | None
    event: JSON
    parent_tool_use_id: str | None = None


@persisted
@dataclass(slots=True)
class Note:
    """A system line other than init and error (task_*, status, compact_boundary, ...)."""

    subtype: str
    session_id: str
    ts: str | None
    fields: JSON = field(default_factory=dict)
    extension: JSON = field(default_factory=dict)
    parent_tool_use_id: str | None = None


@persisted
@dataclass(slots=True)
class Problem:
    """Input that could not be translated as it stands: becomes system/error.

    ``fatal`` problems (a known record type whose body does not fit, data lost to
    damage) make the command exit 1 unless ``--lenient``; tolerated ones (a cut-off
    final line) are only counted.
    """

    message: str
    path: str
    line: int
    ts: str | None = None
    session_id: str | None = None
    recoverable: bool = True
    fatal: bool = True
    kind: str = "invalid_record"
    extension: JSON = field(default_factory=dict)


@persisted
@dataclass(slots=True)
class Unrecognized:
    """A record type the adapter has never seen: kept whole, never fatal."""

    source_type: str
    session_id: str | None
    ts: str | None
    record: JSON
    parent_tool_use_id: str | None = None


@persisted
@dataclass(slots=True)
class Dropped:
    """A metadata record dropped on purpose (listed in docs/mapping.md); counted."""

    kind: str
    session_id: str | None = None


@persisted
@dataclass(slots=True)
class RunEnd:
    """The turn is over (becomes the run's one result). Unknowns stay ``None``."""

    session_id: str
    ts: str | None
    subtype: str | None = None
    is_error: bool | None = None
    result: str | None = None
    num_turns: int | None = None
    duration_ms: int | None = None
    stop_reason: str | None = None
    usage: Usage | None = None
    model_usage: dict[str, Usage] | None = None
    total_cost_usd: float | None = None
    ttft_ms: int | None = None
    extension: JSON = field(default_factory=dict)
    #: Ends the nested actor with this spawning tool_use (inside the open run: no
    #: line; with no run around it, the actor's own run), not the run's own actor.
    parent_tool_use_id: str | None = None
    #: (:attr:`RunStart.actor`)
    actor: str | None = None


def linked(held: list[Event], parent: str | None) -> list[Event]:
    """Events held back until a nested actor's spawning tool_use was looked for:
    each with no parent of its own gets ``parent``, where it was found."""
    if parent is not None:
        for event in held:
            if getattr(event, "parent_tool_use_id", "") is None:
                event.parent_tool_use_id = parent  # type: ignore[union-attr]
    return held


def run_end_of(
    line: JSON,
    session_id: str,
    ts: str | None,
    usage: Usage | None,
    model_usage: dict[str, Usage] | None,
    total_cost_usd: float | None,
    extension: JSON,
) -> RunEnd:
    """The run end a result line states where it names its fields as the catalog
    does (stream_v1's result, and Claude's print-mode result it was made from): those
    taken as they stand, the figures a source reads its own way given."""
    return RunEnd(
        session_id=session_id,
        ts=ts,
        subtype=line["subtype"],
        is_error=line["is_error"],
        result=line["result"],
        num_turns=line["num_turns"],
        duration_ms=line["duration_ms"],
        stop_reason=line["stop_reason"],
        usage=usage,
        model_usage=model_usage,
        total_cost_usd=total_cost_usd,
        ttft_ms=line["ttft_ms"],
        extension=extension,
    )


@persisted
@dataclass(slots=True)
class Spawn:
    """The source says the call ``tool_use_id`` spawned a nested actor whose lines
    another file of the session holds (a Codex child rollout, a Claude Code or
    Gemini CLI subagent file). No line: it tells a live session merge that what
    follows in this file comes after that actor's start, so the daemon waits a
    while for the actor's file rather than frame past it (batch conversion orders
    by time and needs no telling)."""

    tool_use_id: str
    session_id: str | None = None


@persisted
@dataclass(slots=True)
class SideCall:
    """An API call the source made on the side of the conversation (Claude Code's
    prompt suggestions, ``agent-a<kind>-<id>.jsonl``): no run and no actor, no line;
    its tokens are the session's, counted in the ``model_usage`` of the next result
    framed (the open run's, else the next run's), as print mode's cumulative
    ``modelUsage`` counts them. ``kind`` names the side call (its counted drop)."""

    session_id: str | None
    ts: str | None
    kind: str
    message_id: str | None = None
    model: str | None = None
    usage: Usage | None = None


Event = (
    RunStart | Message | Delta | Note | Problem | Unrecognized | Dropped | RunEnd | Spawn | SideCall
)
