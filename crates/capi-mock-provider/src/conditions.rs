//! Condition lists in either contract's shape (CAPI v1beta1 with severity; metav1 for v1beta2).

use capi_contract::contract::Contract;
use serde_json::{Value, json};

/// One condition the mock wants set.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Wanted<'a> {
    pub type_: &'a str,
    pub status: bool,
    pub reason: &'a str,
    pub message: &'a str,
}

impl<'a> Wanted<'a> {
    pub fn new(type_: &'a str, status: bool, reason: &'a str, message: &'a str) -> Self {
        Wanted {
            type_,
            status,
            reason,
            message,
        }
    }
}

/// `existing` with `wanted` set (others kept, `lastTransitionTime` kept when the status did not
/// change), in `contract`'s shape. `removed` types are dropped.
pub fn merged(
    existing: Option<&Value>,
    wanted: &[Wanted<'_>],
    removed: &[&str],
    contract: Contract,
    generation: Option<i64>,
    now: &str,
) -> Vec<Value> {
    let mut out: Vec<Value> = existing
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|c| {
            let t = c.get("type").and_then(Value::as_str).unwrap_or_default();
            !removed.contains(&t)
        })
        .collect();
    for w in wanted {
        let status = if w.status { "True" } else { "False" };
        let previous = out
            .iter()
            .position(|c| c.get("type").and_then(Value::as_str) == Some(w.type_));
        let since = previous
            .and_then(|i| out.get(i))
            .filter(|c| c.get("status").and_then(Value::as_str) == Some(status))
            .and_then(|c| c.get("lastTransitionTime").cloned())
            .unwrap_or_else(|| Value::String(now.to_string()));
        let mut cond = json!({
            "type": w.type_,
            "status": status,
            "lastTransitionTime": since,
            "reason": w.reason,
            "message": w.message,
        });
        match contract {
            Contract::V1Beta1 => {
                if !w.status {
                    cond["severity"] = json!("Info");
                }
            }
            Contract::V1Beta2 => {
                if let Some(g) = generation {
                    cond["observedGeneration"] = json!(g);
                }
            }
        }
        match previous {
            Some(i) => out[i] = cond,
            None => out.push(cond),
        }
    }
    out.sort_by(|a, b| {
        let key = |c: &Value| {
            c.get("type")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string()
        };
        key(a).cmp(&key(b))
    });
    out
}

/// The current time as RFC 3339 with second precision (what Kubernetes stores).
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .round(jiff::Unit::Second)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_transition_time_when_status_is_unchanged() {
        let existing = json!([
            {"type": "Ready", "status": "True", "lastTransitionTime": "2020-01-01T00:00:00Z", "reason": "A", "message": ""},
            {"type": "Other", "status": "True", "lastTransitionTime": "2020-01-01T00:00:00Z", "reason": "A", "message": ""}
        ]);
        let out = merged(
            Some(&existing),
            &[
                Wanted::new("Ready", true, "B", "m"),
                Wanted::new("Paused", false, "NotPaused", ""),
            ],
            &["Other"],
            Contract::V1Beta2,
            Some(3),
            "2030-01-01T00:00:00Z",
        );
        assert_eq!(out.len(), 2);
        assert_eq!(out[1]["type"], "Ready");
        assert_eq!(out[1]["lastTransitionTime"], "2020-01-01T00:00:00Z");
        assert_eq!(out[1]["reason"], "B");
        assert_eq!(out[0]["lastTransitionTime"], "2030-01-01T00:00:00Z");
        assert_eq!(out[0]["observedGeneration"], 3);
    }

    #[test]
    fn v1beta1_false_conditions_carry_severity() {
        let out = merged(
            None,
            &[Wanted::new("Ready", false, "Waiting", "")],
            &[],
            Contract::V1Beta1,
            Some(1),
            "t",
        );
        assert_eq!(out[0]["severity"], "Info");
        assert!(out[0].get("observedGeneration").is_none());
    }
}
