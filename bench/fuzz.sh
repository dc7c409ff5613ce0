#!/usr/bin/env bash
# The long fuzz run of issue #14: bench/fuzz.sh [N] (default 20,000 mutants of the
# fixtures, in-process on every core, 1,000 of them through the command too).
# Prints mutants, tracebacks (must be 0), schema failures (must be 0); exits 1
# otherwise. One mutant in detail: .venv/bin/python bench/fuzz.py --seed S --show
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python bench/fuzz.py "${1:-20000}" "${@:2}"
