#!/usr/bin/env bash
# Produces docs/report.png, the README's picture of the HTML report: on top the matrix of a
# passing `check --embedded`, below the report of a run whose target mock has one fault
# (infra-machine/provider-id), focused through the report's URL query on the failing rule:
# the matrix row, the failure expanded (evidence, fix, contract link) and the scenario's
# steps and timeline, framed in one page and photographed by headless Debian chromium.
#
# Usage: scripts/screenshot.sh        (SCREENSHOT_OUT=FILE to write elsewhere)
set -euo pipefail
cd "$(dirname "$0")/.."

out=${SCREENSHOT_OUT:-docs/report.png}
case $out in
  /*) ;;
  *) out="$PWD/$out" ;;
esac
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

# Both reports framed in one page and photographed once; the faulty one through its URL query
# (filters preset, the first failure expanded, only the matrix, the failures and the scenario).
focus='outcome=fail&amp;role=infra-machine&amp;open=failure-1&amp;only=matrix,failures,timeline-SC-inframachine'
cat >"$dir/screenshot.html" <<EOF
<!doctype html><html><head><meta charset="utf-8"><style>
body{margin:0;background:#fff} iframe{display:block;border:0;width:1400px}
#pass{height:430px} #fail{height:1480px;border-top:6px solid #8c959f}
</style></head><body>
<iframe id="pass" src="pass.html"></iframe>
<iframe id="fail" src="fail.html?$focus"></iframe>
</body></html>
EOF

rm -f "$out"
timeout 180 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
  --disable-component-update --disable-sync --no-first-run --user-data-dir="$tmp/profile" \
  --hide-scrollbars --virtual-time-budget=3000 --window-size=1400,1916 --screenshot="$out" \
  "file://$PWD/$dir/screenshot.html" >/dev/null 2>"$tmp/chromium.err" || true
[ -s "$out" ] || { tail -5 "$tmp/chromium.err" >&2; exit 1; }
size=$(stat -c %s "$out")
echo "screenshot: $out ($size bytes)"
[ "$size" -lt 300000 ] || { echo "screenshot: $out is larger than 300 KB" >&2; exit 1; }
