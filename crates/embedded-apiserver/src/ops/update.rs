//! Update (PUT, PATCH, status, scale, apply): prepared under the lock, then committed.

use std::sync::Arc;

use serde_json::{Value, json};

use super::options::*;
use super::steps::*;
use super::versions::*;
use crate::admission::FieldValidation;
use crate::crd;
use crate::error::{ApiError, StatusCause};
use crate::meta;
use crate::store::Store;
use crate::target::Target;

/// PUT / PATCH result after the patch was applied: the common update strategy.
pub fn update(
    store: &mut Store,
    t: &Target,
    new: Value,
    kind: UpdateKind,
    o: &WriteOpts,
) -> Result<Written, ApiError> {
    let old = store.objects.get(&t.key()).cloned();
    let prepared = prepare_update(t, old.as_ref(), new, kind, o)?;
    Ok(commit_update(store, t, prepared))
}

/// What an update does to the store, computed from the stored object it was based on.
#[derive(Debug)]
pub struct PreparedUpdate {
    /// The stored object the update was computed from.
    pub base: Arc<Value>,
    change: Change,
    warnings: Vec<String>,
}

#[derive(Debug)]
pub(super) enum Change {
    /// The result equals the stored object: nothing is written.
    None,
    /// Dry run: the result, not stored.
    DryRun(Value),
    /// Deleting and no finalizers left: the object goes.
    Remove(Value),
    /// The new object to store.
    Store(Value),
}

/// The update strategy without the store: every check, admission and managedFields tracking,
/// from `old`, the stored object (None: not found). The store is touched only by
/// [`commit_update`], so a caller may compute this outside the store lock and commit only if the
/// stored object is still `base` ([`commit_if_unchanged`]).
pub fn prepare_update(
    t: &Target,
    old: Option<&Arc<Value>>,
    mut new: Value,
    kind: UpdateKind,
    o: &WriteOpts,
) -> Result<PreparedUpdate, ApiError> {
    if !new.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    kind_check(t, &new)?;
    let Some(old) = old.cloned() else {
        return Err(t.not_found());
    };
    let body_name = meta::name(&new).to_string();
    if !body_name.is_empty() && body_name != t.name {
        return Err(ApiError::bad_request(format!(
            "the name of the object ({body_name}) does not match the name on the URL ({})",
            t.name
        )));
    }
    namespace_check(t, &mut new)?;
    meta::set_meta(&mut new, "name", json!(t.name));
    // managedFields the client sent, unless they are the stored ones (a patch's base carries
    // them): tracking from the stored entries is then the same and needs no copy.
    let requested_managed = meta::at(&new, "/metadata/managedFields")
        .filter(|mf| meta::at(&old, "/metadata/managedFields") != Some(*mf))
        .cloned();
    // resourceVersion precondition.
    let new_rv = meta::resource_version(&new).to_string();
    if new_rv.is_empty() {
        if kind == UpdateKind::Put && (t.rt.custom || is_crd(&t.rt)) {
            // kube names the resource here (`widgets.example.com "w" is invalid`), not the kind.
            return Err(ApiError::invalid(
                &t.rt.group,
                &t.rt.resource,
                &t.name,
                vec![StatusCause::new(
                    "FieldValueInvalid",
                    "metadata.resourceVersion",
                    "Invalid value: 0: must be specified for an update",
                )],
            ));
        }
    } else if new_rv != meta::resource_version(&old) {
        return Err(ApiError::modified(&t.rt.group, &t.rt.resource, &t.name));
    }
    let oracle = o.oracle.as_deref();
    // The stored object at the request version (conversion, ratcheting, webhooks).
    let old_v = at_version(t, &old, oracle)?;
    let mut validation = o.validation;
    let mut decode_warnings = Vec::new();
    let scale_write = o.via_subresource.as_deref() == Some("scale");
    if let Some(oracle) = oracle
        && !scale_write
    {
        (new, decode_warnings) = if t.rt.custom {
            decode_custom(t, new, o.validation)?
        } else {
            decode_builtin(t, new, o.validation)?
        };
        validation = FieldValidation::Ignore;
        let attrs = attributes(
            t,
            "UPDATE",
            &t.name,
            o.dry_run,
            write_options("UpdateOptions", o),
        );
        new = oracle.mutate(attrs, new, &old_v)?;
        kind_check(t, &new)?;
        namespace_check(t, &mut new)?;
        meta::set_meta(&mut new, "name", json!(t.name));
    }
    // Subresource strategies.
    if t.status_sub() {
        let status = new.get("status").cloned();
        // managedFields are kept from the request (apply computed them for this write).
        let managed = new.pointer("/metadata/managedFields").cloned();
        new = old_v.clone().into_owned();
        if let Some(mf) = managed {
            meta::set_meta(&mut new, "managedFields", mf);
        }
        match status {
            Some(s) => new["status"] = s,
            None => {
                if let Value::Object(m) = &mut new {
                    m.remove("status");
                }
            }
        }
    } else if t.rt.has_status(&t.version) {
        match old_v.get("status") {
            Some(s) => new["status"] = s.clone(),
            None => {
                if let Value::Object(m) = &mut new {
                    m.remove("status");
                }
            }
        }
    }
    // managedFields omitted by the client are kept.
    if new.pointer("/metadata/managedFields").is_none()
        && let Some(mf) = old.pointer("/metadata/managedFields")
    {
        meta::set_meta(&mut new, "managedFields", mf.clone());
    }
    // Immutable metadata.
    for k in [
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match old.get("metadata").and_then(|m| m.get(k)) {
            Some(v) => meta::set_meta(&mut new, k, v.clone()),
            None => {
                meta::remove_meta(&mut new, k);
            }
        }
    }
    if meta::is_deleting(&old) {
        let before = meta::finalizers(&old);
        let added: Vec<String> = meta::finalizers(&new)
            .into_iter()
            .filter(|f| !before.contains(f))
            .collect();
        if !added.is_empty() {
            let cause = StatusCause::new(
                "FieldValueForbidden",
                "metadata.finalizers",
                format!(
                    "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{{{}}}",
                    added
                        .iter()
                        .map(|f| format!("\"{f}\""))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
            // apiextensions validates a custom resource's ObjectMeta update twice (its
            // strategy and the generic one): the cause is there twice, the message once.
            let causes = if t.rt.custom {
                vec![cause.clone(), cause]
            } else {
                vec![cause]
            };
            return Err(invalid(t, &t.name, causes));
        }
    }
    prepare_builtin(t, &mut new, Some(&*old));
    if is_crd(&t.rt) {
        // kube's CRD PrepareForUpdate: the storage version joins status.storedVersions.
        if !t.status_sub() {
            crd::record_stored_version(&mut new);
        }
        let mut causes = if t.status_sub() {
            Vec::new()
        } else {
            crd::validate(&new)
        };
        causes.extend(crd::validate_stored_versions(&new));
        if !causes.is_empty() {
            return Err(invalid(t, &t.name, causes));
        }
    }
    let (mut new, warnings) = if t.status_sub() {
        (new, Vec::new())
    } else {
        let (new, mut w) = admit(t, new, Some(&*old_v), &t.name, validation)?;
        decode_warnings.append(&mut w);
        (new, std::mem::take(&mut decode_warnings))
    };
    // Generation.
    if tracks_generation(&t.rt) {
        let without_status = t.rt.has_status(&t.version);
        if !meta::same_spec_part(&old_v, &new, without_status) {
            let g = old
                .pointer("/metadata/generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            meta::set_meta(&mut new, "generation", json!(g + 1));
        }
    }
    meta::set_meta(
        &mut new,
        "resourceVersion",
        json!(meta::resource_version(&old)),
    );
    if let Some(manager) = &o.update_manager {
        crate::field_manager::track_update(
            t,
            Some(&*old_v),
            &mut new,
            manager,
            requested_managed.as_ref(),
            o.via_subresource.as_deref(),
        );
    }
    storage_zero_fields(t, &mut new);
    if let Some(oracle) = oracle {
        let mut attrs = attributes(
            t,
            "UPDATE",
            &t.name,
            o.dry_run,
            write_options("UpdateOptions", o),
        );
        if scale_write {
            attrs.subresource = "scale".into();
            let scale_t = Target {
                subresource: Some("scale".into()),
                ..t.clone()
            };
            oracle.validate(
                attrs,
                &crate::scale::to_scale(&scale_t, &new),
                &crate::scale::to_scale(&scale_t, &old_v),
            )?;
        } else {
            oracle.validate(attrs, &new, &old_v)?;
        }
    }
    let new = to_storage(t, new, oracle)?;
    let change = if new == *old {
        Change::None
    } else if o.dry_run {
        Change::DryRun(new)
    } else if meta::is_deleting(&new)
        && meta::finalizers(&new).is_empty()
        && !blocked_by_spec_finalizers(t, &new)
    {
        Change::Remove(new)
    } else {
        Change::Store(new)
    };
    Ok(PreparedUpdate {
        base: old,
        change,
        warnings,
    })
}

/// Writes a prepared update (whose `base` must be the stored object).
pub fn commit_update(store: &mut Store, t: &Target, p: PreparedUpdate) -> Written {
    let object = match p.change {
        Change::None => p.base,
        Change::DryRun(new) => Arc::new(new),
        Change::Remove(new) => remove_after_update(store, t, &t.key(), new),
        Change::Store(new) => persist(store, t, t.key(), new, Some(p.base)),
    };
    Written {
        object,
        created: false,
        warnings: p.warnings,
    }
}

/// [`commit_update`] if the stored object is still the one the update was prepared from;
/// otherwise gives the update back (another write came first: prepare it again).
pub fn commit_if_unchanged(
    store: &mut Store,
    t: &Target,
    p: PreparedUpdate,
) -> Result<Written, PreparedUpdate> {
    let current = store.objects.get(&t.key());
    if current.is_some_and(|c| Arc::ptr_eq(c, &p.base)) {
        Ok(commit_update(store, t, p))
    } else {
        Err(p)
    }
}
