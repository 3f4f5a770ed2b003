//! SC-controlplane's judges of the Machines a control plane makes: their labels, their spread
//! over the Cluster's failure domains, their `UpToDate` condition and the in-place propagation
//! of the machine template's metadata and timeouts.

use crate::core_sim::{CLUSTER_NAME_LABEL, CONTROL_PLANE_LABEL, machine_resource};
use crate::env::EnvError;
use crate::json;
use crate::script::ScriptRun;
use capi_contract::contract::Contract;
use capi_contract::rule_ids::{self as id, RuleId};
use serde_json::{Value, json};

const NO_MACHINES: &str = "the control plane created no Machines: the rule applies to control planes whose instances are Machines";

/// The Machines of `cp` for a judge of `rule`; `None` (the rule skipped with
/// [`NO_MACHINES`]) when it made none.
async fn machines_or_skip(
    r: &mut ScriptRun<'_>,
    cp: &str,
    rule: RuleId,
) -> Result<Option<Vec<Value>>, EnvError> {
    let machines = machines_of(r, cp).await?;
    if machines.is_empty() {
        r.verdicts.skip(rule, NO_MACHINES);
        return Ok(None);
    }
    Ok(Some(machines))
}

/// The Machines control plane `cp` owns (not being deleted), as JSON.
pub(super) async fn machines_of(r: &ScriptRun<'_>, cp: &str) -> Result<Vec<Value>, EnvError> {
    let kind = &r.subject.resource.kind;
    let list = r
        .env
        .api(&machine_resource())
        .list(&Default::default())
        .await
        .map_err(|source| EnvError::Api {
            action: "list",
            object: "Machines".into(),
            source,
        })?;
    Ok(list
        .items
        .iter()
        .filter(|m| m.metadata.deletion_timestamp.is_none())
        .filter(|m| {
            m.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| &o.kind == kind && o.name == cp)
        })
        .filter_map(|m| serde_json::to_value(m).ok())
        .collect())
}

pub(super) fn label_of<'v>(m: &'v Value, key: &str) -> Option<&'v str> {
    m.pointer("/metadata/labels")
        .and_then(|l| l.get(key))
        .and_then(Value::as_str)
}

pub(super) fn name_of(m: &Value) -> &str {
    m.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// control-plane/machine-label: every Machine the control plane made is labelled
/// `cluster.x-k8s.io/control-plane: ""` and with its cluster's name.
pub(super) async fn judge_machine_labels(
    r: &mut ScriptRun<'_>,
    cp: &str,
    cluster: &str,
) -> Result<(), EnvError> {
    let Some(machines) = machines_or_skip(r, cp, id::control_plane::MACHINE_LABEL).await? else {
        return Ok(());
    };
    let bad: Vec<&str> = machines
        .iter()
        .filter(|m| {
            label_of(m, CONTROL_PLANE_LABEL) != Some("")
                || label_of(m, CLUSTER_NAME_LABEL) != Some(cluster)
        })
        .map(name_of)
        .collect();
    r.verdicts.check(
        id::control_plane::MACHINE_LABEL,
        bad.is_empty(),
        format!(
            "Machines without {CONTROL_PLANE_LABEL}: \"\" or {CLUSTER_NAME_LABEL}: {cluster}: {}",
            bad.join(", ")
        ),
        r.evidence(cp, "Machines not labelled as control plane", None),
    );
    Ok(())
}

/// control-plane/placement: the control plane's Machines are spread over the Cluster's failure
/// domains for control plane Machines (`status.failureDomains` with `controlPlane: true`, as
/// core copied them from the InfraCluster): each Machine's `spec.failureDomain` is one of them
/// and no domain has two Machines more than another (KCP: `FailureDomainWithFewestMachines`).
pub(super) async fn judge_placement(
    r: &mut ScriptRun<'_>,
    cp: &str,
    cluster: &str,
) -> Result<(), EnvError> {
    let Some(machines) = machines_or_skip(r, cp, id::control_plane::PLACEMENT).await? else {
        return Ok(());
    };
    let c = r.env.cluster(cluster).await?;
    let domains = control_plane_domains(&c);
    if domains.is_empty() {
        r.verdicts.skip(
            id::control_plane::PLACEMENT,
            "the Cluster has no failure domain for control plane Machines (status.failureDomains with controlPlane: true): its infrastructure provider reports none, so there is nothing to spread over",
        );
        return Ok(());
    }
    let placed: Vec<(&str, Option<&str>)> = machines
        .iter()
        .map(|m| {
            (
                name_of(m),
                m.pointer("/spec/failureDomain").and_then(Value::as_str),
            )
        })
        .collect();
    let outside: Vec<String> = placed
        .iter()
        .filter(|(_, d)| !d.is_some_and(|d| domains.iter().any(|x| x == d)))
        .map(|(m, d)| format!("{m} ({})", d.unwrap_or("no failure domain")))
        .collect();
    let counts: Vec<usize> = domains
        .iter()
        .map(|d| {
            placed
                .iter()
                .filter(|(_, p)| *p == Some(d.as_str()))
                .count()
        })
        .collect();
    let spread = counts.iter().max().unwrap_or(&0) - counts.iter().min().unwrap_or(&0) <= 1;
    let by_domain: Vec<String> = domains
        .iter()
        .zip(&counts)
        .map(|(d, n)| format!("{d}: {n}"))
        .collect();
    r.verdicts.check(
        id::control_plane::PLACEMENT,
        outside.is_empty() && spread,
        if outside.is_empty() {
            format!(
                "{} Machines not spread over the control plane failure domains ({})",
                machines.len(),
                by_domain.join(", ")
            )
        } else {
            format!(
                "Machines outside the Cluster's control plane failure domains ({}): {}",
                domains.join(", "),
                outside.join(", ")
            )
        },
        r.evidence(cp, "Machines not spread over failure domains", None),
    );
    Ok(())
}

/// The names of `cluster`'s failure domains for control plane Machines (v1beta2 list).
pub(super) fn control_plane_domains(cluster: &Value) -> Vec<String> {
    let list = crate::core_sim::failure_domains_v1beta2(cluster.pointer("/status/failureDomains"));
    let mut names: Vec<String> = list
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d.get("controlPlane").and_then(Value::as_bool) == Some(true))
        .filter_map(|d| d.get("name").and_then(Value::as_str).map(str::to_string))
        .collect();
    names.sort();
    names.dedup();
    names
}

/// control-plane/min-ready-uptodate (contract v1beta2): the control plane keeps each of its
/// Machines' `UpToDate` condition (core's Machine controller leaves it to the owner: "machine's
/// owner controller sets the UpToDate condition", `machine_controller_status.go`). Waited for
/// on every Machine; `spec.minReadySeconds` is not judged, the contract lets a control plane
/// keep it 0 (unset), as KCP does.
pub(super) async fn judge_up_to_date(
    r: &mut ScriptRun<'_>,
    cp: &str,
    cluster: &str,
) -> Result<(), EnvError> {
    if machines_or_skip(r, cp, id::control_plane::MIN_READY_UPTODATE)
        .await?
        .is_none()
    {
        return Ok(());
    }
    let has = |m: &Value| json::condition(m, "UpToDate").is_some();
    let all = |ms: &[Value]| !ms.is_empty() && ms.iter().all(has);
    let after = wait_for_machines(r, cp, cluster, all).await?;
    let missing: Vec<&str> = after.iter().filter(|m| !has(m)).map(name_of).collect();
    r.verdicts.check(
        id::control_plane::MIN_READY_UPTODATE,
        missing.is_empty(),
        format!(
            "Machine(s) without the UpToDate condition (status.conditions[UpToDate]): {}",
            missing.join(", ")
        ),
        r.evidence(cp, "Machines' UpToDate condition not kept", None),
    );
    Ok(())
}

/// Watches the Machines of `cluster` until `done` holds on control plane `cp`'s Machines or the
/// step deadline passes; returns the Machines as last seen.
pub(super) async fn wait_for_machines(
    r: &ScriptRun<'_>,
    cp: &str,
    cluster: &str,
    done: impl Fn(&[Value]) -> bool,
) -> Result<Vec<Value>, EnvError> {
    use futures::StreamExt;
    use kube::runtime::WatchStreamExt;
    let api = r.env.api(&machine_resource());
    let config = kube::runtime::watcher::Config::default()
        .labels(&format!("{CLUSTER_NAME_LABEL}={cluster}"));
    let mut stream = kube::runtime::watcher::watcher(api, config)
        .default_backoff()
        .boxed();
    let seen = tokio::time::timeout(r.env.step_deadline(), async {
        while stream.next().await.is_some() {
            // A list the server failed is looked at again on the next event.
            if let Ok(now) = machines_of(r, cp).await
                && done(&now)
            {
                return now;
            }
        }
        Vec::new()
    })
    .await
    .ok();
    match seen {
        Some(a) if !a.is_empty() => Ok(a),
        _ => machines_of(r, cp).await,
    }
}

/// The label the tool adds to `spec.machineTemplate.metadata` (control-plane/in-place-propagation).
pub(super) const IN_PLACE_LABEL: &str = "capi-conformance.io/in-place";

/// The drain timeout it sets on the machine template.
pub(super) const IN_PLACE_DRAIN_SECONDS: i64 = 91;

/// control-plane/in-place-propagation: a label added to `spec.machineTemplate.metadata` and a
/// drain timeout set on the template reach every existing Machine, which keeps its UID (KCP:
/// `syncMachines`, no rollout).
pub(super) async fn judge_in_place_propagation(
    r: &mut ScriptRun<'_>,
    cp: &str,
    cluster: &str,
) -> Result<(), EnvError> {
    let Some(before) = machines_or_skip(r, cp, id::control_plane::IN_PLACE_PROPAGATION).await?
    else {
        return Ok(());
    };
    if !r.subject.schema_has("spec.machineTemplate.metadata") && r.subject.schema.is_some() {
        r.verdicts.skip(
            id::control_plane::IN_PLACE_PROPAGATION,
            "the schema has no spec.machineTemplate.metadata",
        );
        return Ok(());
    }
    r.step("machine template metadata changes in place");
    let uids: Vec<(String, Value)> = before
        .iter()
        .map(|m| {
            (
                name_of(m).to_string(),
                m.pointer("/metadata/uid").cloned().unwrap_or(Value::Null),
            )
        })
        .collect();
    let value = r.prefix();
    // And a drain timeout, where the contract puts it (a schema that does not declare it is
    // judged on the label alone).
    let mut template = json!({"metadata": {"labels": {IN_PLACE_LABEL: value}}});
    let (timeout_path, timeout) = match r.contract() {
        Contract::V1Beta1 => (
            "spec.machineTemplate.nodeDrainTimeout",
            json!(format!("{IN_PLACE_DRAIN_SECONDS}s")),
        ),
        Contract::V1Beta2 => (
            "spec.machineTemplate.spec.deletion.nodeDrainTimeoutSeconds",
            json!(IN_PLACE_DRAIN_SECONDS),
        ),
    };
    let with_timeout = r.subject.schema.is_none() || r.subject.schema_has(timeout_path);
    if with_timeout {
        match r.contract() {
            Contract::V1Beta1 => template["nodeDrainTimeout"] = timeout,
            Contract::V1Beta2 => {
                template["spec"] = json!({"deletion": {"nodeDrainTimeoutSeconds": timeout}})
            }
        }
    }
    r.env
        .merge_patch(
            &r.subject.resource,
            cp,
            json!({"spec": {"machineTemplate": template}}),
            "change the machine template's metadata and drain timeout",
        )
        .await?;
    // Watched: every Machine of the cluster; done when each one recorded carries both (a
    // Machine's drain timeout: v1beta2 `spec.deletion.nodeDrainTimeoutSeconds`).
    let updated = |m: &Value| {
        label_of(m, IN_PLACE_LABEL) == Some(value.as_str())
            && (!with_timeout
                || m.pointer("/spec/deletion/nodeDrainTimeoutSeconds")
                    .and_then(Value::as_i64)
                    == Some(IN_PLACE_DRAIN_SECONDS))
    };
    let propagated = |machines: &[Value]| {
        uids.iter()
            .all(|(name, _)| machines.iter().any(|m| name_of(m) == name && updated(m)))
    };
    let after = wait_for_machines(r, cp, cluster, |now| propagated(now)).await?;
    let missing: Vec<&str> = uids
        .iter()
        .filter(|(name, _)| !after.iter().any(|m| name_of(m) == name && updated(m)))
        .map(|(n, _)| n.as_str())
        .collect();
    let replaced: Vec<&str> = uids
        .iter()
        .filter(|(name, uid)| {
            after
                .iter()
                .any(|m| name_of(m) == name && m.pointer("/metadata/uid") != Some(uid))
        })
        .map(|(n, _)| n.as_str())
        .collect();
    r.verdicts.check(
        id::control_plane::IN_PLACE_PROPAGATION,
        missing.is_empty() && replaced.is_empty(),
        if replaced.is_empty() {
            format!(
                "spec.machineTemplate.metadata label {IN_PLACE_LABEL}{} did not reach Machine(s) {} in place",
                if with_timeout { format!(" or the drain timeout ({timeout_path}: {IN_PLACE_DRAIN_SECONDS}s)") } else { String::new() },
                missing.join(", ")
            )
        } else {
            format!("Machine(s) {} were replaced, not updated in place", replaced.join(", "))
        },
        r.evidence(cp, "machine template metadata not propagated", Some("spec.machineTemplate.metadata")),
    );
    Ok(())
}
