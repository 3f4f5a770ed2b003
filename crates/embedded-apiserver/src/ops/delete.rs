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
    // Namespaces and CRDs have REST storage of their own in kube-apiserver, with its older
    // precondition wording; every other kind goes through the generic store.
    let own_storage = is_crd(&t.rt) || is_namespace(t);
    // A precondition of `field` (`want`) the stored object (`got`) does not meet, in the
    // wording of the storage that checks it.
    let failed = |field: &str, want: &str, got: &str, why: &str| {
        if own_storage {
            ApiError::conflict(
                &t.rt.group,
                &t.rt.resource,
                &t.name,
                &format!(
                    "Precondition failed: {field} in precondition: {want}, {field} in object meta: {got}"
                ),
            )
        } else {
            precondition_conflict(
                t,
                &format!(
                    "the {field} in the precondition ({want}) does not match the {field} in record ({got}). {why}"
                ),
            )
        }
    };
    if let Some(uid) = &o.precondition_uid
        && uid != meta::uid(&old)
    {
        return Err(failed(
            "UID",
            uid,
            meta::uid(&old),
            "The object might have been deleted and then recreated",
        ));
    }
    if let Some(rv) = &o.precondition_rv
        && rv != meta::resource_version(&old)
    {
        return Err(failed(
            "ResourceVersion",
            rv,
            meta::resource_version(&old),
            "The object might have been modified",
        ));
    }
    if is_namespace(t) && PROTECTED_NAMESPACES.contains(&t.name.as_str()) {
        return Err(ApiError::forbidden(format!(
            "namespaces \"{}\" is forbidden: this namespace may not be deleted",
            t.name
        ))
        .with_details(json!({"name": t.name, "kind": "namespaces"})));
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
    // The generic store's graceful deletion (grace period 0, generation + 1); the namespace and
    // CRD storages set only the timestamp.
    if !own_storage {
        meta::set_meta(&mut new, "deletionGracePeriodSeconds", json!(0));
    }
    if tracks_generation(&t.rt) && !own_storage {
        let g = old
            .pointer("/metadata/generation")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        meta::set_meta(&mut new, "generation", json!(g + 1));
    }
    if is_namespace(t) {
        new["status"] = json!({"phase": "Terminating"});
    }
    if is_crd(&t.rt) {
        crd::mark_terminating(&mut new);
    }
    if o.dry_run {
        return Ok(Deleted::Pending(Arc::new(new)));
    }
    let stored = persist(store, t, key, new, Some(old));
    Ok(Deleted::Pending(stored))
}

/// The namespaces kube's NamespaceLifecycle admission refuses to delete.
const PROTECTED_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public"];

fn is_namespace(t: &Target) -> bool {
    t.rt.group.is_empty() && t.rt.resource == "namespaces"
}

/// The generic store's precondition conflict: the kind, qualified by its group, names the
/// object (`ConfigMap "x"`, `Widget.example.com "w"`).
fn precondition_conflict(t: &Target, why: &str) -> ApiError {
    let qualified = if t.rt.group.is_empty() {
        t.rt.kind.clone()
    } else {
        format!("{}.{}", t.rt.kind, t.rt.group)
    };
    let mut details = json!({"name": t.name, "kind": t.rt.kind});
    if !t.rt.group.is_empty() {
        details["group"] = json!(t.rt.group);
    }
    ApiError::new(
        409,
        "Conflict",
        format!(
            "Operation cannot be fulfilled on {qualified} \"{}\": {why}",
            t.name
        ),
    )
    .with_details(details)
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
