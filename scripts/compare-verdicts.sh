#!/usr/bin/env bash
# Same verdicts, cell for cell: runs two builds of the tool on the same inputs and compares their
# JSON reports with run-dependent values removed (start time, run id, durations and timestamps;
# scenario timelines compared without their times, scripts/lib/comparable.jq).
#
# Usage: scripts/compare-verdicts.sh OLD_BIN NEW_BIN
#   COMPARE_SCENARIOS=no leaves the scenario records (steps, timelines) out of the comparison: for an
#   OLD_BIN whose passing scenarios keep no timelines, whose records differ by design.
#
# Compared, for each binary:
#   - `check --embedded` (the mock as target, every rule, both contracts);
#   - `lint DIR` and `check --embedded --crds DIR/components.yaml` of every ../shared/corpus provider
#     (with the clusterctl variables the tests use);
#   - `lint DIR` and `check --embedded --crds DIR` of every kustomize root of every ../shared/repos tree
#     (the roots each tree's SOURCE names; clusterctl variables without defaults given a value).
# Without ../shared only the first is compared (one line says what was skipped).
# Exit 0 when every report and exit code is equal; 1 otherwise (the first lines of each difference
# are printed); 2 on bad usage.
set -euo pipefail
if [ "$#" -ne 2 ]; then
    echo "usage: $0 OLD_BIN NEW_BIN" >&2
    exit 2
fi
old="$(realpath "$1")"
new="$(realpath "$2")"
for b in "$old" "$new"; do
    [ -x "$b" ] || { echo "$b: not an executable" >&2; exit 2; }
done
command -v jq >/dev/null || { echo "jq is required" >&2; exit 2; }
cd "$(dirname "$0")/.."
shared="$(realpath -m ../shared)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# Run-dependent values: the start time, the run id, every duration and every time of day; each
# scenario timeline is kept in its comparable form (scripts/lib/comparable.jq: times and
# scheduling left out, what the provider and the tool did kept).
strip() {
    jq -S -f scripts/lib/comparable.jq "$1" \
        | jq -S --arg scenarios "${COMPARE_SCENARIOS:-yes}" \
            'del(.. | .elapsed_ms?, .started_at?, .finished_at?, .time?)
            | if $scenarios == "no" then del(.scenarios) else . end'
}

compared=0
cells=0
differing=0
# run NAME ARGS…: runs both binaries with ARGS and compares stripped stdout and exit code.
run() {
    local name="$1"
    shift
    local side bin code
    for side in old new; do
        if [ "$side" = old ]; then bin="$old"; else bin="$new"; fi
        set +e
        "$bin" "$@" -o json >"$work/$side.json" 2>"$work/$side.err"
        code=$?
        set -e
        echo "$code" >"$work/$side.code"
        if [ -s "$work/$side.json" ] && jq -e . "$work/$side.json" >/dev/null 2>&1; then
            strip "$work/$side.json" >"$work/$side.stripped"
        else
            # No report (exit 2): compare the error text instead.
            cp "$work/$side.err" "$work/$side.stripped"
        fi
    done
    compared=$((compared + 1))
    local n
    n=$(jq '.results | length' "$work/new.stripped" 2>/dev/null || echo 0)
    cells=$((cells + n))
    if cmp -s "$work/old.code" "$work/new.code" && cmp -s "$work/old.stripped" "$work/new.stripped"; then
        echo "same: $name (exit $(cat "$work/new.code"), $n results)"
    else
        differing=$((differing + 1))
        echo "DIFFERENT: $name (exit $(cat "$work/old.code") → $(cat "$work/new.code"))"
        diff "$work/old.stripped" "$work/new.stripped" | head -30 || true
    fi
}

run "check --embedded" check --embedded --progress never

if [ ! -d "$shared/corpus" ] || [ ! -d "$shared/repos" ]; then
    echo "skipped: the corpus and repository comparisons ($shared/corpus, $shared/repos not found)"
else
    # The clusterctl variables without defaults (as tests/shared/components_file.rs sets them).
    vars_of() {
        case "$1" in
        aws) echo "--var AWS_B64ENCODED_CREDENTIALS=Y3JlZHM=" ;;
        gcp) echo "--var GCP_B64ENCODED_CREDENTIALS=Y3JlZHM=" ;;
        vsphere) echo "--var VSPHERE_USERNAME=u --var VSPHERE_PASSWORD=p" ;;
        ibmcloud) echo "--var IBMCLOUD_API_KEY=a2V5" ;;
        *) echo "" ;;
        esac
    }
    for dir in "$shared"/corpus/*/; do
        p="$(basename "$dir")"
        run "lint corpus/$p" lint "$dir"
        # shellcheck disable=SC2046
        run "check --embedded --crds corpus/$p" check --embedded --progress never \
            --crds "$dir/components.yaml" $(vars_of "$p")
    done
    for tree in "$shared"/repos/*/; do
        t="$(basename "$tree")"
        # SOURCE: "…; kustomize root(s): a/config/default, b/config/default"
        roots="$(sed -n 's/.*kustomize roots\{0,1\}: *//p' "$tree/SOURCE" | tr ',' ' ')"
        for root in $roots; do
            run "lint repos/$t/$root" lint "$tree/$root"
            # shellcheck disable=SC2046
            run "check --embedded --crds repos/$t/$root" check --embedded --progress never \
                --crds "$tree/$root" $(vars_of "$t")
        done
    done
fi
echo "compare-verdicts: $compared comparisons, $cells results in the new reports, $differing different"
[ "$differing" -eq 0 ]
