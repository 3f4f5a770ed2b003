#!/usr/bin/env python3
"""Same verdicts except merged cells: runs two builds of the tool with the same arguments
(`-o json` added) and compares their reports cell by cell, run-dependent values removed.

Usage: scripts/merged-cells.py OLD_BIN NEW_BIN ARGS...
       e.g. scripts/merged-cells.py old/capi-conformance target/debug/capi-conformance check --embedded

Every (rule_id, column) of the two reports is one of:
  same         one result in each, equal;
  merged       OLD had several results (a static and a lifecycle part), NEW has one cell
               (one verdict per rule x column);
  placeholder  OLD's static "needs a live provider (run `check`)" skip, NEW's skip saying why no
               scenario judged that column (or that scenarios did not run);
  changed      anything else (a real verdict change).
Prints the counts and the merged cells by rule (old parts -> new cell). Exit 0 when nothing is
`changed`, NEW has one result per (rule_id, column) and the exit codes agree; 1 otherwise.
"""
import collections
import json
import subprocess
import sys

STRIP = {"duration_ms", "at_ms", "elapsed_ms", "started_at", "finished_at", "time"}
NEEDS_LIVE = "needs a live provider"


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k not in STRIP}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


def report(binary, args):
    p = subprocess.run([binary, *args, "-o", "json"], capture_output=True, text=True)
    try:
        return p.returncode, strip(json.loads(p.stdout))
    except json.JSONDecodeError:
        sys.exit(f"{binary}: no JSON report (exit {p.returncode}): {p.stderr.strip()[:500]}")


def cells(rep):
    out = collections.defaultdict(list)
    for r in rep["results"]:
        out[(r["rule_id"], r["column"])].append(r)
    return out


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    old_bin, new_bin, args = sys.argv[1], sys.argv[2], sys.argv[3:]
    old_code, old = report(old_bin, args)
    new_code, new = report(new_bin, args)
    o, n = cells(old), cells(new)
    counts = collections.Counter()
    merged = collections.defaultdict(collections.Counter)
    changed = []
    for key in sorted(set(o) | set(n)):
        a, b = o.get(key, []), n.get(key, [])
        if len(b) > 1:
            changed.append(f"{key}: {len(b)} results in NEW")
        elif len(a) > 1 and len(b) == 1:
            counts["merged"] += 1
            parts = " + ".join(f"{r['outcome']}/{r['phase']}" for r in a)
            merged[key[0]][f"{parts} -> {b[0]['outcome']}/{b[0]['phase']}"] += 1
        elif len(a) == 1 and len(b) == 1 and a[0] == b[0]:
            counts["same"] += 1
        elif (
            len(a) == 1
            and len(b) == 1
            and a[0]["outcome"] == b[0]["outcome"] == "skip"
            and (a[0].get("reason") or "").startswith(NEEDS_LIVE)
        ):
            counts["placeholder"] += 1
        else:
            changed.append(f"{key}: {a} -> {b}")
    print(
        f"{' '.join(args)}: exit {old_code} -> {new_code}; "
        + ", ".join(f"{k} {counts[k]}" for k in ("same", "merged", "placeholder"))
        + f", changed {len(changed)}"
    )
    for rule in sorted(merged):
        for what, c in sorted(merged[rule].items()):
            print(f"  merged {rule}: {c} column(s): {what}")
    for c in changed[:30]:
        print(f"  CHANGED {c}")
    return 0 if not changed and old_code == new_code else 1


if __name__ == "__main__":
    sys.exit(main())
