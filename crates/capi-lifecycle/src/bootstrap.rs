//! SC-bootstrap (docs/contract.md §4.1): owner gate, pause, the data Secret (name, label, owner,
//! key, type), status order (Secret → dataSecretName → created), deterministic name, Ready.
//!
//! The configs are put only where CAPI puts them: what the sample configures says which
//! Machine it is for ([`SamplePurpose`]). A kubeadm-style config holding an init or cluster
//! configuration is the first control-plane Machine's (KCP's first Machine gets
//! `InitConfiguration` and `ClusterConfiguration`, its joins drop the first); one holding only a
//! join configuration is a worker's, after the control plane is initialized (CAPI's worker
//! `KubeadmConfigTemplate`s). The scenario judges the paths the sample allows and says, in the
//! step list and in `bootstrap/data-secret-created`'s evidence, which sample would judge the
//! other.

use super::core_sim::{CLUSTER_NAME_LABEL, MachineSpec, controller_owner_ref, secret_resource};
use super::env::EnvError;
use super::json::{self, get_bool};
use super::observer::watch_all;
use super::script::{ScriptRun, has_ready_condition};
use super::timeline::{Snapshot, rv_before};
use capi_contract::contract::Contract;
use capi_contract::rule_ids as id;
use kube::discovery::ApiResource;
use serde_json::{Value, json};

mod data_secret;
use data_secret::judge_secret;
pub use data_secret::order_violation;

pub const SECRET_TYPE: &str = "cluster.x-k8s.io/secret";

/// Why a cell that may need the workload cluster is not judged on a live-cluster run.
pub const NO_WORKLOAD_CLUSTER: &str = "no bootstrap data for the worker Machine before the deadline; a worker join may need the workload cluster (CABPK creates its join token there through <cluster>-kubeconfig), which a run against a live cluster cannot provide (the provider runs in the cluster, the tool's servers do not): run with --embedded to judge it";

/// What a bootstrap config sample is for, read from the kubeadm-style fields of its `spec`
/// (CABPK's `initConfiguration`, `clusterConfiguration`, `joinConfiguration`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SamplePurpose {
    /// None of them (not a kubeadm-style config): both Machines.
    Any,
    /// An init or cluster configuration, no join: the first control-plane Machine, whose
    /// Cluster's control plane is not initialized.
    Init,
    /// A join configuration only: a worker, once the control plane is initialized.
    Join,
    /// Both: both Machines.
    InitAndJoin,
}

impl SamplePurpose {
    /// The purpose of `sample` (`{spec: …}`).
    pub fn of(sample: &Value) -> SamplePurpose {
        let has = |k: &str| {
            sample
                .pointer(&format!("/spec/{k}"))
                .is_some_and(|v| !v.is_null())
        };
        match (
            has("initConfiguration") || has("clusterConfiguration"),
            has("joinConfiguration"),
        ) {
            (false, false) => SamplePurpose::Any,
            (true, false) => SamplePurpose::Init,
            (false, true) => SamplePurpose::Join,
            (true, true) => SamplePurpose::InitAndJoin,
        }
    }

    /// Whether a worker Machine may get the config.
    pub fn allows_worker(self) -> bool {
        self != SamplePurpose::Init
    }

    /// Whether the first control-plane Machine may get the config.
    pub fn allows_init(self) -> bool {
        self != SamplePurpose::Join
    }
}

/// Why the first control-plane Machine's init config is not judged with a join-only sample.
pub const NO_INIT_SAMPLE: &str = "not judged: the sample holds only a joinConfiguration (a worker's), and CAPI never initialises a control plane from a join-only config; a sample with an initConfiguration or clusterConfiguration (e.g. the first control-plane Machine's KubeadmConfig, or the KubeadmControlPlane's kubeadmConfigSpec) would judge it";

/// Why a worker's join is not judged with a sample that holds only an init or cluster
/// configuration (the scenario's Machines are the first control-plane Machine's).
pub const NO_JOIN_SAMPLE: &str = "not judged: the sample holds an initConfiguration or clusterConfiguration and no joinConfiguration (the first control-plane Machine's), so every step ran on the first control-plane Machine; a sample with a joinConfiguration (e.g. the workers' KubeadmConfigTemplate) would judge a worker's join";

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

/// Records a path of the script the sample does not allow as a skipped step (`why` names the
/// sample that would judge it), and notes it on `bootstrap/data-secret-created`, the rule
/// both paths judge.
fn not_judged(r: &mut ScriptRun<'_>, path: &str, why: &str) {
    r.end_step();
    let at = r.env.recorder.elapsed_ms();
    r.steps.push(capi_contract::model::StepRecord {
        name: format!("{path}: {why}"),
        outcome: capi_contract::model::Outcome::Skip,
        at_ms: Some(at),
        duration_ms: Some(0),
    });
    r.verdicts.note(
        id::bootstrap::DATA_SECRET_CREATED,
        capi_contract::model::Evidence::msg(format!("{path}: {why}")),
    );
}

async fn steps(r: &mut ScriptRun<'_>) -> Result<(), EnvError> {
    let p = r.prefix();
    let bc = format!("{p}-bc");
    let cluster = format!("{p}-c");
    let machine = format!("{p}-m");
    let res = r.subject.resource.clone();
    let purpose = r
        .subject
        .sample
        .as_ref()
        .map_or(SamplePurpose::Any, SamplePurpose::of);
    // The Machine the sample is for: a worker of an initialized Cluster, or (an init-only
    // sample) the first control-plane Machine of a Cluster whose control plane is not.
    let worker = purpose.allows_worker();

    if worker {
        r.step("create Cluster (initialized) and Machine");
    } else {
        r.step("create Cluster (not initialized) and its first control-plane Machine");
    }
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
    if worker {
        r.env.set_control_plane_initialized(&cluster).await?;
    } else {
        r.open_infra_gate(&cluster).await?;
    }
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
                control_plane: !worker,
                ..MachineSpec::default()
            },
        )
        .await?;
    r.env
        .own_infra_machine(&infra, &machine, &m, &cluster)
        .await?;
    // The main config's flow; concurrently (own objects, own quiet windows) the owner gate on
    // a throwaway config followed by the cluster lookup, the b1 failure gate, and (a worker's
    // main flow with a sample that may also initialise a control plane) the init config.
    let mut gate = r.part();
    let mut failure = r.part();
    let mut init = r.part();
    let with_init = worker && purpose.allows_init();
    let (main, gated, failed, initialized) = tokio::join!(
        main_flow(r, &m, &bc, &cluster, worker),
        owner_gate_and_lookup(&mut gate, &p, &res, worker),
        failure_gate(&mut failure, &p, &res, &cluster, worker),
        async {
            if with_init {
                init_config(&mut init, &p, &res, &cluster).await
            } else {
                Ok(())
            }
        },
    );
    r.absorb(gate, gated);
    r.absorb(failure, failed);
    r.absorb(init, initialized);
    match purpose {
        SamplePurpose::Join => {
            not_judged(
                r,
                "init config of the first control-plane Machine",
                NO_INIT_SAMPLE,
            );
        }
        SamplePurpose::Init => not_judged(r, "a worker's join", NO_JOIN_SAMPLE),
        SamplePurpose::Any | SamplePurpose::InitAndJoin => {}
    }
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
/// then the cluster lookup (its Machine a worker, or with `worker` false a control-plane
/// Machine).
async fn owner_gate_and_lookup(
    r: &mut ScriptRun<'_>,
    p: &str,
    res: &ApiResource,
    worker: bool,
) -> Result<(), EnvError> {
    let bc0 = format!("{p}-bc0");
    r.create_unowned_and_expect_quiet(&bc0, id::bootstrap::OWNER_GATE)
        .await?;
    r.env.delete(res, &bc0).await?;
    cluster_lookup(r, p, res, worker).await
}

/// Contract v1beta1: no bootstrap data once `status.failureReason` is set (on a worker of an
/// initialized Cluster, or with `worker` false the first control-plane Machine of one that is
/// not).
async fn failure_gate(
    r: &mut ScriptRun<'_>,
    p: &str,
    res: &ApiResource,
    cluster: &str,
    worker: bool,
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
    if worker {
        r.env.set_control_plane_initialized(cluster).await?;
    } else {
        r.open_infra_gate(cluster).await?;
    }
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
                control_plane: !worker,
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

/// The main config (of Machine `m`: a worker, or with `worker` false the first control-plane
/// Machine): adopted while paused, data Secret and status order, deterministic name, pause by
/// annotation, delete.
async fn main_flow(
    r: &mut ScriptRun<'_>,
    m: &Value,
    bc: &str,
    cluster: &str,
    worker: bool,
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
        Err(_) if worker && r.env.workloads.is_none() => {
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

/// A config owned by a Machine (a worker, or with `worker` false a control-plane Machine) of a
/// Cluster that does not exist: no bootstrap data.
async fn cluster_lookup(
    r: &mut ScriptRun<'_>,
    p: &str,
    res: &ApiResource,
    worker: bool,
) -> Result<(), EnvError> {
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
                control_plane: !worker,
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

    /// The kubeadm-style fields a sample sets say which Machine it is for; a sample without
    /// them (another bootstrap provider's) may go on either.
    #[test]
    fn a_samples_purpose_comes_from_its_init_cluster_and_join_configurations() {
        let of = |spec: Value| SamplePurpose::of(&json!({ "spec": spec }));
        assert_eq!(of(json!({"payload": "x"})), SamplePurpose::Any);
        assert_eq!(of(json!({"joinConfiguration": {}})), SamplePurpose::Join);
        assert_eq!(of(json!({"initConfiguration": {}})), SamplePurpose::Init);
        assert_eq!(of(json!({"clusterConfiguration": {}})), SamplePurpose::Init);
        assert_eq!(
            of(json!({"clusterConfiguration": {}, "joinConfiguration": {}})),
            SamplePurpose::InitAndJoin
        );
        assert_eq!(of(json!({"joinConfiguration": null})), SamplePurpose::Any);
        assert!(!SamplePurpose::Join.allows_init() && SamplePurpose::Join.allows_worker());
        assert!(SamplePurpose::Init.allows_init() && !SamplePurpose::Init.allows_worker());
        assert!(SamplePurpose::Any.allows_init() && SamplePurpose::Any.allows_worker());
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
