//! Options and outcomes of the writes (create, update, delete) and their admission options object.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::admission::FieldValidation;
use crate::webhook::oracle::Oracle;

/// Options shared by writes.
#[derive(Debug, Clone, Default)]
pub struct WriteOpts {
    pub dry_run: bool,
    pub validation: FieldValidation,
    pub field_manager: Option<String>,
    pub force: bool,
    /// The manager recorded for a non-apply write (`fieldManager`, else the User-Agent
    /// prefix); None for internal writes and apply, which track nothing here.
    pub update_manager: Option<String>,
    /// The subresource the write came through when `Target` is the main resource (`scale`).
    pub via_subresource: Option<String>,
    /// Webhook answers (admission, conversion) when webhooks are involved (webhook::oracle).
    pub oracle: Option<Arc<Oracle>>,
}

/// A successful write.
#[derive(Debug, Clone)]
pub struct Written {
    /// The stored object (shared with the store and the watch event).
    pub object: Arc<Value>,
    pub created: bool,
    pub warnings: Vec<String>,
}

/// DELETE options.
#[derive(Debug, Clone, Default)]
pub struct DeleteOpts {
    pub propagation: Option<String>,
    pub precondition_uid: Option<String>,
    pub precondition_rv: Option<String>,
    pub dry_run: bool,
    /// Webhook answers (admission, conversion) when webhooks are involved (webhook::oracle).
    pub oracle: Option<Arc<Oracle>>,
}

/// Result of a DELETE.
#[derive(Debug, Clone)]
pub enum Deleted {
    /// Removed now: the Status body.
    Gone(Value),
    /// Deferred by finalizers: the object with deletionTimestamp.
    Pending(Arc<Value>),
}

/// How an update was requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateKind {
    Put,
    Patch,
}

/// The admission options object of a write.
pub fn write_options(kind: &str, o: &WriteOpts) -> Value {
    let mut v = json!({"kind": kind, "apiVersion": "meta.k8s.io/v1"});
    if o.dry_run {
        v["dryRun"] = json!(["All"]);
    }
    if let Some(m) = &o.field_manager {
        v["fieldManager"] = json!(m);
    }
    match o.validation {
        crate::admission::FieldValidation::Strict => v["fieldValidation"] = json!("Strict"),
        crate::admission::FieldValidation::Ignore => v["fieldValidation"] = json!("Ignore"),
        crate::admission::FieldValidation::Warn => {}
    }
    v
}
