#!/usr/bin/env bash
# Builds the real control plane the tests use as the oracle: kube-apiserver and
# kube-controller-manager from k8s.io/kubernetes, etcd from go.etcd.io/etcd, at the versions
# pinned in tools/kube/go.mod and tools/kube/etcd/go.mod, with the Go module proxy.
#
# The binaries go to a cache folder keyed by those pins and the Go version, outside the
# checkout ($CAPI_CONFORMANCE_CACHE, default ~/.cache/capi-conformance), so later runs, test
# processes and CI on the same machine reuse them. Prints that folder's bin/ on stdout (the
# only line on stdout); progress and errors go to stderr.
#
# Usage: scripts/real-cluster/build.sh          (exit 0: built or reused; 2: cannot build here)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
mods="$root/tools/kube"

die() { echo "error: real-cluster build: $*" >&2; exit 2; }

# $GO names the toolchain; without it, `go` on PATH, else /usr/local/go/bin/go.
if [ -n "${GO:-}" ]; then
  command -v "$GO" >/dev/null 2>&1 \
    || die "no Go toolchain at \$GO=$GO: install Go >= 1.26 (or unset GO to use the one on PATH) to build kube-apiserver, kube-controller-manager and etcd"
elif command -v go >/dev/null 2>&1; then GO=go
elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
else
  die "no Go toolchain (go not on PATH, nor /usr/local/go/bin/go): install Go >= 1.26 to build kube-apiserver, kube-controller-manager and etcd"
fi
go_version=$("$GO" env GOVERSION) || die "'$GO env GOVERSION' failed"

kube_version=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' "$mods/go.mod")
etcd_version=$(awk '$1 == "require" && $2 == "go.etcd.io/etcd/server/v3" {print $3}' "$mods/etcd/go.mod")
[ -n "$kube_version" ] || die "$mods/go.mod pins no k8s.io/kubernetes version"
[ -n "$etcd_version" ] || die "$mods/etcd/go.mod pins no go.etcd.io/etcd/server/v3 version"
minor=${kube_version#v1.}; minor=${minor%%.*}

key=$(cat "$mods/go.mod" "$mods/go.sum" "$mods/etcd/go.mod" "$mods/etcd/go.sum" "$0" \
  | { echo "$go_version"; cat; } | sha256sum | cut -c1-12)
cache=${CAPI_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/capi-conformance}
out="$cache/kube-$kube_version-etcd-$etcd_version-$key"
mkdir -p "$cache" || die "cannot create $cache (set CAPI_CONFORMANCE_CACHE to a writable folder)"
# One build at a time per cache: a second caller waits for the first and reuses its binaries.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$cache/.build.lock"
  flock 9
fi
if [ -x "$out/bin/kube-apiserver" ] && [ -x "$out/bin/kube-controller-manager" ] && [ -x "$out/bin/etcd" ]; then
  echo "real-cluster build: reusing $out/bin (kube-apiserver $kube_version, etcd $etcd_version)" >&2
  echo "$out/bin"
  exit 0
fi

staging=$(mktemp -d "$cache/.build-XXXXXX")
trap 'rm -rf "$staging"' EXIT
log="$staging/go.log"

# A refused or missing module shows up in the go command's output; name it and what to do.
explain_failure() {
  local what=$1
  local refused
  refused=$(grep -Eo '[a-zA-Z0-9._~/-]+@v[0-9][^:[:space:]]*: (reading|verifying) [^ ]+: (403|404|410)[^"]*' "$log" | head -1 || true)
  # "go: downloading M V" then a refusal without the module's name: the last download names it.
  [ -n "$refused" ] || refused=$(awk '
    /^go: downloading / { last = $3 "@" $4 }
    /module lookup disabled|403 Forbidden|404 Not Found|410 Gone|not found:/ && last != "" { print last ": " $0; exit }
  ' "$log")
  [ -n "$refused" ] || refused=$(grep -Eo '(module|package) [^ ]+[^:]*: (cannot find|not found|unknown revision)[^"]*' "$log" | head -1 || true)
  tail -20 "$log" >&2
  if [ -n "$refused" ]; then
    die "building $what: the Go module proxy ($("$GO" env GOPROXY)) refused a module: $refused; pin versions it serves in tools/kube/go.mod (see tools/kube/README.md)"
  fi
  die "building $what failed (the go command's output is above)"
}

start=$(date +%s)
echo "real-cluster build: kube-apiserver + kube-controller-manager $kube_version, etcd $etcd_version (Go $go_version); the first build takes about 10 minutes on 2 cores" >&2
ldflags="-s -w"
for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ldflags="$ldflags -X $pkg.gitVersion=$kube_version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor -X $pkg.gitTreeState=clean"
done
(cd "$mods" && CGO_ENABLED=0 GOFLAGS=-mod=readonly "$GO" build -trimpath -ldflags "$ldflags" -o "$staging/bin/" \
  k8s.io/kubernetes/cmd/kube-apiserver k8s.io/kubernetes/cmd/kube-controller-manager) >"$log" 2>&1 \
  || explain_failure "kube-apiserver and kube-controller-manager $kube_version"
(cd "$mods/etcd" && CGO_ENABLED=0 GOFLAGS=-mod=readonly "$GO" build -trimpath -ldflags "-s -w" -o "$staging/bin/etcd" \
  go.etcd.io/etcd/server/v3) >"$log" 2>&1 \
  || explain_failure "etcd $etcd_version"
"$staging/bin/kube-apiserver" --version >&2
rm -f "$log"
rm -rf "$out"
mv "$staging" "$out"
trap - EXIT
echo "real-cluster build: built $out/bin in $(( $(date +%s) - start ))s" >&2
echo "$out/bin"
