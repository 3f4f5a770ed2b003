#!/usr/bin/env bash
# `lint <repo>/config` on the real repositories of ../shared/repos: wall time of the whole run
# (render + lint + report, measured outside the process), and the part of it spent in kustomize
# (what lint reports with CAPI_CONFORMANCE_TIMINGS=1: its slowest root's render, roots render in
# parallel). Medians of $RUNS rounds.
#
# Usage: scripts/bench-lint-config.sh [REPO_DIR...]   (default: every ../shared/repos/*; RUNS=7)
# Needs a release binary (target/release/capi-conformance; built if missing) and kubectl or
# kustomize on PATH.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-7}
bin=target/release/capi-conformance
[ -x "$bin" ] || cargo build --release --bin capi-conformance >&2
repos=("$@")
[ ${#repos[@]} -gt 0 ] || repos=(../shared/repos/*/)

# shellcheck source=lib/machine.sh
. scripts/lib/machine.sh
load_before=$(load_average)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {m=int((NR+1)/2); printf "%.3f", a[m]}'; }

# The kustomize roots of a repository (from its SOURCE), and what `lint` is given: the root's
# config/ when the repository has one root, the repository itself when it has several.
roots_of() { sed -n 's/.*kustomize roots\{0,1\}: *//p' "$1/SOURCE" | tr ',' '\n' | sed 's/^ *//; s/ *$//' | grep .; }

rows=$(
printf '| repository | input | roots | lint wall (median s) | in kustomize (median s) | kustomize share (median) |\n|---|---|---|---|---|---|\n'
for repo in "${repos[@]}"; do
  repo=${repo%/}
  [ -f "$repo/SOURCE" ] || continue
  mapfile -t roots < <(roots_of "$repo")
  if [ ${#roots[@]} -eq 1 ]; then input="$repo/$(dirname "${roots[0]}")"; else input="$repo"; fi
  : > "$tmp/lint"; : > "$tmp/kust"; : > "$tmp/share"
  for _ in $(seq "$RUNS"); do
    # lint reports the time its kustomize processes took (roots render in parallel: the
    # slowest root is the kustomize part of the wall time).
    t0=$(now)
    CAPI_CONFORMANCE_TIMINGS=1 "$bin" lint "$input" -o json > /dev/null 2> "$tmp/err" || [ $? -eq 1 ]
    t1=$(now)
    echo "$t1 - $t0" | bc >> "$tmp/lint"
    k=$(sed -n 's/.*slowest root: \([0-9.]*\) ms.*/\1/p' "$tmp/err" | awk '{printf "%.3f", $1 / 1000}')
    echo "$k" >> "$tmp/kust"
    echo "100 * $k / ($t1 - $t0)" | bc -l >> "$tmp/share"
  done
  printf '| %s | `lint %s` | %d | %s | %s | %.0f%% |\n' "$(basename "$repo")" "$input" "${#roots[@]}" \
    "$(median < "$tmp/lint")" "$(median < "$tmp/kust")" "$(median < "$tmp/share")"
done
)
machine_header "$load_before"
echo "Median of $RUNS rounds."
echo
echo "$rows"
