#!/usr/bin/env bash
# `lint <repo>/config` on the real repositories of ../shared/repos: wall time of the whole run
# (render + lint + report), and the part of it kustomize takes (the same overlay render lint
# does: origin and transformer annotations, run on its own). Medians of $RUNS interleaved rounds.
#
# Usage: scripts/bench-lint-config.sh [REPO_DIR...]   (default: every ../shared/repos/*; RUNS=7)
# Needs a release binary (target/release/capi-conformance; built if missing) and kubectl (or
# KUSTOMIZE="kustomize build").
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-7}
KUSTOMIZE=${KUSTOMIZE:-kubectl kustomize}
bin=target/release/capi-conformance
[ -x "$bin" ] || cargo build --release --bin capi-conformance >&2
repos=("$@")
[ ${#repos[@]} -gt 0 ] || repos=(../shared/repos/*/)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }
median() { sort -n | awk '{a[NR]=$1} END {m=int((NR+1)/2); printf "%.3f", a[m]}'; }

# The kustomize roots of a repository (from its SOURCE), and what `lint` is given: the root's
# config/ when the repository has one root, the repository itself when it has several.
roots_of() { sed -n 's/.*kustomize roots\{0,1\}: *//p' "$1/SOURCE" | tr ',' '\n' | sed 's/^ *//; s/ *$//' | grep .; }

printf '| repository | input | roots | lint wall (median s) | kustomize wall (median s) | kustomize share |\n|---|---|---|---|---|---|\n'
for repo in "${repos[@]}"; do
  repo=${repo%/}
  [ -f "$repo/SOURCE" ] || continue
  mapfile -t roots < <(roots_of "$repo")
  if [ ${#roots[@]} -eq 1 ]; then input="$repo/$(dirname "${roots[0]}")"; else input="$repo"; fi
  # One overlay per root, as lint writes it.
  overlays=()
  for r in "${roots[@]}"; do
    ov="$tmp/ov-$(echo "$repo/$r" | tr '/.' '__')"
    mkdir -p "$ov"
    rel=$(realpath --relative-to="$ov" "$repo/$r")
    printf 'resources:\n- %s\nbuildMetadata: [originAnnotations, transformerAnnotations]\n' "$rel" > "$ov/kustomization.yaml"
    overlays+=("$ov")
  done
  : > "$tmp/lint"; : > "$tmp/kust"
  for _ in $(seq "$RUNS"); do
    t0=$(now); "$bin" lint "$input" -o json > /dev/null || [ $? -eq 1 ]; t1=$(now)
    echo "$t1 - $t0" | bc >> "$tmp/lint"
    # lint renders its roots in parallel: the kustomize part is the slowest of them.
    t0=$(now)
    for ov in "${overlays[@]}"; do $KUSTOMIZE "$ov" > /dev/null 2>&1 & done
    wait
    t1=$(now)
    echo "$t1 - $t0" | bc >> "$tmp/kust"
  done
  l=$(median < "$tmp/lint"); k=$(median < "$tmp/kust")
  printf '| %s | `lint %s` | %d | %s | %s | %.0f%% |\n' "$(basename "$repo")" "$input" "${#roots[@]}" "$l" "$k" "$(echo "100 * $k / $l" | bc -l)"
done
