//! SC-controlplane (docs/contract.md §4.1), the part that needs no Machine stack: kubeconfig
//! Secret, initialized, endpoint, version(s), replica counters, scale subresource, pause, delete.

use super::bootstrap::SECRET_TYPE;
use super::core_sim::{CLUSTER_NAME_LABEL, secret_resource};
use super::env::EnvError;
use super::json::{self, get, get_bool};
use super::observer::watch_all;
use super::script::{ScriptRun, cluster_owner};
use crate::rule_ids as id;
use capi_contract::contract::Contract;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

const NO_MACHINES: &str =
    "needs a Machine-based control plane with a working infrastructure and bootstrap stack";

pub async fn run(r: &mut ScriptRun<'_>) {
    let result = steps(r).await;
    r.finish(result);
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
    let contract = r.contract();
    r.verdicts
        .skip(id::control_plane::MACHINE_LABEL, NO_MACHINES);
    r.verdicts
        .skip(id::control_plane::IN_PLACE_PROPAGATION, NO_MACHINES);

    r.step("create Cluster and control plane");
    r.keep(watch_all(
        r.env.client.clone(),
        &secret_resource(),
        &r.env.namespace,
        r.env.recorder.clone(),
    ));
    // KCP does nothing past its certificates without a valid endpoint; the endpoint is where
    // the workload cluster serves once the provider's `<cluster>-ca` exists.
    let c = r
        .env
        .create_cluster_with_endpoint(r.subject, &cluster, Some((&res, &cp)))
        .await?;
    r.env.set_infra_provisioned(&cluster, true).await?;
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
        if env
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
    let secret_ok = secret.as_ref().is_some_and(|s| {
        s.get("type").and_then(Value::as_str) == Some(SECRET_TYPE)
            && s.pointer("/metadata/labels")
                .and_then(|l| l.get(CLUSTER_NAME_LABEL))
                .and_then(Value::as_str)
                == Some(cluster.as_str())
            && s.pointer("/data/value").is_some()
    });
    r.verdicts.check(
        id::control_plane::KUBECONFIG_SECRET,
        secret_ok,
        format!("Secret {cluster}-kubeconfig missing, or without type {SECRET_TYPE}, the cluster-name label or data key `value`"),
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
    // Machines' conditions for the rest, which CAPI core's Machine controller sets and the
    // simulation does not: they get a short look, not the step deadline.
    let own = r.wait(&cp, |v| counted(Some(v), want)).await;
    let machines = owned_machines(r, &cp).await;
    let conv = match own {
        Err(last) => Err(last),
        Ok(_) if machines > 0 => {
            r.env
                .recorder
                .wait_for(
                    &r.key(&cp),
                    r.env.quiet_window() * 3,
                    converged(contract, want),
                )
                .await
        }
        Ok(_) => r.wait(&cp, converged(contract, want)).await,
    };
    match &conv {
        Err(last) if machines > 0 && counted(last.as_ref(), want) => {
            r.verdicts.inconclusive(
                id::control_plane::STATUS_REPLICAS,
                format!(
                    "status.replicas and status.selector converged to {want}; the other counters count its {machines} Machine(s) whose Ready, Available or UpToDate conditions CAPI core's Machine controller sets from the workload cluster's Nodes, which the simulation does not run (docs/core-simulation.md)"
                ),
            );
        }
        _ => r.verdicts.check(
            id::control_plane::STATUS_REPLICAS,
            conv.is_ok(),
            format!("status counters and selector did not converge to {want}"),
            r.evidence(
                &cp,
                "replica counters did not converge",
                Some("status.replicas"),
            ),
        ),
    }
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
            let scaled = if machines > 0 {
                r.env
                    .recorder
                    .wait_for(&r.key(&cp), r.env.quiet_window() * 3, three)
                    .await
            } else {
                r.wait(&cp, three).await
            };
            if scaled.is_err() && spec3.is_ok() && machines > 0 {
                // KCP scales up only once its Machines are healthy (`preflightChecks`: nodes,
                // control plane Pods, etcd members of the workload cluster).
                r.verdicts.inconclusive(
                    id::control_plane::SCALE_SUBRESOURCE,
                    format!(
                        "the scale subresource set spec.replicas to 3; status.replicas stayed below 3: a control plane of Machines ({machines} now) adds one when its Machines are healthy, which needs CAPI core's Machine controller and a workload cluster with their Nodes (docs/core-simulation.md)"
                    ),
                );
            } else {
                r.verdicts.check(
                    id::control_plane::SCALE_SUBRESOURCE,
                    scaled.is_ok(),
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

    r.pause_by_annotation(&cp, Some(id::control_plane::PAUSE))
        .await?;
    r.delete_and_expect_gone(&cp, None).await?;
    Ok(())
}

/// How many Machines control plane `cp` owns (a control plane made of Machines: KCP).
async fn owned_machines(r: &ScriptRun<'_>, cp: &str) -> usize {
    let kind = &r.subject.resource.kind;
    let Ok(list) = r
        .env
        .api(&super::core_sim::machine_resource())
        .list(&Default::default())
        .await
    else {
        return 0;
    };
    list.items
        .iter()
        .filter(|m| {
            m.metadata
                .owner_references
                .iter()
                .flatten()
                .any(|o| &o.kind == kind && o.name == cp)
        })
        .count()
}

/// Whether `last` has `status.replicas` == `want` and a selector: what a control plane counts
/// itself, before the counters of its Machines' conditions.
fn counted(last: Option<&Value>, want: i64) -> bool {
    last.is_some_and(|v| {
        get(v, "status.replicas").and_then(Value::as_i64) == Some(want)
            && json::has_text(v, "status.selector")
    })
}

/// Certificate Secrets `<cluster>-<purpose>` the provider keeps: type and cluster-name label.
async fn judge_certificates(r: &mut ScriptRun<'_>, cp: &str, cluster: &str) {
    let ca = format!("Secret/{cluster}-ca");
    let _ = r
        .env
        .recorder
        .wait_for(&ca, r.env.quiet_window(), |_| true)
        .await;
    let found: Vec<(String, Value)> = ["ca", "etcd", "proxy", "sa"]
        .iter()
        .filter_map(|p| {
            let name = format!("{cluster}-{p}");
            r.env
                .recorder
                .latest(&format!("Secret/{name}"))
                .map(|v| (name, v))
        })
        .collect();
    if found.is_empty() {
        r.verdicts.skip(
            id::control_plane::CERTIFICATES,
            "the provider keeps no <cluster>-<purpose> certificate Secrets",
        );
        return;
    }
    let bad: Vec<&str> = found
        .iter()
        .filter(|(_, s)| {
            s.get("type").and_then(Value::as_str) != Some(SECRET_TYPE)
                || s.pointer("/metadata/labels")
                    .and_then(|l| l.get(CLUSTER_NAME_LABEL))
                    .and_then(Value::as_str)
                    != Some(cluster)
        })
        .map(|(n, _)| n.as_str())
        .collect();
    r.verdicts.check(
        id::control_plane::CERTIFICATES,
        bad.is_empty(),
        format!(
            "certificate Secrets without type {SECRET_TYPE} or the cluster-name label: {}",
            bad.join(", ")
        ),
        r.evidence(cp, "certificate Secrets malformed", None),
    );
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
