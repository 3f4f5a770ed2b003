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

GOBUILD_WHAT="real-cluster build"
# shellcheck source=../lib/go-build.sh
. "$root/scripts/lib/go-build.sh"
die() { gobuild_die "$@"; }

gobuild_find_go "kube-apiserver, kube-controller-manager and etcd"
go_version=$GO_VERSION

kube_version=$(awk '$1 == "require" && $2 == "k8s.io/kubernetes" {print $3}' "$mods/go.mod")
etcd_version=$(awk '$1 == "require" && $2 == "go.etcd.io/etcd/server/v3" {print $3}' "$mods/etcd/go.mod")
[ -n "$kube_version" ] || die "$mods/go.mod pins no k8s.io/kubernetes version"
[ -n "$etcd_version" ] || die "$mods/etcd/go.mod pins no go.etcd.io/etcd/server/v3 version"
minor=${kube_version#v1.}; minor=${minor%%.*}

key=$(gobuild_key "$mods/go.mod" "$mods/go.sum" "$mods/etcd/go.mod" "$mods/etcd/go.sum" "$0" "$GOBUILD_LIB")
gobuild_cache
cache=$GOBUILD_CACHE
out="$cache/kube-$kube_version-etcd-$etcd_version-$key"
# One build at a time per cache: a second caller waits for the first and reuses its binaries.
gobuild_lock "$cache/.build.lock"
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
  gobuild_explain_failure "$1" "$log" "pin versions it serves in tools/kube/go.mod (see tools/kube/README.md)"
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
