//! SC-controlplane (docs/contract.md §4.1): the control plane's Cluster (its InfraCluster's
//! endpoint, or the tool's workload cluster), kubeconfig Secret, initialized, endpoint,
//! version(s), replica counters, scale subresource, then the judges of its Machines
//! ([`machines`]), its Secrets ([`secrets`]) and of a Cluster without endpoint
//! ([`endpoint_wait`]), pause, delete.

mod endpoint_wait;
mod machines;
mod readiness;
mod secrets;

use super::core_sim::{ClusterSpec, IN_PLACE_NOT_IN_CORE, MachineController, secret_resource};
use super::env::EnvError;
use super::json::{self, get, get_bool};
use super::observer::watch_all;
use super::script::{ScriptRun, cluster_owner};
use capi_contract::contract::Contract;
use capi_contract::rule_ids as id;
use endpoint_wait::{judge_endpoint_wait, remove_endpoint_wait};
use kube::api::{Patch, PatchParams};
use machines::{
    judge_in_place_propagation, judge_machine_labels, judge_placement, judge_up_to_date,
    machines_of,
};
use secrets::{judge_certificates, judge_kubeconfig_rotation, kubeconfig_problems};
use serde_json::{Value, json};

pub async fn run(r: &mut ScriptRun<'_>) {
    // The Cluster without endpoint is an experiment of its own, beside the main flow; its
    // objects go once both are done.
    let mut experiment = r.part();
    let (main, waited) = tokio::join!(steps(r), judge_endpoint_wait(&mut experiment));
    // Both control planes are deleted together.
    let cp = format!("{}-cp", r.prefix());
    let main_delete = async {
        match main {
            Ok(()) => r.delete_and_expect_gone(&cp, None).await,
            failed => failed,
        }
    };
    let (main, removed) = tokio::join!(main_delete, remove_endpoint_wait(&experiment));
    if let Err(e) = main {
        r.env_failed(e);
    }
    let waited = match (waited, removed) {
        (Ok(()), removed) => removed,
        (failed, _) => failed,
    };
    r.absorb(experiment, waited);
}

fn initialized_path(c: Contract) -> &'static str {
    match c {
        Contract::V1Beta1 => "status.initialized",
        Contract::V1Beta2 => "status.initialization.controlPlaneInitialized",
    }
}

fn counters(c: Contract) -> &'static [&'static str] {
    match c {
        Contract::V1Beta1 => &[
            "status.replicas",
            "status.updatedReplicas",
            "status.readyReplicas",
        ],
        Contract::V1Beta2 => &[
            "status.replicas",
            "status.readyReplicas",
            "status.availableReplicas",
            "status.upToDateReplicas",
        ],
    }
}

fn converged(c: Contract, want: i64) -> impl Fn(&Value) -> bool {
    move |v| {
        counters(c)
            .iter()
            .all(|p| get(v, p).and_then(Value::as_i64) == Some(want))
            && json::has_text(v, "status.selector")
            && (c == Contract::V1Beta2
                || get(v, "status.unavailableReplicas")
                    .and_then(Value::as_i64)
                    .unwrap_or(0)
                    == 0)
    }
}

async fn steps(r: &mut ScriptRun<'_>) -> Result<(), EnvError> {
    let p = r.prefix();
    let cp = format!("{p}-cp");
    let cluster = format!("{p}-c");
    let res = r.subject.resource.clone();

    r.step("create Cluster and control plane");
    r.keep(watch_all(
        r.env.client.clone(),
        &secret_resource(),
        &r.env.namespace,
        r.env.recorder.clone(),
    ));
    // KCP does nothing past its certificates without a valid endpoint. With an infrastructure
    // provider's InfraCluster in the run (the one whose machine template the sample names), the
    // endpoint is that InfraCluster's, copied once it is provisioned as core's Cluster
    // controller copies it, and its workload cluster is the provider's; otherwise the endpoint
    // is where the tool's workload cluster serves once the provider's `<cluster>-ca` exists.
    let (c, own_workload) = match r.subject.companions.infra_cluster.clone() {
        Some((ic, _)) => {
            let c = r
                .env
                .create_cluster_of(
                    r.subject,
                    &cluster,
                    ClusterSpec {
                        control_plane: Some((&res, &cp)),
                        ..ClusterSpec::default()
                    },
                )
                .await?;
            (c, !infrastructure_endpoint(r, &ic, &cluster).await?)
        }
        None => {
            let c = r
                .env
                .create_cluster_with_endpoint(r.subject, &cluster, Some((&res, &cp)))
                .await?;
            r.env.set_infra_provisioned(&cluster, true).await?;
            (c, true)
        }
    };
    r.watch(&res, &cp).await;
    let mut obj = r.provider_object(&cp, &[]);
    if obj.pointer("/spec/replicas").is_none() {
        obj["spec"]["replicas"] = json!(1);
    }
    let want = obj
        .pointer("/spec/replicas")
        .and_then(Value::as_i64)
        .unwrap_or(1);
    r.env.create(&res, obj).await?;
    // Core's Machine controller for the Machines the control plane creates (not when a real
    // core runs beside the tool: it does that part itself).
    let machines_sim =
        (!r.env.pause_core).then(|| r.env.start_machine_controller(&cluster, &res, &cp));
    let result = lifecycle(
        r,
        &cp,
        &cluster,
        c,
        want,
        own_workload,
        machines_sim.as_ref(),
    )
    .await;
    if let Some(sim) = machines_sim {
        sim.stop().await;
    }
    result
}

/// Once the InfraCluster `ic` of `cluster` (named as the Cluster) is provisioned, core's Cluster
/// controller copies its endpoint and failure domains and opens the infrastructure gate
/// (`reconcileInfrastructure`). `Ok(true)`: the endpoint is the InfraCluster's; `Ok(false)`: it
/// reported none, and the Cluster gets the tool's workload cluster's, as without one.
async fn infrastructure_endpoint(
    r: &ScriptRun<'_>,
    ic: &kube::discovery::ApiResource,
    cluster: &str,
) -> Result<bool, EnvError> {
    // Watched apart from the timeline: the InfraCluster is a companion, not the subject.
    let seen = r.env.await_infra_cluster_provisioned(ic, cluster).await?;
    let endpoint =
        json::get_str(&seen, "spec.controlPlaneEndpoint.host").is_some_and(|h| !h.is_empty());
    if !endpoint {
        let (host, port) = r.env.control_plane_endpoint(cluster)?;
        r.env.set_cluster_endpoint(cluster, &host, port).await?;
    }
    r.env
        .copy_cluster_infrastructure(cluster, ic, cluster)
        .await?;
    Ok(endpoint)
}

#[allow(clippy::too_many_arguments)]
async fn lifecycle(
    r: &mut ScriptRun<'_>,
    cp: &str,
    cluster: &str,
    c: Value,
    want: i64,
    own_workload: bool,
    sim: Option<&MachineController>,
) -> Result<(), EnvError> {
    let (cp, cluster) = (cp.to_string(), cluster.to_string());
    let res = r.subject.resource.clone();
    let contract = r.contract();
    r.adopt_while_paused(
        &cp,
        &cluster,
        cluster_owner(&c),
        Some(id::control_plane::PAUSE),
    )
    .await?;

    r.step("initialize");
    let init = initialized_path(contract);
    // Meanwhile: once the provider's `<cluster>-ca` exists, the workload cluster serves on the
    // Cluster's endpoint with a certificate of that CA (what KCP connects to through the
    // kubeconfig it writes, to find `kube-system/kubeadm-config`).
    let env = r.env;
    let mut workload: Result<bool, EnvError> = Ok(false);
    let starter = async {
        let ca = format!("Secret/{cluster}-ca");
        if own_workload
            && env
                .recorder
                .wait_for(&ca, env.settings.step_timeout, |_| true)
                .await
                .is_ok()
        {
            workload = env.start_workload_on_provider_ca(&cluster).await;
        }
        std::future::pending::<()>().await;
    };
    let initialized = tokio::select! {
        v = r.wait(&cp, |v| get_bool(v, init) == Some(true)) => v,
        () = starter => Err(None),
    };
    workload?;
    let v = match initialized {
        Ok(v) => {
            r.verdicts.pass(id::control_plane::INITIALIZED);
            v
        }
        Err(last) if r.env.workloads.is_none() => {
            r.verdicts.inconclusive(
                id::control_plane::INITIALIZED,
                format!(
                    "{init} not true before the deadline; a control plane provider learns it is initialized from the workload cluster (KCP: kube-system/kubeadm-config through <cluster>-kubeconfig), which a run against a live cluster cannot provide: run with --embedded to judge it"
                ),
            );
            last.unwrap_or(Value::Null)
        }
        Err(last) if let Some(why) = sim.and_then(|s| s.progress().node_agent_failed) => {
            r.verdicts.inconclusive(
                id::control_plane::INITIALIZED,
                format!(
                    "{init} not true before the deadline, and what --workload-object asks the tool to write into the workload cluster as the control-plane node's agent is not there: {why}; a control plane that waits for its node's agent cannot initialize without it (docs/core-simulation.md)"
                ),
            );
            last.unwrap_or(Value::Null)
        }
        Err(last) => {
            r.verdicts.fail(
                id::control_plane::INITIALIZED,
                format!("{init} not true before the deadline"),
                r.evidence(&cp, "never initialized", Some(init)),
            );
            last.unwrap_or(Value::Null)
        }
    };
    let kubeconfig = format!("Secret/{cluster}-kubeconfig");
    let secret = r
        .env
        .recorder
        .wait_for(&kubeconfig, r.env.settings.step_timeout, |_| true)
        .await
        .ok();
    let problems = kubeconfig_problems(secret.as_ref(), &cluster);
    r.verdicts.check(
        id::control_plane::KUBECONFIG_SECRET,
        problems.is_empty(),
        format!("Secret {cluster}-kubeconfig: {}", problems.join("; ")),
        r.evidence(&cp, "kubeconfig Secret missing or malformed", None),
    );
    match get(&v, "spec.controlPlaneEndpoint") {
        None if r.subject.schema_has("spec.controlPlaneEndpoint") => r.verdicts.fail(
            id::control_plane::ENDPOINT,
            "initialized without spec.controlPlaneEndpoint while the Cluster has no endpoint from elsewhere",
            r.evidence(&cp, "endpoint missing", Some("spec.controlPlaneEndpoint")),
        ),
        None => r.verdicts.skip(id::control_plane::ENDPOINT, "the provider does not create the endpoint"),
        Some(e) => {
            let host = e.get("host").and_then(Value::as_str).unwrap_or_default();
            let port = e.get("port").and_then(Value::as_i64).unwrap_or(0);
            r.verdicts.check(
                id::control_plane::ENDPOINT,
                !host.is_empty() && (1..=65535).contains(&port),
                format!("endpoint is host {host:?} port {port}"),
                r.evidence(&cp, "invalid endpoint", Some("spec.controlPlaneEndpoint")),
            );
        }
    }
    let (cond, cond_path) = match contract {
        Contract::V1Beta1 => ("Ready", "status.conditions[Ready]"),
        Contract::V1Beta2 => ("Available", "status.conditions[Available]"),
    };
    let has_cond = r
        .wait(&cp, |v| json::condition(v, cond).is_some())
        .await
        .is_ok();
    r.verdicts.check(
        id::control_plane::CONDITIONS,
        has_cond,
        format!("no {cond} condition once initialized"),
        r.evidence(&cp, "summary condition missing", Some(cond_path)),
    );
    judge_certificates(r, &cp, &cluster).await;
    judge_versions(r, &cp, contract).await;

    r.step("replicas converge");
    // What the control plane counts itself first; a control plane of Machines (KCP) counts its
    // Machines' conditions for the rest, which core's Machine controller (simulated) sets once
    // each Machine has its Node in the workload cluster.
    let own = r.wait(&cp, |v| counted(Some(v), want)).await;
    let machines = machines_of(r, &cp).await?.len();
    let conv = match own {
        Err(_) => Waited::Not,
        Ok(_) => wait_with_machines(r, &cp, machines, sim, converged(contract, want)).await,
    };
    let conv = match conv {
        Waited::Not => held_by_gates(r, &cp, contract)
            .await?
            .unwrap_or(Waited::Not),
        w => w,
    };
    match &conv {
        Waited::Gated(why) => {
            r.verdicts.inconclusive(
                id::control_plane::STATUS_REPLICAS,
                format!(
                    "the counters did not converge to {want}, and they say what its Machines' conditions say: its Machines have their Nodes but readiness gates it asks for hold them not Ready ({why}); those conditions come from the workload cluster's Nodes, which the infrastructure provider's workload cluster serves (docs/core-simulation.md)"
                ),
            );
        }
        Waited::NoNodes(why) => {
            r.verdicts.inconclusive(
                id::control_plane::STATUS_REPLICAS,
                format!(
                    "status.replicas and status.selector converged to {want}; the other counters count its {machines} Machine(s) whose Ready and Available conditions core's Machine controller sets once each has its Node in the workload cluster, and none has: {why} (the infrastructure provider's workload cluster has no Node for them; docs/core-simulation.md)"
                ),
            );
        }
        _ => r.verdicts.check(
            id::control_plane::STATUS_REPLICAS,
            matches!(conv, Waited::Yes),
            format!("status counters and selector did not converge to {want}"),
            r.evidence(
                &cp,
                "replica counters did not converge",
                Some("status.replicas"),
            ),
        ),
    }
    let conv: Result<(), ()> = if matches!(conv, Waited::Yes) {
        Ok(())
    } else {
        Err(())
    };
    if contract == Contract::V1Beta1 {
        if conv.is_ok() {
            let ready = r
                .wait(&cp, |v| get_bool(v, "status.ready") == Some(true))
                .await;
            r.verdicts.check(
                id::control_plane::READY,
                ready.is_ok(),
                "status.ready never true although the replicas converged",
                r.evidence(&cp, "not ready", Some("status.ready")),
            );
        } else {
            r.verdicts.skip(
                id::control_plane::READY,
                "the control plane never converged (see control-plane/status-replicas)",
            );
        }
    }

    r.step("scale subresource to 3");
    let scaled = r
        .env
        .api(&res)
        .patch_scale(
            &cp,
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 3}})),
        )
        .await;
    match scaled {
        Ok(_) => {
            let spec3 = r
                .wait(&cp, |v| {
                    get(v, "spec.replicas").and_then(Value::as_i64) == Some(3)
                })
                .await;
            r.verdicts.check(
                id::control_plane::SCALE_SUBRESOURCE,
                spec3.is_ok(),
                "the scale subresource did not change spec.replicas",
                r.evidence(&cp, "scale had no effect", Some("spec.replicas")),
            );
            let three = |v: &Value| get(v, "status.replicas").and_then(Value::as_i64) == Some(3);
            let scaled = wait_with_machines(r, &cp, machines, sim, three).await;
            if let (Waited::NoNodes(why), true) = (&scaled, spec3.is_ok()) {
                // KCP scales up only once its Machines are healthy (`preflightChecks`: each
                // Machine's Node, its control plane Pods and etcd member in the workload cluster).
                r.verdicts.inconclusive(
                    id::control_plane::SCALE_SUBRESOURCE,
                    format!(
                        "the scale subresource set spec.replicas to 3; status.replicas stayed below 3: a control plane of Machines ({machines} now) adds one when its Machines are healthy, which needs each Machine's Node in the workload cluster, and none has one: {why} (docs/core-simulation.md)"
                    ),
                );
            } else {
                r.verdicts.check(
                    id::control_plane::SCALE_SUBRESOURCE,
                    matches!(scaled, Waited::Yes),
                    "status.replicas did not follow the scale subresource to 3",
                    r.evidence(&cp, "scale did not converge", Some("status.replicas")),
                );
            }
        }
        Err(e) => r.verdicts.fail(
            id::control_plane::SCALE_SUBRESOURCE,
            format!("PATCH scale rejected: {e}"),
            r.evidence(&cp, "scale subresource unusable", None),
        ),
    }

    judge_machine_labels(r, &cp, &cluster).await?;
    judge_placement(r, &cp, &cluster).await?;
    judge_in_place_propagation(r, &cp, &cluster).await?;
    judge_kubeconfig_rotation(r, &cp, &cluster).await?;
    if contract == Contract::V1Beta2 {
        judge_up_to_date(r, &cp, &cluster).await?;
        r.verdicts
            .skip(id::control_plane::IN_PLACE_UPDATES, IN_PLACE_NOT_IN_CORE);
    }

    r.pause_by_annotation(&cp, Some(id::control_plane::PAUSE))
        .await
}

/// How a wait on the control plane ended.
enum Waited {
    Yes,
    Not,
    /// Machines exist and none got its Node in the workload cluster (why).
    NoNodes(String),
    /// Not converged, the counters agreeing with the Machines, which have their Nodes and are
    /// held not Ready by readiness gates (which, on which Machine).
    Gated(String),
}

/// After a wait that did not converge: [`Waited::Gated`] when the control plane's counters say
/// what its Machines' conditions say and readiness gates hold those Machines not Ready
/// ([`readiness`]); `None` otherwise (the control plane's own failure).
async fn held_by_gates(
    r: &ScriptRun<'_>,
    cp: &str,
    contract: Contract,
) -> Result<Option<Waited>, EnvError> {
    let machines = machines_of(r, cp).await?;
    let held = readiness::held_by_gates(&machines);
    let agree = r
        .env
        .recorder
        .latest(&r.key(cp))
        .is_some_and(|v| readiness::counters_agree(&v, &machines, contract));
    Ok((agree && !held.is_empty()).then(|| Waited::Gated(held.join("; "))))
}

/// Waits for the control plane `cp` to satisfy `pred`. A control plane of `machines` Machines
/// gets the step deadline while core's Machine controller finds their Nodes; when, a few quiet
/// windows in, none has a Node (an infrastructure without a workload cluster of Nodes, as the
/// mock's), the wait ends as [`Waited::NoNodes`]: what follows from the Nodes cannot be judged.
async fn wait_with_machines(
    r: &ScriptRun<'_>,
    cp: &str,
    machines: usize,
    sim: Option<&MachineController>,
    pred: impl Fn(&Value) -> bool,
) -> Waited {
    let waited = r.wait(cp, pred);
    if machines == 0 {
        return match waited.await {
            Ok(_) => Waited::Yes,
            Err(_) => Waited::Not,
        };
    }
    // Stalled: no Machine has a Node, the workload cluster answered without one (or there is
    // none: a run on a real cluster), and the control plane has not changed for a whole look (a
    // provider still working, e.g. slowed by the server, is waited for to the deadline). A
    // workload cluster that never answered proves nothing missing: the wait goes on.
    let no_workload = r.env.workloads.is_none();
    let look = r.env.quiet_window() * 3;
    let key = r.key(cp);
    let version = || {
        r.env
            .recorder
            .latest(&key)
            .and_then(|v| v.pointer("/metadata/resourceVersion").cloned())
    };
    let stalled = async {
        let mut seen = version();
        loop {
            tokio::time::sleep(look).await;
            let progress = sim.map(MachineController::progress).unwrap_or_default();
            let now = version();
            if progress.with_node == 0 && (progress.workload_listed || no_workload) && now == seen {
                return progress.waiting_for_node.unwrap_or_else(|| {
                    "core's Machine controller is not simulated beside a real core".into()
                });
            }
            seen = now;
        }
    };
    tokio::select! {
        w = waited => match w {
            Ok(_) => Waited::Yes,
            Err(_) => Waited::Not,
        },
        why = stalled => Waited::NoNodes(why),
    }
}

/// Whether `last` has `status.replicas` == `want` and a selector: what a control plane counts
/// itself, before the counters of its Machines' conditions.
fn counted(last: Option<&Value>, want: i64) -> bool {
    last.is_some_and(|v| {
        get(v, "status.replicas").and_then(Value::as_i64) == Some(want)
            && json::has_text(v, "status.selector")
    })
}

async fn judge_versions(r: &mut ScriptRun<'_>, cp: &str, contract: Contract) {
    let Some(spec_version) = r
        .env
        .recorder
        .latest(&r.key(cp))
        .and_then(|v| json::get_str(&v, "spec.version").map(str::to_string))
    else {
        r.verdicts.skip(
            id::control_plane::STATUS_VERSION,
            "the control plane has no spec.version",
        );
        return;
    };
    let pred = move |v: &Value| match contract {
        Contract::V1Beta1 => json::has_text(v, "status.version"),
        Contract::V1Beta2 => {
            get(v, "status.versions")
                .and_then(Value::as_array)
                .is_some_and(|a| {
                    !a.is_empty()
                        && a.iter().all(|e| {
                            e.get("version")
                                .and_then(Value::as_str)
                                .is_some_and(|s| s.starts_with('v'))
                                && e.get("replicas")
                                    .is_none_or(|n| n.as_i64().is_some_and(|n| n >= 1))
                        })
                })
                || json::has_text(v, "status.version")
        }
    };
    let seen = r.wait(cp, pred).await;
    r.verdicts.check(
        id::control_plane::STATUS_VERSION,
        seen.is_ok(),
        format!("no valid status version(s) reported for spec.version {spec_version}"),
        r.evidence(
            cp,
            "status version(s) missing or malformed",
            Some("status.versions"),
        ),
    );
}
