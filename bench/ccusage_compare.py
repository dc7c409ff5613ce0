"""streamv1 sessions against ccusage, session by session, on the public corpus.

Each public session file is put in a project folder of its own (ccusage's
`session` report is one row per project folder), then both tools price them:
ccusage (`ccusage session --json --offline`, its bundled prices) and
`streamv1 sessions --json`. For every session that differs by more than 1 %, the
same file is priced a third way: ccusage's counting rules with streamv1's price
table (genai-prices). Where that third figure equals ccusage's, the two tables
agree and the difference is in the counting (docs/cost.md says which is right).

Usage: .venv/bin/python bench/ccusage_compare.py [--ccusage PATH]
  (default: `ccusage` on PATH; e.g. `npm install ccusage@17` and
  --ccusage node_modules/.bin/ccusage)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PUBLIC = ROOT.parent / "shared" / "corpus" / "public"
BIN = str(Path(sys.executable).parent / "streamv1")
sys.path.insert(0, str(ROOT))

from streamv1.translator.views import prices  # noqa: E402


def ccusage_rules_cost(path: Path) -> float:
    """What ccusage counts, priced with genai-prices: a message once per (id,
    requestId) only when it has both, its first record's usage, every cache write
    at the 5-minute rate, `<synthetic>` messages left out."""
    seen: set[tuple[str, str]] = set()
    cost = 0.0
    for raw in path.read_bytes().splitlines():
        try:
            rec = json.loads(raw)
        except ValueError:
            continue
        msg = rec.get("message")
        if rec.get("type") != "assistant" or not isinstance(msg, dict) or not msg.get("usage"):
            continue
        if msg.get("id") and rec.get("requestId"):
            key = (msg["id"], rec["requestId"])
            if key in seen:
                continue
            seen.add(key)
        model = msg.get("model")
        if not model or model == "<synthetic>":
            continue
        u = msg["usage"]
        got = prices.cost_usd(
            model,
            "anthropic",
            {
                "input_tokens": u.get("input_tokens", 0),
                "output_tokens": u.get("output_tokens", 0),
                "cache_read": u.get("cache_read_input_tokens", 0),
                "cache_creation": u.get("cache_creation_input_tokens", 0),
            },
        )
        cost += got[0] if got else 0.0
    return cost


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--ccusage", default=shutil.which("ccusage") or "ccusage")
    args = ap.parse_args()
    if not PUBLIC.is_dir():
        sys.exit(f"no public corpus at {PUBLIC}")
    with tempfile.TemporaryDirectory() as tmp:
        projects = Path(tmp) / "projects"
        for path in sorted(PUBLIC.glob("*/*.jsonl")):
            folder = projects / f"{path.parent.name}--{path.stem}"
            folder.mkdir(parents=True)
            shutil.copy(path, folder / path.name)
        env = {**os.environ, "CLAUDE_CONFIG_DIR": tmp}
        proc = subprocess.run(
            [args.ccusage, "session", "--json", "--offline"],
            env=env,
            capture_output=True,
            check=True,
        )
        theirs = {s["sessionId"]: s for s in json.loads(proc.stdout)["sessions"]}
        version = subprocess.run(
            [args.ccusage, "--version"], capture_output=True, text=True, check=False
        ).stdout.strip()
        within, explained, rows = 0, 0, []
        for folder, s in sorted(theirs.items()):
            out = subprocess.run(
                [BIN, "sessions", "--json", str(projects / folder)], capture_output=True, check=True
            ).stdout
            ours = [json.loads(x) for x in out.splitlines()]
            cost = sum(r["cost_usd"] or 0 for r in ours)
            rel = abs(cost - s["totalCost"]) / s["totalCost"] if s["totalCost"] else 0.0
            if rel <= 0.01:
                within += 1
                continue
            third = ccusage_rules_cost(next((projects / folder).glob("*.jsonl")))
            agrees = abs(third - s["totalCost"]) <= 0.01 * s["totalCost"]
            explained += agrees
            rows.append(
                f"{rel * 100:6.1f}%  ccusage ${s['totalCost']:.6f}  streamv1 ${cost:.6f}  "
                f"ccusage's rules, genai-prices ${third:.6f}  {folder}"
            )
    print(f"ccusage {version}, genai-prices {prices.version()}: {len(theirs)} sessions")
    print(f"  within 1 %: {within}")
    print(
        f"  differing: {len(rows)}, of which ccusage's counting with genai-prices "
        f"reproduces ccusage within 1 %: {explained}"
    )
    for row in rows:
        print("  " + row)


if __name__ == "__main__":
    main()
