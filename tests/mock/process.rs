//! The mock as its own process (`mock-provider run --kubeconfig`) against the embedded server
//! over TCP.

use super::harness::*;
use capi_conformance::apiserver::Listener;
use capi_conformance::contract::Contract;
use capi_conformance::mock::kinds::{MOCK_CLUSTER, MOCK_CONFIG};
use serde_json::json;
use std::process::Stdio;
use tokio::process::{Child, Command};

/// The running child, its kubeconfig directory and the TCP listener it talks to.
type Spawned = (Child, tempfile::TempDir, Listener);

async fn spawn_mock(env: &Env, extra: &[&str]) -> Spawned {
    let listener = env
        .server
        .listen("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    listener.write_kubeconfig(&kubeconfig).unwrap();
    let child = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args(["mock-provider", "run", "--kubeconfig"])
        .arg(&kubeconfig)
        .args(["--watch-namespace", NS])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    (child, dir, listener)
}

#[tokio::test]
async fn child_process_reconciles_an_infra_cluster_over_tcp() {
    let env = server_only().await;
    let (mut child, _dir, _listener) = spawn_mock(&env, &[]).await;
    let cluster = env.cluster("c1", false).await;
    let contract = Contract::V1Beta1;
    let api = env.mock_api(MOCK_CLUSTER, contract);
    env.create_mock(MOCK_CLUSTER, contract, "ic", json!({}), json!({}))
        .await;
    env.own(MOCK_CLUSTER, contract, "ic", &cluster, "c1").await;
    let ready = wait_for(&api, "ic", "provisioned", |o| flag(o, "status.ready")).await;
    assert!(has_finalizer(&ready));
    env.patch_core("Cluster", "c1", json!({"spec": {"paused": true}}))
        .await;
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    api.patch_status(
        "ic",
        &Default::default(),
        &kube::api::Patch::Merge(&json!({"status": {"ready": false}})),
    )
    .await
    .unwrap();
    stays(&api, "ic", "no progress while paused", |o| {
        !flag(o, "status.ready")
    })
    .await;
    env.patch_core("Cluster", "c1", json!({"spec": {"paused": false}}))
        .await;
    wait_for(&api, "ic", "progress after unpausing", |o| {
        flag(o, "status.ready")
    })
    .await;
    env.delete_mock(MOCK_CLUSTER, contract, "ic").await;
    wait_gone(&api, "ic").await;
    child.kill().await.unwrap();
}

#[tokio::test]
async fn child_process_applies_provider_wide_faults() {
    let env = server_only().await;
    let (mut child, _dir, _listener) =
        spawn_mock(&env, &["--faults", "bootstrap/secret-value"]).await;
    env.cluster("c", true).await;
    let machine = env
        .create_core(
            "Machine",
            "m",
            json!({"cluster.x-k8s.io/cluster-name": "c"}),
            json!({"clusterName": "c"}),
        )
        .await;
    let api = env.mock_api(MOCK_CONFIG, Contract::V1Beta2);
    env.create_mock(MOCK_CONFIG, Contract::V1Beta2, "bc", json!({}), json!({}))
        .await;
    env.own(MOCK_CONFIG, Contract::V1Beta2, "bc", &machine, "c")
        .await;
    wait_for(&api, "bc", "created", |o| {
        flag(o, "status.initialization.dataSecretCreated")
    })
    .await;
    let secret = env.secrets().get("bc").await.unwrap();
    let keys: Vec<&String> = secret.data.as_ref().unwrap().keys().collect();
    assert_eq!(keys, ["data"]);
    child.kill().await.unwrap();
}

#[tokio::test]
async fn child_process_rejects_unknown_faults() {
    let out = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args([
            "mock-provider",
            "run",
            "--faults",
            "no-such/rule",
            "--kubeconfig",
            "/nonexistent",
        ])
        .output()
        .await
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown fault"));
}

#[tokio::test]
async fn manifests_command_prints_the_yaml_stream() {
    let out = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args([
            "mock-provider",
            "manifests",
            "--target-namespace",
            "elsewhere",
        ])
        .output()
        .await
        .unwrap();
    assert!(out.status.success());
    let docs: Vec<serde_json::Value> =
        serde_saphyr::from_multiple(&String::from_utf8(out.stdout).unwrap()).unwrap();
    assert!(
        docs.iter()
            .any(|d| d["kind"] == "Deployment" && d["metadata"]["namespace"] == "elsewhere")
    );
    assert_eq!(
        docs.iter()
            .filter(|d| d["kind"] == "CustomResourceDefinition")
            .count(),
        10
    );
}
