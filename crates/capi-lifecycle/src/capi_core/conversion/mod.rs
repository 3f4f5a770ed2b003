//! CAPI core's conversion between `cluster.x-k8s.io/v1beta1` and `v1beta2` for Cluster, Machine
//! and MachinePool (and between `ipam.cluster.x-k8s.io/v1beta1` and `v1beta2` for IPAddressClaim
//! and IPAddress, [`ipam`]), as core's conversion webhook does it (CAPI `api/core/v1beta1/conversion.go`,
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

mod cluster;
mod fields;
pub(crate) use fields::failure_domains_up;
mod ipam;
mod machine;
mod pool;
#[cfg(test)]
mod tests;

use fields::set_or_remove;
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
    IpAddressClaim,
    IpAddress,
}

impl Kind {
    pub fn parse(kind: &str) -> Option<Kind> {
        match kind {
            "Cluster" => Some(Kind::Cluster),
            "Machine" => Some(Kind::Machine),
            "MachinePool" => Some(Kind::MachinePool),
            "IPAddressClaim" => Some(Kind::IpAddressClaim),
            "IPAddress" => Some(Kind::IpAddress),
            _ => None,
        }
    }

    /// The kind's API group.
    pub fn group(self) -> &'static str {
        match self {
            Kind::Cluster | Kind::Machine | Kind::MachinePool => GROUP,
            Kind::IpAddressClaim | Kind::IpAddress => ipam::GROUP,
        }
    }
}

/// Why an object cannot be converted (the API request fails with this message, as core's
/// webhook fails it).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConvertError {
    #[error(
        "cannot convert {0}: capi-conformance converts Cluster, Machine, MachinePool, IPAddressClaim and IPAddress only"
    )]
    UnknownKind(String),
    #[error("cannot convert to {0}: only v1beta1 and v1beta2 of {GROUP} and ipam.{GROUP}")]
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
    let group = kind.group();
    let to_version = desired
        .strip_prefix(&format!("{group}/"))
        .ok_or_else(|| ConvertError::UnknownVersion(desired.into()))?;
    let from_version = from
        .strip_prefix(&format!("{group}/"))
        .ok_or_else(|| ConvertError::UnknownVersion(from.into()))?;
    match (from_version, to_version) {
        (a, b) if a == b => Ok(obj.clone()),
        (V1BETA2, V1BETA1) if group == ipam::GROUP => ipam_convert(kind, obj, V1BETA1),
        (V1BETA1, V1BETA2) if group == ipam::GROUP => ipam_convert(kind, obj, V1BETA2),
        (V1BETA2, V1BETA1) => down(kind, obj, lookup),
        (V1BETA1, V1BETA2) => up(kind, obj),
        (V1BETA2 | V1BETA1, other) | (other, _) => {
            Err(ConvertError::UnknownVersion(format!("{group}/{other}")))
        }
    }
}

/// An IPAM object to `version` (v1beta1 or v1beta2; [`ipam`]).
fn ipam_convert(kind: Kind, obj: &Value, version: &str) -> Result<Value, ConvertError> {
    let mut out = obj.as_object().ok_or(ConvertError::NotAnObject)?.clone();
    out.insert(
        "apiVersion".into(),
        json!(format!("{}/{version}", ipam::GROUP)),
    );
    let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
    let status = obj.get("status").cloned().unwrap_or_else(|| json!({}));
    let down = version == V1BETA1;
    match kind {
        Kind::IpAddressClaim => {
            let status = if down {
                ipam::claim_status_down(&status)
            } else {
                ipam::claim_status_up(&status)
            };
            ipam::put(&mut out, spec, Some(status));
        }
        Kind::IpAddress => {
            let spec = if down {
                ipam::address_spec_down(&spec)
            } else {
                ipam::address_spec_up(&spec)
            };
            ipam::put(&mut out, spec, None);
        }
        _ => return Err(ConvertError::UnknownKind(format!("{kind:?}"))),
    }
    Ok(Value::Object(out))
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
    let cx = fields::Down {
        namespace: &namespace,
        lookup,
    };
    let (spec, status) = match kind {
        Kind::Cluster => (
            cluster::spec_down(&spec, &cx)?,
            cluster::status_down(&status),
        ),
        Kind::Machine => (
            machine::spec_down(&spec, &cx)?,
            machine::status_down(&status),
        ),
        Kind::MachinePool => (pool::spec_down(&spec, &cx)?, pool::status_down(&status)),
        Kind::IpAddressClaim | Kind::IpAddress => return ipam_convert(kind, hub, V1BETA1),
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
            cluster::spec_up(&spec, restored),
            cluster::status_up(&status, restored),
        ),
        Kind::Machine => (
            machine::spec_up(&spec, restored),
            machine::status_up(&status, restored),
        ),
        Kind::MachinePool => (
            pool::spec_up(&spec, restored),
            pool::status_up(&status, restored),
        ),
        Kind::IpAddressClaim | Kind::IpAddress => return ipam_convert(kind, spoke, V1BETA2),
    };
    set_or_remove(&mut out, "spec", spec);
    set_or_remove(&mut out, "status", status);
    Ok(Value::Object(out))
}
