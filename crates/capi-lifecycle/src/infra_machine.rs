//! SC-inframachine (docs/contract.md §4.1): owner gate, pause, finalizer, cluster and bootstrap
//! gates, providerID before provisioned, addresses, failure domain, Ready, delete (also with a
//! closed gate).

use super::core_sim::{ClusterSpec, MachineSpec};
use super::env::EnvError;
use super::infra_cluster::sticky_violation;
use super::ip_consumer;
use super::json::{self, get, get_bool};
use super::script::{ScriptRun, has_finalizer, has_ready_condition, provisioned_path};
use capi_contract::contract::Contract;
use capi_contract::rule_ids as id;
use kube::discovery::ApiResource;
use serde_json::Value;

const FAILURE_DOMAIN: &str = "fd-1";
const ADDRESS_TYPES: [&str; 5] = [
    "Hostname",
    "ExternalIP",
    "InternalIP",
    "ExternalDNS",
    "InternalDNS",
];

/// The main object's flow and four independent experiments (owner gate + cluster lookup,
/// delete with a closed gate, the bootstrap gate, the b1 failure gate) run concurrently: each has its own objects
/// and quiet windows, so the script takes as long as its longest part.
pub async fn run(r: &mut ScriptRun<'_>) {
    if r.contract() == capi_contract::contract::Contract::V1Beta2 {
        r.verdicts.skip(
            id::infra_machine::IN_PLACE,
            super::core_sim::IN_PLACE_NOT_IN_CORE,
        );
    }
    let p = r.prefix();
    let res = r.subject.resource.clone();
    let mut gates = r.part();
    let mut lookup = r.part();
    let mut failure = r.part();
    let mut bootstrap = r.part();
    let (main, closed, looked, failed, booted) = tokio::join!(
        steps(r),
        delete_with_closed_gate(&mut gates, &p, &res),
        owner_gate_and_lookup(&mut lookup, &p, &res),
        failure_gate(&mut failure, &p, &res),
        bootstrap_gate(&mut bootstrap, &p, &res),
    );
    if let Err(e) = main {
        r.env_failed(e);
    }
    r.end_step();
    let gone = closed.as_ref().ok().copied().flatten();
    r.absorb(gates, closed.map(|_| ()));
    r.absorb(lookup, looked);
    r.absorb(failure, failed);
    r.absorb(bootstrap, booted);
    // Deleting with the gate closed is only attributable to the gate when deletion works
    // with the gate open.
    if let Some(gone) = gone
        && r.verdicts
            .get(id::infra_machine::DELETE)
            .is_some_and(|v| v.outcome == capi_contract::model::Outcome::Pass)
    {
        let reason = "deletion did not complete while the cluster infrastructure gate was closed";
        let im = format!("{p}-im2");
        let ev = r.evidence(&im, reason, Some("metadata.finalizers"));
        r.verdicts
            .check(id::infra_machine::CLUSTER_INFRA_GATE, gone, reason, ev);
    }
}

/// Owner gate on a throwaway object, then the cluster lookup.
async fn owner_gate_and_lookup(
    r: &mut ScriptRun<'_>,
    p: &str,
    res: &ApiResource,
) -> Result<(), EnvError> {
    let im0 = format!("{p}-im0");
    r.create_unowned_and_expect_quiet(&im0, id::infra_machine::OWNER_GATE)
        .await?;
    r.env.delete(res, &im0).await?;
    cluster_lookup(r, p, res).await
}

fn provisioned_or_id(path: &'static str) -> impl Fn(&Value) -> bool {
    move |v| get_bool(v, path) == Some(true) || json::has_text(v, "spec.providerID")
}

async fn steps(r: &mut ScriptRun<'_>) -> Result<(), EnvError> {
    let p = r.prefix();
    let im = format!("{p}-im");
    let cluster = format!("{p}-c");
    let machine = format!("{p}-m");
    let boot = format!("{p}-boot");
    let res = r.subject.resource.clone();
    let path = provisioned_path(r.contract());

    // A machine whose sample names an IP address pool consumes IPs (ipam/consumer-claim).
    let pools = ip_consumer::named_pools(r);
    if !pools.is_empty() {
        ip_consumer::watch_claims(r);
    }

    r.step("create Cluster, Machine, bootstrap Secret");
    r.env
        .create_cluster_of(r.subject, &cluster, ClusterSpec::default())
        .await?;
    r.env.set_infra_provisioned(&cluster, false).await?;
    r.env.create_bootstrap_secret(&boot, &cluster).await?;
    let m = r
        .env
        .create_machine(
            &machine,
            &cluster,
            (&res, &im),
            MachineSpec {
                failure_domain: Some(FAILURE_DOMAIN),
                ..MachineSpec::default()
            },
        )
        .await?;
    r.owned_while_paused(
        &im,
        &cluster,
        super::core_sim::controller_owner_ref(&m),
        None,
        true,
    )
    .await?;

    r.step("owned, gates closed");
    let fin = r.wait(&im, has_finalizer).await;
    r.verdicts.check(
        id::infra_machine::FINALIZER,
        fin.is_ok(),
        "no finalizer after the Machine owner reference was set",
        r.evidence(&im, "no finalizer", Some("metadata.finalizers")),
    );

    r.step("gates open: provision");
    r.open_infra_gate(&cluster).await?;
    r.gate_opens(&im);
    r.env.set_data_secret_name(&machine, &boot).await?;
    let mut claims = None;
    match r.wait_ever(&im, |v| get_bool(v, path) == Some(true)).await {
        Ok(_) => {
            r.verdicts.pass(id::infra_machine::PROVISIONED);
            if !pools.is_empty() {
                claims = Some(ip_consumer::judge_provisioned(r, &pools, &im, &cluster, path).await);
            }
            // Judge the settled state: providerID may legitimately follow in the same reconcile.
            let settled = match r
                .wait(&im, |v| {
                    get_bool(v, path) == Some(true) && json::has_text(v, "spec.providerID")
                })
                .await
            {
                Ok(v) => v,
                Err(last) => last.unwrap_or(Value::Null),
            };
            judge(r, &im, &settled);
        }
        Err(_) => r.verdicts.fail(
            id::infra_machine::PROVISIONED,
            format!("{path} not true before the deadline"),
            r.evidence(&im, "never provisioned", Some(path)),
        ),
    }
    let meant = r.meant_states(&im);
    let values: Vec<&Value> = meant.iter().collect();
    if values.iter().any(|v| json::has_text(v, "spec.providerID")) {
        let bad = values
            .iter()
            .any(|v| get_bool(v, path) == Some(true) && !json::has_text(v, "spec.providerID"));
        r.verdicts.check(
            id::infra_machine::PROVIDER_ID_BEFORE_PROVISIONED,
            !bad,
            "a recorded state has the provisioned flag true with an empty spec.providerID",
            r.evidence(
                &im,
                "provisioned before providerID",
                Some("spec.providerID"),
            ),
        );
    } else {
        r.verdicts.skip(
            id::infra_machine::PROVIDER_ID_BEFORE_PROVISIONED,
            "spec.providerID was never set (see infra-machine/provider-id)",
        );
    }
    r.pause_by_annotation(&im, None).await?;
    let history = r.env.recorder.history(&r.key(&im));
    let flipped = sticky_violation(&history.iter().map(|s| &s.value).collect::<Vec<_>>(), path);
    r.verdicts.check(
        id::infra_machine::PROVISIONED_STICKY,
        !flipped,
        format!("{path} went back to false after being true"),
        r.evidence(&im, "provisioned flag flipped back", Some(path)),
    );
    r.delete_and_expect_gone(&im, id::infra_machine::DELETE)
        .await?;
    match claims {
        Some(claims) => ip_consumer::judge_deleted(r, &im, claims).await,
        None if pools.is_empty() => ip_consumer::skip_without_pools(r),
        None => r.verdicts.skip(
            id::ipam::CONSUMER_CLAIM,
            "the machine was never provisioned (see infra-machine/provisioned)",
        ),
    }
    Ok(())
}

/// Cluster infrastructure gate with the bootstrap gate open: no provisioning while the
/// Cluster's infrastructure is not provisioned; deleting meanwhile still completes. Returns
/// whether the object was gone before the deadline (judged by the caller).
async fn delete_with_closed_gate(
    r: &mut ScriptRun<'_>,
    p: &str,
    res: &ApiResource,
) -> Result<Option<bool>, EnvError> {
    r.step("cluster gate closed, bootstrap gate open; delete");
    let path = provisioned_path(r.contract());
    let cluster = format!("{p}-c2");
    let machine = format!("{p}-m2");
    let im = format!("{p}-im2");
    let boot = format!("{p}-boot2");
    r.env
        .create_cluster_of(r.subject, &cluster, ClusterSpec::default())
        .await?;
    r.env.set_infra_provisioned(&cluster, false).await?;
    let m = machine_with_data(r, res, (&machine, &im, &boot), &cluster).await?;
    create_adopted(r, res, &im, &m, &cluster).await?;
    let early = quick_check(r, &im, provisioned_or_id(path)).await;
    r.verdicts.check(
        id::infra_machine::CLUSTER_INFRA_GATE,
        !early,
        "provisioned (or set providerID) while the Cluster's infrastructure was not provisioned",
        r.evidence(
            &im,
            "acted before the cluster infrastructure gate opened",
            Some(path),
        ),
    );
    r.env.delete(res, &im).await?;
    let gone = r
        .env
        .recorder
        .wait_gone(&r.key(&im), r.env.settings.step_timeout)
        .await;
    Ok(Some(gone))
}

/// Bootstrap gate with the cluster infrastructure gate open: no provisioning (nor providerID)
/// while the Machine has no `spec.bootstrap.dataSecretName`.
async fn bootstrap_gate(r: &mut ScriptRun<'_>, p: &str, res: &ApiResource) -> Result<(), EnvError> {
    r.step("cluster gate open, bootstrap gate closed");
    let path = provisioned_path(r.contract());
    let cluster = format!("{p}-c5");
    let machine = format!("{p}-m5");
    let im = format!("{p}-im5");
    r.env
        .create_cluster_of(r.subject, &cluster, ClusterSpec::default())
        .await?;
    r.open_infra_gate(&cluster).await?;
    let m = r
        .env
        .create_machine(&machine, &cluster, (res, &im), MachineSpec::default())
        .await?;
    create_adopted(r, res, &im, &m, &cluster).await?;
    let early = quick_check(r, &im, provisioned_or_id(path)).await;
    r.verdicts.check(
        id::infra_machine::BOOTSTRAP_GATE,
        !early,
        "provisioned (or set providerID) before Machine.spec.bootstrap.dataSecretName was set",
        r.evidence(&im, "acted before the bootstrap gate opened", Some(path)),
    );
    r.env.delete(res, &im).await?;
    Ok(())
}

/// Contract v1beta1: once `status.failureReason` is set the provider stops reconciling.
async fn failure_gate(r: &mut ScriptRun<'_>, p: &str, res: &ApiResource) -> Result<(), EnvError> {
    if r.contract() != Contract::V1Beta1 {
        return Ok(());
    }
    r.step("failure reason set: no provisioning");
    let path = provisioned_path(r.contract());
    let cluster = format!("{p}-c4");
    let machine = format!("{p}-m4");
    let im = format!("{p}-im4");
    let boot = format!("{p}-boot4");
    r.env
        .create_cluster_of(r.subject, &cluster, ClusterSpec::default())
        .await?;
    r.open_infra_gate(&cluster).await?;
    let m = machine_with_data(r, res, (&machine, &im, &boot), &cluster).await?;
    let acted = r
        .failed_then_owned(
            &im,
            &cluster,
            super::core_sim::controller_owner_ref(&m),
            provisioned_or_id(path),
            &format!("{p}-im"),
        )
        .await?;
    r.verdicts.check(
        id::infra_machine::FAILURE_GATE,
        !acted,
        "provisioned although status.failureReason was set",
        r.evidence(
            &im,
            "reconciled past a terminal failure",
            Some("status.failureReason"),
        ),
    );
    Ok(())
}

/// A Machine whose cluster-name label names a Cluster that does not exist: no provisioning.
async fn cluster_lookup(r: &mut ScriptRun<'_>, p: &str, res: &ApiResource) -> Result<(), EnvError> {
    r.step("cluster-name label names a missing Cluster");
    let path = provisioned_path(r.contract());
    let missing = format!("{p}-missing");
    let machine = format!("{p}-m3");
    let im = format!("{p}-im3");
    let boot = format!("{p}-boot3");
    let m = machine_with_data(r, res, (&machine, &im, &boot), &missing).await?;
    create_adopted(r, res, &im, &m, &missing).await?;
    let acted = quick_check(r, &im, provisioned_or_id(path)).await;
    r.verdicts.check(
        id::infra_machine::CLUSTER_LOOKUP,
        !acted,
        "provisioned although the Cluster named by cluster.x-k8s.io/cluster-name does not exist",
        r.evidence(&im, "acted without its Cluster", Some(path)),
    );
    Ok(())
}

/// Whether `pred` becomes true within the quiet window (longer while the provider is still
/// writing the object: [`super::timeline::Recorder::wait_for_settled`]).
async fn quick_check(r: &ScriptRun<'_>, name: &str, pred: impl Fn(&Value) -> bool) -> bool {
    r.env
        .recorder
        .wait_for_settled(
            &r.key(name),
            r.env.quiet_window(),
            r.env.step_deadline(),
            pred,
        )
        .await
        .is_ok()
}

fn judge(r: &mut ScriptRun<'_>, im: &str, v: &Value) {
    let id = json::get_str(v, "spec.providerID").unwrap_or_default();
    r.verdicts.check(
        id::infra_machine::PROVIDER_ID,
        !id.is_empty() && id.len() <= 512,
        format!(
            "spec.providerID is {} characters once provisioned (want 1..512)",
            id.len()
        ),
        r.evidence(im, "invalid providerID", Some("spec.providerID")),
    );
    match get(v, "status.addresses") {
        // Optional in both contracts ("Set status.addresses to the provider-specific set of
        // instance addresses (optional)"; CAPI's Machine controller copies them only when
        // present): absent is never a failure, whatever the schema declares
        // (docs/core-simulation.md "Rule decisions").
        None => r.verdicts.skip(
            id::infra_machine::ADDRESSES,
            "the provider reports no status.addresses once provisioned (optional in the contract)",
        ),
        Some(a) => {
            let ok = a.as_array().is_some_and(|a| {
                a.len() <= 256
                    && a.iter().all(|x| {
                        let t = x.get("type").and_then(Value::as_str).unwrap_or_default();
                        let addr = x.get("address").and_then(Value::as_str).unwrap_or_default();
                        ADDRESS_TYPES.contains(&t) && (1..=256).contains(&addr.len())
                    })
            });
            r.verdicts.check(
                id::infra_machine::ADDRESSES,
                ok,
                "status.addresses has an entry with an unknown type or an empty/too long address",
                r.evidence(im, "invalid addresses", Some("status.addresses")),
            );
        }
    }
    if r.contract() == Contract::V1Beta2 {
        match json::get_str(v, "status.failureDomain") {
            None => r.verdicts.skip(
                id::infra_machine::FAILURE_DOMAIN_PLACEMENT,
                "the provider reports no status.failureDomain",
            ),
            Some(fd) => r.verdicts.check(
                id::infra_machine::FAILURE_DOMAIN_PLACEMENT,
                fd == FAILURE_DOMAIN,
                format!("status.failureDomain is {fd:?}, the Machine asked for {FAILURE_DOMAIN:?}"),
                r.evidence(
                    im,
                    "instance not placed in the Machine's failure domain",
                    Some("status.failureDomain"),
                ),
            ),
        }
    } else {
        r.verdicts.skip(
            id::infra_machine::FAILURE_DOMAIN_PLACEMENT,
            "contract v1beta1 has no status.failureDomain to observe placement",
        );
    }
    r.verdicts.check(
        id::infra_machine::READY_CONDITION,
        has_ready_condition(v),
        "no Ready condition once provisioned",
        r.evidence(im, "Ready condition missing", Some("status.conditions")),
    );
}

/// A Machine of `cluster` for the InfraMachine `im` whose bootstrap data Secret `boot` exists
/// (`bootstrap.dataSecretName` only, as SC-inframachine's Machines are: docs/core-simulation.md).
/// Creates the InfraMachine `im` from the sample (watched from before), then adopts it as core
/// does: the Machine `m` as controller owner, `cluster` as its cluster-name label.
async fn create_adopted(
    r: &mut ScriptRun<'_>,
    res: &ApiResource,
    im: &str,
    m: &Value,
    cluster: &str,
) -> Result<(), EnvError> {
    r.watch(res, im).await;
    r.env.create(res, r.provider_object(im, &[])).await?;
    r.env
        .adopt(res, im, super::core_sim::controller_owner_ref(m), cluster)
        .await?;
    Ok(())
}

async fn machine_with_data(
    r: &ScriptRun<'_>,
    res: &ApiResource,
    (machine, im, boot): (&str, &str, &str),
    cluster: &str,
) -> Result<Value, EnvError> {
    r.env.create_bootstrap_secret(boot, cluster).await?;
    r.env
        .create_machine(
            machine,
            cluster,
            (res, im),
            MachineSpec {
                data_secret: Some(boot),
                ..MachineSpec::default()
            },
        )
        .await
}
