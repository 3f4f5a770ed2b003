//! One test per BootstrapConfig fault.

use super::bootstrap::{config_setup, created_path, secret_name};
use super::harness::*;
use capi_conformance::contract::Contract;
use capi_conformance::mock::kinds::MOCK_CONFIG;
use kube::api::{Api, Patch, PatchParams};
use kube::core::DynamicObject;
use serde_json::json;

const B2: Contract = Contract::V1Beta2;

async fn drive(faults: &str) -> (Env, Api<DynamicObject>) {
    let env = with_mock("").await;
    let machine = config_setup(&env).await;
    env.create_mock(MOCK_CONFIG, B2, "bc", fault(faults), json!({}))
        .await;
    env.own(MOCK_CONFIG, B2, "bc", &machine, "c").await;
    let api = env.mock_api(MOCK_CONFIG, B2);
    (env, api)
}

fn created(o: &DynamicObject) -> bool {
    flag(o, created_path(B2))
}

async fn wait_secret(env: &Env, name: &str) -> k8s_openapi::api::core::v1::Secret {
    let start = std::time::Instant::now();
    loop {
        if let Some(s) = env.secrets().get_opt(name).await.unwrap() {
            return s;
        }
        assert!(start.elapsed() < DEADLINE, "Secret {name} never appeared");
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
}

#[tokio::test]
async fn owner_gate_fault_creates_the_secret_without_an_owner() {
    let env = with_mock("").await;
    config_setup(&env).await;
    env.create_mock(
        MOCK_CONFIG,
        B2,
        "bc",
        fault("bootstrap/owner-gate"),
        json!({}),
    )
    .await;
    wait_secret(&env, "bc").await;
    env.stop().await;
}

#[tokio::test]
async fn cluster_lookup_fault_creates_the_secret_for_a_missing_cluster() {
    let env = with_mock("").await;
    let machine = config_setup(&env).await;
    env.create_mock(
        MOCK_CONFIG,
        B2,
        "bc",
        fault("bootstrap/cluster-lookup"),
        json!({}),
    )
    .await;
    env.own(MOCK_CONFIG, B2, "bc", &machine, "no-such-cluster")
        .await;
    wait_secret(&env, "bc").await;
    env.stop().await;
}

#[tokio::test]
async fn healthy_config_without_its_cluster_creates_nothing() {
    let env = with_mock("").await;
    let machine = config_setup(&env).await;
    env.create_mock(MOCK_CONFIG, B2, "bc", json!({}), json!({}))
        .await;
    env.own(MOCK_CONFIG, B2, "bc", &machine, "no-such-cluster")
        .await;
    let api = env.mock_api(MOCK_CONFIG, B2);
    stays(&api, "bc", "no status", |o| at(o, "status").is_none()).await;
    assert!(env.secrets().get_opt("bc").await.unwrap().is_none());
    env.stop().await;
}

#[tokio::test]
async fn failure_gate_fault_creates_the_secret_after_a_terminal_failure() {
    for (faults, expect_secret) in [("", false), ("bootstrap/failure-gate", true)] {
        let env = with_mock("").await;
        let machine = config_setup(&env).await;
        let b1 = Contract::V1Beta1;
        let api = env.mock_api(MOCK_CONFIG, b1);
        env.create_mock(MOCK_CONFIG, b1, "bc", fault(faults), json!({}))
            .await;
        let failed = json!({"status": {"failureReason": "Bad", "failureMessage": "boom"}});
        api.patch_status("bc", &PatchParams::default(), &Patch::Merge(&failed))
            .await
            .unwrap();
        env.own(MOCK_CONFIG, b1, "bc", &machine, "c").await;
        if expect_secret {
            wait_secret(&env, "bc").await;
        } else {
            stays(&api, "bc", "no progress", |o| !flag(o, "status.ready")).await;
            assert!(env.secrets().get_opt("bc").await.unwrap().is_none());
        }
        env.stop().await;
    }
}

#[tokio::test]
async fn data_secret_name_fault_never_reports_the_name() {
    let (env, api) = drive("bootstrap/data-secret-name").await;
    let o = wait_for(&api, "bc", "created", created).await;
    assert!(secret_name(&o).is_none());
    env.stop().await;
}

#[tokio::test]
async fn data_secret_created_fault_never_sets_the_flag() {
    let (env, api) = drive("bootstrap/data-secret-created").await;
    wait_for(&api, "bc", "name", |o| secret_name(o).is_some()).await;
    stays(&api, "bc", "not created", |o| !created(o)).await;
    env.stop().await;
}

#[tokio::test]
async fn secret_name_fault_reports_another_name() {
    let (env, api) = drive("bootstrap/secret-name").await;
    let o = wait_for(&api, "bc", "created", created).await;
    let reported = secret_name(&o).unwrap();
    assert!(env.secrets().get_opt(&reported).await.unwrap().is_none());
    assert!(env.secrets().get_opt("bc").await.unwrap().is_some());
    env.stop().await;
}

#[tokio::test]
async fn secret_label_fault_omits_the_cluster_name_label() {
    let (env, api) = drive("bootstrap/secret-label").await;
    wait_for(&api, "bc", "created", created).await;
    let s = env.secrets().get("bc").await.unwrap();
    let labels = s.metadata.labels.unwrap_or_default();
    assert!(!labels.contains_key("cluster.x-k8s.io/cluster-name"));
    env.stop().await;
}

#[tokio::test]
async fn secret_owner_fault_omits_the_owner_reference() {
    let (env, api) = drive("bootstrap/secret-owner").await;
    wait_for(&api, "bc", "created", created).await;
    assert!(
        env.secrets()
            .get("bc")
            .await
            .unwrap()
            .metadata
            .owner_references
            .is_none()
    );
    env.stop().await;
}

#[tokio::test]
async fn secret_value_fault_uses_another_key() {
    let (env, api) = drive("bootstrap/secret-value").await;
    wait_for(&api, "bc", "created", created).await;
    let data = env.secrets().get("bc").await.unwrap().data.unwrap();
    assert!(data.contains_key("data") && !data.contains_key("value"));
    env.stop().await;
}

#[tokio::test]
async fn secret_type_fault_uses_opaque() {
    let (env, api) = drive("bootstrap/secret-type").await;
    wait_for(&api, "bc", "created", created).await;
    assert_eq!(
        env.secrets().get("bc").await.unwrap().type_.as_deref(),
        Some("Opaque")
    );
    env.stop().await;
}

#[tokio::test]
async fn deterministic_name_fault_creates_a_new_secret_after_a_status_wipe() {
    let (env, api) = drive("bootstrap/deterministic-name").await;
    let first = secret_name(&wait_for(&api, "bc", "created", created).await).unwrap();
    assert_ne!(first, "bc");
    api.patch_status(
        "bc",
        &PatchParams::default(),
        &Patch::Merge(&json!({"status": null})),
    )
    .await
    .unwrap();
    let second = wait_for(&api, "bc", "a new name", |o| {
        secret_name(o).is_some_and(|n| n != first)
    })
    .await;
    let second = secret_name(&second).unwrap();
    assert!(env.secrets().get_opt(&first).await.unwrap().is_some());
    wait_secret(&env, &second).await;
    env.stop().await;
}

#[tokio::test]
async fn status_after_secret_fault_reports_before_the_secret_exists() {
    let (env, api) = drive("bootstrap/status-after-secret").await;
    wait_for(&api, "bc", "created", created).await;
    assert!(
        env.secrets().get_opt("bc").await.unwrap().is_none(),
        "status came first"
    );
    wait_secret(&env, "bc").await;
    env.stop().await;
}

#[tokio::test]
async fn healthy_config_reports_only_after_the_secret_exists() {
    let (env, api) = drive("").await;
    wait_for(&api, "bc", "created", created).await;
    assert!(env.secrets().get_opt("bc").await.unwrap().is_some());
    env.stop().await;
}

#[tokio::test]
async fn ready_condition_fault_never_writes_ready() {
    let (env, api) = drive("bootstrap/ready-condition").await;
    let o = wait_for(&api, "bc", "created", created).await;
    assert!(condition(&o, "Ready").is_none());
    env.stop().await;
}

#[tokio::test]
async fn ready_condition_lifecycle_fault_reports_status_before_ready() {
    let (env, api) = drive("all/ready-condition-lifecycle").await;
    let o = wait_for(&api, "bc", "created", created).await;
    assert!(
        condition(&o, "Ready").is_none(),
        "first status write has no Ready"
    );
    wait_for(&api, "bc", "Ready later", |o| {
        condition(o, "Ready").is_some()
    })
    .await;
    env.stop().await;
}
