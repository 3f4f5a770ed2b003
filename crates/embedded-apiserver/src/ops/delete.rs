//! Delete: finalizers, graceful deletion, propagation and the Status answer.

use std::sync::Arc;

use serde_json::{Value, json};

use super::options::*;
use super::steps::*;
use super::versions::*;
use crate::crd;
use crate::error::ApiError;
use crate::meta;
use crate::store::Store;
use crate::target::Target;

/// DELETE.
pub fn delete(store: &mut Store, t: &Target, o: &DeleteOpts) -> Result<Deleted, ApiError> {
    let key = t.key();
    let Some(old) = store.objects.get(&key).cloned() else {
        return Err(t.not_found());
    };
    if let Some(uid) = &o.precondition_uid
        && uid != meta::uid(&old)
    {
        return Err(ApiError::conflict(
            &t.rt.group,
            &t.rt.resource,
            &t.name,
            &format!(
                "Precondition failed: UID in precondition: {uid}, UID in object meta: {}",
                meta::uid(&old)
            ),
        ));
    }
    if let Some(rv) = &o.precondition_rv
        && rv != meta::resource_version(&old)
    {
        return Err(ApiError::conflict(
            &t.rt.group,
            &t.rt.resource,
            &t.name,
            &format!(
                "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {}",
                meta::resource_version(&old)
            ),
        ));
    }
    if let Some(oracle) = o.oracle.as_deref() {
        let old_v = at_version(t, &old, Some(oracle))?;
        let mut options = json!({"kind": "DeleteOptions", "apiVersion": "meta.k8s.io/v1"});
        if let Some(p) = &o.propagation {
            options["propagationPolicy"] = json!(p);
        }
        if o.dry_run {
            options["dryRun"] = json!(["All"]);
        }
        let attrs = attributes(t, "DELETE", &t.name, o.dry_run, options);
        oracle.mutate(attrs.clone(), Value::Null, &old_v)?;
        oracle.validate(attrs, &Value::Null, &old_v)?;
    }
    if meta::is_deleting(&old) {
        return Ok(Deleted::Pending(old));
    }
    let mut finalizers = meta::finalizers(&old);
    let mut add = |f: &str| {
        if !finalizers.iter().any(|x| x == f) {
            finalizers.push(f.to_string());
        }
    };
    match o.propagation.as_deref() {
        Some("Foreground") => add("foregroundDeletion"),
        Some("Orphan") => add("orphan"),
        _ => {}
    }
    if is_crd(&t.rt) {
        add(crd::CLEANUP_FINALIZER);
    }
    let is_namespace = t.rt.group.is_empty() && t.rt.resource == "namespaces";
    if finalizers.is_empty() && !blocked_by_spec_finalizers(t, &old) {
        if o.dry_run {
            return Ok(Deleted::Gone(success_status(t, &old)));
        }
        let gone = remove(store, t, &key).unwrap_or(old);
        return Ok(Deleted::Gone(success_status(t, &gone)));
    }
    let mut new = (*old).clone();
    meta::set_finalizers(&mut new, &finalizers);
    meta::set_meta(&mut new, "deletionTimestamp", json!(meta::now_rfc3339()));
    meta::set_meta(&mut new, "deletionGracePeriodSeconds", json!(0));
    if tracks_generation(&t.rt) {
        let g = old
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        meta::set_meta(&mut new, "generation", json!(g + 1));
    }
    if is_namespace {
        new["status"] = json!({"phase": "Terminating"});
    }
    if o.dry_run {
        return Ok(Deleted::Pending(Arc::new(new)));
    }
    let stored = persist(store, t, key, new, Some(old));
    Ok(Deleted::Pending(stored))
}

pub(super) fn success_status(t: &Target, obj: &Value) -> Value {
    let mut details = json!({"name": t.name, "kind": t.rt.resource, "uid": meta::uid(obj)});
    if !t.rt.group.is_empty() {
        details["group"] = json!(t.rt.group);
    }
    json!({
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": details,
    })
}
