#!/usr/bin/env bash
# A fresh clone is green, and shared data is never silently skipped.
#
# Clones the committed repository into a temporary directory, where no ../shared lies beside it,
# and runs the test binaries that read ../shared there (the flect golden table, the lint and the
# static-only corpus tests, the schema/CEL corpus unit tests of every crate):
#   1. without CAPI_CONFORMANCE_REQUIRE_SHARED they pass, printing their skip lines;
#   2. with CAPI_CONFORMANCE_REQUIRE_SHARED=1 they fail.
# The build reuses this checkout's target directory (CARGO_TARGET_DIR), so only the crate itself
# is compiled again, not its dependencies. Cargo names a path package's artifacts without its
# directory: the clone's packages are renamed (capi-conformance-fresh-clone, …, in the clone only) so
# its artifacts do not replace this checkout's (whose test binaries have this checkout's
# CARGO_MANIFEST_DIR compiled in); the artifact names do not depend on the clone's directory,
# so each run replaces the last run's. The clone lies outside the target directory (cargo records
# source files under the target directory by their path relative to it, which would make the two
# checkouts' files one and the same).
#
#   scripts/fresh-clone-check.sh            (from the repository root; .ci/run runs it)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
target=${CARGO_TARGET_DIR:-$root/target}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git clone -q --no-local "$root" "$tmp/capi-conformance"
cd "$tmp/capi-conformance"
if [ -e ../shared ]; then
  echo "fresh-clone: $tmp/shared exists; cannot simulate a clone without shared data" >&2
  exit 1
fi
sed -i '0,/^name = "capi-conformance"$/s//name = "capi-conformance-fresh-clone"/' Cargo.toml
grep -q '^name = "capi-conformance-fresh-clone"$' Cargo.toml
# The workspace's other crates too: each renamed, and the workspace's dependency on it pointed at
# the new name (`package =`), so code still calls it by its own name.
for manifest in crates/*/Cargo.toml; do
  crate=$(sed -n 's/^name = "\(.*\)"$/\1/p' "$manifest" | head -1)
  sed -i "0,/^name = \"$crate\"\$/s//name = \"$crate-fresh-clone\"/" "$manifest"
  sed -i "s|^$crate = { path = \"\(.*\)\" }\$|$crate = { path = \"\1\", package = \"$crate-fresh-clone\" }|" Cargo.toml
  grep -q "package = \"$crate-fresh-clone\"" Cargo.toml
done
tests=(--test flect_golden --test lint --test scenarios --lib)
# Test-name filters: the tests reading shared data and the fresh_clone_* self-checks.
filters=(golden corpus static_only:: components:: repos:: sarif:: fixture_documents_agree fresh_clone)

run() {
  env -u CAPI_CONFORMANCE_SHARED_DIR CARGO_TARGET_DIR="$target" \
    cargo test --offline --no-fail-fast "${tests[@]}" -- "${filters[@]}" >"$tmp/$1.log" 2>&1
}

unset CAPI_CONFORMANCE_REQUIRE_SHARED
if ! run skip; then
  cat "$tmp/skip.log" >&2
  echo "fresh-clone: the tests failed on a clone without ../shared" >&2
  exit 1
fi
skips=$(grep -c '^skipped: .* not found (no shared data' "$tmp/skip.log" || true)
passed=$(grep -c '^test result: ok' "$tmp/skip.log" || true)
echo "fresh-clone: without ../shared: $passed test binaries passed, $skips skip lines:"
grep '^skipped: ' "$tmp/skip.log" | sed 's/^/  /'
if [ "$skips" -lt 10 ]; then
  echo "fresh-clone: expected a skip line from every test that needs ../shared" >&2
  exit 1
fi

export CAPI_CONFORMANCE_REQUIRE_SHARED=1
if run require; then
  cat "$tmp/require.log" >&2
  echo "fresh-clone: with CAPI_CONFORMANCE_REQUIRE_SHARED=1 the tests passed without ../shared" >&2
  exit 1
fi
required=$(grep -c 'CAPI_CONFORMANCE_REQUIRE_SHARED=1 requires it' "$tmp/require.log" || true)
if [ "$required" -lt "$skips" ]; then
  cat "$tmp/require.log" >&2
  echo "fresh-clone: $skips tests skipped without ../shared but only $required failed for it when required" >&2
  exit 1
fi
echo "fresh-clone: with CAPI_CONFORMANCE_REQUIRE_SHARED=1: failed as required ($required missing-data failures)"
