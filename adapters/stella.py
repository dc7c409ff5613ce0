"""stella agent events: ``--output-format stream-json``, ``--output-format json`` and
the session journal (``stella-events.jsonl``, replayed on ``stella resume``).

All three carry the same event objects: one per line, or batched in one document
under an ``events`` key (read item by item; see :mod:`translator.reading.reader`).

The client contract (seed 002) this adapter keeps, exactly:

1. An unrecognized ``type`` is normal: counted, logged at debug level, and kept
   whole (system/unrecognized with the event in ``extension.record``); the run's
   result reports the counts by type (``extension.unrecognized``).
2. A recognized ``type`` whose body does not fit is corruption: a system/error
   naming file:line and what did not fit, exit status 1 (``--lenient``: 0).
   Unknown *fields* of known types are ignored by the mapping and kept in
   ``extension``.

What each event type becomes is ``MAPPING`` below (docs/mapping.md is made from
it).

``ts`` is epoch milliseconds, optional, may repeat or go backwards: converted to
RFC 3339 and never used to reorder (input order is the order). A journal holds
one run after another: the event after a ``run_complete`` starts the next run. A
stream without ``run_complete`` ends with a synthetic ``interrupted`` result.

session_id: stella's own (``session_id`` on an event or the document) where there
is one; else ``--session-id``; else the file name (its stem, or the folder's name
for a file called ``stella-events.jsonl``; ``stdin-`` and a digest of the first
record for standard input, so two streams there are two sessions).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from streamv1.translator.hashes import blake2b
from streamv1.translator.model import events as ev
from streamv1.translator.reading.mapping import Row
from streamv1.translator.reading.sources import (
    LIKELY,
    NOT_MINE,
    OWN_TYPE,
    STR_OR_NONE,
    BodyError,
    Source,
    Where,
    body_problem,
    count_field,
    expect_strings,
    rest,
    str_field,
    time_problem,
)
from streamv1.translator.state import persisted
from streamv1.translator.timefmt import normalize_ts

AGENT_NAME = "stella"
PROVIDER = "stella"
_GENERIC_STEMS = frozenset({"stella-events", "events", "journal"})
_CONTENT = frozenset({"text", "text_delta", "tool_start", "tool_result"})
_NAMING_KEYS = ("type", "session_id")
_ENVELOPE = ("type", "ts", "session_id")
#: Events held with a run's init while no content has said whether deltas come:
#: past this many, the init goes out without partial_messages_v1 (a stream of 25
#: million events with no content held them all: 4 GB).
HOLD_LIMIT = 1000

#: Token fields a step_usage (or run_complete.usage) may carry → catalog usage key.
_TOKEN_FIELDS = {
    "input_tokens": "input_tokens",
    "output_tokens": "output_tokens",
    "cache_read": "cache_read",
    "cache_read_tokens": "cache_read",
    "cache_read_input_tokens": "cache_read",
    "cache_creation": "cache_creation",
    "cache_creation_tokens": "cache_creation",
    "cache_creation_input_tokens": "cache_creation",
}


def sniff(record: dict[str, Any]) -> int:
    kind = record.get("type")
    if not isinstance(kind, str):
        kind = None
    if kind in _SURE_TYPES:
        return OWN_TYPE
    if kind == "tool_result" and "call_id" in record:
        return OWN_TYPE
    if kind == "text" and "message" not in record and "sessionId" not in record:
        return LIKELY
    if "type" not in record and isinstance(record.get("events"), list):
        return OWN_TYPE  # an --output-format json document on one line
    return NOT_MINE


#: The session of a stella stream on stdin with no id of its own: ``stdin-`` and a
#: digest of its first record.
STDIN = "stdin"


def session_from_path(path: str) -> str | None:
    if path == "-":
        return STDIN
    p = Path(path)
    stem = p.name.split(".")[0]
    if stem in _GENERIC_STEMS and p.parent.name:
        return p.parent.name
    return stem or None


@persisted
class _Run:
    def __init__(self) -> None:
        self.usage = ev.Usage()
        self.usage_seen = False
        self.model_usage: dict[str | None, ev.Usage] = {}
        self.turns = 0
        self.steps = 0  # completed text steps: the index of the next text block
        self.content = False
        self.model: str | None = None


@persisted
class StellaAdapter:
    #: The layout of this adapter's checkpointed state (translator.state): a new
    #: number whenever its fields change, so an old checkpoint is replayed, not misread.
    STATE_VERSION = 2

    def __init__(self, path: str, session_id: str | None = None) -> None:
        self._path = path
        self._fallback = session_id or session_from_path(path) or "unknown"
        self._session: str | None = None
        self._run: _Run | None = None
        self._held: list[ev.Event] = []  # events before the run's first content
        self._start: ev.RunStart | None = None

    @property
    def _sid(self) -> str:
        return self._session or self._fallback

    # -- the adapter contract -------------------------------------------------

    def feed(self, record: dict[str, Any], where: Where) -> Iterable[ev.Event]:
        out: list[ev.Event] = []
        if self._fallback == STDIN:
            # Two streams on stdin are two sessions (#23 item 20): named by their first
            # record, so the same bytes get the same name again (and nothing is stored
            # twice by convert --publish).

            import orjson

            first = orjson.dumps(record, option=orjson.OPT_SORT_KEYS)
            self._fallback = f"{STDIN}-{blake2b(first, digest_size=6).hexdigest()}"
        if "type" not in record and isinstance(record.get("events"), list):
            self._document(record, where, out)
        elif "type" not in record and record:
            self._members(record, out)
        else:
            self._one(record, where, out)
        return out

    def finish(self) -> Iterable[ev.Event]:
        out: list[ev.Event] = []
        self._release(out, partial=False)
        return out  # an open run ends interrupted in the framer

    # -- events -------------------------------------------------------------------

    def _document(self, doc: dict[str, Any], where: Where, out: list[ev.Event]) -> None:
        """A whole --output-format json document on one line: its events in order."""
        sid = doc.get("session_id")
        if isinstance(sid, str):
            self._session = sid
        for event in doc["events"]:
            if isinstance(event, dict):
                self._one(event, where, out)
            else:
                out.append(
                    ev.Problem(
                        f"events item is {type(event).__name__}, not an object",
                        where.path,
                        where.line,
                        session_id=self._session,
                    )
                )

    def _members(self, members: dict[str, Any], out: list[ev.Event]) -> None:
        """Members of a streamed json document beside its events (the reader hands
        each over as its own record): the session id, and the rest kept visible."""
        sid = members.get("session_id")
        if isinstance(sid, str) and sid:
            self._session = sid
        rest = {k: v for k, v in members.items() if k != "session_id"}
        if rest:
            if self._run is None:
                self._begin(None)
            self._emit(out, ev.Note("document", self._sid, None, {}, rest))

    def _one(self, event: dict[str, Any], where: Where, out: list[ev.Event]) -> None:
        kind = event.get("type")
        sid = event.get("session_id")
        if isinstance(sid, str) and sid:
            self._session = sid
        raw_ts = event.get("ts")
        ts = normalize_ts(raw_ts)
        if self._run is None:
            self._begin(ts)
        if ts is None and raw_ts is not None:
            self._emit(out, time_problem("ts", raw_ts, where, self._session))
        try:
            if type(kind) not in STR_OR_NONE or type(sid) not in STR_OR_NONE:
                expect_strings(event, _NAMING_KEYS)  # (raises: inline first, it is hot)
            handler = _EVENTS.get(kind) if isinstance(kind, str) else None
            if handler is None:
                name = kind if isinstance(kind, str) else "<no type>"
                self._emit(out, ev.Unrecognized(name, self._sid, ts, event))
                return
            if kind in _CONTENT and self._start is not None:
                self._release(out, partial=kind == "text_delta")
            handler(self, event, rest(event, _ENVELOPE), ts, out)
        except BodyError as exc:
            what = kind if isinstance(kind, str) else "event"
            self._emit(out, body_problem(f"{what}: {exc}", event, where, self._sid, ts))

    # Each known event type's handler: given the event, its fields beside the
    # envelope (what a handler does not use goes into the line's extension), its time.

    def _stage(
        self, event: dict[str, Any], fields: ev.JSON, ts: str | None, out: list[ev.Event]
    ) -> None:
        name = str_field(event, "name", required=True)
        scope = str_field(event, "scope")
        value: ev.JSON = {"value": name}
        if scope is not None:
            value["category"] = scope
        self._emit(out, ev.Note("stage", self._sid, ts, value, rest(fields, ("name", "scope"))))

    def _text_delta(
        self, event: dict[str, Any], fields: ev.JSON, ts: str | None, out: list[ev.Event]
    ) -> None:
        if self._run is None:
            raise ev.ImpossibleState("self._run is not set")
        text = _aliased(event, "delta", "text")
        payload: ev.JSON = {
            "type": "content_block_delta",
            "index": self._run.steps,
            "delta": {"type": "text_delta", "text": text},
        }
        ext = rest(fields, ("delta", "text"))
        if ext:
            payload["extension"] = ext
        self._emit(out, ev.Delta(self._sid, ts, payload))

    def _text(
        self, event: dict[str, Any], fields: ev.JSON, ts: str | None, out: list[ev.Event]
    ) -> None:
        if self._run is None:
            raise ev.ImpossibleState("self._run is not set")
        text = _aliased(event, "text", "delta")
        self._run.steps += 1
        self._say(out, ts, {"type": "text", "text": text}, rest(fields, ("text", "delta")))

    def _tool_start(
        self, event: dict[str, Any], fields: ev.JSON, ts: str | None, out: list[ev.Event]
    ) -> None:
        call_id = str_field(event, "call_id", required=True)
        name = str_field(event, "name", required=True)
        block = ev.tool_use(call_id, name, event.get("input", {}))
        self._say(out, ts, block, rest(fields, ("call_id", "name", "input")))

    def _tool_result(
        self, event: dict[str, Any], fields: ev.JSON, ts: str | None, out: list[ev.Event]
    ) -> None:
        call_id = str_field(event, "call_id", required=True)
        is_error = _bool(event, "is_error")
        count_field(event, "duration_ms")  # checked; kept with the other measures
        result: ev.JSON = {"type": "tool_result", "tool_use_id": call_id}
        content = event.get("content", event.get("output"))
        if content is not None:
            result["content"] = content
        if is_error is not None:
            result["is_error"] = is_error
        measured = rest(fields, ("call_id", "content", "output", "is_error"))
        self._emit(
            out,
            ev.Message(
                "user",
                self._sid,
                ts,
                [result],
                tool_use_result=measured,
                has_tool_use_result=bool(measured),
            ),
        )

    def _step_usage(
        self, event: dict[str, Any], fields: ev.JSON, ts: str | None, out: list[ev.Event]
    ) -> None:
        run = self._run
        if run is None:
            raise ev.ImpossibleState("run is not set")
        nested = event.get("usage")
        usage = _usage(nested if isinstance(nested, dict) else event)
        model = str_field(event, "model")
        duration = count_field(event, "duration_ms")
        run.usage.add(usage)
        run.usage_seen = True
        run.model_usage.setdefault(model, ev.Usage()).add(usage)
        if model:
            run.model = model
        value = {"duration_ms": duration} if duration is not None else {}
        self._emit(out, ev.Note("step_usage", self._sid, ts, value, rest(fields, ("duration_ms",))))

    def _turn_complete(
        self, event: dict[str, Any], fields: ev.JSON, ts: str | None, out: list[ev.Event]
    ) -> None:
        if self._run is None:
            raise ev.ImpossibleState("self._run is not set")
        self._run.turns += 1
        stop = str_field(event, "stop_reason")
        value = {"stop_reason": stop} if stop is not None else {}
        self._emit(
            out, ev.Note("turn_complete", self._sid, ts, value, rest(fields, ("stop_reason",)))
        )

    def _run_complete(
        self, event: dict[str, Any], fields: ev.JSON, ts: str | None, out: list[ev.Event]
    ) -> None:
        run = self._run
        if run is None:
            raise ev.ImpossibleState("run is not set")
        model = str_field(event, "model") or run.model
        cost = event.get("cost_usd")
        if cost is not None and (not isinstance(cost, int | float) or isinstance(cost, bool)):
            raise BodyError(f"cost_usd is {type(cost).__name__}, not a number")
        is_error = _bool(event, "is_error")
        duration = count_field(event, "duration_ms")
        own = event.get("usage")
        if own is not None and not isinstance(own, dict):
            raise BodyError(f"usage is {type(own).__name__}, not an object")
        usage = _usage(own) if own is not None else (run.usage if run.usage_seen else None)
        model_usage: dict[str, ev.Usage] | None = None
        if own is not None and model:
            model_usage = {model: usage} if usage else None
        elif run.usage_seen:
            model_usage = {}
            for name, u in run.model_usage.items():
                key = name or model
                if key is None:
                    model_usage = None
                    break
                model_usage.setdefault(key, ev.Usage()).add(u)
        self._release(out, partial=False)
        out.append(
            ev.RunEnd(
                session_id=self._sid,
                ts=ts,
                subtype="error_during_execution" if is_error else "success",
                is_error=is_error,
                num_turns=run.turns if run.turns else (1 if run.content else 0),
                duration_ms=duration,
                stop_reason=str_field(event, "stop_reason"),
                usage=usage,
                model_usage=model_usage or None,
                total_cost_usd=cost,
                extension=rest(
                    fields, ("cost_usd", "is_error", "duration_ms", "usage", "stop_reason")
                ),
            )
        )
        self._run = None

    def _say(self, out: list[ev.Event], ts: str | None, block: ev.JSON, ext: ev.JSON) -> None:
        """One completed assistant block (text or tool_use) of the run."""
        if self._run is None:
            raise ev.ImpossibleState("self._run is not set")
        self._run.content = True
        self._emit(out, ev.Message("assistant", self._sid, ts, [block], extension=ext))

    # -- runs -------------------------------------------------------------------------

    def _begin(self, ts: str | None) -> None:
        self._run = _Run()
        self._start = ev.RunStart(self._sid, ts, AGENT_NAME, PROVIDER)

    def _emit(self, out: list[ev.Event], event: ev.Event) -> None:
        """Events wait with the init until the run's first content says whether
        deltas (partial_messages_v1) are coming."""
        if self._start is not None:
            self._held.append(event)
            if len(self._held) >= HOLD_LIMIT:
                self._release(out, partial=False)
        else:
            out.append(event)

    def _release(self, out: list[ev.Event], partial: bool) -> None:
        start = self._start
        if start is None:
            return
        start.partial_messages = partial
        start.session_id = self._sid
        if self._run is not None and self._run.model:
            start.model = self._run.model
        out.append(start)
        for event in self._held:
            if hasattr(event, "session_id") and event.session_id != self._sid:
                event.session_id = self._sid
        out.extend(self._held)
        self._held = []
        self._start = None


def _bool(event: dict[str, Any], key: str) -> bool | None:
    value = event.get(key)
    if value is not None and not isinstance(value, bool):
        raise BodyError(f"{key} is {type(value).__name__}, not a boolean")
    return value


def _aliased(event: dict[str, Any], field: str, alias: str) -> str:
    for key in (field, alias):
        value = event.get(key)
        if value is not None:
            if not isinstance(value, str):
                raise BodyError(f"{key} is {type(value).__name__}, not a string")
            return value
    raise BodyError(f"no {field} (or its alias {alias})")


def _usage(raw: dict[str, Any]) -> ev.Usage:
    usage = ev.Usage()
    for key, target in _TOKEN_FIELDS.items():
        if key in raw:
            n = ev.whole(raw[key])
            value = ev.not_negative(n, key) if n is not None else count_field(raw, key)
            if value is not None:
                one = ev.Usage()
                setattr(one, target, value)
                usage.add(one)  # (aliases add up; the sum still fits 64 bits)
    return usage


#: Each known event type's handler (any other type is kept whole:
#: system/unrecognized).
_Handler = Callable[[StellaAdapter, dict[str, Any], ev.JSON, str | None, list[ev.Event]], None]
_EVENTS: dict[str, _Handler] = {
    "stage": StellaAdapter._stage,
    "text": StellaAdapter._text,
    "text_delta": StellaAdapter._text_delta,
    "tool_start": StellaAdapter._tool_start,
    "tool_result": StellaAdapter._tool_result,
    "step_usage": StellaAdapter._step_usage,
    "turn_complete": StellaAdapter._turn_complete,
    "run_complete": StellaAdapter._run_complete,
}
KNOWN_TYPES = frozenset(_EVENTS)
_SURE_TYPES = KNOWN_TYPES - {"text", "tool_result"}


MAPPING = (
    Row(
        "stage",
        "`stage`",
        "`system/stage`: `value` = `name`, `category` = `scope` (`turn`: the engine's own, "
        "once per turn; `run`: a wrapper's, once per run — kept apart by `category`)",
    ),
    Row(
        "text_delta",
        "`text_delta`",
        "`stream_event` `content_block_delta` (`delta.type: text_delta`), `index` = the step "
        "(the number of `text` events before it in the run). Field `delta`, alias `text`",
    ),
    Row(
        "text",
        "`text`",
        "`assistant` text block: the final text of its step, replacing the step's deltas (a "
        "retried model call re-streams them). Field `text`, alias `delta`",
    ),
    Row("tool_start", "`tool_start`", "`assistant` `tool_use`: `id` = `call_id`, `name`, `input`"),
    Row(
        "tool_result",
        "`tool_result`",
        "`user` `tool_result`: `tool_use_id` = `call_id`, `content` (alias `output`), "
        "`is_error`; `tool_use_result` = every other field (`duration_ms`, …)",
    ),
    Row(
        "step_usage",
        "`step_usage`",
        "`system/step_usage` with `duration_ms`, the tokens in `extension`; they add up "
        "into the run's `usage` and per-model `model_usage` (the event's `model`, else the "
        "run's). Tokens: `input_tokens`, `output_tokens`, `cache_read[_tokens]`, "
        "`cache_creation[_tokens]` (and Anthropic's `*_input_tokens`), flat or under `usage`",
    ),
    Row(
        "turn_complete",
        "`turn_complete`",
        "`system/turn_complete` (`stop_reason` when given): the per-turn boundary; "
        "`num_turns` counts them",
    ),
    Row(
        "run_complete",
        "`run_complete`",
        "the run's one `result`: `success` (`error_during_execution` when `is_error: true`), "
        "`total_cost_usd` = `cost_usd`, `usage` = its own else the sum of `step_usage`, "
        "`duration_ms` when given, `result` = the last `text`; other fields in `extension`",
    ),
    Row(
        "unknown",
        "anything else",
        "rule 1: `system/unrecognized` (`kind` = its type, the event whole in "
        "`extension.record`), counted in the result's `extension.unrecognized`; never an error",
    ),
    Row(
        "bad_body",
        "a known type whose body does not fit (no `call_id`, `text` not a "
        "string, tokens not whole numbers, …)",
        "rule 2: `system/error` naming file:line and what did not fit, the event in "
        "`extension.record`; the rest converted; exit status 1 (`--lenient`: 0)",
    ),
    Row("extra_fields", "unknown fields on a known type", "kept in the line's `extension`"),
)


SOURCE = Source(
    name="stella",
    description="stella agent events (--output-format stream-json|json, stella-events.jsonl)",
    sniff=sniff,
    open=StellaAdapter,
    mapping=MAPPING,
)
