//! Core's `updateStatus` for a control plane's Machine (its conditions, phase and Node), and
//! the `Deleting` condition while core waits in `reconcileDelete`.

use super::{Referenced, Sim, init, name_of, now};
use crate::scenarios::core_sim::machine_resource;
use crate::scenarios::env::EnvError;
use kube::discovery::ApiResource;
use serde_json::{Value, json};

impl Sim {
    /// Core's `updateStatus` for a Machine not being deleted: its conditions and phase, written
    /// only when they change (a merge patch of the whole list under the read resourceVersion,
    /// as CAPI's patch helper writes conditions: a provider's own conditions are kept).
    pub(super) async fn update_status(
        &self,
        m: &Value,
        bootstrap: &Referenced,
        infra: &Referenced,
        node: Option<&Value>,
    ) -> Result<(), EnvError> {
        let name = name_of(m);
        let mut wanted: Vec<Value> = Vec::new();
        let data_secret = init(m, "bootstrapDataSecretCreated");
        wanted.push(match bootstrap {
            None => condition("BootstrapConfigReady", true, "DataSecretProvided", ""),
            Some(b) => external_ready("BootstrapConfigReady", b, data_secret, "dataSecretCreated"),
        });
        let provisioned = init(m, "infrastructureProvisioned");
        wanted.push(match infra {
            None => condition("InfrastructureReady", false, "DoesNotExist", ""),
            Some(i) => external_ready("InfrastructureReady", i, provisioned, "provisioned"),
        });
        let node_ready = node.and_then(|n| {
            n.pointer("/status/conditions")
                .and_then(Value::as_array)
                .and_then(|cs| {
                    cs.iter()
                        .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
                })
                .and_then(|c| c.get("status").and_then(Value::as_str))
                .map(|s| s == "True")
        });
        match node_ready {
            Some(true) => {
                wanted.push(condition("NodeReady", true, "NodeReady", ""));
                wanted.push(condition("NodeHealthy", true, "NodeHealthy", ""));
            }
            Some(false) | None if node.is_some() => {
                wanted.push(condition("NodeReady", false, "NodeNotReady", ""));
                wanted.push(condition("NodeHealthy", false, "NodeNotHealthy", ""));
            }
            _ => {
                let msg = "Waiting for a Node with spec.providerID to exist";
                wanted.push(condition("NodeReady", false, "NodeDoesNotExist", msg));
                wanted.push(condition("NodeHealthy", false, "NodeDoesNotExist", msg));
            }
        }
        wanted.push(condition("Deleting", false, "NotDeleting", ""));
        let current: Vec<Value> = m
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        // The Ready summary: every condition above (Deleting with negative polarity) and each
        // readiness gate the owner asks for (KCP: its control plane components' conditions).
        let gates: Vec<String> = m
            .pointer("/spec/readinessGates")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|g| g.get("conditionType").and_then(Value::as_str))
            .map(str::to_string)
            .collect();
        let status_of = |t: &str| {
            wanted
                .iter()
                .chain(current.iter())
                .find(|c| c.get("type").and_then(Value::as_str) == Some(t))
                .and_then(|c| c.get("status").and_then(Value::as_str))
                .map(str::to_string)
        };
        let not_ready: Vec<String> = ["BootstrapConfigReady", "InfrastructureReady", "NodeHealthy"]
            .iter()
            .map(|s| s.to_string())
            .chain(gates)
            .filter(|t| status_of(t).as_deref() != Some("True"))
            .collect();
        let is_ready = not_ready.is_empty();
        wanted.push(condition(
            "Ready",
            is_ready,
            if is_ready { "Ready" } else { "NotReady" },
            &if is_ready {
                String::new()
            } else {
                format!("* {}: not True", not_ready.join(", "))
            },
        ));
        let min_ready = m
            .pointer("/spec/minReadySeconds")
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let ready_since = current
            .iter()
            .find(|c| {
                c.get("type").and_then(Value::as_str) == Some("Ready")
                    && c.get("status").and_then(Value::as_str) == Some("True")
            })
            .and_then(|c| c.get("lastTransitionTime").and_then(Value::as_str))
            .and_then(|t| t.parse::<jiff::Timestamp>().ok());
        let available = is_ready
            && (min_ready == 0
                || ready_since.is_some_and(|t| {
                    jiff::Timestamp::now().duration_since(t).as_secs() >= min_ready
                }));
        wanted.push(condition(
            "Available",
            available,
            if available {
                "Available"
            } else if is_ready {
                "WaitingForMinReadySeconds"
            } else {
                "NotReady"
            },
            "",
        ));
        let phase = if node.is_some() {
            "Running"
        } else if provisioned {
            "Provisioned"
        } else if data_secret {
            "Provisioning"
        } else {
            "Pending"
        };
        let mut merged = current.clone();
        let mut changed = false;
        for w in wanted {
            let t = w.get("type").cloned();
            match merged.iter_mut().find(|c| c.get("type") == t.as_ref()) {
                Some(c) if same(c, &w) => {}
                Some(c) => {
                    let keep_time = c.get("status") == w.get("status");
                    let time = c.get("lastTransitionTime").cloned();
                    *c = w;
                    if keep_time && let Some(t) = time {
                        c["lastTransitionTime"] = t;
                    }
                    changed = true;
                }
                None => {
                    merged.push(w);
                    changed = true;
                }
            }
        }
        let mut status = json!({});
        if changed {
            status["conditions"] = json!(merged);
        }
        if m.pointer("/status/phase").and_then(Value::as_str) != Some(phase) {
            status["phase"] = json!(phase);
        }
        if let Some(n) = node.and_then(|n| n.pointer("/metadata/name"))
            && m.pointer("/status/nodeRef/name") != Some(n)
        {
            status["nodeRef"] = json!({"name": n});
        }
        if status.as_object().is_some_and(|s| s.is_empty()) {
            return Ok(());
        }
        self.env
            .patch_status(
                &machine_resource(),
                name,
                json!({"metadata": {"resourceVersion": m.pointer("/metadata/resourceVersion")}, "status": status}),
                "update Machine status (core's Machine controller)",
            )
            .await
            .map(|_| ())
    }

    /// The Machine's `Deleting` condition while core waits (KCP removes its pre-terminate hook
    /// only once it reads `WaitingForPreTerminateHook` there).
    pub(super) async fn set_deleting(&self, m: &Value, reason: &str) -> Result<(), EnvError> {
        let name = name_of(m);
        let mut conds: Vec<Value> = m
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let want = condition("Deleting", true, reason, "");
        match conds
            .iter_mut()
            .find(|c| c.get("type").and_then(Value::as_str) == Some("Deleting"))
        {
            Some(c) if same(c, &want) => return Ok(()),
            Some(c) => *c = want,
            None => conds.push(want),
        }
        self.env
            .patch_status(
                &machine_resource(),
                name,
                json!({"metadata": {"resourceVersion": m.pointer("/metadata/resourceVersion")},
                       "status": {"conditions": conds, "phase": "Deleting"}}),
                "update Machine status (core's Machine controller)",
            )
            .await
            .map(|_| ())
    }
}

fn condition(t: &str, status: bool, reason: &str, message: &str) -> Value {
    json!({
        "type": t,
        "status": if status { "True" } else { "False" },
        "reason": reason,
        "message": message,
        "lastTransitionTime": now(),
    })
}

/// `target` of a referenced object (`setBootstrapReadyCondition`,
/// `setInfrastructureReadyCondition`): its `Ready` mirrored, else from core's copied `flag`;
/// `DoesNotExist` when it is gone.
fn external_ready(
    target: &str,
    (resource, _, obj): &(ApiResource, String, Option<Value>),
    flag: bool,
    field: &str,
) -> Value {
    match obj {
        Some(o) => mirror(
            o,
            target,
            flag,
            &format!("{} status.initialization.{field} is {flag}", resource.kind),
        ),
        None => condition(
            target,
            false,
            "DoesNotExist",
            &format!("{} does not exist", resource.kind),
        ),
    }
}

/// `NewMirrorConditionFromUnstructured`: the object's `Ready` condition under `target`, or the
/// fallback from the flag core copied.
fn mirror(obj: &Value, target: &str, flag: bool, message: &str) -> Value {
    let found = obj
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .and_then(|cs| {
            cs.iter()
                .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
        });
    match found {
        Some(c) => {
            let status = c.get("status").and_then(Value::as_str) == Some("True");
            let reason = c
                .get("reason")
                .and_then(Value::as_str)
                .filter(|r| !r.is_empty())
                .unwrap_or(if status { "Ready" } else { "NotReady" });
            condition(
                target,
                status,
                reason,
                c.get("message").and_then(Value::as_str).unwrap_or_default(),
            )
        }
        None => condition(
            target,
            flag,
            if flag { "Ready" } else { "NotReady" },
            if flag { "" } else { message },
        ),
    }
}

/// Same status, reason and message (the transition time is kept when the status holds).
fn same(a: &Value, b: &Value) -> bool {
    ["status", "reason", "message"].iter().all(|k| {
        a.get(*k).and_then(Value::as_str).unwrap_or_default()
            == b.get(*k).and_then(Value::as_str).unwrap_or_default()
    })
}
