//! Core's `updateStatus` for a control plane's Machine (its conditions, phase and Node), and
//! the `Deleting` condition while core waits in `reconcileDelete`.

use super::{NoNode, Referenced, Sim, init, name_of, now};
use crate::core_sim::machine_resource;
use crate::env::EnvError;
use crate::json;
use kube::discovery::ApiResource;
use serde_json::{Value, json};

impl Sim {
    /// Core's `updateStatus` for a Machine not being deleted: its conditions and phase, written
    /// only when they change (a merge patch of the whole list under the read resourceVersion,
    /// as CAPI's patch helper writes conditions: a provider's own conditions are kept).
    pub(super) async fn update_status(
        &self,
        m: &Value,
        cluster: &Value,
        bootstrap: &Referenced,
        infra: &Referenced,
        node: &Result<Value, NoNode>,
    ) -> Result<(), EnvError> {
        let name = name_of(m);
        let current: Vec<Value> = m
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let mut wanted: Vec<Value> = vec![condition("Paused", false, "NotPaused", "")];
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
        wanted.extend(node_conditions(m, cluster, infra, node, &current));
        wanted.push(condition("Deleting", false, "NotDeleting", ""));
        // The Ready summary (`setReadyCondition`): Deleting (negative polarity), the bootstrap,
        // infrastructure and Node conditions, HealthCheckSucceeded if present, and each
        // readiness gate the owner asks for (KCP: its control plane components' conditions),
        // a missing one counting as not yet reported. Any issue makes it False, else anything
        // unknown Unknown, else True.
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
        let summarized: Vec<String> =
            ["BootstrapConfigReady", "InfrastructureReady", "NodeHealthy"]
                .iter()
                .map(|s| s.to_string())
                .chain(
                    status_of("HealthCheckSucceeded")
                        .is_some()
                        .then(|| "HealthCheckSucceeded".to_string()),
                )
                .chain(gates)
                .collect();
        let with = |want: &str| -> Vec<String> {
            summarized
                .iter()
                .filter(|t| status_of(t).as_deref().unwrap_or("Unknown") == want)
                .cloned()
                .collect()
        };
        let (issues, unknown) = (with("False"), with("Unknown"));
        let (ready_status, ready_reason, ready_message) = if !issues.is_empty() {
            (
                "False",
                "NotReady",
                format!("* {}: not True", issues.join(", ")),
            )
        } else if !unknown.is_empty() {
            (
                "Unknown",
                "ReadyUnknown",
                format!("* {}: unknown", unknown.join(", ")),
            )
        } else {
            ("True", "Ready", String::new())
        };
        let is_ready = ready_status == "True";
        wanted.push(condition_of(
            "Ready",
            ready_status,
            ready_reason,
            &ready_message,
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
        let v1beta1_current: Vec<Value> = m
            .pointer("/status/deprecated/v1beta1/conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let (v1beta1_conditions, v1beta1_changed) = super::v1beta1::conditions(
            &super::v1beta1::Inputs {
                machine: m,
                bootstrap,
                infra,
                node,
                data_secret_created: data_secret,
                provisioned,
            },
            &v1beta1_current,
        );
        let node = node.as_ref().ok();
        let phase = if node.is_some() {
            "Running"
        } else if provisioned {
            "Provisioned"
        } else if data_secret {
            "Provisioning"
        } else {
            "Pending"
        };
        let mut merged = current;
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
        if v1beta1_changed {
            status["deprecated"] = json!({"v1beta1": {"conditions": v1beta1_conditions}});
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

    /// `Paused` True on a paused Machine (core does nothing else to it).
    pub(super) async fn set_paused(&self, m: &Value) -> Result<(), EnvError> {
        self.set_condition(m, condition("Paused", true, "Paused", ""), None)
            .await
    }

    /// The Machine's `Deleting` condition while core waits (KCP removes its pre-terminate hook
    /// only once it reads `WaitingForPreTerminateHook` there).
    pub(super) async fn set_deleting(&self, m: &Value, reason: &str) -> Result<(), EnvError> {
        let want = condition("Deleting", true, reason, "");
        self.set_condition(m, want, Some("Deleting")).await
    }

    /// Writes one condition of Machine `m` (and its `phase`), keeping the others, unless it
    /// already says the same.
    async fn set_condition(
        &self,
        m: &Value,
        want: Value,
        phase: Option<&str>,
    ) -> Result<(), EnvError> {
        let mut conds: Vec<Value> = m
            .pointer("/status/conditions")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        match conds.iter_mut().find(|c| c.get("type") == want.get("type")) {
            Some(c) if same(c, &want) => return Ok(()),
            Some(c) => *c = want,
            None => conds.push(want),
        }
        let mut status = json!({"conditions": conds});
        if let Some(p) = phase {
            status["phase"] = json!(p);
        }
        self.env
            .patch_status(
                &machine_resource(),
                name_of(m),
                json!({"metadata": {"resourceVersion": m.pointer("/metadata/resourceVersion")},
                       "status": status}),
                "update Machine status (core's Machine controller)",
            )
            .await
            .map(|_| ())
    }
}

fn condition(t: &str, status: bool, reason: &str, message: &str) -> Value {
    condition_of(t, if status { "True" } else { "False" }, reason, message)
}

fn condition_of(t: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({
        "type": t,
        "status": status,
        "reason": reason,
        "message": message,
        "lastTransitionTime": now(),
    })
}

/// `setNodeHealthyAndReadyConditions`: `NodeReady` and `NodeHealthy` from the Node, else
/// Unknown with why core cannot inspect it (the Cluster's infrastructure or control plane not
/// there yet, no connection to the workload cluster: the last known state kept once set; the
/// Node still to appear), or False when a Node the Machine had is gone.
fn node_conditions(
    m: &Value,
    cluster: &Value,
    infra: &Referenced,
    node: &Result<Value, NoNode>,
    current: &[Value],
) -> Vec<Value> {
    let both = |status: &str, reason: &str, message: &str| {
        vec![
            condition_of("NodeReady", status, reason, message),
            condition_of("NodeHealthy", status, reason, message),
        ]
    };
    let flag = |p: &str| cluster.pointer(p).and_then(Value::as_bool) == Some(true);
    let cp_initialized = json::condition(cluster, "ControlPlaneInitialized")
        .and_then(|c| c.get("status"))
        .and_then(Value::as_str)
        == Some("True");
    let has = |t: &str| {
        current
            .iter()
            .any(|c| c.get("type").and_then(Value::as_str) == Some(t))
    };
    const INSPECTION_FAILED: &str = "InspectionFailed";
    if !flag("/status/initialization/infrastructureProvisioned") {
        return both(
            "Unknown",
            INSPECTION_FAILED,
            "Waiting for Cluster status.initialization.infrastructureProvisioned to be true",
        );
    }
    if !cp_initialized {
        return both(
            "Unknown",
            INSPECTION_FAILED,
            "Waiting for Cluster control plane to be initialized",
        );
    }
    let missing = match node {
        Ok(n) => {
            let ready = n
                .pointer("/status/conditions")
                .and_then(Value::as_array)
                .and_then(|cs| {
                    cs.iter()
                        .find(|c| c.get("type").and_then(Value::as_str) == Some("Ready"))
                })
                .and_then(|c| c.get("status").and_then(Value::as_str));
            return match ready {
                Some("True") => vec![
                    condition("NodeReady", true, "NodeReady", ""),
                    condition("NodeHealthy", true, "NodeHealthy", ""),
                ],
                Some("False") => vec![
                    condition("NodeReady", false, "NodeNotReady", ""),
                    condition("NodeHealthy", false, "NodeNotHealthy", ""),
                ],
                _ => vec![
                    condition_of("NodeReady", "Unknown", "NodeReadyUnknown", ""),
                    condition_of("NodeHealthy", "Unknown", "NodeReadyUnknown", ""),
                ],
            };
        }
        Err(missing) => missing,
    };
    if !missing.connected {
        if has("NodeReady") && has("NodeHealthy") {
            return Vec::new();
        }
        return both(
            "Unknown",
            "ConnectionDown",
            "Remote connection not established yet",
        );
    }
    if let Some(n) = m.pointer("/status/nodeRef/name").and_then(Value::as_str) {
        return both(
            "False",
            "NodeDeleted",
            &format!("Node {n} has been deleted while the Machine still exists"),
        );
    }
    match m.pointer("/spec/providerID").and_then(Value::as_str) {
        Some(id) => both(
            "Unknown",
            INSPECTION_FAILED,
            &format!("Waiting for a Node with spec.providerID {id} to exist"),
        ),
        None => {
            let kind = infra
                .as_ref()
                .map_or("InfraMachine", |(r, _, _)| r.kind.as_str());
            both(
                "Unknown",
                INSPECTION_FAILED,
                &format!("Waiting for {kind} to report spec.providerID"),
            )
        }
    }
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
    match json::condition(obj, "Ready") {
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

#[cfg(test)]
mod tests {
    use super::*;

    fn statuses(conds: &[Value]) -> Vec<(String, String)> {
        conds
            .iter()
            .map(|c| {
                let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default().into();
                (s("type"), s("status"))
            })
            .collect()
    }

    fn ready_cluster() -> Value {
        json!({"status": {"initialization": {"infrastructureProvisioned": true},
            "conditions": [{"type": "ControlPlaneInitialized", "status": "True"}]}})
    }

    fn missing(connected: bool) -> Result<Value, NoNode> {
        Err(NoNode {
            connected,
            why: String::new(),
        })
    }

    /// Core v1.11 `setNodeHealthyAndReadyConditions`: without a Node both are Unknown (why:
    /// the Cluster, the connection, the Node still to come); False only for a Node the
    /// Machine had; from the Node's Ready otherwise.
    #[test]
    fn node_conditions_follow_core() {
        let m = json!({"spec": {"providerID": "mock://a"}});
        let unknown = vec![
            ("NodeReady".to_string(), "Unknown".to_string()),
            ("NodeHealthy".to_string(), "Unknown".to_string()),
        ];
        let reason = |c: &[Value]| c[0]["reason"].as_str().unwrap_or_default().to_string();
        let not_provisioned = node_conditions(&m, &json!({}), &None, &missing(true), &[]);
        assert_eq!(statuses(&not_provisioned), unknown);
        assert_eq!(reason(&not_provisioned), "InspectionFailed");
        let down = node_conditions(&m, &ready_cluster(), &None, &missing(false), &[]);
        assert_eq!(statuses(&down), unknown);
        assert_eq!(reason(&down), "ConnectionDown");
        // Down again later: the last known state stays.
        let known = [json!({"type": "NodeReady"}), json!({"type": "NodeHealthy"})];
        assert!(node_conditions(&m, &ready_cluster(), &None, &missing(false), &known).is_empty());
        let waiting = node_conditions(&m, &ready_cluster(), &None, &missing(true), &[]);
        assert_eq!(statuses(&waiting), unknown);
        assert!(
            waiting[0]["message"]
                .as_str()
                .unwrap_or_default()
                .contains("mock://a")
        );
        let had = json!({"spec": {"providerID": "mock://a"}, "status": {"nodeRef": {"name": "n"}}});
        let gone = node_conditions(&had, &ready_cluster(), &None, &missing(true), &[]);
        assert_eq!(statuses(&gone)[0].1, "False");
        let node = Ok(json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}}));
        let found = node_conditions(&m, &ready_cluster(), &None, &node, &[]);
        assert_eq!(statuses(&found)[1], ("NodeHealthy".into(), "True".into()));
    }
}
