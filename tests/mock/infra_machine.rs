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
