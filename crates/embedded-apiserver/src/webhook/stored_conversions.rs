//! Conversions of stored objects by a webhook server of this process, remembered.
//!
//! A stored object at one resourceVersion converts to the same object every time, and a run
//! reads each one at another version many times (every watcher of that version gets its own
//! conversion, as kube-apiserver converts per watch). For the webhook servers a run serves
//! itself ([`super::client::Dial::Local`]: CAPI core's conversion, written by us and deterministic) each
//! stored version is converted once per target version; a provider's webhook, reached over a
//! socket, is called on every read as kube-apiserver calls it.
//!
//! Only objects as stored are remembered (reads, watch events, a write's response): a request
//! body carries the resourceVersion it was based on with content of its own, so writes and
//! admission always convert afresh.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::Value;

use crate::registry::ResourceType;

/// Entries kept before the table starts over: the watchers of one version read a new object
/// version within moments of each other, so a short memory takes nearly every repeat.
const CAPACITY: usize = 256;

/// (the CRD's conversion configuration, group, resource, uid, resourceVersion, apiVersion of
/// the object, desired apiVersion). A CRD change makes a new configuration (a new address).
pub(super) type Key = (usize, String, String, String, String, String, String);

/// The remembered conversions of one server.
#[derive(Default)]
pub struct StoredConversions {
    table: Mutex<HashMap<Key, Value>>,
}

impl StoredConversions {
    /// Forgets everything (a webhook route changed).
    pub fn clear(&self) {
        self.table.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    pub(super) fn get(&self, key: &Key) -> Option<Value> {
        self.table
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(key)
            .cloned()
    }

    pub(super) fn put(&self, key: Key, value: Value) {
        let mut table = self.table.lock().unwrap_or_else(|p| p.into_inner());
        if table.len() >= CAPACITY {
            table.clear();
        }
        table.insert(key, value);
    }
}

/// The key of a stored object with a uid and a resourceVersion; None for anything else.
pub(super) fn key(rt: &ResourceType, obj: &Value, desired: &str) -> Option<Key> {
    let s = |p: &str| {
        obj.pointer(p)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
    };
    let hook = rt.conversion.as_ref()?;
    Some((
        std::sync::Arc::as_ptr(hook) as usize,
        rt.group.clone(),
        rt.resource.clone(),
        s("/metadata/uid")?.to_string(),
        s("/metadata/resourceVersion")?.to_string(),
        s("/apiVersion")?.to_string(),
        desired.to_string(),
    ))
}
