#!/usr/bin/env bash
# Wall time of each real CAPI manager's verdict (../shared/providers/capi-v1.11.11), run as a
# provider team runs it (`check --embedded --crds <components> --sample <ours> --provider-cmd
# '<manager> …'`, no --timeout): median of $RUNS runs (default 3), with each run's exit code.
# Prints one Markdown table (also to $BENCH_OUT, default reports/bench-managers.md).
#
# Usage: scripts/bench-managers.sh      (RUNS=3; SHARED=../shared)
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-3}
SHARED=${SHARED:-../shared}
BENCH_OUT=${BENCH_OUT:-reports/bench-managers.md}
capi="$SHARED/providers/capi-v1.11.11"
[ -d "$capi" ] || { echo "bench-managers: $capi not found" >&2; exit 2; }

# shellcheck source=lib/machine.sh
. scripts/lib/machine.sh
load_before=$(load_average)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cargo build --release --quiet
bin=target/release/capi-conformance
for m in capd-manager kubeadm-bootstrap-manager kubeadm-controlplane-manager cluster-api-manager; do
  gzip -dc "$capi/$m.gz" > "$tmp/$m" && chmod +x "$tmp/$m"
done
flags='--kubeconfig {kubeconfig} --webhook-cert-dir {webhook-cert-dir} --webhook-port {webhook-port} --health-addr {health-addr} --diagnostics-address {metrics-addr} --insecure-diagnostics'

# name | components | manager | extra arguments
cases=(
  "CAPD in-memory (DevCluster, DevMachine + templates)|capd|capd-manager|--sample tests/data/capi-managers/capd-in-memory.yaml --kinds Dev* --var CLUSTER_TOPOLOGY=true"
  "CABPK, v1beta1 sample|cabpk|kubeadm-bootstrap-manager|--sample tests/data/capi-managers/cabpk-v1beta1.yaml"
  "CABPK, v1beta2 sample|cabpk|kubeadm-bootstrap-manager|--sample tests/data/capi-managers/cabpk-v1beta2.yaml"
)

# row NAME CMD...: runs CMD $RUNS times and appends one table row (median wall, each run, exit codes).
out="| manager | median wall (s) | runs (s) | exit codes |\n|---|---|---|---|\n"
row() {
  local name=$1 start end code median
  shift
  local times=() codes=()
  for _ in $(seq "$RUNS"); do
    start=$(date +%s.%N)
    set +e
    "$@" >/dev/null 2>&1
    code=$?
    set -e
    end=$(date +%s.%N)
    times+=("$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')")
    codes+=("$code")
  done
  median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  out+="| $name | $(printf '%.1f' "$median") | $(printf '%.1f ' "${times[@]}")| ${codes[*]} |\n"
}

for c in "${cases[@]}"; do
  IFS='|' read -r name comps mgr extra <<<"$c"
  # shellcheck disable=SC2086 # $extra is a word list
  row "$name" "$bin" check --embedded --progress never -o json --crds "$capi/components/$comps.yaml" $extra \
    --provider-cmd "$tmp/$mgr $flags" --report-dir "$tmp/reports"
done
# KCP with its companions, as clusterctl installs them: three managers in one run.
samples=tests/data/capi-managers
row "KCP + CABPK + CAPD in-memory, one run" \
  "$bin" check --embedded --progress never -o json \
  --crds "$capi/components/kcp.yaml" --provider-cmd "$tmp/kubeadm-controlplane-manager $flags" \
  --crds "$capi/components/cabpk.yaml" --provider-cmd "$tmp/kubeadm-bootstrap-manager $flags" \
  --crds "$capi/components/capd.yaml" --provider-cmd "$tmp/capd-manager $flags" \
  --kinds 'Kubeadm*,Dev*' --var CLUSTER_TOPOLOGY=true \
  --sample "$samples/kcp-in-memory.yaml" --sample "$samples/cabpk-v1beta2.yaml" \
  --sample "$samples/capd-in-memory.yaml" --report-dir "$tmp/reports"
# CAPI core as the reference of the simulation (--core-cmd), the mock as target.
row "core reference (--core-cmd cluster-api-manager, mock target)" \
  "$bin" check --embedded --progress never -o json --core-crds "$capi/components/core.yaml" \
  --core-cmd "$tmp/cluster-api-manager $flags" --report-dir "$tmp/reports"

mkdir -p "$(dirname "$BENCH_OUT")"
{ machine_header "$load_before"; echo "Median of $RUNS runs."; echo; printf "%b" "$out"; } | tee "$BENCH_OUT"
