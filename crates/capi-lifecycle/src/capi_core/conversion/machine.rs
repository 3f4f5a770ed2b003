//! Machine (and the MachinePool template's MachineSpec): bootstrap and infrastructure
//! references, deletion timeouts (seconds ↔ Go durations), hub-only fields, the ready flags,
//! `nodeRef`, the `Updating` phase.

use super::ConvertError;
use super::fields::{
    Down, StatusShape, at, non_empty_str, obj_of, ref_down, ref_up, status_down as shape_down,
    status_up as shape_up,
};
use serde_json::{Map, Value, json};

pub(super) const STATUS: StatusShape = StatusShape {
    flags: &[
        ("bootstrapReady", "bootstrapDataSecretCreated"),
        ("infrastructureReady", "infrastructureProvisioned"),
    ],
    under_v1beta2: &[],
    deprecated: &["failureReason", "failureMessage"],
};

const DELETION_TIMEOUTS: [(&str, &str); 3] = [
    ("nodeDrainTimeoutSeconds", "nodeDrainTimeout"),
    ("nodeVolumeDetachTimeoutSeconds", "nodeVolumeDetachTimeout"),
    ("nodeDeletionTimeoutSeconds", "nodeDeletionTimeout"),
];

/// Hub-only Machine spec fields, restored from the annotation.
const MACHINE_SPEC_HUB_ONLY: [&str; 2] = ["minReadySeconds", "taints"];

pub(super) fn spec_down(spec: &Value, cx: &Down<'_>) -> Result<Value, ConvertError> {
    let mut out = obj_of(spec);
    let mut bootstrap = obj_of(spec.get("bootstrap").unwrap_or(&Value::Null));
    bootstrap.remove("configRef");
    if let Some(r) = ref_down(at(Some(spec), "bootstrap.configRef"), cx)? {
        bootstrap.insert("configRef".into(), r);
    }
    if non_empty_str(bootstrap.get("dataSecretName")).is_none() {
        bootstrap.remove("dataSecretName");
    }
    out.insert("bootstrap".into(), Value::Object(bootstrap));
    // Required (non-pointer) in v1beta1: always serialised.
    let infra = ref_down(spec.get("infrastructureRef"), cx)?.unwrap_or_else(|| json!({}));
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

pub(super) fn spec_up(spec: &Value, restored: Option<&Value>) -> Value {
    spec_up_at(spec, restored.and_then(|r| r.get("spec")))
}

/// `restored_spec`: the hub MachineSpec the annotation recorded for this spec.
pub(super) fn spec_up_at(spec: &Value, restored_spec: Option<&Value>) -> Value {
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
pub(super) fn parse_duration_seconds(s: &str) -> Option<i64> {
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

pub(super) fn status_down(status: &Value) -> Value {
    let mut out = shape_down(status, &STATUS);
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

pub(super) fn status_up(status: &Value, restored: Option<&Value>) -> Value {
    let mut out = shape_up(status, restored, &STATUS);
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
