//! SC-machinepool against the mock, both contracts.

use super::harness::*;
use capi_conformance::contract::Contract;
use capi_conformance::mock::kinds::{MOCK_MACHINE, MOCK_MACHINE_POOL};
use kube::api::ListParams;
use kube::core::DynamicObject;
use serde_json::json;

pub async fn pool_setup(env: &Env, replicas: i64) -> DynamicObject {
    env.cluster("c", true).await;
    env.create_core(
        "MachinePool",
        "mp",
        json!({"cluster.x-k8s.io/cluster-name": "c"}),
        json!({"clusterName": "c", "replicas": replicas, "template": {"spec": {
            "clusterName": "c",
            "bootstrap": {"dataSecretName": "boot"},
            "infrastructureRef": {"apiGroup": "infrastructure.mock.capi-conformance.io", "kind": "MockMachinePool", "name": "imp"},
        }}}),
    )
    .await
}

pub fn ids(o: &DynamicObject) -> usize {
    at(o, "spec.providerIDList")
        .and_then(|v| v.as_array())
        .map_or(0, Vec::len)
}

pub fn replicas(o: &DynamicObject) -> i64 {
    at(o, "status.replicas")
        .and_then(|v| v.as_i64())
        .unwrap_or(-1)
}

pub async fn pool_machines(env: &Env, contract: Contract) -> Vec<DynamicObject> {
    let lp = ListParams::default()
        .labels("cluster.x-k8s.io/cluster-name=c,cluster.x-k8s.io/pool-name=mp");
    env.mock_api(MOCK_MACHINE, contract)
        .list(&lp)
        .await
        .unwrap()
        .items
}

async fn healthy(contract: Contract) {
    let env = with_mock("").await;
    let pool = pool_setup(&env, 2).await;
    let api = env.mock_api(MOCK_MACHINE_POOL, contract);
    env.create_mock(
        MOCK_MACHINE_POOL,
        contract,
        "imp",
        json!({}),
        json!({"machinePoolMachines": true}),
    )
    .await;
    stays(&api, "imp", "quiet without an owner", |o| {
        at(o, "status").is_none()
    })
    .await;
    env.own(MOCK_MACHINE_POOL, contract, "imp", &pool, "c")
        .await;
    let ready = wait_for(&api, "imp", "ready with 2 instances", |o| {
        flag(o, "status.ready") && ids(o) == 2 && replicas(o) == 2
    })
    .await;
    if contract == Contract::V1Beta2 {
        assert!(flag(&ready, "status.initialization.provisioned"));
    } else {
        assert!(at(&ready, "status.initialization").is_none());
    }
    assert_eq!(
        at(&ready, "status.infrastructureMachineKind"),
        Some(&json!("MockMachine"))
    );
    let machines = pool_machines(&env, contract).await;
    assert_eq!(machines.len(), 2);
    assert!(machines.iter().all(|m| at(m, "spec.providerID").is_some()));
    env.patch_core("MachinePool", "mp", json!({"spec": {"replicas": 3}}))
        .await;
    wait_for(&api, "imp", "3 instances", |o| {
        ids(o) == 3 && replicas(o) == 3
    })
    .await;
    env.patch_core("MachinePool", "mp", json!({"spec": {"replicas": 1}}))
        .await;
    wait_for(&api, "imp", "1 instance", |o| {
        ids(o) == 1 && replicas(o) == 1
    })
    .await;
    let start = std::time::Instant::now();
    while pool_machines(&env, contract).await.len() != 1 {
        assert!(
            start.elapsed() < DEADLINE,
            "pool machines were not scaled down"
        );
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_pause_honoured(
        &env,
        MOCK_MACHINE_POOL,
        contract,
        "imp",
        "c",
        json!({"ready": false}),
        |o| flag(o, "status.ready"),
    )
    .await;
    env.delete_mock(MOCK_MACHINE_POOL, contract, "imp").await;
    wait_gone(&api, "imp").await;
    assert!(env.mock.as_ref().unwrap().infra().is_empty());
    env.stop().await;
}

#[tokio::test]
async fn machine_pool_v1beta1_tracks_replicas_and_deletes() {
    healthy(Contract::V1Beta1).await;
}

#[tokio::test]
async fn machine_pool_v1beta2_tracks_replicas_and_deletes() {
    healthy(Contract::V1Beta2).await;
}
