#!/usr/bin/env bash
# Fills the krew manifest template plugins/capi-conformance.yaml from built release archives.
#
#   scripts/release-krew.sh VERSION DIST_DIR [BASE_URL] > capi-conformance.yaml
#
# VERSION   release version, e.g. v0.1.0 (a leading "v" is added when missing)
# DIST_DIR  holds capi-conformance-<VERSION>-<os>-<arch>.tar.gz for every platform of the
#           template (linux/darwin × amd64/arm64), each with capi-conformance and
#           kubectl-capi_conformance at its root (the CI recipes in examples/ download them)
# BASE_URL  where the archives are downloaded from; default
#           https://github.com/capi-conformance/capi-conformance/releases/download/<VERSION>
#
# Fails (exit 1) when an archive is missing or a placeholder is left unfilled.
set -euo pipefail

if [[ $# -lt 2 || $# -gt 3 ]]; then
  awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0" >&2
  exit 2
fi

version="$1"
[[ "$version" == v* ]] || version="v$version"
dist="$2"
base_url="${3:-https://github.com/capi-conformance/capi-conformance/releases/download/$version}"
template="$(cd "$(dirname "$0")/.." && pwd)/plugins/capi-conformance.yaml"

if [[ ! "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+(-[0-9A-Za-z.-]+)?$ ]]; then
  echo "error: version $version is not semantic (vMAJOR.MINOR.PATCH)" >&2
  exit 1
fi

sha256_of() {
  if command -v sha256sum >/dev/null 2>&1; then
    sha256sum "$1" | cut -d' ' -f1
  else
    shasum -a 256 "$1" | cut -d' ' -f1
  fi
}

manifest="$(cat "$template")"
manifest="${manifest//\{\{VERSION\}\}/$version}"
for os in linux darwin; do
  for arch in amd64 arm64; do
    archive="capi-conformance-$version-$os-$arch.tar.gz"
    if [[ ! -f "$dist/$archive" ]]; then
      echo "error: missing archive $dist/$archive" >&2
      exit 1
    fi
    key="$(echo "${os}_${arch}" | tr '[:lower:]' '[:upper:]')"
    sum="$(sha256_of "$dist/$archive")"
    manifest="${manifest//\{\{URI_$key\}\}/$base_url/$archive}"
    manifest="${manifest//\{\{SHA256_$key\}\}/$sum}"
  done
done

if grep -q '{{' <<<"$manifest"; then
  echo "error: unfilled placeholders: $(grep -o '{{[^}]*}}' <<<"$manifest" | sort -u | tr '\n' ' ')" >&2
  exit 1
fi
printf '%s\n' "$manifest"
