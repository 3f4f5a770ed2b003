//! What counts as a provider acting in a must-not-act window: the normalizer the quiet checks
//! compare states through, and the Paused condition reader (docs/core-simulation.md "Rule
//! decisions"). Pure functions over JSON, below the scripts that use them.

use super::json::condition;
use super::timeline::without_bookkeeping;
use serde_json::Value;

pub fn paused_condition_is(v: &Value, status: &str, reason: &str) -> bool {
    condition(v, "Paused").is_some_and(|c| {
        c.get("status").and_then(Value::as_str) == Some(status)
            && c.get("reason").and_then(Value::as_str) == Some(reason)
    })
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
    }
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
    v
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
}
