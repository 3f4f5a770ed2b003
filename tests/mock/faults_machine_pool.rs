//! One test per InfraMachinePool fault.

use super::harness::*;
use super::machine_pool::{ids, pool_setup, replicas};
use capi_conformance::contract::Contract;
use capi_conformance::mock::kinds::{MOCK_MACHINE, MOCK_MACHINE_POOL};
use kube::ResourceExt;
use kube::api::{Api, ListParams, Patch, PatchParams};
use kube::core::DynamicObject;
use serde_json::json;

const B2: Contract = Contract::V1Beta2;

async fn drive(faults: &str, mpm: bool) -> (Env, Api<DynamicObject>) {
    let env = with_mock("").await;
    let pool = pool_setup(&env, 2).await;
    env.create_mock(
        MOCK_MACHINE_POOL,
        B2,
        "imp",
        fault(faults),
        json!({"machinePoolMachines": mpm}),
    )
    .await;
    env.own(MOCK_MACHINE_POOL, B2, "imp", &pool, "c").await;
    let api = env.mock_api(MOCK_MACHINE_POOL, B2);
    (env, api)
}

fn ready(o: &DynamicObject) -> bool {
    flag(o, "status.ready")
}

#[tokio::test]
async fn owner_gate_fault_provisions_without_an_owner() {
    let env = with_mock("").await;
    pool_setup(&env, 2).await;
    env.create_mock(
        MOCK_MACHINE_POOL,
        B2,
        "imp",
        fault("infra-machinepool/owner-gate"),
        json!({}),
    )
    .await;
    let api = env.mock_api(MOCK_MACHINE_POOL, B2);
    wait_for(&api, "imp", "ready without an owner", ready).await;
    env.stop().await;
}

#[tokio::test]
async fn pause_fault_keeps_reconciling_while_paused() {
    let (env, api) = drive("infra-machinepool/pause", false).await;
    wait_for(&api, "imp", "ready", ready).await;
    env.patch_core("Cluster", "c", json!({"spec": {"paused": true}}))
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    api.patch_status(
        "imp",
        &PatchParams::default(),
        &Patch::Merge(&json!({"status": {"ready": false}})),
    )
    .await
    .unwrap();
    wait_for(&api, "imp", "restored while paused", ready).await;
    env.stop().await;
}

#[tokio::test]
async fn provider_id_list_fault_keeps_the_list_short() {
    let (env, api) = drive("infra-machinepool/provider-id-list", false).await;
    let o = wait_for(&api, "imp", "ready", |o| ready(o) && replicas(o) == 2).await;
    assert_eq!(ids(&o), 1);
    env.stop().await;
}

#[tokio::test]
async fn replicas_fault_keeps_the_first_count() {
    let (env, api) = drive("infra-machinepool/replicas", false).await;
    wait_for(&api, "imp", "ready with 2", |o| {
        ready(o) && replicas(o) == 2
    })
    .await;
    env.patch_core("MachinePool", "mp", json!({"spec": {"replicas": 3}}))
        .await;
    wait_for(&api, "imp", "3 provider IDs", |o| ids(o) == 3).await;
    stays(&api, "imp", "status.replicas stuck at 2", |o| {
        replicas(o) == 2
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn list_replicas_consistency_fault_reports_replicas_with_an_empty_list() {
    let (env, api) = drive("infra-machinepool/list-replicas-consistency", false).await;
    let o = wait_for(&api, "imp", "replicas 2", |o| replicas(o) == 2).await;
    assert_eq!(ids(&o), 0);
    env.stop().await;
}

#[tokio::test]
async fn ready_fault_never_sets_ready() {
    let (env, api) = drive("infra-machinepool/ready", false).await;
    wait_for(&api, "imp", "instances", |o| {
        ids(o) == 2 && replicas(o) == 2
    })
    .await;
    stays(&api, "imp", "not ready", |o| {
        !ready(o) && !flag(o, "status.initialization.provisioned")
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn mpm_kind_fault_reports_an_unserved_kind() {
    let (env, api) = drive("infra-machinepool/mpm-kind", true).await;
    let o = wait_for(&api, "imp", "ready", ready).await;
    assert_eq!(
        at(&o, "status.infrastructureMachineKind"),
        Some(&json!("MockMachinePoolMachine"))
    );
    env.stop().await;
}

#[tokio::test]
async fn mpm_objects_fault_omits_the_pool_name_label() {
    let (env, api) = drive("infra-machinepool/mpm-objects", true).await;
    let o = wait_for(&api, "imp", "ready", ready).await;
    let uid = o.uid().unwrap();
    let machines = env
        .mock_api(MOCK_MACHINE, B2)
        .list(&ListParams::default())
        .await
        .unwrap()
        .items;
    let owned: Vec<_> = machines
        .iter()
        .filter(|m| m.owner_references().iter().any(|r| r.uid == uid))
        .collect();
    assert_eq!(owned.len(), 2);
    assert!(
        owned
            .iter()
            .all(|m| !m.labels().contains_key("cluster.x-k8s.io/pool-name"))
    );
    env.stop().await;
}

#[tokio::test]
async fn conditions_fault_never_writes_ready() {
    let (env, api) = drive("infra-machinepool/conditions", false).await;
    let o = wait_for(&api, "imp", "ready", ready).await;
    assert!(condition(&o, "Ready").is_none());
    env.stop().await;
}
