//! The scenario timeline: every observed version of every object under test, in arrival order,
//! plus the tool's own writes (so "the provider wrote" can be told from "the tool wrote").
//! Assertions read this history, not just the end state; reports get it as
//! [`Recorder::entries`], limited to the scenario's own objects (a namespace-wide watch also
//! sees what other scenarios in the same namespace create).

use super::json::changed_paths;
use capi_contract::model::TOOL_PREFIX;
use capi_contract::model::TimelineEntry;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

mod waits;

/// One observed version of one object.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub at_ms: u64,
    /// `Kind/name`.
    pub object: String,
    pub resource_version: String,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub event: &'static str,
    /// The object (for DELETED: its last state).
    pub value: Value,
    pub changed: Vec<String>,
}

#[derive(Default)]
struct State {
    snapshots: Vec<Snapshot>,
    /// Each object's newest snapshot (an index into `snapshots`: the state is kept once).
    latest: BTreeMap<String, usize>,
    gone: BTreeSet<String>,
    tool_rvs: BTreeSet<(String, String)>,
    /// What each tool write left, per object, in response order (resourceVersion, object).
    tool_states: BTreeMap<String, Vec<(String, Value)>>,
    actions: Vec<TimelineEntry>,
    /// Snapshots and actions in the order they were recorded (times are taken under the lock,
    /// so this order is also time order).
    log: Vec<Logged>,
    watched: BTreeSet<String>,
    /// Objects a script waited for or read the history of (its own, whatever their labels).
    asked: BTreeSet<String>,
    /// When the tool opened the last gate in front of an object's act ([`Recorder::gate_opens`]).
    gates_opened: BTreeMap<String, u64>,
}

/// One entry of [`State::log`]: an index into `snapshots` or `actions`.
#[derive(Clone, Copy)]
enum Logged {
    Seen(usize),
    Tool(usize),
}

impl State {
    /// The newest observed state of `object` (its last state when deleted).
    fn latest_state(&self, object: &str) -> Option<&Value> {
        let i = *self.latest.get(object)?;
        self.snapshots.get(i).map(|s| &s.value)
    }

    /// The objects of this scenario: those watched by name, written or asked for by the
    /// script, and those that name one of these as their owner or their Cluster
    /// (`cluster.x-k8s.io/cluster-name`), e.g. the Secrets a provider creates.
    fn own_objects(&self) -> BTreeSet<&str> {
        let mut own: BTreeSet<&str> = self
            .watched
            .iter()
            .chain(&self.asked)
            .map(String::as_str)
            .chain(self.actions.iter().map(|a| a.object.as_str()))
            .collect();
        let linked: Vec<&str> = self
            .snapshots
            .iter()
            .filter(|s| !own.contains(s.object.as_str()) && links_to(&s.value, &own))
            .map(|s| s.object.as_str())
            .collect();
        own.extend(linked);
        own
    }
}

/// Whether `v` names an object of `own` as its owner or its Cluster.
fn links_to(v: &Value, own: &BTreeSet<&str>) -> bool {
    let cluster = v
        .pointer("/metadata/labels/cluster.x-k8s.io~1cluster-name")
        .and_then(Value::as_str)
        .is_some_and(|c| own.contains(format!("Cluster/{c}").as_str()));
    let owner = || {
        v.pointer("/metadata/ownerReferences")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|o| {
                let kind = o.get("kind").and_then(Value::as_str).unwrap_or_default();
                let name = o.get("name").and_then(Value::as_str).unwrap_or_default();
                own.contains(format!("{kind}/{name}").as_str())
            })
    };
    cluster || owner()
}

/// Shared, cheaply cloned recorder of one scenario run.
#[derive(Clone)]
pub struct Recorder {
    state: Arc<Mutex<State>>,
    notify: Arc<Notify>,
    start: Instant,
    /// Milliseconds the scenario kept the provider in front of a closed gate (see
    /// [`Recorder::hold`]).
    held_ms: Arc<std::sync::atomic::AtomicU64>,
}

impl Default for Recorder {
    fn default() -> Self {
        Self::new()
    }
}

/// A position in the history (see [`Recorder::mark`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Mark(usize);

impl Mark {
    /// The beginning of the history.
    pub const START: Mark = Mark(0);
}

impl Recorder {
    pub fn new() -> Self {
        Recorder {
            state: Arc::default(),
            notify: Arc::new(Notify::new()),
            start: Instant::now(),
            held_ms: Arc::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A poisoned lock only means another observer panicked mid-update; the data is still usable.
        self.state
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    pub fn elapsed_ms(&self) -> u64 {
        u64::try_from(self.start.elapsed().as_millis()).unwrap_or(u64::MAX)
    }

    /// Counts `window` as time the tool kept a gate closed in front of the provider (a
    /// must-not-act window, the wait for a pause to reach it): a controller-runtime provider
    /// failing on that gate backs off for about as long ([`super::Settings::step_deadline`]).
    pub fn hold(&self, window: Duration) {
        let ms = u64::try_from(window.as_millis()).unwrap_or(u64::MAX);
        self.held_ms
            .fetch_add(ms, std::sync::atomic::Ordering::Relaxed);
    }

    /// The time counted by [`Recorder::hold`] so far.
    pub fn held(&self) -> Duration {
        Duration::from_millis(self.held_ms.load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Marks that the tool is about to open the last gate in front of `object`'s act
    /// (provisioning, generating data): [`Recorder::acting_latency`] measures from here.
    pub fn gate_opens(&self, object: &str) {
        let at = self.elapsed_ms();
        self.lock().gates_opened.insert(object.to_string(), at);
    }

    /// How long after [`Recorder::gate_opens`] the first version of `object` satisfying `acted`
    /// arrived: how long the provider takes for that act, evidence for the window of a check
    /// that it does not do the same on a sibling object. None before it acted.
    pub fn acting_latency(&self, object: &str, acted: impl Fn(&Value) -> bool) -> Option<Duration> {
        let st = self.lock();
        let opened = *st.gates_opened.get(object)?;
        st.snapshots
            .iter()
            .find(|s| {
                s.object == object && s.at_ms >= opened && s.event != "DELETED" && acted(&s.value)
            })
            .map(|s| Duration::from_millis(s.at_ms - opened))
    }

    /// Records a watch event. Repeated deliveries of the same resourceVersion are ignored.
    pub fn observe(&self, object: &str, deleted: bool, mut value: Value) {
        drop_managed_fields(&mut value);
        let rv = value
            .pointer("/metadata/resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        {
            let mut st = self.lock();
            let prev = st.latest_state(object);
            let same_rv = prev
                .and_then(|p| p.pointer("/metadata/resourceVersion"))
                .and_then(Value::as_str)
                == Some(rv.as_str());
            if same_rv && !deleted {
                return;
            }
            if deleted && st.gone.contains(object) {
                return;
            }
            let event = if deleted {
                "DELETED"
            } else if prev.is_none() || st.gone.contains(object) {
                "ADDED"
            } else {
                "MODIFIED"
            };
            let changed = if deleted {
                Vec::new()
            } else {
                changed_paths(prev.filter(|_| event != "ADDED"), &value)
            };
            let at_ms = self.elapsed_ms();
            let n = st.snapshots.len();
            st.log.push(Logged::Seen(n));
            st.snapshots.push(Snapshot {
                at_ms,
                object: object.to_string(),
                resource_version: rv,
                event,
                value,
                changed,
            });
            if deleted {
                st.gone.insert(object.to_string());
            } else {
                st.gone.remove(object);
            }
            st.latest.insert(object.to_string(), n);
        }
        self.notify.notify_waiters();
    }

    /// Records a write made by the tool: its response resourceVersion (empty when the response
    /// carried none, e.g. a delete answered with a Status) marks the version as ours, and `state` (the response object) counts as the state the provider's next write
    /// is compared with even when the watch never delivers that version (a relist after 410
    /// jumps over it).
    pub fn tool_write(
        &self,
        object: &str,
        resource_version: &str,
        action: &str,
        state: Option<Value>,
    ) {
        let mut st = self.lock();
        let at_ms = self.elapsed_ms();
        if !resource_version.is_empty() {
            st.tool_rvs
                .insert((object.to_string(), resource_version.to_string()));
        }
        if let Some(mut v) = state {
            drop_managed_fields(&mut v);
            st.tool_states
                .entry(object.to_string())
                .or_default()
                .push((resource_version.to_string(), v));
        }
        let n = st.actions.len();
        st.log.push(Logged::Tool(n));
        st.actions.push(TimelineEntry {
            at_ms,
            object: object.to_string(),
            resource_version: resource_version.to_string(),
            event: format!("{TOOL_PREFIX}{action}"),
            changed: Vec::new(),
        });
    }

    /// Marks `object` as watched (its writes can be awaited with [`Recorder::wait_seen`]).
    pub fn register(&self, object: &str) {
        self.lock().watched.insert(object.to_string());
    }

    pub fn is_watched(&self, object: &str) -> bool {
        self.lock().watched.contains(object)
    }

    /// Counts `object` as this scenario's (see [`Recorder::entries`]).
    fn ask(&self, object: &str) {
        let mut st = self.lock();
        if !st.asked.contains(object) {
            st.asked.insert(object.to_string());
        }
    }

    /// A position: later queries can look only at what happened after it.
    pub fn mark(&self) -> Mark {
        Mark(self.lock().snapshots.len())
    }

    /// The last observed state (None if never seen or deleted).
    pub fn latest(&self, object: &str) -> Option<Value> {
        let st = self.lock();
        if st.gone.contains(object) {
            return None;
        }
        st.latest_state(object).cloned()
    }

    pub fn is_gone(&self, object: &str) -> bool {
        self.lock().gone.contains(object)
    }

    /// The last observed state of every object of this scenario (deleted ones included), by
    /// key.
    pub fn last_states(&self) -> Vec<Value> {
        let st = self.lock();
        let own = st.own_objects();
        st.latest
            .iter()
            .filter(|(k, _)| own.contains(k.as_str()))
            .filter_map(|(_, &i)| st.snapshots.get(i).map(|s| s.value.clone()))
            .collect()
    }

    /// Every observed version of `object`, oldest first.
    /// The instant `at_ms` of a [`Snapshot`] stands for.
    pub fn instant(&self, at_ms: u64) -> Instant {
        self.start + Duration::from_millis(at_ms)
    }

    pub fn history(&self, object: &str) -> Vec<Snapshot> {
        let mut st = self.lock();
        st.asked.insert(object.to_string());
        st.snapshots
            .iter()
            .filter(|s| s.object == object)
            .cloned()
            .collect()
    }

    /// Every snapshot (all objects) in arrival order.
    pub fn all(&self) -> Vec<Snapshot> {
        self.lock().snapshots.clone()
    }

    /// Provider writes of `object` after `mark` that changed it, as seen through `normalize`
    /// (which drops what the caller does not count, e.g. the Paused condition).
    ///
    /// Each version is compared with the newest state known before it: the previous version
    /// the watch delivered, or a tool write the watch jumped over (after a 410 the relist
    /// delivers only the current state), so the tool's own create or patch is never taken for
    /// the provider's work.
    pub fn provider_changes_since(
        &self,
        object: &str,
        mark: Mark,
        normalize: &impl Fn(&Value) -> Value,
    ) -> Vec<Snapshot> {
        let st = self.lock();
        let tool_states = st.tool_states.get(object).map(Vec::as_slice).unwrap_or(&[]);
        let mut prev: Option<(&str, &Value)> = None;
        let mut out = Vec::new();
        for (i, s) in st.snapshots.iter().enumerate() {
            if s.object != object {
                continue;
            }
            let by_tool = st
                .tool_rvs
                .contains(&(s.object.clone(), s.resource_version.clone()));
            if i >= mark.0 && s.event != "DELETED" && !by_tool {
                let base = missed_tool_state(tool_states, prev.map(|p| p.0), &s.resource_version)
                    .or(prev.map(|p| p.1));
                let cur = normalize(&s.value);
                if base.is_none_or(|b| normalize(b) != cur) {
                    let mut hit = s.clone();
                    if let Some(b) = base {
                        hit.changed = changed_paths(Some(b), &s.value);
                    }
                    out.push(hit);
                }
            }
            prev = Some((s.resource_version.as_str(), &s.value));
        }
        out
    }

    /// The timeline for reports: observed transitions of this scenario's objects and tool
    /// actions, in the order (and so the time order) they were recorded.
    pub fn entries(&self) -> Vec<TimelineEntry> {
        let st = self.lock();
        let own = st.own_objects();
        st.log
            .iter()
            .filter_map(|l| match *l {
                Logged::Seen(i) => st
                    .snapshots
                    .get(i)
                    .filter(|s| own.contains(s.object.as_str()))
                    .map(|s| TimelineEntry {
                        at_ms: s.at_ms,
                        object: s.object.clone(),
                        resource_version: s.resource_version.clone(),
                        event: s.event.to_string(),
                        changed: s.changed.clone(),
                    }),
                Logged::Tool(i) => st.actions.get(i).cloned(),
            })
            .collect()
    }
}

/// Drops `metadata.managedFields`: no step reads it (every comparison ignores it, see
/// [`without_bookkeeping`]), and it is often the larger part of an object, kept here for every
/// version a scenario saw.
fn drop_managed_fields(v: &mut Value) {
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
}

/// A copy without the fields every write changes (resourceVersion, managedFields, generation).
pub fn without_bookkeeping(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("resourceVersion");
        m.remove("managedFields");
        m.remove("generation");
    }
    v
}

/// The newest tool-written state of an object between the watch's previous version `after`
/// (None: none seen) and `before`, i.e. one the watch did not deliver. Needs numeric
/// resourceVersions (see [`rv_before`]); None when they do not parse.
fn missed_tool_state<'a>(
    tool_states: &'a [(String, Value)],
    after: Option<&str>,
    before: &str,
) -> Option<&'a Value> {
    let before: u64 = before.parse().ok()?;
    let after: Option<u64> = match after {
        Some(a) => Some(a.parse().ok()?),
        None => None,
    };
    tool_states
        .iter()
        .filter_map(|(rv, v)| Some((rv.parse::<u64>().ok()?, v)))
        .filter(|(rv, _)| *rv < before && after.is_none_or(|a| a < *rv))
        .max_by_key(|(rv, _)| *rv)
        .map(|(_, v)| v)
}

/// Orders two resourceVersions: numeric when both parse (kube-apiserver/etcd and the embedded
/// server use increasing integers), otherwise unknown.
pub fn rv_before(a: &str, b: &str) -> Option<bool> {
    Some(a.parse::<u64>().ok()? < b.parse::<u64>().ok()?)
}

#[cfg(test)]
mod tests;
