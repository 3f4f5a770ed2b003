//! Cluster: references, `paused`, `controlPlaneEndpoint`, the ready flags, the control plane /
//! workers summaries, failure domains.

use super::ConvertError;
use super::fields::{
    Down, StatusShape, at, failure_domains_down, failure_domains_up, flag_up, non_empty_str,
    obj_of, ref_down, ref_up, status_down as shape_down, status_up as shape_up,
};
use serde_json::{Map, Value, json};

const STATUS: StatusShape = StatusShape {
    flags: &[
        ("infrastructureReady", "infrastructureProvisioned"),
        ("controlPlaneReady", "controlPlaneInitialized"),
    ],
    under_v1beta2: &["controlPlane", "workers"],
    deprecated: &["failureReason", "failureMessage"],
};

pub(super) fn spec_down(spec: &Value, cx: &Down<'_>) -> Result<Value, ConvertError> {
    let mut out = obj_of(spec);
    out.remove("paused");
    if spec.get("paused").and_then(Value::as_bool) == Some(true) {
        out.insert("paused".into(), json!(true));
    }
    for key in ["infrastructureRef", "controlPlaneRef"] {
        out.remove(key);
        if let Some(r) = ref_down(spec.get(key), cx)? {
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

pub(super) fn spec_up(spec: &Value, restored: Option<&Value>) -> Value {
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

pub(super) fn status_down(status: &Value) -> Value {
    let mut out = shape_down(status, &STATUS);
    out.remove("failureDomains");
    if let Some(fd) = failure_domains_down(status.get("failureDomains")) {
        out.insert("failureDomains".into(), fd);
    }
    Value::Object(out)
}

pub(super) fn status_up(status: &Value, restored: Option<&Value>) -> Value {
    let mut out = shape_up(status, restored, &STATUS);
    out.remove("failureDomains");
    if let Some(fd) = failure_domains_up(status.get("failureDomains")) {
        out.insert("failureDomains".into(), fd);
    }
    Value::Object(out)
}
