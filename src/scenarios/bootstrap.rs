//! SC-bootstrap (docs/contract.md §4.1): owner gate, pause, the data Secret (name, label, owner,
//! key, type), status order (Secret → dataSecretName → created), deterministic name, Ready.

use super::core_sim::{CLUSTER_NAME_LABEL, MachineSpec, controller_owner_ref, secret_resource};
use super::env::EnvError;
use super::json::{self, get_bool};
use super::observer::watch_all;
use super::script::{ScriptRun, has_ready_condition};
use super::timeline::{Snapshot, rv_before};
use crate::rule_ids as id;
use capi_contract::contract::Contract;
use kube::discovery::ApiResource;
use serde_json::{Value, json};

pub const SECRET_TYPE: &str = "cluster.x-k8s.io/secret";

/// Why a cell that may need the workload cluster is not judged on a live-cluster run.
pub const NO_WORKLOAD_CLUSTER: &str = "no bootstrap data for the worker Machine before the deadline; a worker join may need the workload cluster (CABPK creates its join token there through <cluster>-kubeconfig), which a run against a live cluster cannot provide (the provider runs in the cluster, the tool's servers do not): run with --embedded to judge it";

fn created_path(c: Contract) -> &'static str {
    match c {
        Contract::V1Beta1 => "status.ready",
        Contract::V1Beta2 => "status.initialization.dataSecretCreated",
    }
}

pub async fn run(r: &mut ScriptRun<'_>) {
    if r.contract() == capi_contract::contract::Contract::V1Beta2 {
        r.verdicts.skip(
            id::bootstrap::IN_PLACE,
            super::core_sim::IN_PLACE_NOT_IN_CORE,
        );
    }
    let result = steps(r).await;
    r.finish(result);
}

async fn steps(r: &mut ScriptRun<'_>) -> Result<(), EnvError> {
    let p = r.prefix();
    let bc = format!("{p}-bc");
    let cluster = format!("{p}-c");
    let machine = format!("{p}-m");
    let res = r.subject.resource.clone();

    r.step("create Cluster (initialized) and Machine");
    let secrets = watch_all(
        r.env.client.clone(),
        &secret_resource(),
        &r.env.namespace,
        r.env.recorder.clone(),
    );
    r.keep(secrets);
    r.env
        .create_cluster_with_endpoint(r.subject, &cluster, None)
        .await?;
    r.env.set_control_plane_initialized(&cluster).await?;
    let infra = r
        .env
        .create_infra_machine(r.contract(), &machine, &cluster)
        .await?;
    let m = r
        .env
        .create_machine(
            &machine,
            &cluster,
            (&infra, &machine),
            MachineSpec {
                bootstrap_config: Some((&res, &bc)),
                ..MachineSpec::default()
            },
        )
        .await?;
    r.env
        .own_infra_machine(&infra, &machine, &m, &cluster)
        .await?;
    // The main config's flow; concurrently (own objects, own quiet windows) the owner gate on
    // a throwaway config followed by the cluster lookup, and the b1 failure gate.
    let mut gate = r.part();
    let mut failure = r.part();
    let mut init = r.part();
    let (main, gated, failed, initialized) = tokio::join!(
        main_flow(r, &m, &bc, &cluster),
        owner_gate_and_lookup(&mut gate, &p, &res),
        failure_gate(&mut failure, &p, &res, &cluster),
        init_config(&mut init, &p, &res, &cluster),
    );
    r.absorb(gate, gated);
    r.absorb(failure, failed);
    r.absorb(init, initialized);
    main
}

/// The init config: the first control-plane Machine of a Cluster whose infrastructure is
/// provisioned but whose control plane is not initialized yet (labelled as its owner labels
/// it, [`super::core_sim::CONTROL_PLANE_LABEL`]). CABPK tells it from a worker by that label
/// and generates its data without waiting for `ControlPlaneInitialized`
/// (`handleClusterNotInitialized`); without bootstrap data for it no cluster ever comes up.
async fn init_config(
    r: &mut ScriptRun<'_>,
    p: &str,
    res: &ApiResource,
    cluster: &str,
) -> Result<(), EnvError> {
    r.step("init config of the first control-plane Machine");
    let cluster5 = format!("{cluster}5");
    let cluster = cluster5.as_str();
    r.env
        .create_cluster_with_endpoint(r.subject, cluster, None)
        .await?;
    r.open_infra_gate(cluster).await?;
    let machine5 = format!("{p}-m5");
    let bc5 = format!("{p}-bc5");
    let infra = r
        .env
        .create_infra_machine(r.contract(), &machine5, cluster)
        .await?;
    let m5 = r
        .env
        .create_machine(
            &machine5,
            cluster,
            (&infra, &machine5),
            MachineSpec {
                bootstrap_config: Some((res, &bc5)),
                control_plane: true,
                ..MachineSpec::default()
            },
        )
        .await?;
    r.env
        .own_infra_machine(&infra, &machine5, &m5, cluster)
        .await?;
    r.watch(res, &bc5).await;
    let mut obj = r.provider_object(&bc5, &[]);
    obj["metadata"]["ownerReferences"] = json!([controller_owner_ref(&m5)]);
    obj["metadata"]["labels"][CLUSTER_NAME_LABEL] = json!(cluster);
    r.env.create(res, obj).await?;
    let created = created_path(r.contract());
    let done = r.wait(&bc5, |v| get_bool(v, created) == Some(true)).await;
    r.verdicts.check(
        id::bootstrap::DATA_SECRET_CREATED,
        done.is_ok(),
        format!(
            "{created} not true before the deadline for the init config of a control-plane Machine (Cluster infrastructure provisioned, control plane not yet initialized)"
        ),
        r.evidence(
            &bc5,
            "no bootstrap data for the first control-plane Machine",
            Some(created),
        ),
    );
    Ok(())
}

/// Owner gate on a throwaway config (a provider acting early cannot spoil the main one),
/// then the cluster lookup.
async fn owner_gate_and_lookup(
    r: &mut ScriptRun<'_>,
    p: &str,
    res: &ApiResource,
) -> Result<(), EnvError> {
    let bc0 = format!("{p}-bc0");
    r.create_unowned_and_expect_quiet(&bc0, id::bootstrap::OWNER_GATE)
        .await?;
    r.env.delete(res, &bc0).await?;
    cluster_lookup(r, p, res).await
}

/// Contract v1beta1: no bootstrap data once `status.failureReason` is set.
async fn failure_gate(
    r: &mut ScriptRun<'_>,
    p: &str,
    res: &ApiResource,
    cluster: &str,
) -> Result<(), EnvError> {
    if r.contract() != Contract::V1Beta1 {
        return Ok(());
    }
    let created = created_path(r.contract());
    r.step("failure reason set: no bootstrap data");
    // Its own Cluster: the main flow pauses the main Cluster meanwhile.
    let cluster4 = format!("{cluster}4");
    let cluster = cluster4.as_str();
    r.env
        .create_cluster_with_endpoint(r.subject, cluster, None)
        .await?;
    r.env.set_control_plane_initialized(cluster).await?;
    let machine4 = format!("{p}-m4");
    let bc4 = format!("{p}-bc4");
    let infra = r
        .env
        .create_infra_machine(r.contract(), &machine4, cluster)
        .await?;
    let m4 = r
        .env
        .create_machine(
            &machine4,
            cluster,
            (&infra, &machine4),
            MachineSpec {
                bootstrap_config: Some((res, &bc4)),
                ..MachineSpec::default()
            },
        )
        .await?;
    let acted = r
        .failed_then_owned(
            &bc4,
            cluster,
            controller_owner_ref(&m4),
            |v| json::has_text(v, "status.dataSecretName") || get_bool(v, created) == Some(true),
            &format!("{p}-bc"),
        )
        .await?;
    r.verdicts.check(
        id::bootstrap::FAILURE_GATE,
        !acted,
        "generated bootstrap data although status.failureReason was set",
        r.evidence(
            &bc4,
            "reconciled past a terminal failure",
            Some("status.failureReason"),
        ),
    );
    Ok(())
}

/// The main config: adopted while paused, data Secret and status order, deterministic name,
/// pause by annotation, delete.
async fn main_flow(
    r: &mut ScriptRun<'_>,
    m: &Value,
    bc: &str,
    cluster: &str,
) -> Result<(), EnvError> {
    let res = r.subject.resource.clone();
    let created = created_path(r.contract());
    let (bc, cluster) = (bc.to_string(), cluster.to_string());
    r.owned_while_paused(&bc, &cluster, controller_owner_ref(m), None, true)
        .await?;

    r.step("generate bootstrap data");
    let v = match r.wait(&bc, |v| get_bool(v, created) == Some(true)).await {
        Ok(v) => {
            r.verdicts.pass(id::bootstrap::DATA_SECRET_CREATED);
            v
        }
        Err(_) if r.env.workloads.is_none() => {
            // A worker join may need the workload cluster (CABPK creates its join token there),
            // which a live-cluster run cannot offer: not the provider's failure to judge.
            for rule in [
                id::bootstrap::DATA_SECRET_CREATED,
                id::bootstrap::DATA_SECRET_NAME,
            ] {
                r.verdicts.inconclusive(rule, NO_WORKLOAD_CLUSTER);
            }
            return Ok(());
        }
        Err(last) => {
            r.verdicts.fail(
                id::bootstrap::DATA_SECRET_CREATED,
                format!("{created} not true before the deadline"),
                r.evidence(&bc, "bootstrap data never reported created", Some(created)),
            );
            last.unwrap_or(Value::Null)
        }
    };
    let secret_name = json::get_str(&v, "status.dataSecretName")
        .unwrap_or_default()
        .to_string();
    r.verdicts.check(
        id::bootstrap::DATA_SECRET_NAME,
        !secret_name.is_empty(),
        "status.dataSecretName empty while the created flag is true",
        r.evidence(&bc, "no dataSecretName", Some("status.dataSecretName")),
    );
    if secret_name.is_empty() {
        return Ok(());
    }
    let secret_key = format!("Secret/{secret_name}");
    let secret = r
        .env
        .recorder
        .wait_for(&secret_key, r.env.settings.step_timeout, |_| true)
        .await
        .ok();
    judge_secret(r, &bc, &cluster, &secret_name, secret.as_ref(), &v);
    let order = order_violation(
        &r.env.recorder.history(&secret_key),
        &r.env.recorder.history(&r.key(&bc)),
        created,
    );
    r.verdicts.check(
        id::bootstrap::STATUS_AFTER_SECRET,
        order.is_none(),
        order.unwrap_or_default(),
        r.evidence(
            &bc,
            "status written out of order",
            Some("status.dataSecretName"),
        ),
    );
    let ready = r.wait(&bc, has_ready_condition).await.is_ok();
    r.verdicts.check(
        id::bootstrap::READY_CONDITION,
        ready,
        "no Ready condition once the data Secret was created",
        r.evidence(&bc, "Ready condition missing", Some("status.conditions")),
    );

    r.step("clear status: same Secret again");
    let uid_before = secret
        .as_ref()
        .and_then(|s| s.pointer("/metadata/uid").cloned());
    r.env
        .patch_status(&res, &bc, json!({"status": null}), "clear status")
        .await?;
    let again = r
        .wait(&bc, |v| json::has_text(v, "status.dataSecretName"))
        .await;
    let name_after = again
        .as_ref()
        .ok()
        .and_then(|v| json::get_str(v, "status.dataSecretName"))
        .unwrap_or_default()
        .to_string();
    let uid_after = r
        .env
        .recorder
        .latest(&secret_key)
        .and_then(|s| s.pointer("/metadata/uid").cloned());
    // The Secret's reuse is judged only when it existed (a missing one is secret-name's failure).
    let reused = uid_before.is_none() || uid_before == uid_after;
    r.verdicts.check(
        id::bootstrap::DETERMINISTIC_NAME,
        name_after == secret_name && reused,
        format!(
            "after the status was wiped the provider reported {name_after:?} (was {secret_name:?}){}",
            if reused { "" } else { " and recreated the Secret" }
        ),
        r.evidence(&bc, "bootstrap data Secret not reused", Some("status.dataSecretName")),
    );
    r.pause_by_annotation(&bc, None).await?;
    r.delete_and_expect_gone(&bc, None).await?;
    Ok(())
}

/// A config owned by a Machine of a Cluster that does not exist: no bootstrap data.
async fn cluster_lookup(r: &mut ScriptRun<'_>, p: &str, res: &ApiResource) -> Result<(), EnvError> {
    r.step("cluster-name label names a missing Cluster");
    let missing = format!("{p}-missing");
    let machine = format!("{p}-m3");
    let bc = format!("{p}-bc3");
    let created = created_path(r.contract());
    let infra = r
        .env
        .create_infra_machine(r.contract(), &machine, &missing)
        .await?;
    let m = r
        .env
        .create_machine(
            &machine,
            &missing,
            (&infra, &machine),
            MachineSpec {
                bootstrap_config: Some((res, &bc)),
                ..MachineSpec::default()
            },
        )
        .await?;
    r.watch(res, &bc).await;
    let mut obj = r.provider_object(&bc, &[]);
    obj["metadata"]["ownerReferences"] = json!([controller_owner_ref(&m)]);
    obj["metadata"]["labels"][CLUSTER_NAME_LABEL] = json!(missing);
    r.env.create(res, obj).await?;
    let acted = r
        .env
        .recorder
        .wait_for_settled(
            &r.key(&bc),
            r.env.quiet_window(),
            r.env.step_deadline(),
            |v| json::has_text(v, "status.dataSecretName") || get_bool(v, created) == Some(true),
        )
        .await
        .is_ok();
    r.verdicts.check(
        id::bootstrap::CLUSTER_LOOKUP,
        !acted,
        "generated bootstrap data although the Cluster does not exist",
        r.evidence(
            &bc,
            "acted without its Cluster",
            Some("status.dataSecretName"),
        ),
    );
    Ok(())
}

fn judge_secret(
    r: &mut ScriptRun<'_>,
    bc: &str,
    cluster: &str,
    name: &str,
    secret: Option<&Value>,
    config: &Value,
) {
    let ev = |msg: &str, path: &str| crate::report::Evidence {
        message: msg.to_string(),
        object: Some(format!("Secret {name}").into()),
        path: Some(path.to_string()),
        resource_version: None,
        location: None,
        source: None,
    };
    let Some(s) = secret else {
        r.verdicts.fail(
            id::bootstrap::SECRET_NAME,
            format!("no Secret named {name:?} (status.dataSecretName) in the config's namespace"),
            r.evidence(bc, "data Secret missing", Some("status.dataSecretName")),
        );
        return;
    };
    r.verdicts.pass(id::bootstrap::SECRET_NAME);
    let label = s
        .pointer("/metadata/labels")
        .and_then(|l| l.get(CLUSTER_NAME_LABEL))
        .and_then(Value::as_str);
    r.verdicts.check(
        id::bootstrap::SECRET_LABEL,
        label == Some(cluster),
        format!("Secret label {CLUSTER_NAME_LABEL} is {label:?}, want {cluster:?}"),
        ev("cluster-name label missing or wrong", "metadata.labels"),
    );
    let config_uid = config.pointer("/metadata/uid");
    let owned = s
        .pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .is_some_and(|refs| {
            refs.iter().any(|o| {
                o.get("controller") == Some(&json!(true))
                    && (o.get("uid") == config_uid || config_uid.is_none())
                    && o.get("name").and_then(Value::as_str) == Some(bc)
            })
        });
    r.verdicts.check(
        id::bootstrap::SECRET_OWNER,
        owned,
        "the Secret has no controller owner reference to the bootstrap config",
        ev(
            "no controller ownerRef to the config",
            "metadata.ownerReferences",
        ),
    );
    let has_value = s.pointer("/data/value").is_some();
    r.verdicts.check(
        id::bootstrap::SECRET_VALUE,
        has_value,
        "the Secret has no data key `value`",
        ev("data key `value` missing", "data"),
    );
    let ty = s.get("type").and_then(Value::as_str).unwrap_or_default();
    r.verdicts.check(
        id::bootstrap::SECRET_TYPE,
        ty == SECRET_TYPE,
        format!("Secret type is {ty:?}, want {SECRET_TYPE:?}"),
        ev("wrong Secret type", "type"),
    );
}

/// Checks Secret → dataSecretName → created order across the recorded histories (by
/// resourceVersion when numeric). Returns the violation, if any.
pub fn order_violation(secret: &[Snapshot], config: &[Snapshot], created: &str) -> Option<String> {
    let secret_added = secret.iter().find(|s| s.event == "ADDED")?;
    let name_set = config
        .iter()
        .find(|s| json::has_text(&s.value, "status.dataSecretName"));
    let created_set = config
        .iter()
        .find(|s| get_bool(&s.value, created) == Some(true));
    if let Some(n) = name_set
        && rv_before(&n.resource_version, &secret_added.resource_version) == Some(true)
    {
        return Some("status.dataSecretName was set before the Secret existed".into());
    }
    if let Some(c) = created_set {
        if rv_before(&c.resource_version, &secret_added.resource_version) == Some(true) {
            return Some(format!("{created} was true before the Secret existed"));
        }
        match name_set {
            None => return Some(format!("{created} true without status.dataSecretName")),
            Some(n) if rv_before(&c.resource_version, &n.resource_version) == Some(true) => {
                return Some(format!(
                    "{created} was true before status.dataSecretName was set"
                ));
            }
            _ => {}
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn snap(rv: &str, event: &'static str, value: Value) -> Snapshot {
        Snapshot {
            at_ms: 0,
            object: String::new(),
            resource_version: rv.into(),
            event,
            value,
            changed: vec![],
        }
    }

    #[test]
    fn order_is_judged_by_resource_version() {
        let created = "status.initialization.dataSecretCreated";
        let secret = vec![snap("5", "ADDED", json!({}))];
        let good = vec![
            snap("3", "ADDED", json!({})),
            snap("6", "MODIFIED", json!({"status": {"dataSecretName": "s"}})),
            snap(
                "7",
                "MODIFIED",
                json!({"status": {"dataSecretName": "s", "initialization": {"dataSecretCreated": true}}}),
            ),
        ];
        assert_eq!(order_violation(&secret, &good, created), None);
        let early = vec![snap(
            "4",
            "MODIFIED",
            json!({"status": {"dataSecretName": "s", "initialization": {"dataSecretCreated": true}}}),
        )];
        assert!(order_violation(&secret, &early, created).is_some());
        let late_secret = vec![snap("9", "ADDED", json!({}))];
        assert!(order_violation(&late_secret, &good, created).is_some());
    }
}
