//! A scenario's timeline as data: what the tool wrote and what the watch saw, each at its time
//! since the scenario started ([`TimelineEntry`]), and the form two runs' timelines are compared
//! in ([`comparable_timeline`]).

use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The prefix of a tool action's [`TimelineEntry::event`] (`tool: set owner`).
pub const TOOL_PREFIX: &str = "tool: ";

/// One entry of a scenario timeline: a watch event on an object under test (a version the
/// provider, the API server or the tool wrote) or a write the tool made.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TimelineEntry {
    /// Milliseconds since the scenario started.
    pub at_ms: u64,
    /// `Kind/name`.
    pub object: String,
    /// The version the event carries (for a tool action: the version its response carried).
    pub resource_version: String,
    /// ADDED / MODIFIED / DELETED, or a tool action (`tool: set owner`).
    pub event: String,
    /// Changed field paths (`status.initialization.provisioned`, `metadata.finalizers`); for
    /// ADDED, every path the first version holds.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub changed: Vec<String>,
}

impl TimelineEntry {
    /// A write the tool made (`tool: …`), not a version the watch delivered.
    pub fn is_tool(&self) -> bool {
        self.event.starts_with(TOOL_PREFIX)
    }
}

/// Watch event kinds in the order an object lives them.
const WATCH_EVENTS: [&str; 3] = ["ADDED", "MODIFIED", "DELETED"];
/// The rank of DELETED in [`WATCH_EVENTS`].
const DELETED: usize = 2;

/// What two runs of one scenario must agree on, times aside: per object (by name), the tool's
/// writes in the order it made them, then one entry per kind of watch event seen (ADDED,
/// MODIFIED, DELETED, in that order) carrying the union of the paths those events changed.
///
/// Left out, like durations, because they depend on scheduling and not on what the provider
/// does: times; resourceVersions (one counter shared by every scenario running at the same
/// time); the interleaving of objects (script parts run concurrently) and of a tool write with
/// its own watch event (the event can arrive before the write's response); how many MODIFIED
/// versions carried the provider's changes (a controller that requeues, or a status written in
/// one update or two, gives one event or several for the same end state); and the deletion of
/// an object the tool did not delete (the garbage collector removes a provider's Secrets once
/// their owner is gone, whenever it gets to them: before the scenario's watches stop or after).
/// A missing or extra tool action, an object seen or not, created or not, deleted by the tool
/// and gone or not, or a field the provider changed in one run and not in the other still
/// differ.
pub fn comparable_timeline(entries: &[TimelineEntry]) -> Vec<TimelineEntry> {
    #[derive(Default)]
    struct Object<'a> {
        tool: Vec<&'a str>,
        watch: BTreeMap<usize, BTreeSet<&'a str>>,
    }
    let mut objects: BTreeMap<&str, Object<'_>> = BTreeMap::new();
    for e in entries {
        let o = objects.entry(e.object.as_str()).or_default();
        if e.is_tool() {
            o.tool.push(&e.event);
        } else {
            let rank = WATCH_EVENTS
                .iter()
                .position(|w| *w == e.event)
                .unwrap_or(WATCH_EVENTS.len());
            let paths = o.watch.entry(rank).or_default();
            paths.extend(e.changed.iter().map(String::as_str));
            if rank == WATCH_EVENTS.len() {
                // An event of no known kind keeps its name as a path, so it is still compared.
                paths.insert(&e.event);
            }
        }
    }
    let entry = |object: &str, event: &str, changed: Vec<String>| TimelineEntry {
        at_ms: 0,
        object: object.to_string(),
        resource_version: String::new(),
        event: event.to_string(),
        changed,
    };
    let deleted_by_tool = |o: &Object<'_>| {
        o.tool
            .iter()
            .any(|t| t.strip_prefix(TOOL_PREFIX) == Some("delete"))
    };
    let mut out = Vec::new();
    for (object, mut o) in objects {
        out.extend(o.tool.iter().map(|t| entry(object, t, Vec::new())));
        if !deleted_by_tool(&o) {
            o.watch.remove(&DELETED);
        }
        for (rank, paths) in o.watch {
            let event = WATCH_EVENTS.get(rank).copied().unwrap_or("other");
            out.push(entry(
                object,
                event,
                paths.into_iter().map(str::to_string).collect(),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(at_ms: u64, object: &str, rv: &str, event: &str, changed: &[&str]) -> TimelineEntry {
        TimelineEntry {
            at_ms,
            object: object.into(),
            resource_version: rv.into(),
            event: event.into(),
            changed: changed.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn scheduling_does_not_change_the_comparable_form() {
        let a = [
            e(1, "M/x", "5", "tool: create", &[]),
            e(2, "M/x", "5", "ADDED", &["spec.a"]),
            e(3, "C/c", "6", "tool: pause cluster", &[]),
            e(9, "M/x", "7", "MODIFIED", &["status.ready"]),
            e(9, "M/x", "8", "MODIFIED", &["status.conditions"]),
            e(12, "M/x", "9", "tool: delete", &[]),
            e(13, "M/x", "10", "DELETED", &[]),
        ];
        // Other times and versions, the event before the tool's response, the other object
        // first, the provider's two writes as one.
        let b = [
            e(0, "C/c", "16", "tool: pause cluster", &[]),
            e(1, "M/x", "15", "ADDED", &["spec.a"]),
            e(4, "M/x", "15", "tool: create", &[]),
            e(
                20,
                "M/x",
                "17",
                "MODIFIED",
                &["status.conditions", "status.ready"],
            ),
            e(30, "M/x", "19", "DELETED", &[]),
            e(31, "M/x", "19", "tool: delete", &[]),
        ];
        let ca = comparable_timeline(&a);
        assert_eq!(ca, comparable_timeline(&b));
        let events: Vec<(&str, &str)> = ca
            .iter()
            .map(|e| (e.object.as_str(), e.event.as_str()))
            .collect();
        assert_eq!(
            events,
            [
                ("C/c", "tool: pause cluster"),
                ("M/x", "tool: create"),
                ("M/x", "tool: delete"),
                ("M/x", "ADDED"),
                ("M/x", "MODIFIED"),
                ("M/x", "DELETED"),
            ]
        );
        assert_eq!(ca[4].changed, ["status.conditions", "status.ready"]);
        assert!(
            ca.iter()
                .all(|e| e.at_ms == 0 && e.resource_version.is_empty())
        );
    }

    #[test]
    fn whether_the_collector_removed_a_provider_object_before_the_end_is_not_compared() {
        let owner = [
            e(1, "M/x", "5", "tool: create", &[]),
            e(2, "Secret/x-data", "6", "ADDED", &["data.value"]),
            e(3, "M/x", "7", "tool: delete", &[]),
            e(4, "M/x", "7", "DELETED", &[]),
        ];
        let mut collected = owner.to_vec();
        collected.push(e(9, "Secret/x-data", "8", "DELETED", &[]));
        let c = comparable_timeline(&collected);
        assert_eq!(comparable_timeline(&owner), c);
        assert!(c.iter().any(|e| e.object == "M/x" && e.event == "DELETED"));
        assert!(
            !c.iter()
                .any(|e| e.object == "Secret/x-data" && e.event == "DELETED")
        );
    }

    #[test]
    fn what_the_provider_or_the_tool_did_differently_still_differs() {
        let base = vec![
            e(1, "M/x", "5", "tool: create", &[]),
            e(2, "M/x", "5", "ADDED", &["spec.a"]),
            e(3, "M/x", "6", "MODIFIED", &["status.ready"]),
            e(4, "M/x", "7", "tool: delete", &[]),
            e(5, "M/x", "8", "DELETED", &[]),
        ];
        let c = comparable_timeline(&base);
        let variants: [Vec<TimelineEntry>; 6] = [
            // Another field written.
            {
                let mut v = base.clone();
                v[2].changed.push("status.extra".into());
                v
            },
            // Never deleted.
            base[..3].to_vec(),
            // Tool actions in another order.
            {
                let mut v = base.clone();
                v.swap(0, 3);
                v
            },
            // A tool action missing.
            base[1..].to_vec(),
            // Another object.
            {
                let mut v = base.clone();
                v.push(e(6, "Secret/s", "9", "ADDED", &["data"]));
                v
            },
            // Deleted by the tool, but never gone.
            base[..4].to_vec(),
        ];
        for v in variants {
            assert_ne!(comparable_timeline(&v), c, "{v:?}");
        }
    }
}
