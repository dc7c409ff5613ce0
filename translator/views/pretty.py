"""The view for people at a terminal: one short line per stream_v1 line.

``convert`` writes it when its stdout is a terminal (``--format pretty``); piped
or redirected, it writes stream_v1 bytes as ever (``--format json``). It reads the
lines the pipeline made, so it shows what a machine gets, shortened. Each session
has its own colour, and a nested actor's lines are indented under its parent's.
The lines shown are the prompt, the assistant's text (shortened), each tool call
as its name and main argument, tool results (errors marked) and each run's result
with its turns, tokens and cost. Colours and widths come from rich, which also
honours ``NO_COLOR`` and ``TERM=dumb``.
"""

from __future__ import annotations

import sys
import time
import zlib
from typing import IO, Any

import orjson

from streamv1.translator.reading.lines import LineSplitter

#: Colours sessions are told apart by (chosen by a hash of the session id).
PALETTE = (
    "cyan",
    "magenta",
    "green",
    "yellow",
    "blue",
    "bright_red",
    "bright_cyan",
    "bright_magenta",
    "bright_green",
    "bright_blue",
)
#: How much of a text a line shows.
WIDTH = 160
#: Lines made are printed at most this long (seconds) after the first of them, or
#: once this many wait (see PrettyWriter).
HOLD = 0.05
HOLD_LINES = 256
#: A tool call's main argument: the first of these its input has.
MAIN_ARGUMENT = (
    "command",
    "file_path",
    "path",
    "pattern",
    "query",
    "url",
    "description",
    "prompt",
    "cmd",
    "script",
    "code",
    "name",
)


class PrettyWriter:
    """A :class:`translator.translate.sinks.Writer` that shows each stream_v1 line
    for people."""

    def __init__(self, stream: IO[str]) -> None:
        import os

        from rich.console import Console

        # NO_COLOR (no-color.org) asks for no colour; rich would still write bold and
        # italics, and the acceptance is no escape codes at all: no styles then.
        plain = bool(os.environ.get("NO_COLOR"))
        self.console = Console(
            file=stream,
            highlight=False,
            soft_wrap=True,
            emoji=False,
            color_system=None if plain else "auto",
        )
        # Whole lines of the writes (a socket's reads cut them anywhere); no limit:
        # they are stream_v1's own lines.
        self._lines = LineSplitter("stdout", sys.maxsize, strip_cr=False)
        # Lines made and not printed yet: printed together (at a flush, or HOLD
        # seconds after the first of them), since each print also redraws a
        # progress line below the view: 1,291 lines/s printed one by one beside it,
        # 11,197 without it.
        self._held: list[Any] = []
        self._held_since = 0.0

    def write(self, data: bytes, /) -> int:
        for line in self._lines.feed(data):
            if not line.data:
                continue
            try:
                parsed = orjson.loads(line.data)
            except orjson.JSONDecodeError:
                parsed = None
            if isinstance(parsed, dict):
                try:
                    self.show(parsed)
                except (AttributeError, TypeError, KeyError, ValueError, IndexError):
                    self._raw(line.data)  # a line no schema would pass: as its text
            else:
                # Not a stream_v1 line (a fleet stream may hold another tool's): shown
                # as its text, marked, never a crash of the view.
                self._raw(line.data)
        if self._held and (
            len(self._held) >= HOLD_LINES or time.monotonic() - self._held_since >= HOLD
        ):
            self._print()
        return len(data)

    def _raw(self, data: bytes) -> None:
        from rich.text import Text

        self._hold([Text("? " + _visible(_short(data.decode("utf-8", "replace"))), style="dim")])

    def _hold(self, shown: list[Any]) -> None:
        if not self._held:
            self._held_since = time.monotonic()
        self._held.extend(shown)

    def _print(self) -> None:
        held, self._held = self._held, []
        self.console.print(*held, sep="\n")

    def flush(self) -> None:
        if self._held:
            self._print()
        self.console.file.flush()

    def fileno(self) -> int:
        return self.console.file.fileno()

    def show(self, line: dict[str, Any]) -> None:
        from rich.text import Text

        text = render(line)
        if text is None:
            return
        sid = str(line.get("session_id") or "")
        colour = PALETTE[zlib.crc32(sid.encode("utf-8", "replace")) % len(PALETTE)]
        sid = _visible(sid[:8])
        indent = "    " if line.get("parent_tool_use_id") else ""
        out = Text(f"{sid:8} ", style=colour)
        out.append(indent)
        mark, body, style = text
        out.append(mark + " ", style=style or colour)
        out.append(_visible(body), style=style)
        shown = [out]
        extension = line.get("extension")
        prompt = extension.get("prompt") if isinstance(extension, dict) else None
        if line.get("subtype") == "init" and isinstance(prompt, str) and prompt:
            # A durable transcript's prompt rides on its run's init line.
            said = Text(f"{sid:8} ", style=colour)
            said.append(indent)
            said.append("> " + _visible(_short(prompt)), style="bold")
            shown.append(said)
        self._hold(shown)  # (all made first: a line that fails is shown once, as text)


def render(line: dict[str, Any]) -> tuple[str, str, str | None] | None:
    """(mark, text, style) for one stream_v1 line; None for a line not shown (a
    partial message's deltas)."""
    kind = line.get("type")
    if kind == "system":
        sub = line.get("subtype")
        if sub == "init":
            agent = line.get("agent") or {}
            model = agent.get("model") if isinstance(agent, dict) else None
            name = agent.get("name") if isinstance(agent, dict) else None
            parts = [p for p in (name, model, line.get("cwd")) if isinstance(p, str)]
            return "▶", "run begins: " + " · ".join(parts), "bold"
        if sub == "error":
            return "!", _short(str(line.get("message") or "error")), "bold red"
        if sub == "task_started":
            task = line.get("task") or {}
            what = task.get("description") or task.get("prompt") if isinstance(task, dict) else ""
            return "↳", "nested actor begins: " + _short(str(what or "")), "dim"
        return "·", str(sub), "dim"
    if kind == "assistant":
        return _assistant(line)
    if kind == "user":
        return _user(line)
    if kind == "result":
        return _result(line)
    return None  # stream_event: the whole message comes as its own line


def _assistant(line: dict[str, Any]) -> tuple[str, str, str | None] | None:
    content = (line.get("message") or {}).get("content") or []
    shown: list[tuple[str, str, str | None]] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        btype = block.get("type")
        if btype == "text" and block.get("text"):
            shown.append(("●", _short(str(block["text"])), None))
        elif btype == "thinking":
            shown.append(
                ("∴", f"thinking ({len(str(block.get('thinking') or ''))} chars)", "dim italic")
            )
        elif btype in ("tool_use", "server_tool_use"):
            shown.append(
                ("⚙", f"{block.get('name')}: {_main_argument(block.get('input'))}", "bold")
            )
    if not shown:
        return None
    if len(shown) == 1:
        return shown[0]
    return shown[0][0], "  ".join(s[1] for s in shown), None


def _user(line: dict[str, Any]) -> tuple[str, str, str | None] | None:
    content = (line.get("message") or {}).get("content")
    if isinstance(content, str):
        return ">", _short(content), "bold"
    texts: list[str] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, dict):
            continue
        if block.get("type") == "tool_result":
            body = _short(_text_of(block.get("content")), 100)
            if block.get("is_error") is True:
                return "✗", f"tool error: {body}", "bold red"
            return "←", body, "dim"
        if block.get("type") == "text" and block.get("text"):
            texts.append(str(block["text"]))
    return (">", _short(" ".join(texts)), "bold") if texts else None


def _result(line: dict[str, Any]) -> tuple[str, str, str | None]:
    parts = [str(line.get("subtype") or "")]
    if isinstance(line.get("num_turns"), int):
        parts.append(f"{line['num_turns']} turns")
    per_model = line.get("model_usage")
    usages = (
        list(per_model.values())
        if isinstance(per_model, dict) and per_model
        else [line.get("usage")]
    )
    tokens = sum(v for u in usages if isinstance(u, dict) for v in u.values() if isinstance(v, int))
    if tokens:
        parts.append(f"{tokens:,} tokens")
    cost = line.get("total_cost_usd")
    if isinstance(cost, int | float):
        parts.append(f"${cost:.4f}")
    ms = line.get("duration_ms")
    if isinstance(ms, int):
        parts.append(f"{ms / 1000:.1f}s")
    style = "bold red" if line.get("is_error") else "bold green"
    return "■", " · ".join(parts), style


def _main_argument(value: Any) -> str:
    if isinstance(value, dict):
        for key in MAIN_ARGUMENT:
            arg = value.get(key)
            if isinstance(arg, list) and arg and all(isinstance(a, str) for a in arg):
                # An argv: a shell's script where it is one (bash -lc "..."), else joined.
                arg = arg[2] if len(arg) == 3 and arg[1] in ("-c", "-lc") else " ".join(arg)
            if isinstance(arg, str) and arg:
                return _short(arg, 100)
        for v in value.values():
            if isinstance(v, str) and v:
                return _short(v, 100)
        return ""
    return _short(str(value), 100) if value else ""


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(
            str(b.get("text")) for b in content if isinstance(b, dict) and b.get("text")
        )
    return ""


def _visible_table() -> dict[int, str]:
    table = {c: chr(0x2400 + c) for c in range(0x20)}  # C0 as its picture: ESC is ␛
    table[0x7F] = "\u2421"  # ␡
    for c in (*range(0x80, 0xA0), 0x061C, 0x200E, 0x200F, *range(0x202A, 0x202F)):
        table[c] = f"\\u{c:04x}"  # C1 (8-bit CSI, OSC ...) and bidi marks, as their escape
    for c in range(0x2066, 0x206A):
        table[c] = f"\\u{c:04x}"
    return table


#: What a terminal would obey rather than show (C0 and C1 controls, ESC and so every
#: escape sequence, DEL, the bidirectional overrides that reorder what follows), as
#: text: rich takes out only BEL, BS, VT, FF and CR, and a line's text is anyone's
#: (a tool's output, a fleet stream's message).
_VISIBLE = _visible_table()


def _visible(text: str) -> str:
    return text.translate(_VISIBLE)


def _short(text: str, width: int = WIDTH) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 1] + "…"


def status_lines(value: dict[str, Any]) -> list[str]:
    """``streamv1 status`` for a person: the daemon's counters as a few lines."""

    def num(key: str) -> int:
        v = value.get(key)
        return v if isinstance(v, int) else 0

    up = value.get("uptime_s")
    up_s = int(up) if isinstance(up, int | float) else 0
    uptime = (
        f"{up_s // 3600}h{up_s % 3600 // 60:02d}m"
        if up_s >= 3600
        else f"{up_s // 60}m{up_s % 60:02d}s"
    )
    found = value.get("items")
    items: dict[str, Any] = found if isinstance(found, dict) else {}
    lines = [
        f"streamv1 tail, up {uptime}: {num('files')} files followed, "
        f"{num('behind_bytes') / 1e6:.1f} MB behind",
        f"output: {value.get('output', '?')}"
        + (
            f" ({num('output_held_bytes'):,} bytes held: it cannot take more)"
            if num("output_held_bytes")
            else ""
        ),
        "lines: " + ", ".join(f"{k} {v:,}" for k, v in sorted(items.items()) if isinstance(v, int))
        if items
        else "lines: none yet",
        f"live streams: {num('streams_active')} active, {len(value.get('claims') or {})} "
        f"sessions claimed; suppressed {num('suppressed'):,}, dropped "
        f"{num('stream_dropped'):,}",
        f"subscribers: {num('subscribers')} (dropped {num('subscriber_dropped'):,})",
    ]
    publish = value.get("publish")
    if isinstance(publish, dict):
        lines.append(
            "publisher: "
            + ", ".join(f"{k} {v}" for k, v in publish.items() if not isinstance(v, dict | list))
        )
    trouble = [
        (k, num(k))
        for k in (
            "unwatched_folders",
            "watch_errors",
            "fd_exhausted",
            "socket_refused",
            "stream_parse_errors",
            "ambiguous",
        )
        if num(k)
    ]
    if trouble:
        lines.append("attention: " + ", ".join(f"{k.replace('_', ' ')} {n}" for k, n in trouble))
    error = value.get("last_error")
    if isinstance(error, dict):
        where = f"{error.get('path')}: " if error.get("path") else ""
        lines.append(f"last error: {error.get('at')} {where}{error.get('event')}")
    else:
        lines.append("last error: none")
    return lines
