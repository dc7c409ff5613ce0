#!/usr/bin/env bash
# Soak: the SIGKILL test of tests/test_tail.py with many more seeds (each seed is a
# different random interleaving of writes, chunk sizes and ~12 crash points).
# Usage: bench/tail_soak.sh [SEEDS]   (default 40 seeds: ~480 crash points, ~12 min)
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup-venv test
n="${1:-40}"
STREAMV1_SOAK_SEEDS="$(seq -s, 100 $((99 + n)))" .venv/bin/pytest -q tests/test_tail.py -k sigkill
