//! The object store: every object under one global resourceVersion counter, a bounded event
//! history for watch replay, and a broadcast channel for live watchers.

use std::collections::{BTreeMap, VecDeque};
use std::sync::Arc;

use serde_json::Value;
use tokio::sync::broadcast;

use super::registry::Registry;

/// `(group, resource, namespace, name)`; namespace is empty for cluster-scoped objects.
pub type Key = (String, String, String, String);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventType {
    Added,
    Modified,
    Deleted,
}

impl EventType {
    pub fn as_str(self) -> &'static str {
        match self {
            EventType::Added => "ADDED",
            EventType::Modified => "MODIFIED",
            EventType::Deleted => "DELETED",
        }
    }
}

/// One persisted change.
#[derive(Debug, Clone)]
pub struct StoreEvent {
    pub type_: EventType,
    pub group: String,
    pub resource: String,
    pub namespace: String,
    /// The object after the change (for DELETED: its last stored state, the same value as
    /// `old`; [`StoreEvent::object_at_rv`] stamps it with the deletion's RV). Shared with the
    /// store and the write's response: no copy per event.
    pub object: Arc<Value>,
    /// The object before the change (for selector transitions): the store's previous value.
    pub old: Option<Arc<Value>>,
    pub rv: u64,
}

impl StoreEvent {
    /// The object as a watcher receives it: for DELETED, the last state with the deletion's
    /// resourceVersion (kube-apiserver's watch cache sends the deleted object at the delete's
    /// revision); otherwise the object as stored.
    pub fn object_at_rv(&self) -> Value {
        let mut obj = (*self.object).clone();
        if self.type_ == EventType::Deleted {
            crate::meta::set_meta(
                &mut obj,
                "resourceVersion",
                serde_json::json!(self.rv.to_string()),
            );
        }
        obj
    }
}

/// Objects, the RV counter, the event history and the registry, behind one lock. Objects are
/// immutable once stored (`Arc`): a write stores a new value, so readers, events and responses
/// share one copy.
pub struct Store {
    pub objects: BTreeMap<Key, Arc<Value>>,
    pub rv: u64,
    pub registry: Registry,
    /// Bumped whenever served schemas change (OpenAPI hash).
    pub schema_generation: u64,
    history: VecDeque<Arc<StoreEvent>>,
    history_cap: usize,
    /// Events with `rv <= compacted` are no longer retained.
    compacted: u64,
    tx: broadcast::Sender<Arc<StoreEvent>>,
    /// For kinds of CRDs, the resourceVersion at which they became served: kube-apiserver's
    /// watch cache for them starts there, so a watch from an older version is too old.
    pub watch_start: BTreeMap<(String, String), u64>,
    /// The authorizer's view of the RBAC objects, at the resourceVersions it was built from
    /// (`access::snapshot`).
    pub rbac_snapshot: std::sync::Mutex<Option<(Vec<u64>, Arc<crate::rbac::RbacSnapshot>)>>,
}

/// Why a replay cannot be served.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Expired {
    pub requested: u64,
    pub oldest: u64,
}

impl Store {
    pub fn new(history_cap: usize) -> Self {
        let (tx, _) = broadcast::channel(1024);
        Self {
            objects: BTreeMap::new(),
            rv: 1,
            registry: Registry::with_builtins(),
            schema_generation: 1,
            history: VecDeque::new(),
            history_cap: history_cap.max(1),
            compacted: 1,
            tx,
            watch_start: BTreeMap::new(),
            rbac_snapshot: std::sync::Mutex::new(None),
        }
    }

    pub fn next_rv(&mut self) -> u64 {
        self.rv += 1;
        self.rv
    }

    /// Records a persisted change and fans it out.
    pub fn publish(&mut self, event: StoreEvent) {
        let event = Arc::new(event);
        self.history.push_back(event.clone());
        while self.history.len() > self.history_cap {
            if let Some(old) = self.history.pop_front() {
                self.compacted = old.rv;
            }
        }
        // No receivers is fine.
        let _ = self.tx.send(event);
    }

    /// Live subscribers (watch streams plus the controllers).
    pub fn subscribers(&self) -> usize {
        self.tx.receiver_count()
    }

    pub fn subscribe(&self) -> broadcast::Receiver<Arc<StoreEvent>> {
        self.tx.subscribe()
    }

    /// Retained events strictly after `rv`, or `Expired` if some of them were compacted away.
    pub fn events_since(&self, rv: u64) -> Result<Vec<Arc<StoreEvent>>, Expired> {
        if rv < self.compacted {
            return Err(Expired {
                requested: rv,
                oldest: self.compacted + 1,
            });
        }
        Ok(self.history.iter().filter(|e| e.rv > rv).cloned().collect())
    }

    /// The retained events of one object, oldest first, and the resourceVersion after which
    /// the history is complete (every event with a greater one is retained).
    pub fn object_events(
        &self,
        group: &str,
        resource: &str,
        namespace: &str,
        name: &str,
    ) -> (u64, Vec<Arc<StoreEvent>>) {
        let events = self
            .history
            .iter()
            .filter(|e| {
                e.group == group
                    && e.resource == resource
                    && e.namespace == namespace
                    && e.object.pointer("/metadata/name").and_then(Value::as_str) == Some(name)
            })
            .cloned()
            .collect();
        (self.compacted, events)
    }

    /// Forgets all history (fault injection: the next resume from an old RV gets 410).
    pub fn compact(&mut self) {
        self.history.clear();
        self.compacted = self.rv;
    }

    pub fn objects_of<'a>(
        &'a self,
        group: &'a str,
        resource: &'a str,
        namespace: Option<&'a str>,
    ) -> impl Iterator<Item = &'a Value> + 'a {
        let start = (
            group.to_string(),
            resource.to_string(),
            namespace.unwrap_or_default().to_string(),
            String::new(),
        );
        self.objects
            .range(start..)
            .take_while(move |((g, r, ns, _), _)| {
                g == group && r == resource && namespace.is_none_or(|n| n == ns)
            })
            .map(|(_, v)| &**v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn ev(rv: u64) -> StoreEvent {
        StoreEvent {
            type_: EventType::Added,
            group: String::new(),
            resource: "configmaps".into(),
            namespace: "default".into(),
            object: Arc::new(json!({})),
            old: None,
            rv,
        }
    }

    #[test]
    fn history_is_bounded_and_expires_old_rvs() {
        let mut s = Store::new(2);
        for _ in 0..3 {
            let rv = s.next_rv();
            s.publish(ev(rv));
        }
        // rvs 2,3,4 published; cap 2 keeps 3,4; resume from 3 or later is fine.
        assert_eq!(s.events_since(3).unwrap().len(), 1);
        assert_eq!(s.events_since(2).unwrap().len(), 2);
        assert!(s.events_since(1).is_err());
        s.compact();
        assert!(s.events_since(3).is_err());
        assert!(s.events_since(4).unwrap().is_empty());
    }

    #[test]
    fn object_events_are_one_objects_retained_events() {
        let mut s = Store::new(3);
        for name in ["a", "b", "a", "a"] {
            let rv = s.next_rv();
            let mut e = ev(rv);
            e.object = Arc::new(json!({"metadata": {"name": name}}));
            s.publish(e);
        }
        // rvs 2..=5 published; cap 3 keeps 3 (b), 4 (a), 5 (a): complete after 2.
        let (after, events) = s.object_events("", "configmaps", "default", "a");
        assert_eq!(after, 2);
        assert_eq!(events.iter().map(|e| e.rv).collect::<Vec<_>>(), [4, 5]);
        assert!(s.object_events("", "secrets", "default", "a").1.is_empty());
        assert!(s.object_events("", "configmaps", "other", "a").1.is_empty());
    }

    #[test]
    fn objects_of_filters_by_namespace() {
        let mut s = Store::new(10);
        for (ns, n) in [("a", "x"), ("b", "y"), ("a", "z")] {
            s.objects.insert(
                ("".into(), "configmaps".into(), ns.into(), n.into()),
                Arc::new(json!({"n": n})),
            );
        }
        s.objects.insert(
            ("".into(), "secrets".into(), "a".into(), "s".into()),
            Arc::new(json!({})),
        );
        assert_eq!(s.objects_of("", "configmaps", Some("a")).count(), 2);
        assert_eq!(s.objects_of("", "configmaps", None).count(), 3);
    }
}
