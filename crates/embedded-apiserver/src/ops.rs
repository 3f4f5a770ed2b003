//! The write pipeline and reads (docs/embedded-apiserver.md M3, M7, M10–M14): one code path for every
//! create, update, patch and delete, whether it came over HTTP or from a controller.

use std::sync::Arc;

use serde_json::{Value, json};

use super::admission::{self, AdmitError, FieldValidation};
use super::crd;
use super::error::{ApiError, StatusCause};
use super::meta;
use super::registry::{self, ResourceType};
use super::store::{EventType, Key, Store, StoreEvent};
pub use super::target::{Target, present, presented};
use super::webhook::admission::Attributes;
use super::webhook::oracle::Oracle;

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
        super::admission::FieldValidation::Strict => v["fieldValidation"] = json!("Strict"),
        super::admission::FieldValidation::Ignore => v["fieldValidation"] = json!("Ignore"),
        super::admission::FieldValidation::Warn => {}
    }
    v
}

/// A stored object at the target's version: a conversion webhook answer when the CRD converts
/// by webhook (asked through the oracle), else [`presented`]. Without an oracle (internal
/// writers) the apiVersion is rewritten.
pub fn at_version<'a>(
    t: &Target,
    obj: &'a Value,
    oracle: Option<&Oracle>,
) -> Result<std::borrow::Cow<'a, Value>, ApiError> {
    match oracle {
        Some(o) if t.rt.conversion.is_some() => {
            Ok(std::borrow::Cow::Owned(o.convert(obj.clone(), &t.version)?))
        }
        _ => Ok(presented(&t.rt, &t.version, obj)),
    }
}

/// An object at the target's version converted to the storage version.
fn to_storage(t: &Target, obj: Value, oracle: Option<&Oracle>) -> Result<Value, ApiError> {
    let storage = storage_name(&t.rt, &t.version).to_string();
    match oracle {
        Some(o) if t.rt.conversion.is_some() => {
            let converted = needs_conversion_to(t, &obj, &storage);
            let mut obj = o.convert(obj, &storage)?;
            // kube-apiserver defaults what it reads back from etcd with the storage version's
            // defaults; a converted object gets them here, before it is stored.
            if converted
                && let Some(schema) = t.rt.version(&storage).and_then(|v| v.schema.as_ref())
            {
                super::schema::apply_defaults(&mut obj, schema);
            }
            Ok(obj)
        }
        _ => Ok(present(&t.rt, &storage, obj)),
    }
}

fn needs_conversion_to(t: &Target, obj: &Value, version: &str) -> bool {
    super::webhook::crd_conversion::needs_conversion(obj, &t.rt.api_version(version))
}

/// The admission attributes of a write of `t`.
fn attributes(
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
fn decode_custom(
    t: &Target,
    obj: Value,
    validation: FieldValidation,
) -> Result<(Value, Vec<String>), ApiError> {
    let Some(schema) = t.rt.version(&t.version).and_then(|v| v.schema.as_ref()) else {
        return Ok((obj, Vec::new()));
    };
    let result = super::schema::process(
        obj,
        schema,
        &super::schema::PipelineOptions {
            validate: false,
            ..Default::default()
        },
    );
    if validation == FieldValidation::Strict && !result.unknown_fields.is_empty() {
        return Err(ApiError::bad_request(
            super::schema::strict_error_message(&result.unknown_fields).unwrap_or_default(),
        ));
    }
    let warnings = if validation == FieldValidation::Warn {
        result.warnings()
    } else {
        Vec::new()
    };
    Ok((result.object, warnings))
}

fn kind_check(t: &Target, obj: &Value) -> Result<(), ApiError> {
    let kind = meta::str_at(obj, "/kind");
    if !kind.is_empty() && kind != t.rt.kind {
        return Err(ApiError::bad_request(format!(
            "the API version in the data ({}) does not match the expected API version ({})",
            meta::str_at(obj, "/apiVersion"),
            t.rt.api_version(&t.version)
        )));
    }
    Ok(())
}

fn namespace_check(t: &Target, obj: &mut Value) -> Result<(), ApiError> {
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
fn namespace_admission(store: &Store, t: &Target, name: &str) -> Result<(), ApiError> {
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

fn invalid(t: &Target, name: &str, causes: Vec<StatusCause>) -> ApiError {
    ApiError::invalid(&t.rt.group, &t.rt.kind, name, causes)
}

/// Secret `stringData` folded into base64 `data`.
fn fold_string_data(obj: &mut Value) {
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

/// Type-specific preparation shared by create and update (`old`: the stored object).
fn prepare_builtin(t: &Target, obj: &mut Value, old: Option<&Value>) {
    if t.rt.custom {
        return;
    }
    if is_job(&t.rt) {
        super::schema::job::default(obj);
    }
    if t.rt.group.is_empty() && t.rt.resource == "secrets" {
        fold_string_data(obj);
        if obj.get("type").is_none() {
            obj["type"] = json!("Opaque");
        }
    }
    super::schema::workloads::apply_defaults(&t.rt.kind, obj, old);
}

/// The first free address of the service range (`10.96.0.10` on), as kube's allocator gives
/// every new Service of type ClusterIP/NodePort/LoadBalancer one.
fn allocate_cluster_ip(store: &Store) -> Option<String> {
    let used: std::collections::HashSet<&str> = store
        .objects
        .iter()
        .filter(|(k, _)| k.0.is_empty() && k.1 == "services")
        .filter_map(|(_, o)| o.pointer("/spec/clusterIP").and_then(Value::as_str))
        .collect();
    let [a, b] = super::schema::workloads::SERVICE_CIDR_BASE;
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

fn admit(
    t: &Target,
    mut obj: Value,
    old: Option<&Value>,
    name: &str,
    validation: FieldValidation,
) -> Result<(Value, Vec<String>), ApiError> {
    if !t.rt.custom {
        let causes = admission::validate_builtin(&mut obj, old, &t.rt.kind, t.rt.namespaced);
        if !causes.is_empty() {
            return Err(invalid(t, name, causes));
        }
        return Ok((obj, Vec::new()));
    }
    let schema = t.rt.version(&t.version).and_then(|v| v.schema.as_ref());
    match admission::admit_custom(obj, old, schema, t.rt.namespaced, validation) {
        Ok(a) => Ok((a.object, a.warnings)),
        Err(AdmitError::Invalid(causes)) => Err(invalid(t, name, causes)),
        Err(AdmitError::Strict(fields)) => Err(ApiError::bad_request(
            super::schema::strict_error_message(&fields).unwrap_or_default(),
        )),
    }
}

fn tracks_generation(rt: &ResourceType) -> bool {
    rt.custom
        || rt.resource == "customresourcedefinitions"
        || (rt.group == "apps" && rt.resource == "deployments")
        || is_job(rt)
}

/// `batch/v1 Job`: stored with kube's defaults, generated selector and validation; no
/// controller runs it.
fn is_job(rt: &ResourceType) -> bool {
    !rt.custom && rt.group == "batch" && rt.resource == "jobs"
}

/// Registry bookkeeping when a CRD object is persisted or removed.
fn sync_crd_registry(store: &mut Store, crd_obj: &Value, removed: bool) {
    let (group, plural) = (
        meta::str_at(crd_obj, "/spec/group").to_string(),
        meta::str_at(crd_obj, "/spec/names/plural").to_string(),
    );
    if removed {
        if store.registry.remove(&group, &plural).is_some() {
            store.schema_generation += 1;
        }
        return;
    }
    if !crd::condition_true(crd_obj, "Established") {
        return;
    }
    if let Some(rt) = registry::from_crd(crd_obj)
        && store.registry.get(&group, &plural).as_deref() != Some(&rt)
    {
        store.registry.insert(rt);
        store.schema_generation += 1;
    }
}

fn is_crd(rt: &ResourceType) -> bool {
    rt.group == "apiextensions.k8s.io" && rt.resource == "customresourcedefinitions"
}

fn persist(
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

fn remove(store: &mut Store, t: &Target, key: &Key) -> Option<Arc<Value>> {
    let old = store.objects.remove(key)?;
    let rv = store.next_rv();
    let mut obj = (*old).clone();
    meta::set_meta(&mut obj, "resourceVersion", json!(rv.to_string()));
    let obj = Arc::new(obj);
    if is_crd(&t.rt) {
        sync_crd_registry(store, &obj, true);
    }
    store.publish(StoreEvent {
        type_: EventType::Deleted,
        group: key.0.clone(),
        resource: key.1.clone(),
        namespace: key.2.clone(),
        object: obj.clone(),
        old: Some(old),
        rv,
    });
    Some(obj)
}

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
        if t.rt.custom {
            (obj, decode_warnings) = decode_custom(t, obj, o.validation)?;
            // Unknown fields a webhook adds are pruned silently.
            validation = FieldValidation::Ignore;
        }
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
        && super::schema::workloads::needs_cluster_ip(&obj)
    {
        let ip = allocate_cluster_ip(store).ok_or_else(|| {
            ApiError::new(
                500,
                "InternalError",
                "failed to allocate a serviceIP: range is full",
            )
        })?;
        super::schema::workloads::set_cluster_ip(&mut obj, &ip);
    }
    // kube-apiserver fills the UID before the strategy's PrepareForCreate, which a Job's
    // generated selector needs.
    let uid = meta::new_uid();
    if is_job(&t.rt) {
        super::schema::job::prepare_create(&mut obj, &name, &uid);
    }
    if t.rt.group.is_empty() && t.rt.resource == "namespaces" {
        if obj.pointer("/spec/finalizers").is_none() {
            obj["spec"] = json!({"finalizers": ["kubernetes"]});
        }
        obj["status"] = json!({"phase": "Active"});
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
        obj["status"] = crd::initial_status(&obj);
    }
    let requested_managed = obj.pointer("/metadata/managedFields").cloned();
    let (mut obj, mut warnings) = admit(t, obj, None, &name, validation)?;
    decode_warnings.append(&mut warnings);
    let warnings = decode_warnings;
    if let Some(manager) = &o.update_manager {
        super::field_manager::track_update(
            t,
            None,
            &mut obj,
            manager,
            requested_managed.as_ref(),
            None,
        );
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

fn storage_name<'a>(rt: &'a ResourceType, asked: &'a str) -> &'a str {
    rt.storage_version()
        .map(|v| v.name.as_str())
        .unwrap_or(asked)
}

/// The key of the CRD that defines a custom resource target.
fn crd_key_for(t: &Target) -> Option<Key> {
    t.rt.custom.then(|| {
        (
            "apiextensions.k8s.io".to_string(),
            "customresourcedefinitions".to_string(),
            String::new(),
            format!("{}.{}", t.rt.resource, t.rt.group),
        )
    })
}

/// How an update was requested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpdateKind {
    Put,
    Patch,
}

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
enum Change {
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
            return Err(invalid(
                t,
                &t.name,
                vec![StatusCause::new(
                    "FieldValueInvalid",
                    "metadata.resourceVersion",
                    "Invalid value: 0x0: must be specified for an update",
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
        if t.rt.custom {
            (new, decode_warnings) = decode_custom(t, new, o.validation)?;
            validation = FieldValidation::Ignore;
        }
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
            return Err(invalid(
                t,
                &t.name,
                vec![StatusCause::new(
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
                )],
            ));
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
        super::field_manager::track_update(
            t,
            Some(&*old_v),
            &mut new,
            manager,
            requested_managed.as_ref(),
            o.via_subresource.as_deref(),
        );
    }
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
                &super::scale::to_scale(&scale_t, &new),
                &super::scale::to_scale(&scale_t, &old_v),
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

fn blocked_by_spec_finalizers(t: &Target, obj: &Value) -> bool {
    t.rt.group.is_empty()
        && t.rt.resource == "namespaces"
        && obj
            .pointer("/spec/finalizers")
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty())
}

fn remove_after_update(store: &mut Store, t: &Target, key: &Key, last: Value) -> Arc<Value> {
    let last = Arc::new(last);
    store.objects.insert(key.clone(), last.clone());
    remove(store, t, key).unwrap_or(last)
}

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

fn success_status(t: &Target, obj: &Value) -> Value {
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

/// Objects of a target's type (namespace-filtered when the target names one).
pub fn list(store: &Store, t: &Target) -> Vec<Value> {
    let ns = (t.rt.namespaced && !t.namespace.is_empty()).then_some(t.namespace.as_str());
    store
        .objects_of(&t.rt.group, &t.rt.resource, ns)
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cm_target(store: &Store, name: &str) -> Target {
        Target {
            rt: store.registry.get("", "configmaps").unwrap(),
            version: "v1".into(),
            namespace: "default".into(),
            name: name.into(),
            subresource: None,
        }
    }

    fn seeded() -> Store {
        let mut s = Store::new(100);
        let t = Target {
            rt: s.registry.get("", "namespaces").unwrap(),
            version: "v1".into(),
            namespace: String::new(),
            name: String::new(),
            subresource: None,
        };
        create(
            &mut s,
            &t,
            json!({"metadata": {"name": "default"}}),
            &WriteOpts::default(),
        )
        .unwrap();
        s
    }

    #[test]
    fn noop_update_keeps_rv_and_emits_nothing() {
        let mut s = seeded();
        let t = cm_target(&s, "c");
        let w = create(
            &mut s,
            &t,
            json!({"metadata": {"name": "c"}, "data": {"a": "b"}}),
            &WriteOpts::default(),
        )
        .unwrap();
        let rv = s.rv;
        let again = update(
            &mut s,
            &t,
            (*w.object).clone(),
            UpdateKind::Put,
            &WriteOpts::default(),
        )
        .unwrap();
        assert_eq!(s.rv, rv);
        assert_eq!(
            meta::resource_version(&again.object),
            meta::resource_version(&w.object)
        );
    }

    #[test]
    fn finalizers_defer_deletion() {
        let mut s = seeded();
        let t = cm_target(&s, "c");
        create(
            &mut s,
            &t,
            json!({"metadata": {"name": "c", "finalizers": ["x/y"]}}),
            &WriteOpts::default(),
        )
        .unwrap();
        let deleted = delete(&mut s, &t, &DeleteOpts::default()).unwrap();
        assert!(matches!(deleted, Deleted::Pending(_)), "expected pending");
        let Deleted::Pending(obj) = deleted else {
            return;
        };
        assert!(meta::is_deleting(&obj));
        let mut cleared = (*obj).clone();
        meta::set_finalizers(&mut cleared, &[]);
        update(
            &mut s,
            &t,
            cleared,
            UpdateKind::Patch,
            &WriteOpts::default(),
        )
        .unwrap();
        assert!(get(&s, &t).is_err());
    }

    #[test]
    fn missing_namespace_is_404() {
        let mut s = seeded();
        let mut t = cm_target(&s, "c");
        t.namespace = "ghost".into();
        let e = create(
            &mut s,
            &t,
            json!({"metadata": {"name": "c"}}),
            &WriteOpts::default(),
        )
        .unwrap_err();
        assert_eq!(e.code, 404);
        assert_eq!(e.message, "namespaces \"ghost\" not found");
    }
}
