"""Token counts are whole numbers ≥ 0 (issue #39, costs): a negative one in any
source's usage made a negative session cost and a negative total. Now it is a
problem line naming file:line, and counted as 0, in every adapter; the ledger
(``sessions``) counts no negative figure a line may still carry."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
from conftest import ROOT
from helpers import convert_file, framing_violations, lines_of

from streamv1.translator.views.ledger import Ledger

TD = ROOT / "testdata"

#: A file of each source that carries token counts (Gemini's chat file and its
#: stream, Codex's rollout and its exec stream, both Claude views, stella, stream_v1).
FILES = {
    "claude-session": TD / "claude-session" / "interactive_four_turns.jsonl",
    "claude-stream": TD / "claude-stream" / "bash.jsonl",
    "codex-rollout": TD / "codex" / "c12_web_search.rollout.jsonl",
    "codex-exec": TD / "codex" / "c12_web_search.exec.jsonl",
    "gemini-chat": TD / "gemini" / "chat_shell.jsonl",
    "gemini-stream": TD / "gemini" / "stream_shell.jsonl",
    "stella": TD / "stella" / "basic_turn.jsonl",
    "stream_v1": TD / "stream_v1" / "from_claude_session_interactive.jsonl",
}
#: Where token counts are, by key, in the sources above.
COUNTS = {
    "input_tokens",
    "output_tokens",
    "cache_read_input_tokens",
    "cache_creation_input_tokens",
    "cached_input_tokens",
    "cache_read",
    "cache_creation",
    "cache_read_tokens",
    "inputTokens",
    "outputTokens",
    "cacheReadInputTokens",
    "input",
    "output",
    "cached",
    "thoughts",
    "total_tokens",
}


def _negated(value: Any, under_usage: bool = False) -> Any:
    """Every positive token count made negative (the same magnitude)."""
    if isinstance(value, dict):
        usage = under_usage or any(k in value for k in ("input_tokens", "inputTokens", "input"))
        return {
            k: (-v if usage and k in COUNTS and type(v) is int and v > 0 else _negated(v, usage))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_negated(v, under_usage) for v in value]
    return value


def _negative_input(src: Path, dst: Path) -> int:
    """``src`` with its counts negated, as ``dst``; how many lines changed."""
    changed = 0
    out = []
    for raw in src.read_bytes().splitlines():
        rec = orjson.loads(raw)
        neg = _negated(rec)
        changed += neg != rec
        out.append(orjson.dumps(neg))
    dst.write_bytes(b"\n".join(out) + b"\n")
    return changed


def _negatives(value: Any) -> list[int]:
    if isinstance(value, dict):
        return [n for v in value.values() for n in _negatives(v)]
    if isinstance(value, list):
        return [n for v in value for n in _negatives(v)]
    return [value] if type(value) is int and value < 0 else []


@pytest.mark.parametrize("name", list(FILES))
def test_a_negative_token_count_is_a_problem_line_and_counted_as_zero(
    tmp_path: Path, name: str
) -> None:
    src = FILES[name]
    neg = tmp_path / src.name
    assert _negative_input(src, neg) > 0, "the fixture carries token counts"
    data, totals = convert_file(neg)
    lines = lines_of(data)
    assert not framing_violations(data, name)
    said = [x["message"] for x in lines if x.get("subtype") == "error"]
    counted = [m for m in said if "not a token count (counted as 0)" in m]
    assert counted, said
    assert all(m.startswith(f"{neg}:") for m in counted)  # file:line
    for line in lines:
        if line["type"] in ("result", "assistant"):
            usage = [line.get("usage"), line.get("model_usage"), line.get("message", {})]
            assert not _negatives(usage), line
    u = totals.framing.usage
    assert min(u.input_tokens, u.output_tokens, u.cache_read, u.cache_creation) >= 0
    book = Ledger()
    for line in lines:
        book.feed(line)
    for row in book.rows.values():
        assert min(row.usage.values()) >= 0
        assert (row.as_json().get("cost_usd") or 0) >= 0


def test_sessions_end_to_end_shows_no_negative_tokens_or_cost(
    tmp_path: Path, streamv1_bin: str
) -> None:
    neg = tmp_path / "s.jsonl"
    _negative_input(FILES["claude-session"], neg)
    proc = subprocess.run(
        [streamv1_bin, "sessions", "--json", str(tmp_path)],
        capture_output=True,
        timeout=60,
        check=False,
    )
    rows = [orjson.loads(x) for x in proc.stdout.splitlines()]
    assert len(rows) == 1 and rows[0]["runs"] == 4, proc.stderr
    assert not _negatives(rows[0]) and rows[0]["cost_usd"] >= 0, rows[0]
    out = subprocess.run(
        [streamv1_bin, "convert", str(neg)], capture_output=True, timeout=60, check=False
    )
    assert out.returncode == 1  # a body that does not fit, as any (--lenient: 0)
    assert b"input_tokens=-" not in out.stderr and b"not a token count" in out.stdout
