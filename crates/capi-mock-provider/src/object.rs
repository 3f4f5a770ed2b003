//! Reading CAPI conventions off objects: contract version, owner references, labels, pause.

use capi_contract::contract::Contract;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::core::DynamicObject;
use serde_json::Value;

/// Annotation that tells the mock which contract's shapes an object uses (`v1beta1`|`v1beta2`).
pub const CONTRACT_ANNOTATION: &str = "mock.capi-conformance.io/contract";
/// The field manager of every write the mock makes.
pub const FIELD_MANAGER: &str = "capi-conformance-mock";
/// CAPI's cluster-name label.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// Label of control-plane Machines (its presence counts, `util.IsControlPlaneMachine`).
pub const CONTROL_PLANE_LABEL: &str = "cluster.x-k8s.io/control-plane";
/// CAPI's pause annotation.
pub const PAUSED_ANNOTATION: &str = "cluster.x-k8s.io/paused";
/// CAPI's externally-managed marker (an annotation in code).
pub const MANAGED_BY_ANNOTATION: &str = "cluster.x-k8s.io/managed-by";
/// CAPI's watch-filter label.
pub use capi_contract::model::labels::WATCH_FILTER_LABEL;
/// Label of MachinePool Machines naming their pool.
pub const POOL_NAME_LABEL: &str = "cluster.x-k8s.io/pool-name";
/// CAPI core's API group.
pub const CORE_GROUP: &str = "cluster.x-k8s.io";

/// The contract whose field paths the mock uses for `obj`.
///
/// The mock serves both versions from one storage (conversion None), so the apiVersion seen in a
/// watch does not tell which version the object was written at. In order: the
/// [`CONTRACT_ANNOTATION`]; else the apiVersion of the earliest `managedFields` entry not written
/// by the mock (the creator's version); else `v1beta2` (what CAPI ≥ v1.11 reads).
pub fn contract_of(obj: &DynamicObject) -> Contract {
    if let Some(c) = annotation(obj, CONTRACT_ANNOTATION).and_then(Contract::parse) {
        return c;
    }
    let creator = obj
        .metadata
        .managed_fields
        .iter()
        .flatten()
        .find(|e| e.manager.as_deref() != Some(FIELD_MANAGER));
    creator
        .and_then(|e| e.api_version.as_deref())
        .and_then(|av| av.rsplit('/').next())
        .and_then(Contract::parse)
        .unwrap_or(Contract::V1Beta2)
}

pub fn annotation<'a>(obj: &'a DynamicObject, key: &str) -> Option<&'a str> {
    obj.metadata
        .annotations
        .as_ref()?
        .get(key)
        .map(String::as_str)
}

pub fn label<'a>(obj: &'a DynamicObject, key: &str) -> Option<&'a str> {
    obj.metadata.labels.as_ref()?.get(key).map(String::as_str)
}

/// The owner reference of `kind` in CAPI core's group; with `controller_only`, only a controller one.
pub fn core_owner<'a>(
    obj: &'a DynamicObject,
    kind: &str,
    controller_only: bool,
) -> Option<&'a OwnerReference> {
    obj.metadata.owner_references.iter().flatten().find(|o| {
        o.kind == kind
            && o.api_version.split('/').next() == Some(CORE_GROUP)
            && (!controller_only || o.controller == Some(true))
    })
}

/// Whether the object is being deleted.
pub fn is_deleting(obj: &DynamicObject) -> bool {
    obj.metadata.deletion_timestamp.is_some()
}

/// Whether `obj` carries `finalizer`.
pub fn has_finalizer(obj: &DynamicObject, finalizer: &str) -> bool {
    obj.metadata
        .finalizers
        .iter()
        .flatten()
        .any(|f| f == finalizer)
}

/// A value at a dotted path of the object's body (`spec.replicas`).
pub fn field<'a>(obj: &'a DynamicObject, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(&obj.data, |v, k| v.get(k))
}

/// A string at a dotted path, empty strings treated as absent.
pub fn string_field<'a>(obj: &'a DynamicObject, path: &str) -> Option<&'a str> {
    field(obj, path)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

pub fn bool_field(obj: &DynamicObject, path: &str) -> bool {
    field(obj, path).and_then(Value::as_bool).unwrap_or(false)
}

pub fn int_field(obj: &DynamicObject, path: &str) -> Option<i64> {
    field(obj, path).and_then(Value::as_i64)
}

/// The value CAPI puts in the `pool-name` label: the name itself when it is a valid label value,
/// else `hash_<base64url(fnv32a(name))>_z` (CAPI's `MustFormatValue`).
pub fn format_label_value(name: &str) -> String {
    let valid = name.len() <= 63
        && (name.is_empty()
            || (name.starts_with(|c: char| c.is_ascii_alphanumeric())
                && name.ends_with(|c: char| c.is_ascii_alphanumeric())
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))));
    if valid {
        return name.to_string();
    }
    let mut hash: u32 = 0x811c_9dc5;
    for b in name.bytes() {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    use base64::Engine;
    let encoded = base64::engine::general_purpose::URL_SAFE.encode(hash.to_be_bytes());
    format!("hash_{encoded}_z")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(v: serde_json::Value) -> DynamicObject {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn contract_from_annotation_then_managed_fields_then_default() {
        let annotated = obj(serde_json::json!({
            "apiVersion": "x/v1beta2", "kind": "K",
            "metadata": {"name": "a", "annotations": {CONTRACT_ANNOTATION: "v1beta1"}}
        }));
        assert_eq!(contract_of(&annotated), Contract::V1Beta1);
        let managed = obj(serde_json::json!({
            "apiVersion": "x/v1beta2", "kind": "K",
            "metadata": {"name": "a", "managedFields": [
                {"manager": FIELD_MANAGER, "operation": "Update", "apiVersion": "x/v1beta2"},
                {"manager": "tool", "operation": "Update", "apiVersion": "x/v1beta1"}
            ]}
        }));
        assert_eq!(contract_of(&managed), Contract::V1Beta1);
        let bare = obj(
            serde_json::json!({"apiVersion": "x/v1beta1", "kind": "K", "metadata": {"name": "a"}}),
        );
        assert_eq!(contract_of(&bare), Contract::V1Beta2);
    }

    #[test]
    fn label_values_are_kept_or_hashed() {
        assert_eq!(format_label_value("pool-1"), "pool-1");
        let long = "p".repeat(64);
        let hashed = format_label_value(&long);
        assert!(
            hashed.starts_with("hash_") && hashed.ends_with("_z"),
            "{hashed}"
        );
        assert_ne!(hashed, format_label_value(&"q".repeat(64)));
    }
}
