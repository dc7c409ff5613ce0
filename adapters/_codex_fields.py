"""Small readers of Codex record bodies that several parts of the adapter use.

Apart because the rollout's records, its UI items and the exec --json events read
objects, content texts and an execution item's outcome the same way (and the
search for a subagent's spawner digs in a record too); one copy keeps them agreeing.
"""

from __future__ import annotations

from typing import Any

from streamv1.translator.reading.sources import BodyError


def dig(value: Any, *keys: str) -> Any:
    for key in keys:
        if not isinstance(value, dict):
            return None
        value = value.get(key)
    return value


def obj_field(obj: dict[str, Any], key: str, what: str, required: bool = False) -> dict[str, Any]:
    value = obj.get(key)
    if value is None:
        if required:
            raise BodyError(f"{what}: no {key}")
        return {}
    if not isinstance(value, dict):
        raise BodyError(f"{what}.{key} is {type(value).__name__}, not an object")
    return value


def texts_of(content: Any, what: str) -> list[str]:
    """The text parts of a content list (``input_text``, ``output_text``, ``text``,
    ``Text``), or a string as one part."""
    if isinstance(content, str):
        return [content]
    if content is None:
        return []
    if not isinstance(content, list):
        raise BodyError(f"{what} is {type(content).__name__}, not a list")
    out = []
    for part in content:
        if isinstance(part, dict) and isinstance(part.get("text"), str):
            out.append(part["text"])
    return out


def item_failed(item: dict[str, Any]) -> bool | None:
    """is_error of an execution item: status failed/declined, a non-zero exit code,
    an error; None where the item says neither way."""
    status = item.get("status")
    code = item.get("exit_code")
    if status in ("failed", "declined") or item.get("error"):
        return True
    if isinstance(code, int) and not isinstance(code, bool):
        return code != 0
    if status == "completed":
        return False
    return None
