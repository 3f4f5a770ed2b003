#!/usr/bin/env bash
# Produces docs/report.png, the README's picture of the HTML report: on top the matrix of a
# passing `check --embedded`, below the report of a run whose target mock has one fault
# (infra-machine/provider-id), focused through the report's URL query on the failing rule:
# the matrix row, the failure expanded (evidence, fix, contract link) and the scenario's
# steps and timeline. Needs Debian's chromium and ImageMagick's convert.
#
# Usage: scripts/screenshot.sh        (SCREENSHOT_OUT=FILE to write elsewhere)
set -euo pipefail
cd "$(dirname "$0")/.."

out=${SCREENSHOT_OUT:-docs/report.png}
dir=reports/screenshot
mkdir -p "$dir" "$(dirname "$out")"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

cargo build --release --bins
PATH="$PWD/target/release:$PATH"
export PATH

capi-conformance check --embedded --progress never --html "$dir/pass.html" >"$tmp/pass.txt"
rc=0
capi-conformance check --embedded --progress never --mock-faults infra-machine/provider-id \
  --html "$dir/fail.html" >"$tmp/fail.txt" || rc=$?
if [ "$rc" -ne 1 ]; then
  echo "screenshot: the faulty run should fail (exit 1), got exit $rc" >&2
  exit 1
fi

# shot URL WIDTH,HEIGHT PNG
shot() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --disable-sync --no-first-run --user-data-dir="$tmp/profile" \
    --hide-scrollbars --virtual-time-budget=2000 --window-size="$2" --screenshot="$3" "$1" \
    >/dev/null 2>"$tmp/chromium.err"
  [ -s "$3" ] || { cat "$tmp/chromium.err" >&2; exit 1; }
}

shot "file://$PWD/$dir/pass.html" 1400,560 "$tmp/pass.png"
shot "file://$PWD/$dir/fail.html?outcome=fail&role=infra-machine&open=failure-1&only=matrix,failures,timeline-SC-inframachine" \
  1400,1260 "$tmp/fail.png"

convert "$tmp/pass.png" \( -size 1400x6 xc:'#8c959f' \) "$tmp/fail.png" -append -strip \
  -colors 64 "$out"
size=$(stat -c %s "$out")
echo "screenshot: $out ($size bytes)"
[ "$size" -lt 300000 ] || { echo "screenshot: $out is larger than 300 KB" >&2; exit 1; }
