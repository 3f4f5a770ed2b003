//! SC-infracluster against the mock, both contracts.

use super::harness::*;
use capi_conformance::contract::Contract;
use capi_conformance::mock::kinds::MOCK_CLUSTER;
use serde_json::json;

async fn healthy(contract: Contract) {
    let env = with_mock("").await;
    let cluster = env.cluster("c1", false).await;
    let api = env.mock_api(MOCK_CLUSTER, contract);
    env.create_mock(MOCK_CLUSTER, contract, "ic", json!({}), json!({}))
        .await;
    // 1. no owner: quiet.
    stays(&api, "ic", "no finalizer and no status", |o| {
        !has_finalizer(o) && at(o, "status").is_none()
    })
    .await;
    // 2. owner + label: finalizer, endpoint, provisioned, failure domains, Ready.
    env.own(MOCK_CLUSTER, contract, "ic", &cluster, "c1").await;
    let ready = wait_for(&api, "ic", "provisioned", |o| {
        flag(o, provisioned_path(contract))
    })
    .await;
    assert!(has_finalizer(&ready));
    assert!(
        at(&ready, "spec.controlPlaneEndpoint.host")
            .and_then(|h| h.as_str())
            .is_some_and(|h| !h.is_empty())
    );
    assert_eq!(
        at(&ready, "spec.controlPlaneEndpoint.port"),
        Some(&json!(6443))
    );
    let fds = at(&ready, "status.failureDomains").unwrap();
    match contract {
        Contract::V1Beta1 => assert_eq!(fds.as_object().unwrap().len(), 3),
        Contract::V1Beta2 => assert_eq!(fds.as_array().unwrap().len(), 3),
    }
    assert_eq!(condition(&ready, "Ready").unwrap()["status"], "True");
    match contract {
        Contract::V1Beta1 => {
            assert!(condition(&ready, "Paused").is_none());
            assert!(at(&ready, "status.initialization").is_none());
        }
        Contract::V1Beta2 => {
            assert_eq!(condition(&ready, "Paused").unwrap()["reason"], "NotPaused");
            assert!(at(&ready, "status.ready").is_none());
        }
    }
    // 3. pause by Cluster.spec.paused, then by annotation.
    let wipe = match contract {
        Contract::V1Beta1 => json!({"ready": false}),
        Contract::V1Beta2 => json!({"initialization": {"provisioned": false}}),
    };
    let path = provisioned_path(contract);
    assert_pause_honoured(&env, MOCK_CLUSTER, contract, "ic", "c1", wipe, |o| {
        flag(o, path)
    })
    .await;
    // 4. delete: finalizer removed, object gone, infrastructure released.
    env.delete_mock(MOCK_CLUSTER, contract, "ic").await;
    wait_gone(&api, "ic").await;
    assert!(env.mock.as_ref().unwrap().infra().is_empty());
    env.stop().await;
}

#[tokio::test]
async fn infra_cluster_externally_managed_is_left_alone() {
    let env = with_mock("").await;
    let cluster = env.cluster("c1", false).await;
    let api = env.mock_api(MOCK_CLUSTER, Contract::V1Beta2);
    env.create_mock(
        MOCK_CLUSTER,
        Contract::V1Beta2,
        "ic2",
        json!({"cluster.x-k8s.io/managed-by": "ext"}),
        json!({}),
    )
    .await;
    env.own(MOCK_CLUSTER, Contract::V1Beta2, "ic2", &cluster, "c1")
        .await;
    stays(&api, "ic2", "untouched", |o| {
        !has_finalizer(o) && at(o, "status").is_none()
    })
    .await;
    env.stop().await;
}

#[tokio::test]
async fn infra_cluster_v1beta1_reaches_ready_and_deletes() {
    healthy(Contract::V1Beta1).await;
}

#[tokio::test]
async fn infra_cluster_v1beta2_reaches_ready_and_deletes() {
    healthy(Contract::V1Beta2).await;
}

/// Without the contract annotation the mock uses the version the object was created at, read
/// from the creator's `managedFields` entry (the embedded server records Update entries).
#[tokio::test]
async fn objects_without_the_contract_annotation_follow_the_creators_version() {
    let env = with_mock("").await;
    let cluster = env.cluster("c1", false).await;
    let b1 = env.mock_api(MOCK_CLUSTER, Contract::V1Beta1);
    let ar = MOCK_CLUSTER.api_resource(Contract::V1Beta1);
    let obj: kube::core::DynamicObject = serde_json::from_value(json!({
        "apiVersion": ar.api_version, "kind": ar.kind,
        "metadata": {"name": "plain", "namespace": NS}, "spec": {},
    }))
    .unwrap();
    b1.create(&Default::default(), &obj).await.unwrap();
    env.own(MOCK_CLUSTER, Contract::V1Beta1, "plain", &cluster, "c1")
        .await;
    let ready = wait_for(&b1, "plain", "v1beta1 provisioned", |o| {
        flag(o, provisioned_path(Contract::V1Beta1))
    })
    .await;
    assert!(at(&ready, "status.initialization").is_none());
    env.stop().await;
}
