//! One test per InfraCluster fault (and the provider-wide `all/*` faults, driven on a
//! MockCluster): the same drive as the healthy test shows exactly the faulty behaviour.

use super::harness::*;
use capi_conformance::contract::Contract;
use capi_conformance::mock::kinds::MOCK_CLUSTER;
use kube::api::{Api, Patch, PatchParams};
use kube::core::DynamicObject;
use serde_json::json;

const B2: Contract = Contract::V1Beta2;

/// Cluster `c1` plus MockCluster `ic` with `faults`, owned by the Cluster.
async fn drive(faults: &str, contract: Contract) -> (Env, Api<DynamicObject>) {
    let env = with_mock("").await;
    let cluster = env.cluster("c1", false).await;
    env.create_mock(MOCK_CLUSTER, contract, "ic", fault(faults), json!({}))
        .await;
    env.own(MOCK_CLUSTER, contract, "ic", &cluster, "c1").await;
    let api = env.mock_api(MOCK_CLUSTER, contract);
    (env, api)
}

fn provisioned(o: &DynamicObject) -> bool {
    flag(o, "status.initialization.provisioned") || flag(o, "status.ready")
}

#[tokio::test]
async fn all_pause_keeps_reconciling_while_paused() {
    let (env, api) = drive("all/pause", B2).await;
    wait_for(&api, "ic", "provisioned", provisioned).await;
    env.patch_core("Cluster", "c1", json!({"spec": {"paused": true}}))
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    let wipe = json!({"status": {"initialization": {"provisioned": false}}});
    api.patch_status("ic", &PatchParams::default(), &Patch::Merge(&wipe))
        .await
        .unwrap();
    wait_for(&api, "ic", "restored while paused", provisioned).await;
    env.stop().await;
}

#[tokio::test]
async fn all_paused_condition_is_never_written() {
    let (env, api) = drive("all/paused-condition", B2).await;
    let ready = wait_for(&api, "ic", "provisioned", provisioned).await;
    assert!(condition(&ready, "Ready").is_some());
    assert!(condition(&ready, "Paused").is_none());
    env.stop().await;
}

#[tokio::test]
async fn all_ready_condition_lifecycle_drops_ready_on_delete() {
    let (env, api) = drive("all/ready-condition-lifecycle", B2).await;
    wait_for(&api, "ic", "provisioned", |o| {
        provisioned(o) && condition(o, "Ready").is_some()
    })
    .await;
    let rec = Recorder::start(&api, "ic");
    env.delete_mock(MOCK_CLUSTER, B2, "ic").await;
    rec.wait_any("deleting without Ready", |o| {
        o.metadata.deletion_timestamp.is_some() && condition(o, "Ready").is_none()
    })
    .await;
    wait_gone(&api, "ic").await;
    env.stop().await;
}

#[tokio::test]
async fn owner_gate_fault_reconciles_without_an_owner() {
    let env = with_mock("").await;
    env.cluster("c1", false).await;
    env.create_mock(
        MOCK_CLUSTER,
        B2,
        "ic",
        fault("infra-cluster/owner-gate"),
        json!({}),
    )
    .await;
    let api = env.mock_api(MOCK_CLUSTER, B2);
    let o = wait_for(&api, "ic", "finalizer without owner", has_finalizer).await;
    assert!(o.metadata.owner_references.is_none());
    env.stop().await;
}

#[tokio::test]
async fn finalizer_fault_provisions_without_a_finalizer() {
    let (env, api) = drive("infra-cluster/finalizer", B2).await;
    let o = wait_for(&api, "ic", "provisioned", provisioned).await;
    assert!(!has_finalizer(&o));
    env.stop().await;
}

#[tokio::test]
async fn provisioned_fault_never_sets_the_flag() {
    for contract in [Contract::V1Beta1, B2] {
        let (env, api) = drive("infra-cluster/provisioned", contract).await;
        wait_for(&api, "ic", "Ready condition written", |o| {
            condition(o, "Ready").is_some()
        })
        .await;
        stays(&api, "ic", "never provisioned", |o| !provisioned(o)).await;
        env.stop().await;
    }
}

#[tokio::test]
async fn provisioned_sticky_fault_flips_back_to_false() {
    let (env, api) = drive("infra-cluster/provisioned-sticky", B2).await;
    let rec = Recorder::start(&api, "ic");
    rec.wait_any("provisioned", provisioned).await;
    wait_for(&api, "ic", "flipped back", |o| {
        at(o, "status.initialization.provisioned") == Some(&json!(false))
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn control_plane_endpoint_fault_provisions_without_endpoint() {
    let (env, api) = drive("infra-cluster/control-plane-endpoint", B2).await;
    let o = wait_for(&api, "ic", "provisioned", provisioned).await;
    assert!(at(&o, "spec.controlPlaneEndpoint").is_none());
    env.stop().await;
}

#[tokio::test]
async fn failure_domains_fault_reports_duplicates_or_nothing() {
    let (env, api) = drive("infra-cluster/failure-domains", B2).await;
    let o = wait_for(&api, "ic", "provisioned", provisioned).await;
    let names: Vec<_> = at(&o, "status.failureDomains")
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["name"].clone())
        .collect();
    assert_eq!(names, [json!("fd-1"), json!("fd-1")]);
    env.stop().await;
    let (env, api) = drive("infra-cluster/failure-domains", Contract::V1Beta1).await;
    let o = wait_for(&api, "ic", "provisioned", provisioned).await;
    assert_eq!(at(&o, "status.failureDomains"), Some(&json!({})));
    env.stop().await;
}

#[tokio::test]
async fn ready_condition_fault_never_writes_ready() {
    let (env, api) = drive("infra-cluster/ready-condition", B2).await;
    let o = wait_for(&api, "ic", "provisioned", provisioned).await;
    assert!(condition(&o, "Ready").is_none());
    env.stop().await;
}

#[tokio::test]
async fn externally_managed_fault_reconciles_managed_objects() {
    let env = with_mock("").await;
    let cluster = env.cluster("c1", false).await;
    let mut ann = fault("infra-cluster/externally-managed");
    ann["cluster.x-k8s.io/managed-by"] = json!("ext");
    env.create_mock(MOCK_CLUSTER, B2, "ic", ann, json!({}))
        .await;
    env.own(MOCK_CLUSTER, B2, "ic", &cluster, "c1").await;
    let api = env.mock_api(MOCK_CLUSTER, B2);
    wait_for(&api, "ic", "finalizer on a managed object", has_finalizer).await;
    env.stop().await;
}

#[tokio::test]
async fn delete_fault_never_completes() {
    let (env, api) = drive("infra-cluster/delete", B2).await;
    wait_for(&api, "ic", "provisioned", |o| {
        provisioned(o) && has_finalizer(o)
    })
    .await;
    env.delete_mock(MOCK_CLUSTER, B2, "ic").await;
    stays(&api, "ic", "still there, finalizer kept", |o| {
        o.metadata.deletion_timestamp.is_some() && has_finalizer(o)
    })
    .await;
    env.stop().await;
}
