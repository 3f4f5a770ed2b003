//! The v1beta1 conditions core v1.11 still writes on a Machine, under
//! `status.deprecated.v1beta1.conditions` (served as v1beta1 `status.conditions`): what a
//! provider built against CAPI's v1beta1 API reads. RKE2's control plane, for one, counts a
//! Machine ready by the v1beta1 `Ready` (`collections.IsReady()`), and reports
//! `status.version` only from ready Machines.
//!
//! From core v1.11.11: `reconcileBootstrap` / `reconcileInfrastructure`
//! (`machine_controller_phases.go`: the referenced object's `Ready` mirrored, else a fallback
//! from the copied flag), `reconcileNode` (`machine_controller_noderef.go`: `NodeHealthy`) and
//! `patchMachine` (`machine_controller.go`: the `Ready` summary of InfrastructureReady,
//! BootstrapReady, MachineHealthCheckSucceeded, OwnerRemediated and DrainingSucceeded, with a
//! step counter while the Machine has no providerID), merged by
//! `util/conditions/deprecated/v1beta1`.

use super::workload::NoNode;
use super::{Referenced, now};
use serde_json::{Value, json};

const INFO: &str = "Info";
const WARNING: &str = "Warning";
const ERROR: &str = "Error";

/// The conditions of the Ready summary, in core's priority order.
const SUMMARIZED: [&str; 5] = [
    "InfrastructureReady",
    "BootstrapReady",
    "MachineHealthCheckSucceeded",
    "OwnerRemediated",
    "DrainingSucceeded",
];
/// The step counter shows only while the conditions in scope are among these.
const STEP_COUNTER_IF_ONLY: [&str; 2] = ["BootstrapReady", "InfrastructureReady"];

/// What the Machine's inputs say, as core's reconcile reads them.
pub(super) struct Inputs<'a> {
    pub machine: &'a Value,
    pub bootstrap: &'a Referenced,
    pub infra: &'a Referenced,
    pub node: &'a Result<Value, NoNode>,
    pub data_secret_created: bool,
    pub provisioned: bool,
}

/// The Machine's v1beta1 conditions after core's reconcile: `current` with BootstrapReady,
/// InfrastructureReady, NodeHealthy and Ready set, and whether any of them changed. A condition
/// keeps its `lastTransitionTime` while its state (status, severity, reason, message) holds
/// (`HasSameState`).
pub(super) fn conditions(input: &Inputs<'_>, current: &[Value]) -> (Vec<Value>, bool) {
    let mut merged: Vec<Value> = current.to_vec();
    let mut changed = false;
    let mut set = |merged: &mut Vec<Value>, want: Value| {
        let t = want.get("type").cloned();
        match merged.iter_mut().find(|c| c.get("type") == t.as_ref()) {
            Some(c) if same_state(c, &want) => {}
            Some(c) => {
                *c = want;
                changed = true;
            }
            None => {
                merged.push(want);
                changed = true;
            }
        }
    };
    if let Some(c) = bootstrap_ready(input) {
        set(&mut merged, c);
    }
    if let Some(c) = infrastructure_ready(input) {
        set(&mut merged, c);
    }
    if let Some(c) = node_healthy(input) {
        set(&mut merged, c);
    }
    if let Some(ready) = summary(&merged, input.machine) {
        set(&mut merged, ready);
    }
    (merged, changed)
}

/// `reconcileBootstrap`: none for a Machine without a config (its data Secret given: core
/// returns first); True once the Machine names its data Secret; else the config's `Ready`
/// mirrored with the `WaitingForDataSecret` fallback; unchanged while the config is not there
/// (core requeues).
fn bootstrap_ready(input: &Inputs<'_>) -> Option<Value> {
    let data_secret_named = input
        .machine
        .pointer("/spec/bootstrap/dataSecretName")
        .and_then(Value::as_str)
        .is_some();
    match input.bootstrap {
        None => None,
        Some((_, _, Some(_))) if data_secret_named => {
            Some(condition("BootstrapReady", "True", "", "", ""))
        }
        Some((_, _, Some(obj))) => Some(mirror(
            obj,
            "BootstrapReady",
            input.data_secret_created,
            "WaitingForDataSecret",
        )),
        Some((_, _, None)) => None,
    }
}

/// `reconcileInfrastructure`: the InfraMachine's `Ready` mirrored with the
/// `WaitingForInfrastructure` fallback; unchanged while it is not there.
fn infrastructure_ready(input: &Inputs<'_>) -> Option<Value> {
    match input.infra {
        Some((_, _, Some(obj))) => Some(mirror(
            obj,
            "InfrastructureReady",
            input.provisioned,
            "WaitingForInfrastructure",
        )),
        _ => None,
    }
}

/// `reconcileNode`: `NodeHealthy` from the Node of `spec.providerID`; unchanged while the
/// workload cluster cannot be reached (core returns the ClusterCache error).
fn node_healthy(input: &Inputs<'_>) -> Option<Value> {
    let m = input.machine;
    let has_provider_id = m
        .pointer("/spec/providerID")
        .and_then(Value::as_str)
        .is_some_and(|s| !s.is_empty());
    if !has_provider_id {
        return Some(condition(
            "NodeHealthy",
            "False",
            INFO,
            "WaitingForNodeRef",
            "",
        ));
    }
    match input.node {
        Ok(node) => Some(match node_ready(node) {
            Some("True") => condition("NodeHealthy", "True", "", "", ""),
            Some("False") => condition(
                "NodeHealthy",
                "False",
                WARNING,
                "NodeConditionsFailed",
                "Node condition Ready is False",
            ),
            _ => condition(
                "NodeHealthy",
                "Unknown",
                "",
                "NodeConditionsFailed",
                "Node condition Ready is Unknown",
            ),
        }),
        // No connection (ClusterCache): core returns before it marks anything, so what an
        // earlier reconcile wrote (`WaitingForNodeRef` while it had no providerID) stays, and a
        // Machine core first saw with its providerID has none yet.
        Err(missing) if !missing.connected => None,
        Err(_) if m.pointer("/status/nodeRef/name").is_some() => {
            Some(condition("NodeHealthy", "False", ERROR, "NodeNotFound", ""))
        }
        Err(_) => Some(condition(
            "NodeHealthy",
            "False",
            WARNING,
            "NodeProvisioning",
            "Waiting for a node with matching ProviderID to exist",
        )),
    }
}

fn node_ready(node: &Value) -> Option<&str> {
    crate::json::condition(node, "Ready")?
        .get("status")
        .and_then(Value::as_str)
}

/// `SetMirror` with `WithFallbackValue`: the object's `status.conditions` `Ready` (whatever
/// contract: core reads that list as v1beta1 conditions) under `target`, else True when `flag`,
/// else False `reason` (Info).
fn mirror(obj: &Value, target: &str, flag: bool, reason: &str) -> Value {
    match crate::json::condition(obj, "Ready") {
        Some(c) => {
            let s = |k: &str| c.get(k).and_then(Value::as_str).unwrap_or_default();
            condition(
                target,
                s("status"),
                s("severity"),
                s("reason"),
                s("message"),
            )
        }
        None if flag => condition(target, "True", "", "", ""),
        None => condition(target, "False", INFO, reason, ""),
    }
}

/// `patchMachine`'s `SetSummary`: the worst group of the summarized conditions present (False
/// Error, False Warning, False Info, True, Unknown), its first condition's reason by priority,
/// and its message, or "x of y completed" while the Machine has no providerID and only the
/// bootstrap and infrastructure conditions are in scope.
fn summary(conditions: &[Value], m: &Value) -> Option<Value> {
    let in_scope: Vec<&Value> = conditions
        .iter()
        .filter(|c| {
            c.get("type")
                .and_then(Value::as_str)
                .is_some_and(|t| SUMMARIZED.contains(&t))
        })
        .collect();
    let s = |c: &Value, k: &str| {
        c.get(k)
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string()
    };
    let priority = |c: &Value| -> u8 {
        match (s(c, "status").as_str(), s(c, "severity").as_str()) {
            ("False", ERROR) => 0,
            ("False", WARNING) => 1,
            ("False", INFO) => 2,
            ("True", _) => 3,
            ("Unknown", _) => 4,
            _ => 99,
        }
    };
    // No condition in scope: `merge` gives none and `Set` does nothing (the Machine keeps what
    // it has).
    let top = in_scope.iter().map(|c| priority(c)).min()?;
    if top == 3 {
        return Some(condition("Ready", "True", "", "", ""));
    }
    let top_severity = in_scope
        .iter()
        .find(|c| priority(c) == top)
        .map(|c| s(c, "severity"))
        .unwrap_or_default();
    let group: Vec<&&Value> = in_scope
        .iter()
        .filter(|c| priority(c) == top && s(c, "severity") == top_severity)
        .collect();
    let first = SUMMARIZED
        .iter()
        .find_map(|t| group.iter().find(|c| s(c, "type") == *t))
        .or(group.first());
    let reason = first.map(|c| s(c, "reason")).unwrap_or_default();
    let deleting = m.pointer("/metadata/deletionTimestamp").is_some();
    let no_provider_id = m
        .pointer("/spec/providerID")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty);
    let only_provisioning = in_scope.iter().all(|c| {
        c.get("type")
            .and_then(Value::as_str)
            .is_some_and(|t| STEP_COUNTER_IF_ONLY.contains(&t))
    });
    let message = if !deleting && no_provider_id && only_provisioning {
        let done = in_scope
            .iter()
            .filter(|c| s(c, "status") == "True" && s(c, "severity").is_empty())
            .count();
        format!("{done} of {} completed", STEP_COUNTER_IF_ONLY.len())
    } else {
        first.map(|c| s(c, "message")).unwrap_or_default()
    };
    let status = if top == 4 { "Unknown" } else { "False" };
    let severity = if top == 4 { "" } else { top_severity.as_str() };
    Some(condition("Ready", status, severity, &reason, &message))
}

/// A v1beta1 condition: `severity`, `reason` and `message` omitted when empty.
fn condition(t: &str, status: &str, severity: &str, reason: &str, message: &str) -> Value {
    let mut c = json!({"type": t, "status": status, "lastTransitionTime": now()});
    for (k, v) in [
        ("severity", severity),
        ("reason", reason),
        ("message", message),
    ] {
        if !v.is_empty() {
            c[k] = json!(v);
        }
    }
    c
}

/// `HasSameState`: type, status, severity, reason and message.
fn same_state(a: &Value, b: &Value) -> bool {
    ["type", "status", "severity", "reason", "message"]
        .iter()
        .all(|k| {
            a.get(*k).and_then(Value::as_str).unwrap_or_default()
                == b.get(*k).and_then(Value::as_str).unwrap_or_default()
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn get<'a>(conds: &'a [Value], t: &str) -> &'a Value {
        conds
            .iter()
            .find(|c| c.get("type").and_then(Value::as_str) == Some(t))
            .unwrap_or_else(|| panic!("no {t} in {conds:?}"))
    }

    fn field<'a>(c: &'a Value, k: &str) -> &'a str {
        c.get(k).and_then(Value::as_str).unwrap_or_default()
    }

    fn res() -> kube::discovery::ApiResource {
        kube::discovery::ApiResource {
            group: "x".into(),
            version: "v1".into(),
            api_version: "x/v1".into(),
            kind: "X".into(),
            plural: "xs".into(),
        }
    }

    fn node(ready: &str) -> Result<Value, NoNode> {
        Ok(json!({"metadata": {"name": "n1"},
            "status": {"conditions": [{"type": "Ready", "status": ready}]}}))
    }

    /// A provisioned Machine with its data Secret and a ready Node: all True, Ready True (what
    /// RKE2's `collections.IsReady()` counts).
    #[test]
    fn a_running_machine_is_ready() {
        let m = json!({"spec": {"providerID": "p://1"}});
        let (b, i) = (
            Some((res(), "b".into(), Some(json!({"status": {}})))),
            Some((res(), "i".into(), Some(json!({"status": {}})))),
        );
        let n = node("True");
        let input = Inputs {
            machine: &m,
            bootstrap: &b,
            infra: &i,
            node: &n,
            data_secret_created: true,
            provisioned: true,
        };
        let (conds, changed) = conditions(&input, &[]);
        assert!(changed);
        for t in [
            "BootstrapReady",
            "InfrastructureReady",
            "NodeHealthy",
            "Ready",
        ] {
            assert_eq!(field(get(&conds, t), "status"), "True", "{t}: {conds:?}");
        }
        // The same inputs again: nothing changes, the transition times stay.
        let (again, changed) = conditions(&input, &conds);
        assert!(!changed);
        assert_eq!(again, conds);
    }

    /// A Machine still provisioning: the fallbacks (Info), Ready False with the step counter
    /// and the infrastructure's reason first (core's priority).
    #[test]
    fn a_provisioning_machine_counts_its_steps() {
        let m = json!({"spec": {}});
        let (b, i) = (
            Some((res(), "b".into(), Some(json!({"status": {}})))),
            Some((res(), "i".into(), Some(json!({"status": {}})))),
        );
        let n = Err(NoNode {
            connected: false,
            why: "no providerID".into(),
        });
        let input = Inputs {
            machine: &m,
            bootstrap: &b,
            infra: &i,
            node: &n,
            data_secret_created: true,
            provisioned: false,
        };
        let (conds, _) = conditions(&input, &[]);
        let ready = get(&conds, "Ready");
        assert_eq!(field(ready, "status"), "False");
        assert_eq!(field(ready, "severity"), INFO);
        assert_eq!(field(ready, "reason"), "WaitingForInfrastructure");
        assert_eq!(field(ready, "message"), "1 of 2 completed");
        assert_eq!(
            field(get(&conds, "NodeHealthy"), "reason"),
            "WaitingForNodeRef"
        );
    }

    /// No config and no InfraMachine yet: nothing in the summary's scope, so no Ready (core's
    /// `SetSummary` of nothing sets nothing).
    #[test]
    fn nothing_in_scope_sets_no_ready() {
        let m = json!({"spec": {}});
        let (b, i) = (None, Some((res(), "i".into(), None)));
        let n = Err(NoNode {
            connected: true,
            why: "no providerID".into(),
        });
        let input = Inputs {
            machine: &m,
            bootstrap: &b,
            infra: &i,
            node: &n,
            data_secret_created: true,
            provisioned: false,
        };
        let (conds, _) = conditions(&input, &[]);
        assert!(
            conds
                .iter()
                .all(|c| c.get("type").and_then(Value::as_str) != Some("Ready")),
            "{conds:?}"
        );
    }

    /// The referenced object's own Ready wins over the flag (mirrored with its severity); a
    /// Node that went (nodeRef set) is NodeNotFound (Error); a NotReady Node a warning.
    #[test]
    fn mirrored_and_node_states() {
        let m = json!({"spec": {"providerID": "p://1"}, "status": {"nodeRef": {"name": "n1"}}});
        let infra_obj = json!({"status": {"conditions": [{"type": "Ready", "status": "False",
            "severity": "Warning", "reason": "VMFailed", "message": "boom"}]}});
        let (b, i) = (None, Some((res(), "i".into(), Some(infra_obj))));
        let gone = Err(NoNode {
            connected: true,
            why: "no such Node".into(),
        });
        let input = Inputs {
            machine: &m,
            bootstrap: &b,
            infra: &i,
            node: &gone,
            data_secret_created: true,
            provisioned: true,
        };
        let (conds, _) = conditions(&input, &[]);
        // No bootstrap config (the data Secret given): core writes no BootstrapReady.
        assert!(
            conds
                .iter()
                .all(|c| c.get("type").and_then(Value::as_str) != Some("BootstrapReady"))
        );
        let infra = get(&conds, "InfrastructureReady");
        assert_eq!(
            (field(infra, "status"), field(infra, "reason")),
            ("False", "VMFailed")
        );
        assert_eq!(field(get(&conds, "NodeHealthy"), "severity"), ERROR);
        let ready = get(&conds, "Ready");
        assert_eq!(
            (
                field(ready, "status"),
                field(ready, "severity"),
                field(ready, "message")
            ),
            ("False", WARNING, "boom")
        );
        let not_ready = node("False");
        let input = Inputs {
            node: &not_ready,
            ..input
        };
        let (conds, _) = conditions(&input, &[]);
        assert_eq!(
            field(get(&conds, "NodeHealthy"), "reason"),
            "NodeConditionsFailed"
        );
    }
}
