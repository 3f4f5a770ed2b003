#!/usr/bin/env bash
# Builds the manager of a real provider from Go modules: tools/providers/NAME/go.mod pins the
# provider's module and names its main package in a `tool` directive (tools/providers/README.md).
# Static (CGO_ENABLED=0), -trimpath -ldflags "-s -w", with the Go module proxy.
#
# The manager goes to a cache folder keyed by the pins, this script and the Go version, outside
# the checkout ($CAPI_CONFORMANCE_CACHE, default ~/.cache/capi-conformance):
# providers/<name>-<version>-<key>/manager. One build at a time (flock): a second caller waits
# for the first and reuses its manager.
#
# On stdout, and nothing else there:
#   manager=<the built manager>
#   config=<the provider module's config/ folder, in place in the Go module cache>
# (with --all, each provider's two lines after a `name=<name>` line). Progress and errors go to
# stderr.
#
# Usage: scripts/providers/build.sh NAME | --all | --list
#   exit 0: built or reused; 2: cannot build here (no Go, a module the proxy refuses, an unknown NAME)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
self="$root/scripts/providers/build.sh"
providers="$root/tools/providers"

GOBUILD_WHAT="providers build"
# shellcheck source=../lib/go-build.sh
. "$root/scripts/lib/go-build.sh"
die() { gobuild_die "$@"; }

names() {
  local d
  for d in "$providers"/*/; do
    [ -f "$d/go.mod" ] && basename "$d"
  done
  return 0
}

case "${1:-}" in
  ""|-h|--help)
    if [ -n "${1:-}" ]; then sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0; fi
    die "name a provider (one of: $(names | paste -sd' ')) or --all"
    ;;
  --list) names; exit 0 ;;
  --all)
    [ $# -eq 1 ] || die "--all takes no other argument"
    status=0
    for name in $(names); do
      echo "name=$name"
      "$self" "$name" || status=$?
    done
    exit "$status"
    ;;
esac
[ $# -eq 1 ] || die "one provider at a time (or --all): got $*"
name=$1
case "$name" in */*|.*) die "no provider '$name' (one of: $(names | paste -sd' '))" ;; esac
mod="$providers/$name"
[ -f "$mod/go.mod" ] || die "no provider '$name': $mod/go.mod not found (one of: $(names | paste -sd' '))"
[ -f "$mod/go.sum" ] || die "$mod/go.sum not found: run go mod tidy there (tools/providers/README.md)"

gobuild_find_go "the manager of $name"

# The main package: the go.mod's one `tool` directive (`tool P` or a `tool ( … )` block).
pkg=$(awk '
  $1 == "tool" && $2 == "(" { block = 1; next }
  block && $1 == ")" { block = 0; next }
  block && $1 !~ /^\/\// { print $1; next }
  $1 == "tool" { print $2 }
' "$mod/go.mod")
[ -n "$pkg" ] || die "$mod/go.mod names no main package (a 'tool <package>' line)"
[ "$(printf '%s\n' "$pkg" | wc -l)" -eq 1 ] || die "$mod/go.mod names more than one tool: $(echo $pkg)"
# Its module: the longest required module path the package is in.
module=$(awk -v pkg="$pkg" '
  $1 == "require" && $2 == "(" { block = 1; next }
  block && $1 == ")" { block = 0; next }
  block { m = $1 } !block && $1 == "require" { m = $2 }
  m != "" && (pkg == m || index(pkg, m "/") == 1) && length(m) > length(best) { best = m; v = (block ? $2 : $3) }
  { m = "" }
  END { if (best != "") print best, v }
' "$mod/go.mod")
[ -n "$module" ] || die "$mod/go.mod requires no module that holds $pkg"
version=${module#* }
module=${module% *}

key=$(gobuild_key "$mod/go.mod" "$mod/go.sum" $(find "$mod" -maxdepth 1 -name '*.go' | sort) "$0" "$GOBUILD_LIB")
gobuild_cache
mkdir -p "$GOBUILD_CACHE/providers" || die "cannot create $GOBUILD_CACHE/providers"
out="$GOBUILD_CACHE/providers/$name-$version-$key"
gobuild_lock "$GOBUILD_CACHE/providers/.build.lock"

staging=$(mktemp -d "$GOBUILD_CACHE/providers/.build-XXXXXX")
trap 'rm -rf "$staging"' EXIT
log="$staging/go.log"
explain_failure() {
  gobuild_explain_failure "$1" "$log" "pin a version it serves in tools/providers/$name/go.mod (see tools/providers/README.md)"
}

# The module's folder in the module cache (downloaded if it is not there). A refusal is in the
# JSON's "Error", which goes to the log for explain_failure.
if ! (cd "$mod" && GOFLAGS=-mod=readonly "$GO" mod download -json "$module") >"$log" 2>&1; then
  refusal=$(awk -F'"' '$2 == "Error" { print $4; exit }' "$log")
  if [ -n "$refusal" ]; then
    refusal=${refusal#"$module@$version: "}
    tail -20 "$log" >&2
    die "the Go module proxy ($("$GO" env GOPROXY)) refused a module: $module@$version: ${refusal%%\\n*}; pin a version it serves in tools/providers/$name/go.mod (see tools/providers/README.md)"
  fi
  explain_failure "$module@$version"
fi
config=$(awk -F'"' '$2 == "Dir" { print $4 }' "$log")
[ -n "$config" ] && [ -d "$config" ] || explain_failure "$module@$version"
# The manager's own config/: beside its main package (CAPI's kubeadm providers keep theirs in
# bootstrap/kubeadm/config and controlplane/kubeadm/config, the core's at the module root).
config="$config${pkg#"$module"}/config"
[ -d "$config" ] || die "$module@$version has no config/ folder beside $pkg (its CRDs, RBAC and webhooks)"

if [ -x "$out/manager" ]; then
  echo "providers build: reusing $out/manager ($module $version)" >&2
  echo "manager=$out/manager"
  echo "config=$config"
  exit 0
fi

start=$(date +%s)
echo "providers build: $name: $pkg $version (Go $GO_VERSION); a first build takes a few minutes on 2 cores" >&2
(cd "$mod" && CGO_ENABLED=0 GOFLAGS=-mod=readonly "$GO" build -trimpath -ldflags "-s -w" -o "$staging/manager" "$pkg") \
  >"$log" 2>&1 || explain_failure "the manager of $name ($module $version)"
rm -f "$log"
rm -rf "$out"
mv "$staging" "$out"
trap - EXIT
echo "providers build: built $out/manager in $(( $(date +%s) - start ))s" >&2
echo "manager=$out/manager"
echo "config=$config"
