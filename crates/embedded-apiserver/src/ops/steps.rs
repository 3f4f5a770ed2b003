//! The steps every write shares: decoding and checks, admission, built-in preparation, CRD registry sync, persisting and removing.

use std::sync::Arc;

use serde_json::{Value, json};

use crate::admission::{self, AdmitError, FieldValidation};
use crate::crd;
use crate::error::{ApiError, StatusCause};
use crate::meta;
use crate::registry::{self, ResourceType};
use crate::store::{EventType, Key, Store, StoreEvent};
use crate::target::Target;
use crate::webhook::admission::Attributes;

/// The admission attributes of a write of `t`.
pub(super) fn attributes(
    t: &Target,
    operation: &'static str,
    name: &str,
    dry_run: bool,
    options: Value,
) -> Attributes {
    Attributes {
        operation,
        version: t.version.clone(),
        subresource: t.subresource.clone().unwrap_or_default(),
        name: name.to_string(),
        namespace: if t.rt.namespaced {
            t.namespace.clone()
        } else {
            String::new()
        },
        dry_run,
        options,
    }
}

/// Decoding of a custom resource before mutating admission: pruned and defaulted at the
/// request version (webhooks see defaults), unknown fields refused (Strict) or warned about.
pub(super) fn decode_custom(
    t: &Target,
    obj: Value,
    validation: FieldValidation,
) -> Result<(Value, Vec<String>), ApiError> {
    let Some(schema) = t.rt.version(&t.version).and_then(|v| v.schema.as_ref()) else {
        return Ok((obj, Vec::new()));
    };
    let result = crate::schema::process(
        obj,
        schema,
        &crate::schema::PipelineOptions {
            validate: false,
            ..Default::default()
        },
    );
    let warnings = unknown_fields_outcome(t, &result.unknown_fields, validation)?;
    Ok((result.object, warnings))
}

/// The 400 of `fieldValidation=Strict`, worded as kube's decoder wraps its strict errors:
/// `Widget in version "v1" cannot be handled as a Widget: strict decoding error: …`.
fn strict_error(t: &Target, unknown: &[String]) -> ApiError {
    ApiError::bad_request(format!(
        "{kind} in version {} cannot be handled as a {kind}: {}",
        crate::schema::go_quote(&t.version),
        crate::schema::strict_error_message(unknown).unwrap_or_default(),
        kind = t.rt.kind
    ))
}

/// What `validation` makes of the unknown fields decoding dropped: a 400 (Strict), one warning
/// each (Warn), nothing (Ignore).
fn unknown_fields_outcome(
    t: &Target,
    unknown: &[String],
    validation: FieldValidation,
) -> Result<Vec<String>, ApiError> {
    if validation == FieldValidation::Strict && !unknown.is_empty() {
        return Err(strict_error(t, unknown));
    }
    Ok(if validation == FieldValidation::Warn {
        crate::schema::unknown_field_warnings(unknown)
    } else {
        Vec::new()
    })
}

/// Typed decoding of a built-in kind's object (`crate::schema::typed_decode`): a value of the
/// wrong type refused (400), unknown fields dropped, and refused (Strict) or warned about.
pub(super) fn decode_builtin(
    t: &Target,
    obj: Value,
    validation: FieldValidation,
) -> Result<(Value, Vec<String>), ApiError> {
    let d = crate::schema::typed_decode::decode_builtin(&t.rt.group, &t.version, &t.rt.kind, obj)
        .map_err(ApiError::bad_request)?;
    let warnings = unknown_fields_outcome(t, &d.unknown_fields, validation)?;
    Ok((d.object, warnings))
}

/// The body's apiVersion and kind against the URL's, refused as kube refuses them: a custom
/// resource's decoder needs a kind and the URL's apiVersion (400), its validation the URL's
/// kind (422 on `kind`); a built-in body of another kind cannot be converted (400).
pub(super) fn kind_check(t: &Target, obj: &Value) -> Result<(), ApiError> {
    let kind = meta::str_at(obj, "/kind");
    let api_version = meta::str_at(obj, "/apiVersion");
    let expected = t.rt.api_version(&t.version);
    if t.rt.custom {
        if kind.is_empty() {
            let text = serde_json::to_string(obj).unwrap_or_default();
            let summary: String = if text.len() > 30 {
                format!("{} ...", text.chars().take(30).collect::<String>())
            } else {
                text.clone()
            };
            return Err(ApiError::bad_request(format!(
                "the object provided is unrecognized (must be of type {}): Object 'Kind' is missing in '{text}' ({summary})",
                t.rt.kind
            )));
        }
        if !api_version.is_empty() && api_version != expected {
            return Err(ApiError::bad_request(format!(
                "the API version in the data ({api_version}) does not match the expected API version ({expected})"
            )));
        }
        if kind != t.rt.kind {
            return Err(ApiError::invalid(
                &t.rt.group,
                kind,
                meta::name(obj),
                vec![StatusCause::new(
                    "FieldValueInvalid",
                    "kind",
                    format!(
                        "Invalid value: {}: must be {}",
                        crate::schema::go_quote(kind),
                        t.rt.kind
                    ),
                )],
            ));
        }
    } else if !kind.is_empty() && kind != t.rt.kind {
        let internal = if t.rt.group.is_empty() {
            "core"
        } else {
            t.rt.group.split('.').next().unwrap_or_default()
        };
        return Err(ApiError::bad_request(format!(
            "{kind} in version {} cannot be handled as a {}: converting ({}.{kind}) to ({internal}.{}): unknown conversion",
            crate::schema::go_quote(&t.version),
            t.rt.kind,
            t.version,
            t.rt.kind
        )));
    }
    Ok(())
}

pub(super) fn namespace_check(t: &Target, obj: &mut Value) -> Result<(), ApiError> {
    if t.rt.namespaced {
        let body_ns = meta::namespace(obj).to_string();
        if body_ns.is_empty() {
            meta::set_meta(obj, "namespace", json!(t.namespace));
        } else if body_ns != t.namespace {
            return Err(ApiError::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
    } else {
        meta::remove_meta(obj, "namespace");
    }
    Ok(())
}

/// Namespace admission: missing → 404, terminating → 403 (creates only).
pub(super) fn namespace_admission(store: &Store, t: &Target, name: &str) -> Result<(), ApiError> {
    if !t.rt.namespaced {
        return Ok(());
    }
    let key = (
        String::new(),
        "namespaces".to_string(),
        String::new(),
        t.namespace.clone(),
    );
    match store.objects.get(&key) {
        None => Err(ApiError::not_found("", "namespaces", &t.namespace)),
        Some(ns) if meta::is_deleting(ns) => Err(ApiError::namespace_terminating(
            &t.rt.group,
            &t.rt.resource,
            name,
            &t.namespace,
        )),
        Some(_) => Ok(()),
    }
}

pub(super) fn invalid(t: &Target, name: &str, causes: Vec<StatusCause>) -> ApiError {
    ApiError::invalid(&t.rt.group, &t.rt.kind, name, causes)
}

/// Secret `stringData` folded into base64 `data`.
pub(super) fn fold_string_data(obj: &mut Value) {
    use base64::Engine as _;
    let Some(sd) = obj.as_object_mut().and_then(|m| m.remove("stringData")) else {
        return;
    };
    if let Some(sd) = sd.as_object() {
        if !obj.get("data").is_some_and(Value::is_object) {
            obj["data"] = json!({});
        }
        for (k, v) in sd {
            let raw = v.as_str().unwrap_or_default();
            obj["data"][k] = json!(base64::engine::general_purpose::STANDARD.encode(raw));
        }
    }
}

/// What a stored object gains on its way back out of kube's storage, after managedFields
/// were recorded (no manager owns it): an events.k8s.io Event is kept as a core Event and
/// converted back, the core fields it has no value for coming back as their zero values.
pub(super) fn storage_zero_fields(t: &Target, obj: &mut Value) {
    if t.rt.group == "events.k8s.io"
        && t.rt.resource == "events"
        && let Some(o) = obj.as_object_mut()
    {
        for (k, zero) in [
            ("deprecatedSource", json!({})),
            ("deprecatedFirstTimestamp", Value::Null),
            ("deprecatedLastTimestamp", Value::Null),
        ] {
            o.entry(k).or_insert(zero);
        }
    }
}

/// Type-specific preparation shared by create and update (`old`: the stored object).
pub(super) fn prepare_builtin(t: &Target, obj: &mut Value, old: Option<&Value>) {
    if t.rt.custom {
        return;
    }
    if is_job(&t.rt) {
        crate::schema::job::default(obj);
    }
    if is_crd(&t.rt) {
        crd::set_defaults(obj);
    }

    if t.rt.group.is_empty() && t.rt.resource == "secrets" {
        fold_string_data(obj);
        if obj.get("type").is_none() {
            obj["type"] = json!("Opaque");
        }
    }
    crate::schema::workloads::apply_defaults(&t.rt.kind, obj, old);
}

/// The first free address of the service range (`10.96.0.10` on), as kube's allocator gives
/// every new Service of type ClusterIP/NodePort/LoadBalancer one.
pub(super) fn allocate_cluster_ip(store: &Store) -> Option<String> {
    let used: std::collections::HashSet<&str> = store
        .objects
        .iter()
        .filter(|(k, _)| k.0.is_empty() && k.1 == "services")
        .filter_map(|(_, o)| o.pointer("/spec/clusterIP").and_then(Value::as_str))
        .collect();
    let [a, b] = crate::schema::workloads::SERVICE_CIDR_BASE;
    (10u32..(1 << 20))
        .map(|n| {
            format!(
                "{a}.{}.{}.{}",
                b as u32 + (n >> 16),
                (n >> 8) & 0xff,
                n & 0xff
            )
        })
        .find(|ip| !used.contains(ip.as_str()))
}

pub(super) fn admit(
    t: &Target,
    obj: Value,
    old: Option<&Value>,
    name: &str,
    validation: FieldValidation,
) -> Result<(Value, Vec<String>), ApiError> {
    if !t.rt.custom {
        let (mut obj, warnings) = decode_builtin(t, obj, validation)?;
        let causes = admission::validate_builtin(&mut obj, old, &t.rt.kind, t.rt.namespaced);
        if !causes.is_empty() {
            return Err(invalid(t, name, causes));
        }
        return Ok((obj, warnings));
    }
    let schema = t.rt.version(&t.version).and_then(|v| v.schema.as_ref());
    let scale =
        t.rt.version(&t.version)
            .and_then(|v| v.scale.as_ref())
            .map(|s| {
                (
                    s.spec_replicas_path.as_str(),
                    s.status_replicas_path.as_str(),
                )
            });
    match admission::admit_custom(obj, old, schema, t.rt.namespaced, validation, scale) {
        Ok(a) => Ok((a.object, a.warnings)),
        Err(AdmitError::Invalid(causes)) => Err(invalid(t, name, causes)),
        Err(AdmitError::Strict(fields)) => Err(strict_error(t, &fields)),
    }
}

pub(super) fn tracks_generation(rt: &ResourceType) -> bool {
    rt.custom
        || rt.resource == "customresourcedefinitions"
        || (rt.group == "apps" && matches!(rt.resource.as_str(), "deployments" | "daemonsets"))
        || is_job(rt)
}

/// `batch/v1 Job`: stored with kube's defaults, generated selector and validation; no
/// controller runs it.
pub(super) fn is_job(rt: &ResourceType) -> bool {
    !rt.custom && rt.group == "batch" && rt.resource == "jobs"
}

/// Registry bookkeeping when a CRD object is persisted or removed.
pub(super) fn sync_crd_registry(store: &mut Store, crd_obj: &Value, removed: bool) {
    let (group, plural) = (
        meta::str_at(crd_obj, "/spec/group").to_string(),
        meta::str_at(crd_obj, "/spec/names/plural").to_string(),
    );
    if removed {
        if store.registry.remove(&group, &plural).is_some() {
            store.schema_generation += 1;
        }
        store.watch_start.remove(&(group, plural));
        return;
    }
    if !crd::condition_true(crd_obj, "Established") {
        return;
    }
    if let Some(rt) = registry::from_crd(crd_obj)
        && store.registry.get(&group, &plural).as_deref() != Some(&rt)
    {
        let rv = store.rv;
        store.watch_start.entry((group, plural)).or_insert(rv);
        store.registry.insert(rt);
        store.schema_generation += 1;
    }
}

pub(super) fn is_crd(rt: &ResourceType) -> bool {
    rt.group == "apiextensions.k8s.io" && rt.resource == "customresourcedefinitions"
}

pub(super) fn persist(
    store: &mut Store,
    t: &Target,
    key: Key,
    mut obj: Value,
    old: Option<Arc<Value>>,
) -> Arc<Value> {
    let rv = store.next_rv();
    meta::set_meta(&mut obj, "resourceVersion", json!(rv.to_string()));
    let type_ = if old.is_some() {
        EventType::Modified
    } else {
        EventType::Added
    };
    let obj = Arc::new(obj);
    store.objects.insert(key.clone(), obj.clone());
    if is_crd(&t.rt) {
        sync_crd_registry(store, &obj, false);
    }
    store.publish(StoreEvent {
        type_,
        group: key.0,
        resource: key.1,
        namespace: key.2,
        object: obj.clone(),
        old,
        rv,
    });
    obj
}

/// Removes the object at `key`; returns it with the deletion's resourceVersion (what a DELETE
/// answers, as etcd3's store decodes the deleted value at the delete's revision).
///
/// The DELETED event keeps the last stored state itself (shared, not copied: a namespace's or
/// a run's cleanup deletes every object at once, and the event history would hold a second
/// copy of each); its resourceVersion is the event's `rv`, which a watcher is sent
/// ([`StoreEvent::object_at_rv`]).
pub(super) fn remove(store: &mut Store, t: &Target, key: &Key) -> Option<Arc<Value>> {
    let old = store.objects.remove(key)?;
    let rv = store.next_rv();
    if is_crd(&t.rt) {
        sync_crd_registry(store, &old, true);
    }
    let event = StoreEvent {
        type_: EventType::Deleted,
        group: key.0.clone(),
        resource: key.1.clone(),
        namespace: key.2.clone(),
        object: old.clone(),
        old: Some(old),
        rv,
    };
    let gone = Arc::new(event.object_at_rv());
    store.publish(event);
    Some(gone)
}

pub(super) fn storage_name<'a>(rt: &'a ResourceType, asked: &'a str) -> &'a str {
    rt.storage_version()
        .map(|v| v.name.as_str())
        .unwrap_or(asked)
}

/// The key of the CRD that defines a custom resource target.
pub(super) fn crd_key_for(t: &Target) -> Option<Key> {
    t.rt.custom.then(|| {
        (
            "apiextensions.k8s.io".to_string(),
            "customresourcedefinitions".to_string(),
            String::new(),
            format!("{}.{}", t.rt.resource, t.rt.group),
        )
    })
}

pub(super) fn blocked_by_spec_finalizers(t: &Target, obj: &Value) -> bool {
    t.rt.group.is_empty()
        && t.rt.resource == "namespaces"
        && obj
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
}

pub(super) fn remove_after_update(
    store: &mut Store,
    t: &Target,
    key: &Key,
    last: Value,
) -> Arc<Value> {
    let last = Arc::new(last);
    store.objects.insert(key.clone(), last.clone());
    remove(store, t, key).unwrap_or(last)
}
