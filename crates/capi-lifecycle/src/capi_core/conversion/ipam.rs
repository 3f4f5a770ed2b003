//! CAPI's IPAM kinds between `ipam.cluster.x-k8s.io/v1beta1` and `v1beta2` (CAPI
//! `api/ipam/v1beta1/conversion.go`, hub v1beta2). Unlike core's kinds they keep no
//! conversion-data annotation; what differs in JSON is:
//!
//! - IPAddressClaim status conditions: v1beta1 `status.conditions` ↔ v1beta2
//!   `status.deprecated.v1beta1.conditions`, v1beta1 `status.v1beta2.conditions` ↔ v1beta2
//!   `status.conditions`;
//! - IPAddressClaim v1beta1 `status.addressRef` is a struct without `omitzero`: `{}` when unset;
//! - IPAddress `spec.prefix`: v1beta1 `int` (0 when unset) ↔ v1beta2 `*int32` (always set going
//!   up, `ptr.To(int32(in.Prefix))`).
//!
//! `v1alpha1` (still served by CAPI v1.11, with label and annotation juggling of its own) is
//! not converted: a request for it fails with [`super::ConvertError::UnknownVersion`].

use super::fields::{conditions_down, conditions_up, obj_of, set_or_remove};
use serde_json::{Value, json};

/// The IPAM kinds' API group.
pub const GROUP: &str = "ipam.cluster.x-k8s.io";

/// IPAddressClaim status, v1beta2 → v1beta1.
pub(super) fn claim_status_down(status: &Value) -> Value {
    let src = obj_of(status);
    let mut out = src.clone();
    conditions_down(&src, &mut out);
    out.entry("addressRef").or_insert_with(|| json!({}));
    Value::Object(out)
}

/// IPAddressClaim status, v1beta1 → v1beta2.
pub(super) fn claim_status_up(status: &Value) -> Value {
    let src = obj_of(status);
    let mut out = src.clone();
    conditions_up(&src, &mut out, &[]);
    if out
        .get("addressRef")
        .and_then(Value::as_object)
        .is_some_and(|r| {
            r.get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .is_empty()
        })
    {
        out.remove("addressRef");
    }
    Value::Object(out)
}

/// IPAddress spec, v1beta2 → v1beta1.
pub(super) fn address_spec_down(spec: &Value) -> Value {
    let mut out = obj_of(spec);
    out.entry("prefix").or_insert_with(|| json!(0));
    Value::Object(out)
}

/// IPAddress spec, v1beta1 → v1beta2.
pub(super) fn address_spec_up(spec: &Value) -> Value {
    let mut out = obj_of(spec);
    out.entry("prefix").or_insert_with(|| json!(0));
    Value::Object(out)
}

/// Sets `spec`/`status` of `out` (an object map), dropping an empty status.
pub(super) fn put(out: &mut serde_json::Map<String, Value>, spec: Value, status: Option<Value>) {
    out.insert("spec".into(), spec);
    if let Some(status) = status {
        set_or_remove(out, "status", status);
    }
}
