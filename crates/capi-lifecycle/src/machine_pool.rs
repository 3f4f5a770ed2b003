//! SC-machinepool (docs/contract.md §4.1): owner gate, pause, ready/provisioned, providerIDList
//! and replicas tracking the MachinePool, MachinePool Machines when opted in, delete.

use super::core_sim::{
    CLUSTER_NAME_LABEL, ClusterSpec, controller_owner_ref, machine_pool_resource,
};
use super::env::EnvError;
use super::json::{get, get_bool, get_str};
use super::script::{ScriptRun, has_ready_condition};
use capi_contract::contract::Contract;
use capi_contract::rule_ids as id;
use kube::api::{Api, DynamicObject, ListParams};
use kube::discovery::ApiResource;
use serde_json::{Value, json};

pub const POOL_NAME_LABEL: &str = "cluster.x-k8s.io/pool-name";

pub async fn run(r: &mut ScriptRun<'_>) {
    let result = steps(r).await;
    r.finish(result);
}

fn tracks(want: i64) -> impl Fn(&Value) -> bool {
    move |v| {
        let ids = get(v, "spec.providerIDList")
            .and_then(Value::as_array)
            .map(Vec::len)
            .unwrap_or(0);
        i64::try_from(ids).ok() == Some(want)
            && get(v, "status.replicas").and_then(Value::as_i64) == Some(want)
    }
}

async fn steps(r: &mut ScriptRun<'_>) -> Result<(), EnvError> {
    let p = r.prefix();
    let imp = format!("{p}-imp");
    let cluster = format!("{p}-c");
    let pool = format!("{p}-mp");
    let boot = format!("{p}-boot");
    let res = r.subject.resource.clone();

    r.step("create Cluster and MachinePool");
    r.env
        .create_cluster_of(r.subject, &cluster, ClusterSpec::default())
        .await?;
    r.open_infra_gate(&cluster).await?;
    r.env.create_bootstrap_secret(&boot, &cluster).await?;
    let mp = r
        .env
        .create_machine_pool(&pool, &cluster, 2, (&res, &imp), &boot)
        .await?;
    // Owner gate on a throwaway object, so a provider acting early cannot spoil the main one.
    let imp0 = format!("{p}-imp0");
    r.create_unowned_and_expect_quiet(&imp0, id::infra_machinepool::OWNER_GATE)
        .await?;
    r.env.delete(&res, &imp0).await?;
    r.owned_while_paused(
        &imp,
        &cluster,
        controller_owner_ref(&mp),
        Some(id::infra_machinepool::PAUSE),
        true,
    )
    .await?;

    r.step("ready with 2 instances");
    let ready = r
        .wait(&imp, |v| get_bool(v, "status.ready") == Some(true))
        .await;
    r.verdicts.check(
        id::infra_machinepool::READY,
        ready.is_ok(),
        "status.ready not true before the deadline",
        r.evidence(&imp, "never ready", Some("status.ready")),
    );
    if r.contract() == Contract::V1Beta2 {
        let prov = r
            .wait(&imp, |v| {
                get_bool(v, "status.initialization.provisioned") == Some(true)
            })
            .await;
        r.verdicts.check(
            id::infra_machinepool::INITIALIZATION_PROVISIONED,
            prov.is_ok(),
            "status.initialization.provisioned not true before the deadline",
            r.evidence(
                &imp,
                "not provisioned",
                Some("status.initialization.provisioned"),
            ),
        );
    }
    let ready_cond = r.wait(&imp, has_ready_condition).await.is_ok();
    r.verdicts.check(
        id::infra_machinepool::CONDITIONS,
        ready_cond,
        "no Ready condition once ready",
        r.evidence(&imp, "Ready condition missing", Some("status.conditions")),
    );
    judge_tracking(r, &imp, 2).await;

    r.step("scale MachinePool to 3");
    r.env
        .merge_patch(
            &machine_pool_resource(),
            &pool,
            json!({"spec": {"replicas": 3}}),
            "scale MachinePool",
        )
        .await?;
    judge_tracking(r, &imp, 3).await;
    let inconsistent = r.meant_states(&imp).iter().any(|v| {
        get(v, "status.replicas")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            > 0
            && get(v, "spec.providerIDList")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty)
    });
    r.verdicts.check(
        id::infra_machinepool::LIST_REPLICAS_CONSISTENCY,
        !inconsistent,
        "a recorded state has status.replicas > 0 with an empty providerIDList",
        r.evidence(
            &imp,
            "replicas reported without provider IDs",
            Some("spec.providerIDList"),
        ),
    );

    r.step("MachinePool Machines");
    let latest = r.env.recorder.latest(&r.key(&imp)).unwrap_or(Value::Null);
    match get_str(&latest, "status.infrastructureMachineKind") {
        None => {
            r.verdicts.skip(
                id::infra_machinepool::MPM_KIND,
                "the provider does not opt in to MachinePool Machines",
            );
            r.verdicts.skip(
                id::infra_machinepool::MPM_OBJECTS,
                "the provider does not opt in to MachinePool Machines",
            );
        }
        Some(kind) => {
            let kind = kind.to_string();
            judge_mpm(r, &imp, &kind, &cluster, &pool, 3).await;
        }
    }
    r.delete_and_expect_gone(&imp, None).await?;
    Ok(())
}

async fn judge_tracking(r: &mut ScriptRun<'_>, imp: &str, want: i64) {
    let ok = r.wait(imp, tracks(want)).await;
    let last = ok.clone().unwrap_or_else(|l| l.unwrap_or(Value::Null));
    let ids = get(&last, "spec.providerIDList")
        .and_then(Value::as_array)
        .map(Vec::len)
        .unwrap_or(0);
    let replicas = get(&last, "status.replicas").and_then(Value::as_i64);
    if ids == 0 && replicas.is_some_and(|n| n > 0) {
        // The specific case belongs to list-replicas-consistency.
        r.verdicts.skip(
            id::infra_machinepool::PROVIDER_ID_LIST,
            "empty providerIDList with replicas reported (see infra-machinepool/list-replicas-consistency)",
        );
    } else {
        r.verdicts.check(
            id::infra_machinepool::PROVIDER_ID_LIST,
            i64::try_from(ids).ok() == Some(want),
            format!("spec.providerIDList has {ids} entries, the MachinePool wants {want}"),
            r.evidence(
                imp,
                "providerIDList does not track the pool",
                Some("spec.providerIDList"),
            ),
        );
    }
    r.verdicts.check(
        id::infra_machinepool::REPLICAS,
        replicas == Some(want),
        format!("status.replicas is {replicas:?}, the MachinePool wants {want}"),
        r.evidence(
            imp,
            "status.replicas does not track the pool",
            Some("status.replicas"),
        ),
    );
}

async fn judge_mpm(
    r: &mut ScriptRun<'_>,
    imp: &str,
    kind: &str,
    cluster: &str,
    pool: &str,
    want: usize,
) {
    let res = &r.subject.resource;
    let list_kind = ApiResource {
        group: res.group.clone(),
        version: res.version.clone(),
        api_version: res.api_version.clone(),
        kind: kind.to_string(),
        plural: capi_contract::contract::flect::pluralize(&kind.to_lowercase()),
    };
    let api: Api<DynamicObject> = r.env.api(&list_kind);
    let lp = ListParams::default().labels(&format!(
        "{CLUSTER_NAME_LABEL}={cluster},{POOL_NAME_LABEL}={pool}"
    ));
    let deadline = tokio::time::Instant::now() + r.env.settings.step_timeout;
    let mut last: Result<Vec<DynamicObject>, String> = Err("not listed".into());
    while tokio::time::Instant::now() < deadline {
        last = api
            .list(&lp)
            .await
            .map(|l| l.items)
            .map_err(|e| e.to_string());
        if last.is_err() {
            break;
        }
        if let Ok(items) = &last
            && items.len() == want
            && items.iter().all(|o| {
                o.data
                    .pointer("/spec/providerID")
                    .and_then(Value::as_str)
                    .is_some_and(|s| !s.is_empty())
            })
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    match last {
        Err(e) => {
            r.verdicts.fail(
                id::infra_machinepool::MPM_KIND,
                format!("cannot list {kind} at {}: {e}", res.api_version),
                r.evidence(
                    imp,
                    "infrastructureMachineKind not served at the pool's apiVersion",
                    Some("status.infrastructureMachineKind"),
                ),
            );
        }
        Ok(items) => {
            r.verdicts.pass(id::infra_machinepool::MPM_KIND);
            let with_id = items
                .iter()
                .filter(|o| {
                    o.data
                        .pointer("/spec/providerID")
                        .and_then(Value::as_str)
                        .is_some_and(|s| !s.is_empty())
                })
                .count();
            r.verdicts.check(
                id::infra_machinepool::MPM_OBJECTS,
                items.len() == want && with_id == want,
                format!("{} {kind} objects labelled for the pool ({with_id} with providerID), want {want}", items.len()),
                r.evidence(imp, "MachinePool Machines do not match the replicas", None),
            );
        }
    }
}
