//! What the server refused and what it stored, for whoever judges the states a writer left
//! under injected faults: [`Ledger`].

use std::sync::Arc;

use serde_json::Value;

use super::faults::{Refusal, RefusedWrites};
use super::state::EmbeddedServer;
use super::store::EventType;

/// The refused writes ([`RefusedWrites`]) and the server's retained event history of one
/// object. A client's watch that had to relist (410 Expired) misses the states written
/// meanwhile; the server's history has each of them, in resourceVersion order, so a refusal
/// can be placed exactly among them.
#[derive(Clone)]
pub struct Ledger {
    server: EmbeddedServer,
}

/// One stored change of an object: the resourceVersion that wrote it, the change, the object
/// before and after, both as stored (at the storage version: compare them with each other,
/// not with what a client read at another version).
#[derive(Debug, Clone)]
pub struct StoredState {
    pub resource_version: u64,
    pub event: EventType,
    pub old: Option<Arc<Value>>,
    pub object: Arc<Value>,
}

/// The retained changes of one object: every change with a resourceVersion greater than
/// `complete_after` is here (older ones may have been compacted away).
#[derive(Debug, Clone, Default)]
pub struct StoredStates {
    pub complete_after: u64,
    pub states: Vec<StoredState>,
}

impl Ledger {
    pub fn new(server: &EmbeddedServer) -> Self {
        Self {
            server: server.clone(),
        }
    }

    /// The refused writes (a handle that stays current).
    pub fn refused_writes(&self) -> RefusedWrites {
        self.server.faults().refused_writes()
    }

    /// The refused writes to the namespaced object `plural`/`name` in `namespace` (or its
    /// subresources), oldest first.
    pub fn refusals_of(&self, namespace: &str, plural: &str, name: &str) -> Vec<Refusal> {
        self.refused_writes().of(namespace, plural, name)
    }

    /// The retained states of the object `group`/`plural` `namespace`/`name`, oldest first.
    pub fn states_of(
        &self,
        group: &str,
        plural: &str,
        namespace: &str,
        name: &str,
    ) -> StoredStates {
        let store = self.server.lock();
        let (complete_after, events) = store.object_events(group, plural, namespace, name);
        StoredStates {
            complete_after,
            states: events
                .into_iter()
                .map(|e| StoredState {
                    resource_version: e.rv,
                    event: e.type_,
                    old: e.old.clone(),
                    object: if e.type_ == EventType::Deleted {
                        Arc::new(e.object_at_rv())
                    } else {
                        e.object.clone()
                    },
                })
                .collect(),
        }
    }
}
