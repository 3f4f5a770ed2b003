#!/usr/bin/env bash
# Load from a second process against `capi-conformance serve` (HTTPS, bearer token, keep-alive):
# 32 connections, 2 wrk threads, CR GET then CR merge-PATCH. Prints req/s, the server's CPU time per
# request (user+sys from /proc, independent of how busy the machine is) and the load average.
# Usage: benches/wrk/run.sh [path/to/capi-conformance] [seconds]   (needs `wrk`, Debian package wrk)
set -euo pipefail
bin=${1:-target/release/capi-conformance}
secs=${2:-10}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
"$bin" serve --load "$here/widgets-crd.yaml" --load "$here/widgets.yaml" --write-kubeconfig "$tmp/kc" >"$tmp/out" 2>&1 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 100); do grep -q serving "$tmp/out" 2>/dev/null && break; sleep 0.1; done
url=$(awk '{print $2}' "$tmp/out")
TOKEN=$(awk '/token:/ {print $2}' "$tmp/kc")
export TOKEN
tck=$(getconf CLK_TCK)
for script in get.lua patch.lua; do
  t0=$(awk '{print $14+$15}' "/proc/$server/stat")
  out=$(wrk -t2 -c32 -d"${secs}s" -s "$here/$script" "$url")
  t1=$(awk '{print $14+$15}' "/proc/$server/stat")
  n=$(echo "$out" | awk '/requests in/ {print $1}')
  rps=$(echo "$out" | awk '/Requests\/sec/ {print $2}')
  bad=$(echo "$out" | awk '/Non-2xx/ {print $NF}')
  cpu_us=$(( (t1 - t0) * 1000000 / tck / n ))
  echo "${script%.lua}: ${rps} req/s over ${n} requests, server CPU ${cpu_us} µs/request, non-2xx ${bad:-0}, load $(cut -d' ' -f1-3 /proc/loadavg)"
done
