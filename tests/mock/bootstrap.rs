//! SC-bootstrap against the mock, both contracts.

use super::harness::*;
use capi_conformance::contract::Contract;
use capi_conformance::mock::kinds::MOCK_CONFIG;
use k8s_openapi::api::core::v1::Secret;
use kube::core::DynamicObject;
use serde_json::json;

pub async fn config_setup(env: &Env) -> DynamicObject {
    env.cluster("c", true).await;
    env.create_core(
        "Machine",
        "m2",
        json!({"cluster.x-k8s.io/cluster-name": "c"}),
        json!({"clusterName": "c", "bootstrap": {"configRef": {"apiGroup": "bootstrap.mock.capi-conformance.io", "kind": "MockConfig", "name": "bc"}}}),
    )
    .await
}

pub fn created_path(contract: Contract) -> &'static str {
    match contract {
        Contract::V1Beta1 => "status.ready",
        Contract::V1Beta2 => "status.initialization.dataSecretCreated",
    }
}

pub fn secret_name(o: &DynamicObject) -> Option<String> {
    at(o, "status.dataSecretName")
        .and_then(|v| v.as_str())
        .map(String::from)
}

async fn healthy(contract: Contract) {
    let env = with_mock("").await;
    let machine = config_setup(&env).await;
    let api = env.mock_api(MOCK_CONFIG, contract);
    let created = created_path(contract);
    let cfg = env
        .create_mock(MOCK_CONFIG, contract, "bc", json!({}), json!({}))
        .await;
    stays(&api, "bc", "no status without an owner", |o| {
        at(o, "status").is_none()
    })
    .await;
    assert!(env.secrets().get_opt("bc").await.unwrap().is_none());
    env.own(MOCK_CONFIG, contract, "bc", &machine, "c").await;
    let ready = wait_for(&api, "bc", "data secret created", |o| flag(o, created)).await;
    let name = secret_name(&ready).unwrap();
    let secret: Secret = env.secrets().get(&name).await.unwrap();
    assert_eq!(secret.type_.as_deref(), Some("cluster.x-k8s.io/secret"));
    assert_eq!(
        secret.metadata.labels.as_ref().unwrap()["cluster.x-k8s.io/cluster-name"],
        "c"
    );
    let owner = &secret.metadata.owner_references.as_ref().unwrap()[0];
    assert_eq!(
        (owner.kind.as_str(), owner.controller),
        ("MockConfig", Some(true))
    );
    assert_eq!(Some(&owner.uid), cfg.metadata.uid.as_ref());
    assert!(secret.data.as_ref().unwrap().contains_key("value"));
    assert_eq!(condition(&ready, "Ready").unwrap()["status"], "True");
    // Wipe the status: same name, same Secret.
    let first_uid = secret.metadata.uid.clone();
    api.patch_status(
        "bc",
        &Default::default(),
        &kube::api::Patch::Merge(&json!({"status": null})),
    )
    .await
    .unwrap();
    let again = wait_for(&api, "bc", "status rebuilt", |o| flag(o, created)).await;
    assert_eq!(secret_name(&again).as_deref(), Some(name.as_str()));
    assert_eq!(
        env.secrets().get(&name).await.unwrap().metadata.uid,
        first_uid
    );
    let wipe = match contract {
        Contract::V1Beta1 => json!({"ready": false}),
        Contract::V1Beta2 => json!({"initialization": {"dataSecretCreated": false}}),
    };
    assert_pause_honoured(&env, MOCK_CONFIG, contract, "bc", "c", wipe, |o| {
        flag(o, created)
    })
    .await;
    env.delete_mock(MOCK_CONFIG, contract, "bc").await;
    wait_gone(&api, "bc").await;
    env.stop().await;
}

#[tokio::test]
async fn bootstrap_v1beta1_creates_the_secret_then_status_and_deletes() {
    healthy(Contract::V1Beta1).await;
}

#[tokio::test]
async fn bootstrap_v1beta2_creates_the_secret_then_status_and_deletes() {
    healthy(Contract::V1Beta2).await;
}
