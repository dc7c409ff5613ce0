"""The json document ``{session_id, response, stats, error?}`` as its one run.

The adapter (adapters/gemini.py) gathers the document's members as they are read
and, at the input's end, writes the run: its ``system/init`` (the model
:func:`stats_of` finds), then what :func:`reply_and_end` makes. Apart: the
document is read whole, once, and shares nothing with the chat file's or the
stream's state. A body that does not fit raises BodyError.
"""

from __future__ import annotations

from typing import NamedTuple

from streamv1.adapters._gemini_usage import doc_usage
from streamv1.translator.model import events as ev
from streamv1.translator.reading.sources import BodyError


class Stats(NamedTuple):
    """What the document's ``stats`` say of its run."""

    model: str | None  # the model with a ``main`` role
    usage: ev.Usage | None
    model_usage: dict[str, ev.Usage]
    turns: int  # the main role's ``totalRequests``
    extension: ev.JSON  # the run end's: ``stats`` whole


def stats_of(doc: ev.JSON) -> Stats:
    stats = doc.get("stats")
    model: str | None = None
    usage: ev.Usage | None = None
    model_usage: dict[str, ev.Usage] = {}
    turns = 0
    ext: ev.JSON = {}
    if stats is not None:
        if not isinstance(stats, dict):
            raise BodyError(f"stats is {type(stats).__name__}, not an object")
        models = stats.get("models", {})
        if not isinstance(models, dict):
            raise BodyError("stats.models is not an object")
        usage = ev.Usage()
        for name, m in models.items():
            if not isinstance(m, dict):
                raise BodyError(f"stats.models.{name} is not an object")
            u = doc_usage(m.get("tokens", {}), f"stats.models.{name}.tokens")
            model_usage[name] = u
            usage.add(u)
            roles = m.get("roles")
            main = roles.get("main") if isinstance(roles, dict) else None
            if isinstance(main, dict):
                model = model or name
                turns += ev.whole(main.get("totalRequests")) or 0
        ext["stats"] = stats
    return Stats(model, usage, model_usage, turns, ext)


def reply_and_end(doc: ev.JSON, stats: Stats, sid: str) -> list[ev.Event]:
    """The run after its init: the ``response`` as an assistant line, then its end."""
    out: list[ev.Event] = []
    response = doc.get("response")
    if response is not None and not isinstance(response, str):
        raise BodyError(f"response is {type(response).__name__}, not a string")
    if response:
        out.append(
            ev.Message(
                "assistant", sid, None, [{"type": "text", "text": response}], model=stats.model
            )
        )
    ext = stats.extension
    err = doc.get("error")
    message = None
    if err is not None:
        ext["error"] = err
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            message = err["message"]
    out.append(
        ev.RunEnd(
            sid,
            None,
            subtype="error_during_execution" if err is not None else "success",
            is_error=err is not None,
            result=message,
            num_turns=stats.turns,
            usage=stats.usage,
            model_usage=stats.model_usage or None,
            extension=ext,
        )
    )
    return out
