//! MachinePool: its template's MachineSpec (as a Machine's), `minReadySeconds`, the replica
//! counters (v1beta2 top level ↔ v1beta1 `status.v1beta2`; v1beta1 top level ↔ v1beta2
//! `status.deprecated.v1beta1`), the ready flags.

use super::fields::{
    Down, StatusShape, at, obj_of, status_down as shape_down, status_up as shape_up,
};
use super::{ConvertError, machine};
use serde_json::{Value, json};

const STATUS: StatusShape = StatusShape {
    flags: machine::STATUS.flags,
    under_v1beta2: &["readyReplicas", "availableReplicas", "upToDateReplicas"],
    deprecated: &[
        "failureReason",
        "failureMessage",
        "readyReplicas",
        "availableReplicas",
        "unavailableReplicas",
    ],
};

pub(super) fn spec_down(spec: &Value, cx: &Down<'_>) -> Result<Value, ConvertError> {
    let mut out = obj_of(spec);
    if let Some(template) = spec.get("template") {
        let mut t = obj_of(template);
        let tspec = template.get("spec").cloned().unwrap_or_else(|| json!({}));
        if let Some(m) = tspec.get("minReadySeconds") {
            out.insert("minReadySeconds".into(), m.clone());
        }
        t.insert("spec".into(), machine::spec_down(&tspec, cx)?);
        out.insert("template".into(), Value::Object(t));
    }
    Ok(Value::Object(out))
}

pub(super) fn spec_up(spec: &Value, restored: Option<&Value>) -> Value {
    let mut out = obj_of(spec);
    let min_ready = out.remove("minReadySeconds");
    if let Some(template) = spec.get("template") {
        let mut t = obj_of(template);
        let tspec = template.get("spec").cloned().unwrap_or_else(|| json!({}));
        let mut up = machine::spec_up_at(&tspec, at(restored, "spec.template.spec"));
        if let (Some(m), Some(o)) = (min_ready, up.as_object_mut()) {
            o.insert("minReadySeconds".into(), m);
        }
        t.insert("spec".into(), up);
        out.insert("template".into(), Value::Object(t));
    }
    Value::Object(out)
}

pub(super) fn status_down(status: &Value) -> Value {
    let mut out = shape_down(status, &STATUS);
    // v1beta1 `replicas` is an int32 without omitempty.
    if !out.contains_key("replicas") {
        out.insert("replicas".into(), json!(0));
    }
    Value::Object(out)
}

pub(super) fn status_up(status: &Value, restored: Option<&Value>) -> Value {
    let mut out = shape_up(status, restored, &STATUS);
    // `replicas` is *int32 in v1beta2: a zero the annotation did not record disappears.
    if status.get("replicas").and_then(Value::as_i64) == Some(0)
        && at(restored, "status.replicas").is_none()
    {
        out.remove("replicas");
    }
    Value::Object(out)
}
