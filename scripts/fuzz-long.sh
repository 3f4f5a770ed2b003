#!/usr/bin/env bash
# Long fuzzing run: the proptest fuzz targets of tests/fuzz.rs with many more cases.
# Usage: scripts/fuzz-long.sh [cases per target]   (default 200000)
set -euo pipefail
cases="${1:-200000}"
cd "$(dirname "$0")/.."
FUZZ_CASES="$cases" cargo test --release --test fuzz -- --test-threads=2
echo "fuzz: 6 targets x $cases cases = $((6 * cases)) executions, no crash"
