# A JSON report (`-o json`) with its run-dependent values removed, as `Matrix::without_timings`
# compares matrices (crates/capi-contract/src/model/timeline.rs, `comparable_timeline`): the
# start time, the run id, every time (`duration_ms`, `at_ms`), and each scenario timeline
# reduced to what two runs must agree on: per object, the tool's writes in order, then per kind
# of watch event (ADDED, MODIFIED, DELETED) the union of the paths it changed; DELETED only for
# objects the tool deleted. Resource versions, the interleaving of objects, how many MODIFIED
# events carried a change and when the garbage collector got to an object are scheduling.
# Usage: jq -S -f scripts/lib/comparable.jq report.json
def watch_rank: {"ADDED": 0, "MODIFIED": 1, "DELETED": 2}[.event] // 3;
def comparable_timeline:
  group_by(.object)
  | map(
      .[0].object as $object
      | [.[] | select(.event | startswith("tool: ")) | .event] as $tool
      | [$tool[] | {object: $object, event: .}]
        + ([.[] | select(.event | startswith("tool: ") | not)
              | select(.event != "DELETED" or ($tool | index("tool: delete")) != null)]
           | group_by(watch_rank)
           | map({object: $object,
                  event: (.[0] | if watch_rank < 3 then .event else "other" end),
                  changed: ([.[] | (.changed // [])[], (if watch_rank < 3 then empty else .event end)]
                            | unique)}))
    )
  | add // [];
del(.context.started_at, .context.run_id)
| if .scenarios then .scenarios[].timeline |= ((. // []) | comparable_timeline) else . end
| del(.. | .duration_ms?, .at_ms?)
