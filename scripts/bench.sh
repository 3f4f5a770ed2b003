#!/usr/bin/env bash
# Measures capi-conformance side by side with the references it replaces and prints ONE table
# (Markdown, also written to $BENCH_OUT, default reports/bench.md):
#   (a) `check --embedded` verdict wall time (median of $RUNS) and peak RSS
#   (b) detection latency p50/p99, provider write -> step sees it: our watch observer vs a
#       polling observer at the CAPI e2e framework's 10 s interval, same run, same objects
#   (c) lint throughput on the generated 1,000-CRD corpus and peak RSS, and the per-CRD cost
#       of `lint` vs `kubectl apply --dry-run=server` of the same CRDs against `serve`
#   (d) embedded server GET / merge-PATCH req/s (in-process, TCP+TLS), watch fan-out to 100
#       watchers, memory at 10,000 objects
# It builds the release binaries once and measures whatever is in the tree.
#
# Usage: scripts/bench.sh            (RUNS=5 by default; BENCH_OUT=FILE to change the copy)
#        scripts/bench.sh check      (a) only: `check --embedded`, the figure README shows
set -euo pipefail
cd "$(dirname "$0")/.."
ONLY=${1:-all}
case "$ONLY" in all|check) ;; *) echo "usage: scripts/bench.sh [check]" >&2; exit 2 ;; esac

RUNS=${RUNS:-5}
BENCH_OUT=${BENCH_OUT:-reports/bench.md}
LATENCY_OBJECTS=${LATENCY_OBJECTS:-200}
KUBECTL=${KUBECTL:-kubectl}

tmp=$(mktemp -d)
serve_pid=""
cleanup() {
  if [ -n "$serve_pid" ] && kill -0 "$serve_pid" 2>/dev/null; then
    kill -INT "$serve_pid" 2>/dev/null || true
    wait "$serve_pid" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

log() { echo "bench: $*" >&2; }

# ---- build once ----------------------------------------------------------------------------
log "building release binaries and the measurement driver"
driver=$(cargo build --release --bins --bench bench_driver --message-format=json-render-diagnostics \
  | jq -r 'select(.reason == "compiler-artifact" and .target.name == "bench_driver" and .executable != null) | .executable' \
  | tail -1)
[ -x "$driver" ] || { echo "bench: no bench_driver executable" >&2; exit 1; }
PATH="$PWD/target/release:$PATH"
export PATH

# ---- helpers --------------------------------------------------------------------------------
# measure LABEL CMD...: runs CMD once (stdout kept in $tmp/LABEL.out; exit 0 or 1 accepted: for
# capi-conformance a verdict is a result) and appends "wall_ms rss_kib cpu_s" to $tmp/LABEL.runs.
measure() {
  local label=$1
  shift
  local t0 t1 rc=0
  t0=$(date +%s%N)
  /usr/bin/time -f '%M %U %S' -o "$tmp/$label.time" "$@" >"$tmp/$label.out" 2>"$tmp/$label.err" || rc=$?
  t1=$(date +%s%N)
  if [ "$rc" -gt 1 ]; then
    echo "bench: $label failed (exit $rc):" >&2
    tail -20 "$tmp/$label.err" >&2
    exit 1
  fi
  tail -1 "$tmp/$label.time" | awk -v wall=$(((t1 - t0) / 1000000)) '{ printf "%d %d %.2f\n", wall, $1, $2 + $3 }' >>"$tmp/$label.runs"
}
# median LABEL COLUMN: the median of column COLUMN (1 wall ms, 2 RSS KiB, 3 CPU s) of LABEL's runs.
median() { awk -v c="$2" '{ print $c }' "$tmp/$1.runs" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maximum() { awk -v c="$2" '$c > m { m = $c } END { print m + 0 }' "$tmp/$1.runs"; }
# metric NAME: a value the driver printed as "metric NAME VALUE".
metric() { awk -v n="$1" '$1 == "metric" && $2 == n { print $3 }' "$tmp"/*.metrics; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
# shellcheck source=lib/machine.sh
. scripts/lib/machine.sh
load_before=$(load_average)

# ---- (a) check --embedded -------------------------------------------------------------------
log "(a) check --embedded x$RUNS"
for _ in $(seq "$RUNS"); do
  measure check capi-conformance check --embedded --progress never -o json
done
check_cells=$(jq '.results | length' "$tmp/check.out")
if [ "$ONLY" = check ]; then
  {
    machine_header "$load_before"
    echo "Median of $RUNS runs; wall time and peak RSS of each run: $(awk '{ printf "%s%.2f s %.0f MiB", (NR > 1 ? ", " : ""), $1 / 1000, $2 / 1024 }' "$tmp/check.runs")."
    echo
    echo "| what | figure | goal |"
    echo "|---|---|---|"
    echo "| \`check --embedded\` verdict wall time (median) | $(calc '%.2f s' "$(median check 1) / 1000") | ≤ 1.5 s |"
    echo "| \`check --embedded\` peak RSS (largest run) | $(calc '%.0f MiB' "$(maximum check 2) / 1024") | ≤ 80 MB |"
    echo "| cells judged | $check_cells | — |"
  } | tee "$BENCH_OUT"
  exit 0
fi

# ---- (b) detection latency ------------------------------------------------------------------
log "(b) detection latency: watch vs 10 s polling, $LATENCY_OBJECTS objects (about 30 s)"
"$driver" latency --objects "$LATENCY_OBJECTS" --window-secs 15 --poll-secs 10 >"$tmp/latency.metrics"

# ---- (c) lint vs kubectl apply --dry-run=server -----------------------------------------------
log "(c) lint throughput and kubectl apply --dry-run=server"
"$driver" corpus "$tmp/corpus" >"$tmp/corpus.metrics"
for _ in $(seq "$RUNS"); do
  measure lint capi-conformance lint "$tmp/corpus/corpus.yaml" -o json
  measure lintcrds capi-conformance lint "$tmp/corpus/crds.yaml" -o json
done
capi-conformance serve --write-kubeconfig "$tmp/kubeconfig" >"$tmp/serve.out" 2>"$tmp/serve.err" &
serve_pid=$!
for _ in $(seq 600); do
  grep -q '^serving' "$tmp/serve.out" && break
  kill -0 "$serve_pid" 2>/dev/null || { cat "$tmp/serve.err" >&2; exit 1; }
  sleep 0.1
done
grep -q '^serving' "$tmp/serve.out" || { echo "bench: serve did not start" >&2; exit 1; }
kubectl_runs=${KUBECTL_RUNS:-3}
for _ in $(seq "$kubectl_runs"); do
  measure kubectl "$KUBECTL" --kubeconfig "$tmp/kubeconfig" --cache-dir "$tmp/kube-cache" \
    apply --dry-run=server -f "$tmp/corpus/crds.yaml"
  accepted=$(grep -c '(server dry run)' "$tmp/kubectl.out" || true)
  if [ "$accepted" != "$(metric corpus_crds)" ]; then
    echo "bench: kubectl accepted $accepted of $(metric corpus_crds) CRDs:" >&2
    tail -5 "$tmp/kubectl.err" >&2
    exit 1
  fi
done
serve_hwm_kib=$(awk '/^VmHWM/ { print $2 }' "/proc/$serve_pid/status")
kill -INT "$serve_pid"
wait "$serve_pid" || true
serve_pid=""

# ---- (d) embedded server --------------------------------------------------------------------
log "(d) embedded server requests/s, watch fan-out, memory at 10,000 objects"
"$driver" server --seconds 3 >"$tmp/server.metrics"
/usr/bin/time -f '%M' -o "$tmp/memory.time" "$driver" memory --objects 10000 >"$tmp/memory.metrics"


# ---- the table ------------------------------------------------------------------------------
check_ms=$(median check 1)
check_rss=$(maximum check 2)
corpus_bytes=$(metric corpus_bytes)
crds=$(metric corpus_crds)
lint_ms=$(median lint 1)
lint_cpu=$(median lint 3)
lint_cpu=$(calc '%.2f' "$lint_cpu < 0.01 ? 0.01 : $lint_cpu")
lint_rss=$(maximum lint 2)
lintcrds_ms=$(median lintcrds 1)
kubectl_ms=$(median kubectl 1)
kubectl_rss=$(maximum kubectl 2)
w50=$(metric latency_watch_p50_ms)
w99=$(metric latency_watch_p99_ms)
p50=$(metric latency_poll_p50_ms)
p99=$(metric latency_poll_p99_ms)
mem_after=$(metric memory_rss_after_mib)
mem_before=$(metric memory_rss_before_mib)

# ratio X: X with 3 significant digits at most, then "×".
ratio() { awk -v r="$1" 'BEGIN { f = r >= 100 ? "%.0f×" : (r >= 10 ? "%.1f×" : "%.2f×"); printf f, r }'; }
# lower OURS REF: how many times better ours is when lower is better (time, memory).
lower() { ratio "$(calc '%.6f' "($2) / ($1)")"; }
# higher OURS REF: how many times better ours is when higher is better (throughput).
higher() { ratio "$(calc '%.6f' "($1) / ($2)")"; }

{
  machine_header "$load_before"
  echo "Median of $RUNS runs (kubectl: $kubectl_runs)."
  echo
  echo "| what | ours | reference | ratio (× better) |"
  echo "|---|---|---|---|"
  echo "| (a) \`check --embedded\` verdict wall time | $(calc '%.2f s' "$check_ms / 1000") | goal ≤ 1.5 s | $(lower "$check_ms" 1500) |"
  echo "| (a) \`check --embedded\` peak RSS (largest run), $check_cells cells | $(calc '%.0f MiB' "$check_rss / 1024") | goal ≤ 80 MB | $(lower "$check_rss / 1024" 76.3) |"
  echo "| (b) detection latency p50, provider write → step sees it, $(metric latency_objects) objects | $(calc '%.2f ms' "$w50") (watch) | $(calc '%.2f s' "$p50 / 1000") (GET every 10 s, random phase, same objects, same run) | $(lower "$w50" "$p50") |"
  echo "| (b) detection latency p99 | $(calc '%.2f ms' "$w99") (watch) | $(calc '%.2f s' "$p99 / 1000") (GET every 10 s) | $(lower "$w99" "$p99") |"
  echo "| (c) \`lint\` throughput, $crds CRDs, $(calc '%.2f MB' "$corpus_bytes / 1e6") (whole process) | $(calc '%.1f MB/s' "$corpus_bytes / 1000 / $lint_ms"), $(calc '%.0f CRDs/s' "$crds * 1000 / $lint_ms") | goal ≥ 20 MB/s per core | — |"
  echo "| (c) \`lint\` throughput per CPU-second (user+sys) | $(calc '%.1f MB/s' "$corpus_bytes / 1e6 / $lint_cpu") | goal ≥ 20 MB/s per core | $(higher "$(calc '%.3f' "$corpus_bytes / 1e6 / $lint_cpu")" 20) |"
  echo "| (c) per-CRD cost, the same $crds CRDs | $(calc '%.3f ms' "$lintcrds_ms / $crds") (\`lint\`) | $(calc '%.2f ms' "$kubectl_ms / $crds") (\`kubectl apply --dry-run=server\` → \`serve\`) | $(lower "$lintcrds_ms" "$kubectl_ms") |"
  echo "| (c) peak RSS | $(calc '%.0f MiB' "$lint_rss / 1024") (\`lint\`, whole corpus) | $(calc '%.0f MiB' "$kubectl_rss / 1024") kubectl + $(calc '%.0f MiB' "$serve_hwm_kib / 1024") server | $(lower "$lint_rss" "$kubectl_rss + $serve_hwm_kib") |"
  echo "| (d) server CR GET, in-process | $(metric server_get_inprocess_rps) req/s | — | — |"
  echo "| (d) server CR GET, TCP+TLS | $(metric server_get_tcp_rps) req/s | goal ≥ 5,000 req/s | $(higher "$(metric server_get_tcp_rps)" 5000) |"
  echo "| (d) server CR merge-PATCH, in-process | $(metric server_patch_inprocess_rps) req/s | — | — |"
  echo "| (d) server CR merge-PATCH, TCP+TLS | $(metric server_patch_tcp_rps) req/s | goal ≥ 5,000 req/s | $(higher "$(metric server_patch_tcp_rps)" 5000) |"
  echo "| (d) watch fan-out, one change → $(metric server_fanout_watchers) watchers (median) | $(metric server_fanout_p50_ms) ms | — | — |"
  echo "| (d) server RSS with $(metric memory_objects) objects | $mem_after MiB ($mem_before MiB empty) | goal < 100 MB | $(lower "$mem_after" 95.4) |"
  echo
  echo "Ratio: how many times better ours is than the reference (> 1 beats it, < 1 falls short)."
} >"$tmp/table.md"

mkdir -p "$(dirname "$BENCH_OUT")"
cp "$tmp/table.md" "$BENCH_OUT"
cat "$tmp/table.md"
log "table written to $BENCH_OUT"
