//! SC-controlplane against the mock, both contracts.

use super::harness::*;
use capi_conformance::contract::Contract;
use capi_conformance::mock::kinds::MOCK_CONTROL_PLANE;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Patch, PatchParams};
use kube::core::DynamicObject;
use serde_json::json;

pub fn initialized_path(contract: Contract) -> &'static str {
    match contract {
        Contract::V1Beta1 => "status.initialized",
        Contract::V1Beta2 => "status.initialization.controlPlaneInitialized",
    }
}

fn int(o: &DynamicObject, path: &str) -> i64 {
    at(o, path).and_then(|v| v.as_i64()).unwrap_or(-1)
}

pub fn counters_at(o: &DynamicObject, contract: Contract, n: i64) -> bool {
    let names: &[&str] = match contract {
        Contract::V1Beta1 => &["replicas", "updatedReplicas", "readyReplicas"],
        Contract::V1Beta2 => &[
            "replicas",
            "readyReplicas",
            "availableReplicas",
            "upToDateReplicas",
        ],
    };
    names.iter().all(|f| int(o, &format!("status.{f}")) == n)
        && (contract == Contract::V1Beta2 || int(o, "status.unavailableReplicas") == 0)
}

async fn healthy(contract: Contract) {
    let env = with_mock("").await;
    let cluster = env.cluster("c", true).await;
    let api = env.mock_api(MOCK_CONTROL_PLANE, contract);
    env.create_mock(
        MOCK_CONTROL_PLANE,
        contract,
        "cp",
        json!({}),
        json!({"version": "v1.33.0", "replicas": 1}),
    )
    .await;
    stays(&api, "cp", "quiet without an owner", |o| {
        at(o, "status").is_none()
    })
    .await;
    env.own(MOCK_CONTROL_PLANE, contract, "cp", &cluster, "c")
        .await;
    let init = wait_for(&api, "cp", "initialized with counters at 1", |o| {
        flag(o, initialized_path(contract)) && counters_at(o, contract, 1)
    })
    .await;
    assert!(has_finalizer(&init));
    assert!(at(&init, "spec.controlPlaneEndpoint.host").is_some());
    let selector = at(&init, "status.selector")
        .and_then(|s| s.as_str())
        .unwrap();
    assert!(
        selector.contains("cluster.x-k8s.io/cluster-name=c"),
        "{selector}"
    );
    match contract {
        Contract::V1Beta1 => {
            assert_eq!(at(&init, "status.version"), Some(&json!("v1.33.0")));
            wait_for(&api, "cp", "ready", |o| flag(o, "status.ready")).await;
        }
        Contract::V1Beta2 => {
            assert_eq!(
                at(&init, "status.versions"),
                Some(&json!([{"version": "v1.33.0", "replicas": 1}]))
            );
            assert_eq!(condition(&init, "Available").unwrap()["status"], "True");
        }
    }
    let kubeconfig: Secret = env.secrets().get("c-kubeconfig").await.unwrap();
    assert_eq!(kubeconfig.type_.as_deref(), Some("cluster.x-k8s.io/secret"));
    assert_eq!(
        kubeconfig.metadata.labels.as_ref().unwrap()["cluster.x-k8s.io/cluster-name"],
        "c"
    );
    let value = &kubeconfig.data.as_ref().unwrap()["value"];
    assert!(String::from_utf8_lossy(&value.0).contains("kind: Config"));
    // Scale through the scale subresource; counters converge.
    api.patch_scale(
        "cp",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"replicas": 3}})),
    )
    .await
    .unwrap();
    wait_for(&api, "cp", "counters at 3", |o| counters_at(o, contract, 3)).await;
    api.patch_scale(
        "cp",
        &PatchParams::default(),
        &Patch::Merge(&json!({"spec": {"replicas": 1}})),
    )
    .await
    .unwrap();
    wait_for(&api, "cp", "counters back at 1", |o| {
        counters_at(o, contract, 1)
    })
    .await;
    let wipe = json!({"replicas": 0});
    assert_pause_honoured(&env, MOCK_CONTROL_PLANE, contract, "cp", "c", wipe, |o| {
        int(o, "status.replicas") == 1
    })
    .await;
    env.delete_mock(MOCK_CONTROL_PLANE, contract, "cp").await;
    wait_gone(&api, "cp").await;
    assert!(env.mock.as_ref().unwrap().infra().is_empty());
    env.stop().await;
}

#[tokio::test]
async fn control_plane_v1beta1_initializes_scales_and_deletes() {
    healthy(Contract::V1Beta1).await;
}

#[tokio::test]
async fn control_plane_v1beta2_initializes_scales_and_deletes() {
    healthy(Contract::V1Beta2).await;
}
