//! CAPI core's conversion between `cluster.x-k8s.io/v1beta1` and `v1beta2` for Cluster, Machine
//! and MachinePool, as core's conversion webhook does it (CAPI `api/core/v1beta1/conversion.go`,
//! hub v1beta2; docs/core-simulation.md "The core API: one object, two versions"):
//!
//! - references: v1beta2 `{apiGroup, kind, name}` ↔ v1beta1 `ObjectReference`; going down, the
//!   `apiVersion` is looked up from the referenced CRD's `cluster.x-k8s.io/<contract>` labels
//!   (newest compatible contract first, newest version listed) and the namespace is the
//!   object's own; going up, `apiGroup` is the group of `apiVersion`, the rest is dropped;
//! - ready flags (v1beta1 `bool`) ↔ `status.initialization.*` (`*bool`): true ↔ true, false ↔
//!   absent unless the conversion-data annotation recorded an explicit false;
//! - conditions: v1beta1 `status.conditions` ↔ v1beta2 `status.deprecated.v1beta1.conditions`,
//!   v1beta1 `status.v1beta2.conditions` ↔ v1beta2 `status.conditions` (never mixed);
//! - failure domains: v1beta1 map ↔ v1beta2 list sorted by name;
//! - `cluster.x-k8s.io/conversion-data`: every down-conversion stores the v1beta2 object minus
//!   its metadata as JSON; up-conversion removes it and restores what v1beta1 cannot hold
//!   (explicit `false` of optional flags, the `Updating` phase, hub-only fields).
//!
//! Fields not named here are copied as they are (their shapes agree between the versions, or
//! the scenarios never write them).

use serde_json::{Map, Value, json};

/// CAPI core's API group.
pub const GROUP: &str = "cluster.x-k8s.io";
/// The annotation holding the hub object on v1beta1 objects (`utilconversion.DataAnnotation`).
pub const DATA_ANNOTATION: &str = "cluster.x-k8s.io/conversion-data";
pub const V1BETA1: &str = "v1beta1";
pub const V1BETA2: &str = "v1beta2";

/// The kinds this converter knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Cluster,
    Machine,
    MachinePool,
}

impl Kind {
    pub fn parse(kind: &str) -> Option<Kind> {
        match kind {
            "Cluster" => Some(Kind::Cluster),
            "Machine" => Some(Kind::Machine),
            "MachinePool" => Some(Kind::MachinePool),
            _ => None,
        }
    }
}

/// Why an object cannot be converted (the API request fails with this message, as core's
/// webhook fails it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    #[error("cannot convert {0}: capi-conformance converts Cluster, Machine and MachinePool only")]
    UnknownKind(String),
    #[error("cannot convert to {0}: only {GROUP}/v1beta1 and {GROUP}/v1beta2")]
    UnknownVersion(String),
    #[error("object is not a mapping")]
    NotAnObject,
    #[error(
        "failed to get apiVersion for {kind}.{group}: cannot find any versions matching contract versions [v1beta2 v1beta1] for CRD {crd} as contract version label(s) are either missing or empty"
    )]
    NoContractLabel {
        group: String,
        kind: String,
        crd: String,
    },
    #[error("failed to get apiVersion for {kind}.{group}: {message}")]
    Lookup {
        group: String,
        kind: String,
        message: String,
    },
    #[error("invalid {DATA_ANNOTATION} annotation: {0}")]
    BadAnnotation(String),
}

/// Where the `apiVersion` of a down-converted reference comes from: the referenced CRD's
/// contract labels (`contract.GetAPIVersion`).
pub trait VersionLookup {
    fn api_version(&self, group: &str, kind: &str) -> Result<String, ConvertError>;
}

/// The `apiVersion` core picks for `group`/`kind` from the CRD labels `labels`
/// (`cluster.x-k8s.io/<contract>: v1alpha1_v1beta1`): the newest compatible contract with a
/// non-empty label (v1beta2, then v1beta1), its newest version in Kubernetes version order.
pub fn api_version_from_labels(
    group: &str,
    kind: &str,
    crd_name: &str,
    labels: &Map<String, Value>,
) -> Result<String, ConvertError> {
    for contract in [V1BETA2, V1BETA1] {
        let Some(value) = labels
            .get(&format!("{GROUP}/{contract}"))
            .and_then(Value::as_str)
            .filter(|v| !v.is_empty())
        else {
            continue;
        };
        let mut versions: Vec<&str> = value.split('_').filter(|v| !v.is_empty()).collect();
        versions.sort_by(|a, b| kube_version_order::compare(a, b));
        if let Some(newest) = versions.last() {
            return Ok(format!("{group}/{newest}"));
        }
    }
    Err(ConvertError::NoContractLabel {
        group: group.to_string(),
        kind: kind.to_string(),
        crd: crd_name.to_string(),
    })
}

/// Converts a core object to `desired` (`cluster.x-k8s.io/v1beta1` or `…/v1beta2`); an object
/// already at that version is returned unchanged.
pub fn convert(
    obj: &Value,
    desired: &str,
    lookup: &dyn VersionLookup,
) -> Result<Value, ConvertError> {
    let kind_name = obj.get("kind").and_then(Value::as_str).unwrap_or_default();
    let kind = Kind::parse(kind_name).ok_or_else(|| ConvertError::UnknownKind(kind_name.into()))?;
    let from = obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let to_version = desired
        .strip_prefix(&format!("{GROUP}/"))
        .ok_or_else(|| ConvertError::UnknownVersion(desired.into()))?;
    let from_version = from
        .strip_prefix(&format!("{GROUP}/"))
        .ok_or_else(|| ConvertError::UnknownVersion(from.into()))?;
    match (from_version, to_version) {
        (a, b) if a == b => Ok(obj.clone()),
        (V1BETA2, V1BETA1) => down(kind, obj, lookup),
        (V1BETA1, V1BETA2) => up(kind, obj),
        (V1BETA2 | V1BETA1, other) | (other, _) => {
            Err(ConvertError::UnknownVersion(format!("{GROUP}/{other}")))
        }
    }
}

/// v1beta2 → v1beta1.
pub fn down(kind: Kind, hub: &Value, lookup: &dyn VersionLookup) -> Result<Value, ConvertError> {
    let src = hub.as_object().ok_or(ConvertError::NotAnObject)?;
    let namespace = hub
        .pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut out = src.clone();
    out.insert("apiVersion".into(), json!(format!("{GROUP}/{V1BETA1}")));
    let spec = src.get("spec").cloned().unwrap_or_else(|| json!({}));
    let status = src.get("status").cloned().unwrap_or_else(|| json!({}));
    let (spec, status) = match kind {
        Kind::Cluster => (
            cluster_spec_down(&spec, &namespace, lookup)?,
            cluster_status_down(&status),
        ),
        Kind::Machine => (
            machine_spec_down(&spec, &namespace, lookup)?,
            machine_status_down(&status),
        ),
        Kind::MachinePool => (
            pool_spec_down(&spec, &namespace, lookup)?,
            pool_status_down(&status),
        ),
    };
    out.insert("spec".into(), spec);
    out.insert("status".into(), status);
    // The hub minus metadata, as `utilconversion.MarshalData` stores it.
    let mut data = src.clone();
    data.remove("metadata");
    let data = serde_json::to_string(&Value::Object(data))
        .map_err(|e| ConvertError::BadAnnotation(e.to_string()))?;
    let meta = out.entry("metadata").or_insert_with(|| json!({}));
    if let Some(meta) = meta.as_object_mut() {
        let annotations = meta.entry("annotations").or_insert_with(|| json!({}));
        if !annotations.is_object() {
            *annotations = json!({});
        }
        if let Some(a) = annotations.as_object_mut() {
            a.insert(DATA_ANNOTATION.into(), Value::String(data));
        }
    }
    Ok(Value::Object(out))
}

/// v1beta1 → v1beta2.
pub fn up(kind: Kind, spoke: &Value) -> Result<Value, ConvertError> {
    let src = spoke.as_object().ok_or(ConvertError::NotAnObject)?;
    let mut out = src.clone();
    out.insert("apiVersion".into(), json!(format!("{GROUP}/{V1BETA2}")));
    // The annotation is read and removed (`utilconversion.UnmarshalData`).
    let mut restored: Option<Value> = None;
    if let Some(meta) = out.get_mut("metadata").and_then(Value::as_object_mut) {
        let mut drop_annotations = false;
        if let Some(a) = meta.get_mut("annotations").and_then(Value::as_object_mut) {
            if let Some(Value::String(data)) = a.remove(DATA_ANNOTATION) {
                restored = Some(
                    serde_json::from_str(&data)
                        .map_err(|e| ConvertError::BadAnnotation(e.to_string()))?,
                );
            }
            drop_annotations = a.is_empty();
        }
        if drop_annotations {
            meta.remove("annotations");
        }
    }
    let restored = restored.as_ref();
    let spec = src.get("spec").cloned().unwrap_or_else(|| json!({}));
    let status = src.get("status").cloned().unwrap_or_else(|| json!({}));
    let (spec, status) = match kind {
        Kind::Cluster => (
            cluster_spec_up(&spec, restored),
            cluster_status_up(&status, restored),
        ),
        Kind::Machine => (machine_spec_up(&spec, restored), {
            machine_status_up(&status, restored)
        }),
        Kind::MachinePool => (
            pool_spec_up(&spec, restored),
            pool_status_up(&status, restored),
        ),
    };
    set_or_remove(&mut out, "spec", spec);
    set_or_remove(&mut out, "status", status);
    Ok(Value::Object(out))
}

fn set_or_remove(obj: &mut Map<String, Value>, key: &str, v: Value) {
    if v.as_object().is_some_and(Map::is_empty) {
        obj.remove(key);
    } else {
        obj.insert(key.into(), v);
    }
}

fn obj_of(v: &Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

fn at<'a>(v: Option<&'a Value>, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v?, |cur, k| cur.get(k))
}

fn non_empty_str(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.is_empty())
}

// ---------------------------------------------------------------------------------------------
// References.

/// v1beta2 ContractVersionedObjectReference → v1beta1 ObjectReference (`None`: undefined ref).
fn ref_down(
    r: Option<&Value>,
    namespace: &str,
    lookup: &dyn VersionLookup,
) -> Result<Option<Value>, ConvertError> {
    let Some(r) = r.filter(|r| r.is_object()) else {
        return Ok(None);
    };
    let group = r
        .get("apiGroup")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = r.get("kind").and_then(Value::as_str).unwrap_or_default();
    let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
    if group.is_empty() && kind.is_empty() && name.is_empty() {
        return Ok(None);
    }
    let api_version = lookup.api_version(group, kind)?;
    Ok(Some(json!({
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "namespace": namespace,
    })))
}

/// v1beta1 ObjectReference → v1beta2 ContractVersionedObjectReference.
fn ref_up(r: Option<&Value>) -> Option<Value> {
    let r = r.filter(|r| r.is_object())?;
    let api_version = r
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let group = match api_version.split_once('/') {
        Some((g, _)) => g,
        // `v1` (core group) or empty.
        None => "",
    };
    let kind = r.get("kind").and_then(Value::as_str).unwrap_or_default();
    let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
    if group.is_empty() && kind.is_empty() && name.is_empty() {
        return None;
    }
    Some(json!({"apiGroup": group, "kind": kind, "name": name}))
}

// ---------------------------------------------------------------------------------------------
// Flags: v1beta1 bool ↔ v1beta2 *bool.

fn flag_down(v: Option<&Value>) -> bool {
    v.and_then(Value::as_bool).unwrap_or(false)
}

/// `Convert_bool_To_Pointer_bool`: true → true; false → the restored explicit false, else absent.
fn flag_up(v: Option<&Value>, restored: Option<&Value>) -> Option<Value> {
    if v.and_then(Value::as_bool) == Some(true) {
        return Some(json!(true));
    }
    (restored.and_then(Value::as_bool) == Some(false)).then_some(json!(false))
}

// ---------------------------------------------------------------------------------------------
// Conditions and failure domains.

/// Moves v1beta2 `conditions` / `deprecated.v1beta1.{conditions, failureReason, failureMessage}`
/// into v1beta1 `v1beta2.conditions` / `conditions`, `failureReason`, `failureMessage`.
fn conditions_down(src: &Map<String, Value>, out: &mut Map<String, Value>) {
    out.remove("conditions");
    out.remove("deprecated");
    let mut v1beta2 = Map::new();
    if let Some(c) = src.get("conditions") {
        v1beta2.insert("conditions".into(), c.clone());
    }
    if let Some(dep) = src
        .get("deprecated")
        .and_then(|d| d.get("v1beta1"))
        .and_then(Value::as_object)
    {
        for (k, v) in dep {
            out.insert(k.clone(), v.clone());
        }
    }
    if !v1beta2.is_empty() {
        out.insert("v1beta2".into(), Value::Object(v1beta2));
    }
}

/// The reverse of [`conditions_down`]; `deprecated_keys` are the v1beta1 top-level status keys
/// that live under `deprecated.v1beta1` in v1beta2.
fn conditions_up(src: &Map<String, Value>, out: &mut Map<String, Value>, deprecated_keys: &[&str]) {
    out.remove("conditions");
    out.remove("v1beta2");
    let mut dep = Map::new();
    if let Some(c) = src.get("conditions") {
        dep.insert("conditions".into(), c.clone());
    }
    for k in deprecated_keys {
        if let Some(v) = src.get(*k) {
            out.remove(*k);
            dep.insert((*k).to_string(), v.clone());
        }
    }
    if let Some(c) = src.get("v1beta2").and_then(|v| v.get("conditions")) {
        out.insert("conditions".into(), c.clone());
    }
    if !dep.is_empty() {
        out.insert("deprecated".into(), json!({ "v1beta1": dep }));
    }
}

fn failure_domains_down(list: Option<&Value>) -> Option<Value> {
    let list = list?.as_array()?;
    let mut map = Map::new();
    for fd in list {
        let Some(name) = fd.get("name").and_then(Value::as_str) else {
            continue;
        };
        let mut spec = Map::new();
        spec.insert(
            "controlPlane".into(),
            json!(
                fd.get("controlPlane")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
            ),
        );
        if let Some(a) = fd.get("attributes") {
            spec.insert("attributes".into(), a.clone());
        }
        map.insert(name.to_string(), Value::Object(spec));
    }
    Some(Value::Object(map))
}

fn failure_domains_up(map: Option<&Value>) -> Option<Value> {
    let map = map?.as_object()?;
    if map.is_empty() {
        return None;
    }
    let mut names: Vec<&String> = map.keys().collect();
    names.sort();
    Some(Value::Array(
        names
            .into_iter()
            .map(|name| {
                let spec = &map[name];
                let mut fd = json!({
                    "name": name,
                    "controlPlane": spec.get("controlPlane").and_then(Value::as_bool).unwrap_or(false),
                });
                if let Some(a) = spec.get("attributes") {
                    fd["attributes"] = a.clone();
                }
                fd
            })
            .collect(),
    ))
}

// ---------------------------------------------------------------------------------------------
// Cluster.

fn cluster_spec_down(
    spec: &Value,
    namespace: &str,
    lookup: &dyn VersionLookup,
) -> Result<Value, ConvertError> {
    let mut out = obj_of(spec);
    out.remove("paused");
    if spec.get("paused").and_then(Value::as_bool) == Some(true) {
        out.insert("paused".into(), json!(true));
    }
    for key in ["infrastructureRef", "controlPlaneRef"] {
        out.remove(key);
        if let Some(r) = ref_down(spec.get(key), namespace, lookup)? {
            out.insert(key.into(), r);
        }
    }
    // v1beta1 APIEndpoint is a struct: always serialised.
    let ep = spec.get("controlPlaneEndpoint");
    out.insert(
        "controlPlaneEndpoint".into(),
        json!({
            "host": at(ep, "host").and_then(Value::as_str).unwrap_or_default(),
            "port": at(ep, "port").and_then(Value::as_i64).unwrap_or(0),
        }),
    );
    Ok(Value::Object(out))
}

fn cluster_spec_up(spec: &Value, restored: Option<&Value>) -> Value {
    let mut out = obj_of(spec);
    out.remove("paused");
    if let Some(p) = flag_up(spec.get("paused"), at(restored, "spec.paused")) {
        out.insert("paused".into(), p);
    }
    for key in ["infrastructureRef", "controlPlaneRef"] {
        out.remove(key);
        if let Some(r) = ref_up(spec.get(key)) {
            out.insert(key.into(), r);
        }
    }
    endpoint_up(&mut out);
    Value::Object(out)
}

/// v1beta2 `controlPlaneEndpoint` is omitzero: a zero endpoint disappears, zero keys are dropped.
fn endpoint_up(spec: &mut Map<String, Value>) {
    let Some(ep) = spec.get("controlPlaneEndpoint").cloned() else {
        return;
    };
    let mut e = Map::new();
    if let Some(h) = non_empty_str(ep.get("host")) {
        e.insert("host".into(), json!(h));
    }
    if let Some(p) = ep.get("port").and_then(Value::as_i64).filter(|p| *p != 0) {
        e.insert("port".into(), json!(p));
    }
    if e.is_empty() {
        spec.remove("controlPlaneEndpoint");
    } else {
        spec.insert("controlPlaneEndpoint".into(), Value::Object(e));
    }
}

fn cluster_status_down(status: &Value) -> Value {
    let src = obj_of(status);
    let mut out = src.clone();
    out.remove("initialization");
    let init = status.get("initialization");
    out.insert(
        "infrastructureReady".into(),
        json!(flag_down(at(init, "infrastructureProvisioned"))),
    );
    out.insert(
        "controlPlaneReady".into(),
        json!(flag_down(at(init, "controlPlaneInitialized"))),
    );
    conditions_down(&src, &mut out);
    // controlPlane / workers summaries live under v1beta2 in v1beta1.
    for key in ["controlPlane", "workers"] {
        if let Some(v) = out.remove(key) {
            let v1beta2 = out.entry("v1beta2").or_insert_with(|| json!({}));
            if let Some(m) = v1beta2.as_object_mut() {
                m.insert(key.into(), v);
            }
        }
    }
    out.remove("failureDomains");
    if let Some(fd) = failure_domains_down(status.get("failureDomains")) {
        out.insert("failureDomains".into(), fd);
    }
    Value::Object(out)
}

fn cluster_status_up(status: &Value, restored: Option<&Value>) -> Value {
    let src = obj_of(status);
    let mut out = src.clone();
    conditions_up(&src, &mut out, &["failureReason", "failureMessage"]);
    if let Some(v1beta2) = src.get("v1beta2") {
        for key in ["controlPlane", "workers"] {
            if let Some(v) = v1beta2.get(key) {
                out.insert(key.into(), v.clone());
            }
        }
    }
    out.remove("infrastructureReady");
    out.remove("controlPlaneReady");
    let mut init = Map::new();
    if let Some(v) = flag_up(
        src.get("infrastructureReady"),
        at(restored, "status.initialization.infrastructureProvisioned"),
    ) {
        init.insert("infrastructureProvisioned".into(), v);
    }
    if let Some(v) = flag_up(
        src.get("controlPlaneReady"),
        at(restored, "status.initialization.controlPlaneInitialized"),
    ) {
        init.insert("controlPlaneInitialized".into(), v);
    }
    if !init.is_empty() {
        out.insert("initialization".into(), Value::Object(init));
    }
    out.remove("failureDomains");
    if let Some(fd) = failure_domains_up(src.get("failureDomains")) {
        out.insert("failureDomains".into(), fd);
    }
    Value::Object(out)
}

// ---------------------------------------------------------------------------------------------
// Machine (also the MachinePool template's spec).

const DELETION_TIMEOUTS: [(&str, &str); 3] = [
    ("nodeDrainTimeoutSeconds", "nodeDrainTimeout"),
    ("nodeVolumeDetachTimeoutSeconds", "nodeVolumeDetachTimeout"),
    ("nodeDeletionTimeoutSeconds", "nodeDeletionTimeout"),
];

/// Hub-only Machine spec fields, restored from the annotation.
const MACHINE_SPEC_HUB_ONLY: [&str; 2] = ["minReadySeconds", "taints"];

fn machine_spec_down(
    spec: &Value,
    namespace: &str,
    lookup: &dyn VersionLookup,
) -> Result<Value, ConvertError> {
    let mut out = obj_of(spec);
    let mut bootstrap = obj_of(spec.get("bootstrap").unwrap_or(&Value::Null));
    bootstrap.remove("configRef");
    if let Some(r) = ref_down(at(Some(spec), "bootstrap.configRef"), namespace, lookup)? {
        bootstrap.insert("configRef".into(), r);
    }
    if non_empty_str(bootstrap.get("dataSecretName")).is_none() {
        bootstrap.remove("dataSecretName");
    }
    out.insert("bootstrap".into(), Value::Object(bootstrap));
    // Required (non-pointer) in v1beta1: always serialised.
    let infra =
        ref_down(spec.get("infrastructureRef"), namespace, lookup)?.unwrap_or_else(|| json!({}));
    out.insert("infrastructureRef".into(), infra);
    for key in ["version", "providerID", "failureDomain"] {
        if non_empty_str(spec.get(key)).is_none() {
            out.remove(key);
        }
    }
    if let Some(deletion) = out.remove("deletion") {
        for (seconds, duration) in DELETION_TIMEOUTS {
            if let Some(s) = deletion.get(seconds).and_then(Value::as_i64) {
                out.insert(duration.into(), json!(format!("{s}s")));
            }
        }
    }
    for key in MACHINE_SPEC_HUB_ONLY {
        out.remove(key);
    }
    Ok(Value::Object(out))
}

fn machine_spec_up(spec: &Value, restored: Option<&Value>) -> Value {
    machine_spec_up_at(spec, restored.and_then(|r| r.get("spec")))
}

/// `restored_spec`: the hub MachineSpec the annotation recorded for this spec.
fn machine_spec_up_at(spec: &Value, restored_spec: Option<&Value>) -> Value {
    let mut out = obj_of(spec);
    let mut bootstrap = obj_of(spec.get("bootstrap").unwrap_or(&Value::Null));
    bootstrap.remove("configRef");
    if let Some(r) = ref_up(at(Some(spec), "bootstrap.configRef")) {
        bootstrap.insert("configRef".into(), r);
    }
    out.insert("bootstrap".into(), Value::Object(bootstrap));
    out.remove("infrastructureRef");
    if let Some(r) = ref_up(spec.get("infrastructureRef")) {
        out.insert("infrastructureRef".into(), r);
    }
    let mut deletion = Map::new();
    for (seconds, duration) in DELETION_TIMEOUTS {
        if let Some(d) = out.remove(duration)
            && let Some(s) = d.as_str().and_then(parse_duration_seconds)
        {
            deletion.insert(seconds.into(), json!(s));
        }
    }
    if !deletion.is_empty() {
        out.insert("deletion".into(), Value::Object(deletion));
    }
    for key in MACHINE_SPEC_HUB_ONLY {
        if let Some(v) = restored_spec.and_then(|r| r.get(key)) {
            out.insert(key.into(), v.clone());
        }
    }
    Value::Object(out)
}

/// Go `time.Duration` text (`10s`, `1m30s`, `500ms`) → whole seconds.
fn parse_duration_seconds(s: &str) -> Option<i64> {
    let mut total_ms: i64 = 0;
    let mut num = String::new();
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c.is_ascii_digit() || c == '.' {
            num.push(c);
            continue;
        }
        let mut unit = c.to_string();
        while let Some(n) = chars.peek() {
            if n.is_ascii_alphabetic() {
                unit.push(*n);
                chars.next();
            } else {
                break;
            }
        }
        let n: f64 = num.parse().ok()?;
        num.clear();
        let ms = match unit.as_str() {
            "h" => n * 3_600_000.0,
            "m" => n * 60_000.0,
            "s" => n * 1000.0,
            "ms" => n,
            "us" | "µs" => n / 1000.0,
            "ns" => n / 1_000_000.0,
            _ => return None,
        };
        total_ms += ms as i64;
    }
    if !num.is_empty() {
        return None;
    }
    Some(total_ms / 1000)
}

fn machine_status_down(status: &Value) -> Value {
    let src = obj_of(status);
    let mut out = src.clone();
    out.remove("initialization");
    let init = status.get("initialization");
    out.insert(
        "bootstrapReady".into(),
        json!(flag_down(at(init, "bootstrapDataSecretCreated"))),
    );
    out.insert(
        "infrastructureReady".into(),
        json!(flag_down(at(init, "infrastructureProvisioned"))),
    );
    conditions_down(&src, &mut out);
    if let Some(name) = at(Some(status), "nodeRef.name").and_then(Value::as_str) {
        out.insert(
            "nodeRef".into(),
            json!({"apiVersion": "v1", "kind": "Node", "name": name}),
        );
    }
    if status.get("phase").and_then(Value::as_str) == Some("Updating") {
        out.insert("phase".into(), json!("Running"));
    }
    // Hub-only (status.failureDomain, status.deletion times stay; failureDomain has no v1beta1 home).
    out.remove("failureDomain");
    Value::Object(out)
}

fn machine_status_up(status: &Value, restored: Option<&Value>) -> Value {
    let src = obj_of(status);
    let mut out = src.clone();
    conditions_up(&src, &mut out, &["failureReason", "failureMessage"]);
    out.remove("bootstrapReady");
    out.remove("infrastructureReady");
    let mut init = Map::new();
    if let Some(v) = flag_up(
        src.get("bootstrapReady"),
        at(restored, "status.initialization.bootstrapDataSecretCreated"),
    ) {
        init.insert("bootstrapDataSecretCreated".into(), v);
    }
    if let Some(v) = flag_up(
        src.get("infrastructureReady"),
        at(restored, "status.initialization.infrastructureProvisioned"),
    ) {
        init.insert("infrastructureProvisioned".into(), v);
    }
    if !init.is_empty() {
        out.insert("initialization".into(), Value::Object(init));
    }
    if let Some(name) = at(Some(status), "nodeRef.name").and_then(Value::as_str) {
        out.insert("nodeRef".into(), json!({"name": name}));
    }
    if let Some(phase) = at(restored, "status.phase") {
        out.insert("phase".into(), phase.clone());
    }
    if let Some(fd) = at(restored, "status.failureDomain") {
        out.insert("failureDomain".into(), fd.clone());
    }
    Value::Object(out)
}

// ---------------------------------------------------------------------------------------------
// MachinePool.

fn pool_spec_down(
    spec: &Value,
    namespace: &str,
    lookup: &dyn VersionLookup,
) -> Result<Value, ConvertError> {
    let mut out = obj_of(spec);
    if let Some(template) = spec.get("template") {
        let mut t = obj_of(template);
        let tspec = template.get("spec").cloned().unwrap_or_else(|| json!({}));
        if let Some(m) = tspec.get("minReadySeconds") {
            out.insert("minReadySeconds".into(), m.clone());
        }
        t.insert("spec".into(), machine_spec_down(&tspec, namespace, lookup)?);
        out.insert("template".into(), Value::Object(t));
    }
    Ok(Value::Object(out))
}

fn pool_spec_up(spec: &Value, restored: Option<&Value>) -> Value {
    let mut out = obj_of(spec);
    let min_ready = out.remove("minReadySeconds");
    if let Some(template) = spec.get("template") {
        let mut t = obj_of(template);
        let tspec = template.get("spec").cloned().unwrap_or_else(|| json!({}));
        let mut up = machine_spec_up_at(&tspec, at(restored, "spec.template.spec"));
        if let (Some(m), Some(o)) = (min_ready, up.as_object_mut()) {
            o.insert("minReadySeconds".into(), m);
        }
        t.insert("spec".into(), up);
        out.insert("template".into(), Value::Object(t));
    }
    Value::Object(out)
}

/// v1beta2 top-level counters ↔ v1beta1 `status.v1beta2.*`.
const POOL_V1BETA2_COUNTERS: [&str; 3] = ["readyReplicas", "availableReplicas", "upToDateReplicas"];
/// v1beta1 top-level counters ↔ v1beta2 `status.deprecated.v1beta1.*`.
const POOL_V1BETA1_COUNTERS: [&str; 3] =
    ["readyReplicas", "availableReplicas", "unavailableReplicas"];

fn pool_status_down(status: &Value) -> Value {
    let src = obj_of(status);
    let mut out = src.clone();
    for k in POOL_V1BETA2_COUNTERS {
        out.remove(k);
    }
    out.remove("initialization");
    let init = status.get("initialization");
    out.insert(
        "bootstrapReady".into(),
        json!(flag_down(at(init, "bootstrapDataSecretCreated"))),
    );
    out.insert(
        "infrastructureReady".into(),
        json!(flag_down(at(init, "infrastructureProvisioned"))),
    );
    conditions_down(&src, &mut out);
    let mut counters = Map::new();
    for k in POOL_V1BETA2_COUNTERS {
        if let Some(v) = src.get(k) {
            counters.insert(k.into(), v.clone());
        }
    }
    if !counters.is_empty() {
        let v1beta2 = out.entry("v1beta2").or_insert_with(|| json!({}));
        if let Some(m) = v1beta2.as_object_mut() {
            m.extend(counters);
        }
    }
    // v1beta1 `replicas` is an int32 without omitempty.
    if !out.contains_key("replicas") {
        out.insert("replicas".into(), json!(0));
    }
    Value::Object(out)
}

fn pool_status_up(status: &Value, restored: Option<&Value>) -> Value {
    let src = obj_of(status);
    let mut out = src.clone();
    conditions_up(
        &src,
        &mut out,
        &[
            "failureReason",
            "failureMessage",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
        ],
    );
    let _ = POOL_V1BETA1_COUNTERS;
    if let Some(v1beta2) = src.get("v1beta2") {
        for k in POOL_V1BETA2_COUNTERS {
            if let Some(v) = v1beta2.get(k) {
                out.insert(k.into(), v.clone());
            }
        }
    }
    out.remove("bootstrapReady");
    out.remove("infrastructureReady");
    let mut init = Map::new();
    if let Some(v) = flag_up(
        src.get("bootstrapReady"),
        at(restored, "status.initialization.bootstrapDataSecretCreated"),
    ) {
        init.insert("bootstrapDataSecretCreated".into(), v);
    }
    if let Some(v) = flag_up(
        src.get("infrastructureReady"),
        at(restored, "status.initialization.infrastructureProvisioned"),
    ) {
        init.insert("infrastructureProvisioned".into(), v);
    }
    if !init.is_empty() {
        out.insert("initialization".into(), Value::Object(init));
    }
    // `replicas` is *int32 in v1beta2: a zero the annotation did not record disappears.
    if src.get("replicas").and_then(Value::as_i64) == Some(0)
        && at(restored, "status.replicas").is_none()
    {
        out.remove("replicas");
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Versions by group from fixed labels (`infrastructure.foo.io` → v1beta1 contract with
    /// v1alpha3_v1beta1; `bootstrap.foo.io` → v1beta2 contract).
    struct Fixed;

    impl VersionLookup for Fixed {
        fn api_version(&self, group: &str, kind: &str) -> Result<String, ConvertError> {
            let mut labels = Map::new();
            match group {
                "infrastructure.foo.io" => {
                    labels.insert(format!("{GROUP}/v1beta1"), json!("v1alpha3_v1beta1"));
                }
                "bootstrap.foo.io" => {
                    labels.insert(format!("{GROUP}/v1beta1"), json!("v1beta1"));
                    labels.insert(format!("{GROUP}/v1beta2"), json!("v1beta2"));
                }
                _ => {}
            }
            api_version_from_labels(group, kind, &format!("x.{group}"), &labels)
        }
    }

    fn cluster_b2() -> Value {
        json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": "Cluster",
            "metadata": {"name": "c1", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "c1"}},
            "spec": {
                "paused": false,
                "infrastructureRef": {"apiGroup": "infrastructure.foo.io", "kind": "FooCluster", "name": "c1"},
                "controlPlaneRef": {"apiGroup": "bootstrap.foo.io", "kind": "FooControlPlane", "name": "c1-cp"},
                "controlPlaneEndpoint": {"host": "10.0.0.10", "port": 6443},
                "clusterNetwork": {"pods": {"cidrBlocks": ["192.168.0.0/16"]}},
            },
            "status": {
                "initialization": {"infrastructureProvisioned": true, "controlPlaneInitialized": false},
                "conditions": [{"type": "ControlPlaneInitialized", "status": "True", "reason": "Initialized", "message": "", "lastTransitionTime": "2025-01-01T00:00:00Z", "observedGeneration": 1}],
                "deprecated": {"v1beta1": {"conditions": [{"type": "ControlPlaneInitialized", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}], "failureReason": "x"}},
                "failureDomains": [{"name": "fd2", "controlPlane": false}, {"name": "fd1", "controlPlane": true, "attributes": {"zone": "a"}}],
                "phase": "Provisioned",
            }
        })
    }

    #[test]
    fn cluster_down_then_up_is_lossless_and_down_is_capi_shaped() {
        let hub = cluster_b2();
        let b1 = convert(&hub, "cluster.x-k8s.io/v1beta1", &Fixed).unwrap();
        assert_eq!(
            b1.pointer("/spec/infrastructureRef").unwrap(),
            &json!({"apiVersion": "infrastructure.foo.io/v1beta1", "kind": "FooCluster", "name": "c1", "namespace": "ns"})
        );
        assert_eq!(
            b1.pointer("/spec/controlPlaneRef/apiVersion").unwrap(),
            "bootstrap.foo.io/v1beta2"
        );
        assert!(b1.pointer("/spec/paused").is_none());
        assert_eq!(b1.pointer("/status/infrastructureReady").unwrap(), true);
        assert_eq!(b1.pointer("/status/controlPlaneReady").unwrap(), false);
        assert_eq!(
            b1.pointer("/status/conditions/0/type").unwrap(),
            "ControlPlaneInitialized"
        );
        assert!(b1.pointer("/status/conditions/0/reason").is_none());
        assert_eq!(
            b1.pointer("/status/v1beta2/conditions/0/reason").unwrap(),
            "Initialized"
        );
        assert_eq!(b1.pointer("/status/failureReason").unwrap(), "x");
        assert_eq!(
            b1.pointer("/status/failureDomains/fd1").unwrap(),
            &json!({"controlPlane": true, "attributes": {"zone": "a"}})
        );
        assert!(b1.pointer("/status/initialization").is_none());
        assert!(
            b1.pointer("/metadata/annotations")
                .and_then(|a| a.get(DATA_ANNOTATION))
                .is_some()
        );
        let back = convert(&b1, "cluster.x-k8s.io/v1beta2", &Fixed).unwrap();
        let mut want = hub.clone();
        // Lists come back sorted by name.
        want["status"]["failureDomains"] = json!([
            {"name": "fd1", "controlPlane": true, "attributes": {"zone": "a"}},
            {"name": "fd2", "controlPlane": false},
        ]);
        assert_eq!(back, want);
    }

    #[test]
    fn cluster_up_then_down_is_lossless() {
        let b1 = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta1",
            "kind": "Cluster",
            "metadata": {"name": "c1", "namespace": "ns"},
            "spec": {
                "paused": true,
                "infrastructureRef": {"apiVersion": "infrastructure.foo.io/v1beta1", "kind": "FooCluster", "name": "c1", "namespace": "ns"},
                "controlPlaneEndpoint": {"host": "", "port": 0},
            },
            "status": {"infrastructureReady": true, "controlPlaneReady": false,
                       "failureDomains": {"a": {"controlPlane": true}}},
        });
        let hub = convert(&b1, "cluster.x-k8s.io/v1beta2", &Fixed).unwrap();
        assert_eq!(
            hub.pointer("/spec/infrastructureRef").unwrap(),
            &json!({"apiGroup": "infrastructure.foo.io", "kind": "FooCluster", "name": "c1"})
        );
        assert!(hub.pointer("/spec/controlPlaneEndpoint").is_none());
        assert_eq!(
            hub.pointer("/status/initialization").unwrap(),
            &json!({"infrastructureProvisioned": true})
        );
        let mut again = convert(&hub, "cluster.x-k8s.io/v1beta1", &Fixed).unwrap();
        again["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("annotations");
        assert_eq!(again, b1);
    }

    #[test]
    fn machine_round_trip_keeps_hub_only_fields() {
        let hub = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": "Machine",
            "metadata": {"name": "m1", "namespace": "ns"},
            "spec": {
                "clusterName": "c1",
                "version": "v1.31.0",
                "bootstrap": {"configRef": {"apiGroup": "bootstrap.foo.io", "kind": "FooConfig", "name": "m1"}},
                "infrastructureRef": {"apiGroup": "infrastructure.foo.io", "kind": "FooMachine", "name": "m1"},
                "failureDomain": "fd1",
                "minReadySeconds": 5,
                "deletion": {"nodeDrainTimeoutSeconds": 90},
            },
            "status": {
                "initialization": {"bootstrapDataSecretCreated": true, "infrastructureProvisioned": false},
                "nodeRef": {"name": "node-1"},
                "phase": "Updating",
                "failureDomain": "fd1",
            }
        });
        let b1 = convert(&hub, "cluster.x-k8s.io/v1beta1", &Fixed).unwrap();
        assert_eq!(
            b1.pointer("/spec/bootstrap/configRef/apiVersion").unwrap(),
            "bootstrap.foo.io/v1beta2"
        );
        assert_eq!(
            b1.pointer("/spec/infrastructureRef/namespace").unwrap(),
            "ns"
        );
        assert_eq!(b1.pointer("/spec/nodeDrainTimeout").unwrap(), "90s");
        assert!(b1.pointer("/spec/minReadySeconds").is_none());
        assert_eq!(b1.pointer("/status/bootstrapReady").unwrap(), true);
        assert_eq!(b1.pointer("/status/phase").unwrap(), "Running");
        assert_eq!(
            b1.pointer("/status/nodeRef").unwrap(),
            &json!({"apiVersion": "v1", "kind": "Node", "name": "node-1"})
        );
        let back = convert(&b1, "cluster.x-k8s.io/v1beta2", &Fixed).unwrap();
        assert_eq!(back, hub);
    }

    #[test]
    fn machine_pool_round_trip() {
        let hub = json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": "MachinePool",
            "metadata": {"name": "p", "namespace": "ns"},
            "spec": {"clusterName": "c1", "replicas": 2, "template": {"spec": {
                "clusterName": "c1", "minReadySeconds": 3,
                "bootstrap": {"dataSecretName": "boot"},
                "infrastructureRef": {"apiGroup": "infrastructure.foo.io", "kind": "FooMachinePool", "name": "p"}}}},
            "status": {"replicas": 2, "readyReplicas": 1, "upToDateReplicas": 2,
                       "initialization": {"infrastructureProvisioned": true},
                       "deprecated": {"v1beta1": {"readyReplicas": 1, "unavailableReplicas": 1}}}
        });
        let b1 = convert(&hub, "cluster.x-k8s.io/v1beta1", &Fixed).unwrap();
        assert_eq!(b1.pointer("/spec/minReadySeconds").unwrap(), 3);
        assert_eq!(
            b1.pointer("/spec/template/spec/infrastructureRef/apiVersion")
                .unwrap(),
            "infrastructure.foo.io/v1beta1"
        );
        assert_eq!(b1.pointer("/status/v1beta2/upToDateReplicas").unwrap(), 2);
        assert_eq!(b1.pointer("/status/unavailableReplicas").unwrap(), 1);
        assert_eq!(b1.pointer("/status/infrastructureReady").unwrap(), true);
        let back = convert(&b1, "cluster.x-k8s.io/v1beta2", &Fixed).unwrap();
        assert_eq!(back, hub);
    }

    #[test]
    fn a_ref_to_a_kind_without_contract_labels_fails_as_core_fails() {
        let mut hub = cluster_b2();
        hub["spec"]["infrastructureRef"]["apiGroup"] = json!("infrastructure.bar.io");
        let err = convert(&hub, "cluster.x-k8s.io/v1beta1", &Fixed).unwrap_err();
        assert!(
            err.to_string()
                .contains("contract version label(s) are either missing or empty"),
            "{err}"
        );
        assert!(matches!(
            convert(
                &json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineSet"}),
                "cluster.x-k8s.io/v1beta1",
                &Fixed
            ),
            Err(ConvertError::UnknownKind(_))
        ));
    }

    #[test]
    fn newest_contract_then_newest_version() {
        let mut labels = Map::new();
        labels.insert(format!("{GROUP}/v1beta1"), json!("v1beta1_v1alpha4"));
        assert_eq!(
            api_version_from_labels("g.io", "K", "ks.g.io", &labels).unwrap(),
            "g.io/v1beta1"
        );
        labels.insert(format!("{GROUP}/v1beta2"), json!("v1beta2"));
        assert_eq!(
            api_version_from_labels("g.io", "K", "ks.g.io", &labels).unwrap(),
            "g.io/v1beta2"
        );
        assert_eq!(parse_duration_seconds("1m30s"), Some(90));
        assert_eq!(parse_duration_seconds("500ms"), Some(0));
        assert_eq!(parse_duration_seconds("x"), None);
    }
}
