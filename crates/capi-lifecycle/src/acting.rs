//! What counts as a provider acting in a must-not-act window: the normalizer the quiet checks
//! compare states through, and the Paused condition reader (docs/core-simulation.md "Rule
//! decisions"). Pure functions over JSON, below the scripts that use them.

use super::json::{condition, get};
use super::timeline::without_bookkeeping;
use serde_json::Value;

pub fn paused_condition_is(v: &Value, status: &str, reason: &str) -> bool {
    condition(v, "Paused").is_some_and(|c| is(c, status, reason))
}

/// The `Paused` condition CAPI v1.9+ controllers keep on a v1beta1 object at
/// `status.v1beta2.conditions` (`paused.EnsurePausedCondition` writes the hub's conditions,
/// which the v1beta1 view shows there).
fn v1beta2_paused_condition(v: &Value) -> Option<&Value> {
    get(v, "status.v1beta2.conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some("Paused"))
}

/// Whether a v1beta1 object carries a `Paused` condition at `status.v1beta2.conditions`: its
/// provider keeps one there, so it also reports the pause there.
pub fn keeps_v1beta2_paused_condition(v: &Value) -> bool {
    v1beta2_paused_condition(v).is_some()
}

/// [`paused_condition_is`] at `status.v1beta2.conditions` (a v1beta1 object).
pub fn v1beta2_paused_condition_is(v: &Value, status: &str, reason: &str) -> bool {
    v1beta2_paused_condition(v).is_some_and(|c| is(c, status, reason))
}

fn is(c: &Value, status: &str, reason: &str) -> bool {
    c.get("status").and_then(Value::as_str) == Some(status)
        && c.get("reason").and_then(Value::as_str) == Some(reason)
}

/// Normalizer for "must not act": drops bookkeeping, the Paused condition at either conditions
/// path (`status.conditions`, and `status.v1beta2.conditions` where CAPI v1.9/v1.10 controllers
/// write it on v1beta1 objects, `paused.EnsurePausedCondition`) and `metadata.finalizers`
/// (CAPI's own controllers add their finalizer first, before looking up the owner and pause,
/// `finalizers.EnsureFinalizer`). Anything else the provider writes is acting
/// (docs/core-simulation.md "Rule decisions").
pub fn without_paused_condition(v: &Value) -> Value {
    let mut v = without_bookkeeping(v);
    if let Some(meta) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        meta.remove("finalizers");
        if let Some(data) = meta
            .get_mut("annotations")
            .and_then(Value::as_object_mut)
            .and_then(|a| a.get_mut(CONVERSION_DATA_ANNOTATION))
        {
            *data = conversion_data_without_paused_condition(data);
        }
    }
    drop_paused_conditions(&mut v);
    v
}

/// The annotation in which CAPI's conversion (`utilconversion.MarshalData`) keeps, on an object
/// read at an older version, the hub object minus its metadata (what that version cannot hold).
pub use crate::capi_core::conversion::DATA_ANNOTATION as CONVERSION_DATA_ANNOTATION;

/// The conversion-data annotation's hub object, normalized like the object itself: a Paused
/// condition the provider wrote at the hub version shows up in the older version's view also
/// inside this annotation, which is conversion, not the provider acting. Anything else that
/// changes in the hub (spec, other status) still differs. An annotation that is not JSON is
/// compared as it is.
fn conversion_data_without_paused_condition(data: &Value) -> Value {
    match data
        .as_str()
        .and_then(|s| serde_json::from_str::<Value>(s).ok())
    {
        Some(mut hub) => {
            drop_paused_conditions(&mut hub);
            hub
        }
        None => data.clone(),
    }
}

/// Drops the Paused condition at `status.conditions` and `status.v1beta2.conditions`, and the
/// holders that empty.
fn drop_paused_conditions(v: &mut Value) {
    let mut status_empty = false;
    if let Some(status) = v.get_mut("status").and_then(Value::as_object_mut) {
        drop_paused(status);
        let mut v1beta2_empty = false;
        if let Some(v1beta2) = status.get_mut("v1beta2").and_then(Value::as_object_mut) {
            drop_paused(v1beta2);
            v1beta2_empty = v1beta2.is_empty();
        }
        if v1beta2_empty {
            status.remove("v1beta2");
        }
        status_empty = status.is_empty();
    }
    if status_empty && let Some(o) = v.as_object_mut() {
        o.remove("status");
    }
}

/// Removes the Paused condition from `holder.conditions` (and the list when it empties).
fn drop_paused(holder: &mut serde_json::Map<String, Value>) {
    if let Some(conds) = holder.get_mut("conditions").and_then(Value::as_array_mut) {
        conds.retain(|c| c.get("type").and_then(Value::as_str) != Some("Paused"));
        if conds.is_empty() {
            holder.remove("conditions");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paused_condition_is_dropped_by_the_quiet_normalizer() {
        let a = json!({"metadata": {"resourceVersion": "1"}});
        let b = json!({"metadata": {"resourceVersion": "2"},
                       "status": {"conditions": [{"type": "Paused", "status": "True", "reason": "Paused"}]}});
        assert_eq!(without_paused_condition(&a), without_paused_condition(&b));
        assert!(paused_condition_is(&b, "True", "Paused"));
        let c = json!({"status": {"conditions": [{"type": "Paused"}, {"type": "Ready"}]}});
        assert_ne!(without_paused_condition(&a), without_paused_condition(&c));
        // CAPI v1.9/v1.10 on a v1beta1 object: the Paused condition under status.v1beta2.
        let d = json!({"metadata": {"resourceVersion": "3"},
                       "status": {"v1beta2": {"conditions": [{"type": "Paused", "status": "True"}]}}});
        assert_eq!(without_paused_condition(&a), without_paused_condition(&d));
        // EnsureFinalizer before owner and pause: a finalizer alone is not acting.
        let e = json!({"metadata": {"resourceVersion": "4", "finalizers": ["x.io/f"]}});
        assert_eq!(without_paused_condition(&a), without_paused_condition(&e));
        // Anything else is: a provisioned flag, a v1beta2 condition other than Paused.
        let f = json!({"metadata": {"finalizers": ["x.io/f"]}, "status": {"ready": true}});
        assert_ne!(without_paused_condition(&a), without_paused_condition(&f));
        let g =
            json!({"status": {"v1beta2": {"conditions": [{"type": "Paused"}, {"type": "Ready"}]}}});
        assert_ne!(without_paused_condition(&a), without_paused_condition(&g));
    }

    #[test]
    fn the_v1beta2_paused_condition_of_a_v1beta1_object_is_read_apart() {
        let v1beta1 = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}],
            "v1beta2": {"conditions": [{"type": "Paused", "status": "True", "reason": "Paused"}]}}});
        assert!(keeps_v1beta2_paused_condition(&v1beta1));
        assert!(v1beta2_paused_condition_is(&v1beta1, "True", "Paused"));
        assert!(!v1beta2_paused_condition_is(&v1beta1, "False", "NotPaused"));
        // Not the contract's own condition: status.conditions has no Paused.
        assert!(!paused_condition_is(&v1beta1, "True", "Paused"));
        // A v1beta2 object's Paused is at status.conditions only.
        let v1beta2 = json!({"status": {"conditions": [{"type": "Paused", "status": "False", "reason": "NotPaused"}]}});
        assert!(!keeps_v1beta2_paused_condition(&v1beta2));
        let none =
            json!({"status": {"v1beta2": {"conditions": [{"type": "Ready", "status": "True"}]}}});
        assert!(!keeps_v1beta2_paused_condition(&none));
    }

    #[test]
    fn a_paused_condition_inside_the_conversion_data_is_not_acting() {
        let hub = |conds: Value, spec: Value| {
            json!({"metadata": {"annotations": {CONVERSION_DATA_ANNOTATION:
                json!({"apiVersion": "x.io/v1beta2", "spec": spec, "status": {"conditions": conds}}).to_string()}}})
        };
        let before = hub(
            json!([{"type": "Ready", "status": "False"}]),
            json!({"a": 1}),
        );
        let paused = hub(
            json!([{"type": "Ready", "status": "False"}, {"type": "Paused", "status": "True"}]),
            json!({"a": 1}),
        );
        assert_eq!(
            without_paused_condition(&before),
            without_paused_condition(&paused)
        );
        // A hub-only change the older version cannot show is still acting.
        let spec_changed = hub(
            json!([{"type": "Ready", "status": "False"}]),
            json!({"a": 2}),
        );
        assert_ne!(
            without_paused_condition(&before),
            without_paused_condition(&spec_changed)
        );
        let ready_changed = hub(
            json!([{"type": "Ready", "status": "True"}]),
            json!({"a": 1}),
        );
        assert_ne!(
            without_paused_condition(&before),
            without_paused_condition(&ready_changed)
        );
    }
}
