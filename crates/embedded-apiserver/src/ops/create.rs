//! Create (POST): the pipeline from the request body to the stored object.

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

/// POST.
pub fn create(
    store: &mut Store,
    t: &Target,
    mut obj: Value,
    o: &WriteOpts,
) -> Result<Written, ApiError> {
    if !obj.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    kind_check(t, &obj)?;
    namespace_check(t, &mut obj)?;
    let oracle = o.oracle.as_deref();
    let mut validation = o.validation;
    let mut decode_warnings = Vec::new();
    if let Some(oracle) = oracle {
        namespace_admission(store, t, meta::name(&obj))?;
        (obj, decode_warnings) = if t.rt.custom {
            decode_custom(t, obj, o.validation)?
        } else {
            decode_builtin(t, obj, o.validation)?
        };
        // Unknown fields a webhook adds are pruned silently.
        validation = FieldValidation::Ignore;
        let attrs = attributes(
            t,
            "CREATE",
            meta::name(&obj),
            o.dry_run,
            write_options("CreateOptions", o),
        );
        obj = oracle.mutate(attrs, obj, &Value::Null)?;
        kind_check(t, &obj)?;
        namespace_check(t, &mut obj)?;
    }
    let mut name = meta::name(&obj).to_string();
    if name.is_empty() {
        let gen_name = meta::str_at(&obj, "/metadata/generateName").to_string();
        if gen_name.is_empty() {
            return Err(invalid(
                t,
                "",
                vec![StatusCause::new(
                    "FieldValueRequired",
                    "metadata.name",
                    "Required value: name or generateName is required",
                )],
            ));
        }
        name = format!("{gen_name}{}", meta::random_suffix());
        meta::set_meta(&mut obj, "name", json!(name));
    }
    namespace_admission(store, t, &name)?;
    if let Some(crd_key) = crd_key_for(t)
        && store
            .objects
            .get(&crd_key)
            .is_some_and(|c| meta::is_deleting(c))
    {
        return Err(ApiError::new(
            405,
            "MethodNotAllowed",
            "create not allowed while custom resource definition is terminating",
        ));
    }
    if t.rt.has_status(&t.version)
        && let Value::Object(m) = &mut obj
    {
        m.remove("status");
    }
    prepare_builtin(t, &mut obj, None);
    if t.rt.group.is_empty()
        && t.rt.resource == "services"
        && crate::schema::workloads::needs_cluster_ip(&obj)
    {
        let ip = allocate_cluster_ip(store).ok_or_else(|| {
            ApiError::new(
                500,
                "InternalError",
                "failed to allocate a serviceIP: range is full",
            )
        })?;
        crate::schema::workloads::set_cluster_ip(&mut obj, &ip);
    }
    // kube-apiserver fills the UID before the strategy's PrepareForCreate, which a Job's
    // generated selector needs.
    let uid = meta::new_uid();
    if is_job(&t.rt) {
        crate::schema::job::prepare_create(&mut obj, &name, &uid);
    }
    let is_namespace = t.rt.group.is_empty() && t.rt.resource == "namespaces";
    if is_namespace {
        let labels_missing = obj.pointer("/metadata/labels").is_none();
        if labels_missing {
            meta::set_meta(&mut obj, "labels", json!({}));
        }
        if let Some(l) = obj
            .pointer_mut("/metadata/labels")
            .and_then(Value::as_object_mut)
        {
            l.insert("kubernetes.io/metadata.name".into(), json!(name));
        }
    }
    if is_crd(&t.rt) {
        let causes = crd::validate(&obj);
        if !causes.is_empty() {
            return Err(invalid(t, &name, causes));
        }
    }
    let requested_managed = obj.pointer("/metadata/managedFields").cloned();
    let (mut obj, mut warnings) = admit(t, obj, None, &name, validation)?;
    // After decoding: the typed status says `conditions: null` (no omitempty).
    if is_crd(&t.rt) {
        obj["status"] = crd::initial_status(&obj);
    }
    decode_warnings.append(&mut warnings);
    let warnings = decode_warnings;
    if let Some(manager) = &o.update_manager {
        crate::field_manager::track_update(
            t,
            None,
            &mut obj,
            manager,
            requested_managed.as_ref(),
            None,
        );
    }
    storage_zero_fields(t, &mut obj);
    // The namespace strategy's PrepareForCreate, after managedFields: the finalizer it adds
    // belongs to no manager.
    if is_namespace {
        if obj.pointer("/spec/finalizers").is_none() {
            obj["spec"] = json!({"finalizers": ["kubernetes"]});
        }
        obj["status"] = json!({"phase": "Active"});
    }
    let key = t.key_for(&name);
    if store.objects.contains_key(&key) {
        return Err(ApiError::already_exists(&t.rt.group, &t.rt.resource, &name));
    }
    if let Some(m) = meta::meta_mut(&mut obj) {
        m.insert("uid".into(), json!(uid));
        m.insert("creationTimestamp".into(), json!(meta::now_rfc3339()));
        m.remove("resourceVersion");
        m.remove("deletionTimestamp");
        m.remove("deletionGracePeriodSeconds");
        if tracks_generation(&t.rt) {
            m.insert("generation".into(), json!(1));
        } else {
            m.remove("generation");
        }
    }
    if let Some(oracle) = oracle {
        let attrs = attributes(
            t,
            "CREATE",
            &name,
            o.dry_run,
            write_options("CreateOptions", o),
        );
        oracle.validate(attrs, &obj, &Value::Null)?;
    }
    let obj = to_storage(t, obj, oracle)?;
    if o.dry_run {
        return Ok(Written {
            object: Arc::new(obj),
            created: true,
            warnings,
        });
    }
    let stored = persist(store, t, key, obj, None);
    Ok(Written {
        object: stored,
        created: true,
        warnings,
    })
}
