//! Why a control plane's counters may stay short of its replicas although it counts right: its
//! Machines have their Nodes, but a readiness gate it asks for holds them not Ready. KCP v1.12+
//! gates its Machines on `NodeKubeadmLabelsAndTaintsSet`, which it sets from the workload
//! cluster's Node (kubeadm's control-plane label and `NoSchedule` taint,
//! `controlplane/kubeadm/internal/workload_cluster_conditions.go` `updateNodeCondition`): a
//! workload cluster whose Nodes lack them (CAPD v1.11's in-memory one) keeps every Machine not
//! Ready, and a control plane that counts them as it should never reaches its replicas.

use crate::json::get;
use capi_contract::contract::Contract;
use serde_json::Value;

/// The condition `t` of `obj` (`status.conditions`), as (status, message).
fn condition<'v>(obj: &'v Value, t: &str) -> Option<(&'v str, &'v str)> {
    get(obj, "status.conditions")?
        .as_array()?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(t))
        .map(|c| {
            (
                c.get("status").and_then(Value::as_str).unwrap_or("Unknown"),
                c.get("message").and_then(Value::as_str).unwrap_or(""),
            )
        })
}

fn is_true(obj: &Value, t: &str) -> bool {
    condition(obj, t).is_some_and(|(s, _)| s == "True")
}

/// Each Machine (read at v1beta2) that has its Node and is not Ready because of readiness gates
/// that are not True: `Machine <name>: <gate> <status> (<message>)`. Empty when no Machine is
/// held so (one without a Node, or not Ready for another reason, is not).
pub(super) fn held_by_gates(machines: &[Value]) -> Vec<String> {
    let mut out = Vec::new();
    for m in machines {
        let has_node = get(m, "status.nodeRef.name")
            .and_then(Value::as_str)
            .is_some_and(|n| !n.is_empty());
        if !has_node || is_true(m, "Ready") {
            continue;
        }
        let core_true = ["BootstrapConfigReady", "InfrastructureReady", "NodeHealthy"]
            .iter()
            .all(|t| is_true(m, t));
        let gates: Vec<String> = get(m, "spec.readinessGates")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|g| g.get("conditionType").and_then(Value::as_str))
            .filter(|t| !is_true(m, t))
            .map(|t| match condition(m, t) {
                Some((s, msg)) if !msg.is_empty() => format!("{t} {s} ({msg})"),
                Some((s, _)) => format!("{t} {s}"),
                None => format!("{t} not reported"),
            })
            .collect();
        if core_true && !gates.is_empty() {
            let name = get(m, "metadata.name")
                .and_then(Value::as_str)
                .unwrap_or("?");
            out.push(format!("Machine {name}: {}", gates.join(", ")));
        }
    }
    out
}

/// Whether the control plane's counters say what its Machines' conditions say: under v1beta2
/// `readyReplicas`, `availableReplicas` and `upToDateReplicas` are the numbers of its Machines
/// with Ready, Available and UpToDate True, and `replicas` the number of Machines; under
/// v1beta1 (`readyReplicas` counts ready Nodes there) only `replicas`.
pub(super) fn counters_agree(cp: &Value, machines: &[Value], contract: Contract) -> bool {
    let count = |p: &str| get(cp, p).and_then(Value::as_i64);
    let with = |t: &str| machines.iter().filter(|m| is_true(m, t)).count() as i64;
    let replicas = count("status.replicas") == Some(machines.len() as i64);
    match contract {
        Contract::V1Beta1 => replicas,
        Contract::V1Beta2 => {
            replicas
                && count("status.readyReplicas").unwrap_or(0) == with("Ready")
                && count("status.availableReplicas").unwrap_or(0) == with("Available")
                && count("status.upToDateReplicas").unwrap_or(0) == with("UpToDate")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn machine(ready: bool, gate: &str, node: bool) -> Value {
        let c = |t: &str, s: bool| json!({"type": t, "status": if s { "True" } else { "False" }, "message": if s { "" } else { "Node n does not have the taint" }});
        json!({
            "metadata": {"name": "m"},
            "spec": {"readinessGates": [{"conditionType": "APIServerPodHealthy"}, {"conditionType": gate}]},
            "status": {
                "nodeRef": if node { json!({"name": "n"}) } else { Value::Null },
                "conditions": [c("Ready", ready), c("BootstrapConfigReady", true), c("InfrastructureReady", true),
                               c("NodeHealthy", true), c("APIServerPodHealthy", true), c(gate, false), c("UpToDate", true)],
            },
        })
    }

    #[test]
    fn a_machine_with_its_node_held_by_a_gate_is_named_with_the_gate() {
        let held = held_by_gates(&[machine(false, "NodeKubeadmLabelsAndTaintsSet", true)]);
        assert_eq!(
            held,
            ["Machine m: NodeKubeadmLabelsAndTaintsSet False (Node n does not have the taint)"]
        );
    }

    #[test]
    fn without_a_node_or_when_ready_nothing_is_held() {
        assert!(held_by_gates(&[machine(false, "G", false)]).is_empty());
        assert!(held_by_gates(&[machine(true, "G", true)]).is_empty());
    }

    #[test]
    fn counters_must_say_what_the_machines_say() {
        let ms = [machine(false, "G", true)];
        let cp = |ready: i64| json!({"status": {"replicas": 1, "readyReplicas": ready, "availableReplicas": 0, "upToDateReplicas": 1}});
        assert!(counters_agree(&cp(0), &ms, Contract::V1Beta2));
        // Counting a Machine Ready that is not is the control plane's own error.
        assert!(!counters_agree(&cp(1), &ms, Contract::V1Beta2));
        assert!(counters_agree(&cp(1), &ms, Contract::V1Beta1));
    }
}
