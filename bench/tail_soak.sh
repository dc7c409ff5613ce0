#!/usr/bin/env bash
# Soak: the SIGKILL test of tests/test_tail.py with many more seeds. Each seed is a
# different random interleaving of writes (partial lines included) over three
# sessions, a session with a subagent (sidecar) and one whose subagent has no
# sidecar, with 12 SIGKILLs at random instants (before the first checkpoint,
# mid-read, mid-write, mid-commit). Every seed's output is compared, per session and
# actor, with `convert` of the same files; the summary counts lines lost and doubled.
# Usage: bench/tail_soak.sh [SEEDS]   (default 25 seeds: 300 kills, ~7 min)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-venv test
n="${1:-25}"
report="$(mktemp)"
trap 'rm -f "$report"' EXIT
status=0
STREAMV1_SOAK_REPORT="$report" STREAMV1_SOAK_SEEDS="$(seq -s, 100 $((99 + n)))" \
  .venv/bin/pytest -q -p no:randomly tests/test_tail.py -k sigkill || status=$?
.venv/bin/python - "$report" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
total = {k: sum(r[k] for r in rows) for k in ("kills", "lines", "lost", "doubled")}
print(f"soak: {len(rows)} seeds, {total['kills']} SIGKILLs, {total['lines']} lines expected; "
      f"lost {total['lost']}, doubled {total['doubled']}")
PY
exit "$status"
