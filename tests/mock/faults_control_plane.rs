//! One test per ControlPlane fault.

use super::control_plane::{counters_at, initialized_path};
use super::harness::*;
use capi_conformance::contract::Contract;
use capi_conformance::mock::kinds::MOCK_CONTROL_PLANE;
use kube::api::{Api, Patch, PatchParams};
use kube::core::DynamicObject;
use serde_json::json;

const B2: Contract = Contract::V1Beta2;

async fn drive(faults: &str, contract: Contract) -> (Env, Api<DynamicObject>) {
    let env = with_mock("").await;
    let cluster = env.cluster("c", true).await;
    env.create_mock(
        MOCK_CONTROL_PLANE,
        contract,
        "cp",
        fault(faults),
        json!({"version": "v1.33.0", "replicas": 1}),
    )
    .await;
    env.own(MOCK_CONTROL_PLANE, contract, "cp", &cluster, "c")
        .await;
    let api = env.mock_api(MOCK_CONTROL_PLANE, contract);
    (env, api)
}

fn replicas(o: &DynamicObject) -> i64 {
    at(o, "status.replicas")
        .and_then(|v| v.as_i64())
        .unwrap_or(-1)
}

fn initialized(o: &DynamicObject) -> bool {
    flag(o, initialized_path(B2)) || flag(o, initialized_path(Contract::V1Beta1))
}

#[tokio::test]
async fn pause_fault_keeps_reconciling_while_paused() {
    let (env, api) = drive("control-plane/pause", B2).await;
    wait_for(&api, "cp", "replicas 1", |o| replicas(o) == 1).await;
    env.patch_core("Cluster", "c", json!({"spec": {"paused": true}}))
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    api.patch_status(
        "cp",
        &PatchParams::default(),
        &Patch::Merge(&json!({"status": {"replicas": 0}})),
    )
    .await
    .unwrap();
    wait_for(&api, "cp", "restored while paused", |o| replicas(o) == 1).await;
    env.stop().await;
}

#[tokio::test]
async fn kubeconfig_secret_fault_uses_another_key() {
    let (env, api) = drive("control-plane/kubeconfig-secret", B2).await;
    wait_for(&api, "cp", "initialized", initialized).await;
    let data = env
        .secrets()
        .get("c-kubeconfig")
        .await
        .unwrap()
        .data
        .unwrap();
    assert!(data.contains_key("kubeconfig") && !data.contains_key("value"));
    env.stop().await;
}

#[tokio::test]
async fn certificates_fault_omits_the_cluster_name_label() {
    for (faults, labelled) in [("", true), ("control-plane/certificates", false)] {
        let (env, api) = drive(faults, B2).await;
        wait_for(&api, "cp", "initialized", initialized).await;
        for purpose in ["ca", "etcd", "proxy", "sa"] {
            let s = env.secrets().get(&format!("c-{purpose}")).await.unwrap();
            assert_eq!(s.type_.as_deref(), Some("cluster.x-k8s.io/secret"));
            assert!(s.data.as_ref().unwrap().contains_key("tls.crt"));
            let has = s
                .metadata
                .labels
                .unwrap_or_default()
                .contains_key("cluster.x-k8s.io/cluster-name");
            assert_eq!(has, labelled, "{faults} {purpose}");
        }
        env.stop().await;
    }
}

#[tokio::test]
async fn initialized_fault_never_sets_the_flag() {
    let (env, api) = drive("control-plane/initialized", B2).await;
    wait_for(&api, "cp", "counters", |o| counters_at(o, B2, 1)).await;
    stays(&api, "cp", "not initialized", |o| !initialized(o)).await;
    env.stop().await;
}

#[tokio::test]
async fn ready_fault_never_sets_ready_v1beta1() {
    let b1 = Contract::V1Beta1;
    let (env, api) = drive("control-plane/ready", b1).await;
    wait_for(&api, "cp", "counters", |o| {
        counters_at(o, b1, 1) && initialized(o)
    })
    .await;
    stays(&api, "cp", "not ready", |o| !flag(o, "status.ready")).await;
    env.stop().await;
}

#[tokio::test]
async fn endpoint_fault_initializes_without_endpoint() {
    let (env, api) = drive("control-plane/endpoint", B2).await;
    let o = wait_for(&api, "cp", "initialized", initialized).await;
    assert!(at(&o, "spec.controlPlaneEndpoint").is_none());
    env.stop().await;
}

#[tokio::test]
async fn scale_subresource_fault_never_converges() {
    let (env, api) = drive("control-plane/scale-subresource", B2).await;
    wait_for(&api, "cp", "replicas 1", |o| replicas(o) == 1).await;
    api.patch_scale(
        "cp",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"replicas": 3}})),
    )
    .await
    .unwrap();
    stays(&api, "cp", "stuck at 1", |o| replicas(o) == 1).await;
    env.stop().await;
}

#[tokio::test]
async fn status_replicas_fault_leaves_counters_at_zero() {
    let (env, api) = drive("control-plane/status-replicas", B2).await;
    let o = wait_for(&api, "cp", "replicas 1", |o| {
        replicas(o) == 1 && initialized(o)
    })
    .await;
    for f in ["readyReplicas", "availableReplicas", "upToDateReplicas"] {
        assert_eq!(at(&o, &format!("status.{f}")), Some(&json!(0)), "{f}");
    }
    env.stop().await;
}

#[tokio::test]
async fn status_version_fault_reports_no_versions() {
    for contract in [Contract::V1Beta1, B2] {
        let (env, api) = drive("control-plane/status-version", contract).await;
        let o = wait_for(&api, "cp", "initialized", |o| {
            initialized(o) && replicas(o) == 1
        })
        .await;
        assert!(at(&o, "status.version").is_none() && at(&o, "status.versions").is_none());
        env.stop().await;
    }
}

#[tokio::test]
async fn conditions_fault_writes_no_summary_condition() {
    let (env, api) = drive("control-plane/conditions", B2).await;
    let o = wait_for(&api, "cp", "initialized", initialized).await;
    assert!(condition(&o, "Available").is_none() && condition(&o, "Ready").is_none());
    env.stop().await;
}
