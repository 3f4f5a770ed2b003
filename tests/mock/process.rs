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
        .as_ref()
        .unwrap()
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

/// `mock-provider run` resolves its connection like every command: `--server`, `--token` and
/// `--certificate-authority` without any kubeconfig reach the server (they were accepted and
/// ignored before), and a bad `--request-timeout` is an input error.
#[tokio::test]
async fn child_process_connects_with_kubectl_connection_flags() {
    let env = server_only().await;
    let listener = env
        .server
        .as_ref()
        .unwrap()
        .listen("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let ca = dir.path().join("ca.pem");
    std::fs::write(&ca, &listener.ca_pem).unwrap();
    let mock = |extra: &[&str]| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_capi-conformance"));
        cmd.args(["mock-provider", "run", "--watch-namespace", NS])
            .args(extra)
            // No kubeconfig to fall back on.
            .env_remove("KUBECONFIG")
            .env("HOME", dir.path())
            .kill_on_drop(true);
        cmd
    };
    // (Bounded: a mock that ignored the flag would run until killed.)
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        mock(&["--server", &listener.url, "--request-timeout", "soon"]).output(),
    )
    .await
    .expect("a bad --request-timeout is refused, not ignored")
    .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("invalid duration \"soon\""),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut child = mock(&[
        "--server",
        &listener.url,
        "--token",
        &listener.token,
        "--certificate-authority",
        ca.to_str().unwrap(),
        "--request-timeout",
        "30s",
    ])
    .stdout(Stdio::null())
    .stderr(Stdio::null())
    .spawn()
    .unwrap();
    let cluster = env.cluster("c1", false).await;
    let contract = Contract::V1Beta1;
    let api = env.mock_api(MOCK_CLUSTER, contract);
    env.create_mock(MOCK_CLUSTER, contract, "ic", json!({}), json!({}))
        .await;
    env.own(MOCK_CLUSTER, contract, "ic", &cluster, "c1").await;
    wait_for(&api, "ic", "provisioned", |o| flag(o, "status.ready")).await;
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
        12
    );
}

/// `serve --load` with the mock's CRDs and RBAC (the embedded server serves no Deployments) and our
/// core CRDs, then `mock-provider run` against it: two processes, no in-process server.
#[tokio::test]
async fn mock_crds_load_into_serve_and_the_mock_runs_against_it() {
    use capi_conformance::mock::core_crds::core_crd_documents;
    use capi_conformance::mock::manifests::{ManifestOptions, manifests};
    use tokio::io::{AsyncBufReadExt, BufReader};

    let dir = tempfile::tempdir().unwrap();
    let manifest_file = dir.path().join("mock.yaml");
    // The mock's CRDs convert through its webhook: here its process serves it on a port of
    // this machine, and the CRDs call it there (as envtest points webhooks at a local manager).
    let certs = capi_conformance::serving::ServingCerts::generate(&[]).unwrap();
    let cert_dir =
        capi_conformance::serving::CertDir::create("mock-process-test-", &certs).unwrap();
    let port = capi_conformance::serving::placeholders::free_port().unwrap();
    let addr: std::net::SocketAddr = ([127, 0, 0, 1], port).into();
    let (svc_ns, svc_name) = capi_conformance::mock::crds::CONVERSION_SERVICE;
    let mut docs: Vec<serde_json::Value> = manifests(&ManifestOptions::default())
        .unwrap()
        .into_iter()
        .filter(|d| d["kind"] != "Deployment")
        .collect();
    capi_conformance::mock::crds::with_ca_bundle(&mut docs, &certs.ca_pem);
    for d in &mut docs {
        capi_conformance::manifests::installation::route_client_configs(
            d,
            (
                svc_ns,
                svc_name,
                capi_conformance::mock::crds::CONVERSION_SERVICE_PORT,
            ),
            addr,
        );
    }
    std::fs::write(
        &manifest_file,
        serde_saphyr::to_string_multiple(&docs).unwrap(),
    )
    .unwrap();
    let core = dir.path().join("core.yaml");
    std::fs::write(
        &core,
        serde_saphyr::to_string_multiple(&core_crd_documents()).unwrap(),
    )
    .unwrap();
    let kubeconfig = dir.path().join("kubeconfig");
    let mut serve = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args(["serve", "--load"])
        .arg(&core)
        .arg("--load")
        .arg(&manifest_file)
        .arg("--write-kubeconfig")
        .arg(&kubeconfig)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(serve.stdout.take().unwrap()).lines();
    let ready = tokio::time::timeout(DEADLINE, lines.next_line())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(ready.starts_with("serving "), "{ready}");
    let mut mock = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args(["mock-provider", "run", "--kubeconfig"])
        .arg(&kubeconfig)
        .arg("--webhook-cert-dir")
        .arg(cert_dir.path())
        .args(["--webhook-port", &port.to_string()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let kc = kube::config::Kubeconfig::read_from(&kubeconfig).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let crds: kube::Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        kube::Api::all(client.clone());
    let names: Vec<String> = crds
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter_map(|c| c.metadata.name)
        .collect();
    assert!(
        names
            .iter()
            .any(|n| n == "mockcontrolplanes.controlplane.mock.capi-conformance.io"),
        "{names:?}"
    );
    let env = Env {
        server: None,
        client,
        mock: None,
        _conversion: None,
    };
    let ns: kube::Api<k8s_openapi::api::core::v1::Namespace> = kube::Api::all(env.client.clone());
    ns.create(
        &Default::default(),
        &serde_json::from_value(json!({"metadata": {"name": NS}})).unwrap(),
    )
    .await
    .unwrap();
    env.create_core("Cluster", "c", json!({}), json!({"clusterName": "c"}))
        .await;
    env.create_mock(MOCK_CONFIG, Contract::V1Beta1, "bc", json!({}), json!({}))
        .await;
    let machine = env
        .create_core(
            "Machine",
            "m",
            json!({"cluster.x-k8s.io/cluster-name": "c"}),
            json!({"clusterName": "c"}),
        )
        .await;
    env.own(MOCK_CONFIG, Contract::V1Beta1, "bc", &machine, "c")
        .await;
    let api = env.mock_api(MOCK_CONFIG, Contract::V1Beta1);
    wait_for(&api, "bc", "ready", |o| flag(o, "status.ready")).await;
    mock.kill().await.unwrap();
    serve.kill().await.unwrap();
}
