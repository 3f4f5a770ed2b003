#!/usr/bin/env bash
# Determinism: runs `check --embedded` N times (release build) and prints how many runs gave a
# matrix different from the first one, timings aside (durations, start time, run id removed;
# scenario timelines compared without their times and scheduling, scripts/lib/comparable.jq).
# Usage: scripts/determinism.sh [N]   (default 50). Exit 1 when any run differs.
set -euo pipefail
runs="${1:-50}"
cd "$(dirname "$0")/.."
cargo build --release --quiet --bin capi-conformance
bin=target/release/capi-conformance
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Times removed, timelines kept in their comparable form (scripts/lib/comparable.jq).
strip() {
    jq -S -f scripts/lib/comparable.jq "$1"
}
differing=0
for i in $(seq 1 "$runs"); do
    set +e
    "$bin" check --embedded --progress never -o json >"$work/run.json" 2>"$work/run.err"
    code=$?
    set -e
    strip "$work/run.json" >"$work/run-$i.json"
    echo "$code" >>"$work/exit-codes"
    if [ "$i" -gt 1 ] && ! cmp -s "$work/run-1.json" "$work/run-$i.json"; then
        differing=$((differing + 1))
        echo "run $i differs from run 1 (exit $code):" >&2
        diff "$work/run-1.json" "$work/run-$i.json" | head -20 >&2 || true
    fi
    [ "$i" -gt 1 ] && rm -f "$work/run-$i.json"
done
echo "determinism: $runs runs, $differing differing from the first, exit codes: $(sort "$work/exit-codes" | uniq -c | awk '{printf "%s×%s ", $1, $2}')"
[ "$differing" -eq 0 ]
