# Shared by the scripts that build Go binaries from pinned Go modules with the Go module proxy
# (scripts/real-cluster/build.sh, scripts/providers/build.sh). Source it after `set -euo pipefail`
# and after setting GOBUILD_WHAT (the prefix of every message, e.g. "real-cluster build").
#
#   gobuild_die MESSAGE…           the message on stderr as "error: $GOBUILD_WHAT: …", exit 2
#   gobuild_find_go NEEDS          sets GO and GO_VERSION ($GO, else `go` on PATH, else
#                                  /usr/local/go/bin/go); NEEDS says what Go is needed for
#   gobuild_key FILE…              12 hex digits: sha256 of the Go version and the files, in order
#   gobuild_cache                  sets GOBUILD_CACHE ($CAPI_CONFORMANCE_CACHE, default
#                                  ~/.cache/capi-conformance) and creates it
#   gobuild_lock FILE              waits for and holds an exclusive flock on FILE (fd 9) until
#                                  the script exits or calls gobuild_unlock
#   gobuild_explain_failure WHAT LOG HINT
#                                  the end of the go command's LOG on stderr, then exit 2 naming
#                                  the module the proxy refused (and HINT), or that WHAT failed

# The library itself is part of every build script's cache key.
GOBUILD_LIB="${BASH_SOURCE[0]}"

gobuild_die() { echo "error: $GOBUILD_WHAT: $*" >&2; exit 2; }

gobuild_find_go() {
  local needs=$1
  if [ -n "${GO:-}" ]; then
    command -v "$GO" >/dev/null 2>&1 \
      || gobuild_die "no Go toolchain at \$GO=$GO: install Go >= 1.26 (or unset GO to use the one on PATH) to build $needs"
  elif command -v go >/dev/null 2>&1; then GO=go
  elif [ -x /usr/local/go/bin/go ]; then GO=/usr/local/go/bin/go
  else
    gobuild_die "no Go toolchain (go not on PATH, nor /usr/local/go/bin/go): install Go >= 1.26 to build $needs"
  fi
  GO_VERSION=$("$GO" env GOVERSION) || gobuild_die "'$GO env GOVERSION' failed"
}

gobuild_key() {
  cat "$@" | { echo "$GO_VERSION"; cat; } | sha256sum | cut -c1-12
}

gobuild_cache() {
  GOBUILD_CACHE=${CAPI_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/capi-conformance}
  mkdir -p "$GOBUILD_CACHE" || gobuild_die "cannot create $GOBUILD_CACHE (set CAPI_CONFORMANCE_CACHE to a writable folder)"
}

# One build at a time per lock: a second caller waits for the first and reuses its binaries.
# Without flock (not on every system) callers do not wait for each other.
gobuild_lock() {
  if command -v flock >/dev/null 2>&1; then
    exec 9>"$1"
    flock 9
  fi
}

gobuild_unlock() {
  if command -v flock >/dev/null 2>&1; then exec 9>&-; fi
}

# A refused or missing module shows up in the go command's output; name it and what to do.
gobuild_explain_failure() {
  local what=$1 log=$2 hint=$3
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
    gobuild_die "building $what: the Go module proxy ($("$GO" env GOPROXY)) refused a module: $refused; $hint"
  fi
  gobuild_die "building $what failed (the go command's output is above)"
}
