//! Reads: one object, or every object a target covers.

use std::sync::Arc;

use serde_json::Value;

use crate::error::ApiError;
use crate::store::Store;
use crate::target::Target;

/// GET one object (a copy to modify).
pub fn get(store: &Store, t: &Target) -> Result<Value, ApiError> {
    get_shared(store, t).map(|o| (*o).clone())
}

/// GET one object, shared with the store (no copy).
pub fn get_shared(store: &Store, t: &Target) -> Result<Arc<Value>, ApiError> {
    store
        .objects
        .get(&t.key())
        .cloned()
        .ok_or_else(|| t.not_found())
}

/// Objects of a target's type (namespace-filtered when the target names one).
pub fn list(store: &Store, t: &Target) -> Vec<Value> {
    let ns = (t.rt.namespaced && !t.namespace.is_empty()).then_some(t.namespace.as_str());
    store
        .objects_of(&t.rt.group, &t.rt.resource, ns)
        .cloned()
        .collect()
}
