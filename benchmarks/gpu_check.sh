#!/usr/bin/env bash
# The GPU check (benchmarks/gpu_check.py) in one command, from any directory:
#   bash benchmarks/gpu_check.sh OUT [--dry-run]
# Everything it writes goes under OUT, its console output too (OUT/gpu_check.log).
# Exit status: 0 when every stage passed, 1 when one did not, 2 on a usage error.
set -u
if [ $# -lt 1 ]; then
    echo "usage: bash benchmarks/gpu_check.sh OUT [--dry-run]" >&2
    exit 2
fi
mkdir -p "$1" && out="$(cd "$1" && pwd)" || exit 2
shift
cd "$(dirname "$0")/.." || exit 2
PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}" "${PYTHON:-python3}" benchmarks/gpu_check.py \
    "$out" "$@" 2>&1 | tee "$out/gpu_check.log"
exit "${PIPESTATUS[0]}"
