#!/usr/bin/env bash
# Fuzzing. With cargo-fuzz and a nightly toolchain: runs every target of fuzz/ for SECONDS each
# (libFuzzer, ASan) and prints executions and crashes per target; crash inputs land in
# fuzz/artifacts/<target>/ (add each as a regression case to a module of tests/fuzz/). Without them: the
# proptest fuzz targets of tests/fuzz.rs with FUZZ_CASES cases each (default 200000).
# Usage: scripts/fuzz-long.sh [SECONDS per target]   (default 300)
set -uo pipefail
secs="${1:-300}"
cd "$(dirname "$0")/.."
targets="manifest_loader schema_walker selectors server_request"

if ! command -v cargo-fuzz >/dev/null 2>&1 || ! rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
  cases="${FUZZ_CASES:-200000}"
  echo "fuzz: cargo-fuzz or a nightly toolchain is missing: running the proptests ($cases cases per target) instead"
  FUZZ_CASES="$cases" cargo test --release --test fuzz -- --test-threads=2 || exit 1
  echo "fuzz: 6 proptest targets x $cases cases = $((6 * cases)) executions, no crash"
  exit 0
fi

# Seeds: our own fixtures for the loader, a few hand-written inputs for the others.
seed() { mkdir -p "fuzz/corpus/$1"; }
seed manifest_loader
find fixtures -name '*.yaml' -size -64k | head -200 | while read -r f; do
  cp "$f" "fuzz/corpus/manifest_loader/$(echo "$f" | tr '/' '_')"
done
seed schema_walker
printf 'spec.template.spec\n{"s":{"type":"object","properties":{"spec":{"type":"object","properties":{"replicas":{"type":"integer","minimum":0}}}}},"o":{"spec":{"replicas":-1}}}' \
  > fuzz/corpus/schema_walker/seed1
seed selectors
printf 'env in (a,b),!legacy,tier!=x' > fuzz/corpus/selectors/seed1
printf 'metadata.name=w1,metadata.namespace!=b' > fuzz/corpus/selectors/seed2
seed server_request
printf '\001/api/v1/namespaces/default/configmaps?fieldValidation=Strict\napplication/json\n{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"v"}}' \
  > fuzz/corpus/server_request/seed1
printf '\000/api/v1/namespaces/default/configmaps?labelSelector=a%%20in%%20(b)&watch=false\n\n' \
  > fuzz/corpus/server_request/seed2

cargo +nightly fuzz build -O || exit 1
failed=0
for t in $targets; do
  log="fuzz/$t.log"
  cargo +nightly fuzz run -O "$t" -- -max_total_time="$secs" -print_final_stats=1 -rss_limit_mb=4096 >"$log" 2>&1
  rc=$?
  execs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1)
  crashes=$(ls "fuzz/artifacts/$t" 2>/dev/null | grep -c '^crash-\|^oom-\|^timeout-' || true)
  echo "fuzz: $t: ${execs:-?} executions in ${secs}s, exit $rc, crash/oom/timeout inputs in fuzz/artifacts/$t: ${crashes:-0}"
  if [ "$rc" != 0 ]; then failed=1; tail -40 "$log"; fi
done
exit "$failed"
