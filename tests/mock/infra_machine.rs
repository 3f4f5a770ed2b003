//! SC-inframachine against the mock, both contracts.

use super::harness::*;
use capi_conformance::contract::Contract;
use capi_conformance::mock::kinds::MOCK_MACHINE;
use kube::core::DynamicObject;
use serde_json::json;

/// Cluster `c` (infra not provisioned) and Machine `m` referencing `im`, no bootstrap data.
pub async fn machine_setup(env: &Env, fd: Option<&str>) -> (DynamicObject, DynamicObject) {
    let cluster = env.cluster("c", false).await;
    let mut spec = json!({
        "clusterName": "c",
        "bootstrap": {},
        "infrastructureRef": {"apiGroup": "infrastructure.mock.capi-conformance.io", "kind": "MockMachine", "name": "im"},
    });
    if let Some(fd) = fd {
        spec["failureDomain"] = json!(fd);
    }
    let machine = env
        .create_core(
            "Machine",
            "m",
            json!({"cluster.x-k8s.io/cluster-name": "c"}),
            spec,
        )
        .await;
    (cluster, machine)
}

pub async fn open_gates(env: &Env) {
    env.set_cluster_infra("c", true).await;
    env.patch_core(
        "Machine",
        "m",
        json!({"spec": {"bootstrap": {"dataSecretName": "boot"}}}),
    )
    .await;
}

fn provider_id(o: &DynamicObject) -> Option<&str> {
    at(o, "spec.providerID")
        .and_then(|v| v.as_str())
        .filter(|s| !s.is_empty())
}

async fn healthy(contract: Contract) {
    let env = with_mock("").await;
    let (_, machine) = machine_setup(&env, Some("fd-2")).await;
    let api = env.mock_api(MOCK_MACHINE, contract);
    let path = provisioned_path(contract);
    env.create_mock(MOCK_MACHINE, contract, "im", json!({}), json!({}))
        .await;
    stays(&api, "im", "no finalizer without an owner", |o| {
        !has_finalizer(o) && at(o, "status").is_none()
    })
    .await;
    env.own(MOCK_MACHINE, contract, "im", &machine, "c").await;
    wait_for(&api, "im", "finalizer", has_finalizer).await;
    stays(
        &api,
        "im",
        "no providerID while the cluster gate is closed",
        |o| provider_id(o).is_none() && !flag(o, path),
    )
    .await;
    env.set_cluster_infra("c", true).await;
    let waiting = stays(
        &api,
        "im",
        "no providerID while the bootstrap gate is closed",
        |o| provider_id(o).is_none() && !flag(o, path),
    )
    .await;
    assert_eq!(
        condition(&waiting, "Ready").unwrap()["reason"],
        "WaitingForBootstrapData"
    );
    env.patch_core(
        "Machine",
        "m",
        json!({"spec": {"bootstrap": {"dataSecretName": "boot"}}}),
    )
    .await;
    let ready = wait_for(&api, "im", "provisioned", |o| flag(o, path)).await;
    let id = provider_id(&ready).unwrap();
    assert!(
        id.starts_with(&format!("mock://{NS}/im/")) && id.len() <= 512,
        "{id}"
    );
    let addresses = at(&ready, "status.addresses").unwrap().as_array().unwrap();
    assert!(addresses.iter().any(|a| a["type"] == "InternalIP"));
    match contract {
        Contract::V1Beta1 => assert!(at(&ready, "status.failureDomain").is_none()),
        Contract::V1Beta2 => assert_eq!(at(&ready, "status.failureDomain"), Some(&json!("fd-2"))),
    }
    assert_eq!(condition(&ready, "Ready").unwrap()["status"], "True");
    let wipe = match contract {
        Contract::V1Beta1 => json!({"ready": false}),
        Contract::V1Beta2 => json!({"initialization": {"provisioned": false}}),
    };
    assert_pause_honoured(&env, MOCK_MACHINE, contract, "im", "c", wipe, |o| {
        flag(o, path)
    })
    .await;
    let again = api.get("im").await.unwrap();
    assert_eq!(provider_id(&again), Some(id), "providerID is stable");
    env.delete_mock(MOCK_MACHINE, contract, "im").await;
    wait_gone(&api, "im").await;
    assert!(env.mock.as_ref().unwrap().infra().is_empty());
    env.stop().await;
}

#[tokio::test]
async fn infra_machine_v1beta1_waits_for_gates_provisions_and_deletes() {
    healthy(Contract::V1Beta1).await;
}

#[tokio::test]
async fn infra_machine_v1beta2_waits_for_gates_provisions_and_deletes() {
    healthy(Contract::V1Beta2).await;
}

#[tokio::test]
async fn infra_machine_delete_completes_while_gates_are_closed() {
    let env = with_mock("").await;
    let (_, machine) = machine_setup(&env, None).await;
    let api = env.mock_api(MOCK_MACHINE, Contract::V1Beta2);
    env.create_mock(MOCK_MACHINE, Contract::V1Beta2, "im", json!({}), json!({}))
        .await;
    env.own(MOCK_MACHINE, Contract::V1Beta2, "im", &machine, "c")
        .await;
    wait_for(&api, "im", "finalizer", has_finalizer).await;
    env.delete_mock(MOCK_MACHINE, Contract::V1Beta2, "im").await;
    wait_gone(&api, "im").await;
    env.stop().await;
}

#[tokio::test]
async fn infra_machine_without_its_cluster_stays_quiet() {
    let env = with_mock("").await;
    let (_, machine) = machine_setup(&env, None).await;
    open_gates(&env).await;
    let api = env.mock_api(MOCK_MACHINE, Contract::V1Beta2);
    env.create_mock(MOCK_MACHINE, Contract::V1Beta2, "im", json!({}), json!({}))
        .await;
    env.own(
        MOCK_MACHINE,
        Contract::V1Beta2,
        "im",
        &machine,
        "no-such-cluster",
    )
    .await;
    stays(&api, "im", "no action for a missing Cluster", |o| {
        !has_finalizer(o) && provider_id(o).is_none()
    })
    .await;
    env.stop().await;
}

/// A reconcile that works from a stale copy (the watch cache has not delivered the paused
/// annotation yet) must not write: the mock's writes carry the resourceVersion they were
/// worked out from, so the server refuses them with 409 and the retry reads afresh. Without
/// that, a lagging cache made the baseline "change the object while paused" under faults.
#[tokio::test]
async fn infra_machine_reconcile_from_a_stale_copy_writes_nothing() {
    use capi_conformance::mock::infra::SimulatedInfra;
    use capi_conformance::mock::reconcile::{Ctx, infra_machine};
    use kube::ResourceExt;
    use kube::api::{Patch, PatchParams};
    use std::sync::Arc;

    let env = server_only().await;
    let (_, machine) = machine_setup(&env, None).await;
    open_gates(&env).await;
    let contract = Contract::V1Beta1;
    let api = env.mock_api(MOCK_MACHINE, contract);
    env.create_mock(MOCK_MACHINE, contract, "im", json!({}), json!({}))
        .await;
    env.own(MOCK_MACHINE, contract, "im", &machine, "c").await;
    let ctx = Arc::new(Ctx {
        client: env.client.clone(),
        opts: Default::default(),
        infra: SimulatedInfra::new(std::time::Duration::ZERO),
        clusters: None,
        rate_limiter: Default::default(),
    });
    // First pass adds the finalizer.
    let fresh = api.get("im").await.unwrap();
    infra_machine::reconcile(Arc::new(fresh), ctx.clone())
        .await
        .unwrap();
    let stale = api.get("im").await.unwrap();
    assert!(has_finalizer(&stale));
    let body = json!({"metadata": {"annotations": {"cluster.x-k8s.io/paused": ""}}});
    api.patch("im", &PatchParams::default(), &Patch::Merge(&body))
        .await
        .unwrap();
    let paused = api.get("im").await.unwrap();

    let err = infra_machine::reconcile(Arc::new(stale), ctx.clone())
        .await
        .expect_err("a write from a stale copy must be refused");
    assert!(is_conflict(&err), "{err}");
    let after = api.get("im").await.unwrap();
    assert_eq!(after.resource_version(), paused.resource_version());
    assert!(provider_id(&after).is_none() && at(&after, "status").is_none());

    // The fresh copy shows the annotation: nothing to do, nothing written.
    infra_machine::reconcile(Arc::new(after), ctx.clone())
        .await
        .unwrap();
    let still = api.get("im").await.unwrap();
    assert_eq!(still.resource_version(), paused.resource_version());

    // Unpaused, the same reconcile provisions: the refusal above was the staleness.
    let body = json!({"metadata": {"annotations": {"cluster.x-k8s.io/paused": null}}});
    let unpaused = api
        .patch("im", &PatchParams::default(), &Patch::Merge(&body))
        .await
        .unwrap();
    infra_machine::reconcile(Arc::new(unpaused), ctx)
        .await
        .unwrap();
    let provisioned = api.get("im").await.unwrap();
    assert!(provider_id(&provisioned).is_some());
    assert_eq!(at(&provisioned, "status.ready"), Some(&json!(true)));
    env.stop().await;
}

/// Whether the reconcile failed on a 409 Conflict (also inside the finalizer helper's error).
fn is_conflict(err: &capi_conformance::mock::reconcile::ReconcileError) -> bool {
    use capi_conformance::mock::reconcile::ReconcileError;
    use kube::runtime::finalizer::Error;
    match err {
        ReconcileError::Kube(kube::Error::Api(s)) => s.code == 409,
        ReconcileError::Finalizer(inner) => match inner.as_ref() {
            Error::ApplyFailed(e) | Error::CleanupFailed(e) => is_conflict(e),
            _ => false,
        },
        _ => false,
    }
}
