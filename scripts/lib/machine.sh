# Sourced by the bench scripts: `machine_header BEFORE_LOAD` prints the two lines every figure
# table starts with — the machine (cores, CPU model, memory, load average before and now) and
# the run (UTC time, commit, dirty or not) — so a figure can be compared only with figures of
# the same machine kind and commit.
load_average() { cut -d' ' -f1-3 /proc/loadavg; }

machine_header() {
  local before=$1 cpu mem commit
  cpu=$(awk -F': ' '/^model name/ { print $2; exit }' /proc/cpuinfo)
  mem=$(awk '/^MemTotal/ { printf "%.0f", $2 / 1048576 }' /proc/meminfo)
  commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit (uncommitted changes)"; fi
  echo "Machine: $(nproc) cores, $cpu, $mem GiB; load average before $before, after $(load_average)"
  echo "Run: $(date -u +%Y-%m-%dT%H:%MZ), commit $commit, release build"
}
