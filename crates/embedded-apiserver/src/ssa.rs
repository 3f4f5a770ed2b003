//! Field management (docs/embedded-apiserver.md M6, S3): `metadata.managedFields` for every write, and
//! server-side apply with structured-merge-diff semantics.
//!
//! - Update (POST, PUT, non-apply PATCH, on the main resource or `/status`, `/scale`): the fields
//!   the write added or changed move to the writer's `Update` entry (manager from `fieldManager`,
//!   else the User-Agent prefix); removed fields leave every entry. Entries are keyed by manager,
//!   operation, subresource and (for Update) apiVersion, as kube-apiserver keys them.
//! - Apply: the configuration merges into the live object by [`typed`] list/map semantics;
//!   fields the applier owned last time and no manager owns now are removed; changing a field
//!   another manager (Apply or Update) owns is a conflict unless `force=true`.

use serde_json::{Value, json};

use super::error::{ApiError, StatusCause};
use super::field_manager::{
    Entry, entries_of, ignored, is_stripped, schema_ty, store_entries, tracked,
};
use super::fieldpath::{self, Path, Set};
use super::meta;
use super::ops::{self, UpdateKind, WriteOpts, Written};
use super::store::Store;
use super::target::Target;
use super::typed;

fn conflict_error(conflicts: &[(String, Path)]) -> ApiError {
    let causes: Vec<StatusCause> = conflicts
        .iter()
        .map(|(m, p)| {
            StatusCause::new(
                "FieldManagerConflict",
                &fieldpath::display(p),
                format!("conflict with {m}"),
            )
        })
        .collect();
    let message = if let [(m, p)] = conflicts {
        format!(
            "Apply failed with 1 conflict: conflict with {m}: {}",
            fieldpath::display(p)
        )
    } else {
        let mut by_manager: std::collections::BTreeMap<&str, Vec<String>> = Default::default();
        for (m, p) in conflicts {
            by_manager
                .entry(m.as_str())
                .or_default()
                .push(fieldpath::display(p));
        }
        let mut lines = Vec::new();
        for (m, paths) in by_manager {
            lines.push(format!("conflicts with {m}:"));
            lines.extend(paths.into_iter().map(|p| format!("- {p}")));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    ApiError::new(409, "Conflict", message).with_details(json!({"causes": causes}))
}

/// `PATCH` with `application/apply-patch+yaml`.
pub fn apply(
    store: &mut Store,
    t: &Target,
    mut body: Value,
    opts: &WriteOpts,
) -> Result<(Written, u16), ApiError> {
    let Some(manager) = opts.field_manager.clone() else {
        return Err(ApiError::invalid(
            "meta.k8s.io",
            "PatchOptions",
            "",
            vec![StatusCause::new(
                "FieldValueRequired",
                "fieldManager",
                "Required value: is required for apply patch",
            )],
        ));
    };
    if !body.is_object() {
        return Err(ApiError::bad_request("apply patch must be an object"));
    }
    if body.pointer("/metadata/managedFields").is_some() {
        return Err(ApiError::bad_request("metadata.managedFields must be nil"));
    }
    let inner = WriteOpts {
        update_manager: None,
        ..opts.clone()
    };
    let ty = schema_ty(t);
    // A field the kind's schema does not declare fails the patch's typed conversion: a 500,
    // as kube's field manager fails it (whatever fieldValidation says; under Ignore a custom
    // resource's nested unknown fields are pruned first, its top-level ones are not).
    let mut undeclared = typed::undeclared(&body, ty);
    if t.rt.custom && opts.validation == crate::admission::FieldValidation::Ignore {
        undeclared.retain(|p| p.matches('.').count() == 1);
    }
    if !undeclared.is_empty() {
        let errors: Vec<String> = undeclared
            .iter()
            .map(|p| format!("{p}: field not declared in schema"))
            .collect();
        let errors = if let [one] = errors.as_slice() {
            one.clone()
        } else {
            format!("errors:\n  {}", errors.join("\n  "))
        };
        return Err(ApiError::new(
            500,
            "",
            format!(
                "failed to create typed patch object ({}/{}; {}, Kind={}): {errors}",
                meta::namespace(&body),
                meta::name(&body),
                if t.rt.group.is_empty() {
                    format!("/{}", t.version)
                } else {
                    t.rt.api_version(&t.version)
                },
                t.rt.kind
            ),
        ));
    }
    let ignored = ignored(t);
    let raw_set = typed::to_set(&body, ty);
    let applied = tracked(raw_set.clone(), &ignored);
    let me = Entry {
        manager,
        operation: "Apply".into(),
        subresource: t.subresource.clone().unwrap_or_default(),
        api_version: t.rt.api_version(&t.version),
        time: Some(meta::now_rfc3339()),
        fields: applied,
    };
    let current = match ops::get_shared(store, t) {
        Ok(c) => c,
        Err(e) if e.code == 404 && t.subresource.is_none() => {
            meta::set_meta(&mut body, "name", json!(t.name));
            store_entries(&mut body, vec![me]);
            let w = ops::create(store, t, body, &inner)?;
            return Ok((w, 201));
        }
        Err(e) => return Err(e),
    };
    let live = ops::at_version(t, &current, opts.oracle.as_deref())?.into_owned();
    let mut entries = entries_of(live.pointer("/metadata/managedFields"));
    let last = entries
        .iter()
        .position(|e| e.same_identity(&me))
        .map(|i| entries.remove(i));
    let mut merged = typed::merge(&live, &body, ty);
    // Prune what the applier owned last time, applies no more, and nobody else owns.
    if let Some(last) = &last {
        let mut owned: Set = raw_set;
        for e in &entries {
            owned.extend(e.fields.iter().cloned());
        }
        owned.extend(me.fields.iter().cloned());
        let owned = typed::with_named_parents(&owned, ty);
        let prune: Set = typed::with_named_parents(&last.fields, ty)
            .into_iter()
            .filter(|p| !owned.contains(p) && !is_stripped(p))
            .collect();
        typed::remove_paths(&mut merged, &prune, ty);
    }
    let c = typed::compare(&live, &merged, ty);
    let changed = tracked(c.added.union(&c.modified).cloned().collect(), &ignored);
    let value_changed = !c.is_same();
    let removed = tracked(c.removed, &ignored);
    let mut conflicts: Vec<(String, Path)> = Vec::new();
    for e in &entries {
        for p in e.fields.intersection(&changed) {
            conflicts.push((e.describe(), p.clone()));
        }
    }
    if !conflicts.is_empty() && !opts.force {
        return Err(conflict_error(&conflicts));
    }
    for e in &mut entries {
        e.fields
            .retain(|p| !changed.contains(p) && !removed.contains(p));
    }
    let mut me = me;
    if !value_changed && let Some(last) = &last {
        me.time = last.time.clone();
    }
    entries.push(me);
    store_entries(&mut merged, entries);
    if meta::resource_version(&body).is_empty() {
        meta::set_meta(
            &mut merged,
            "resourceVersion",
            json!(meta::resource_version(&live)),
        );
    }
    let w = ops::update(store, t, merged, UpdateKind::Patch, &inner)?;
    Ok((w, 200))
}
