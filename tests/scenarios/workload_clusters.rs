//! Workload clusters: what `<cluster>-kubeconfig` points at once the tool plays an initialized
//! control plane, the Cluster's endpoint, KCP's client-certificate kubeconfig, CABPK's init and
//! join paths, and runs against a real cluster, where there is none (docs/core-simulation.md).

use super::common::{core_server, run_env, run_namespace};
use capi_conformance::report::Outcome;
use capi_conformance::rule_ids as id;

/// KCP's `<cluster>-kubeconfig` (a client certificate CN `kubernetes-admin`, O `system:masters`,
/// signed by the cluster CA that `<cluster>-ca` holds, no token) reaches the workload cluster,
/// with kube-rs and with the real kubectl; a certificate of another CA does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kcp_kubeconfig_with_a_client_certificate_reaches_the_workload_cluster() {
    use capi_conformance::capi_core::{pki, workload::WorkloadClusters};
    use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
    let clusters = WorkloadClusters::default();
    let w = clusters.get_or_start("default", "c1").await.unwrap();
    let text = pki::kubeconfig("c1", w.url(), &w.ca, None).unwrap();
    assert!(!text.contains("token:"), "the kubeconfig carries no token");
    let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let client = kube::Client::try_from(config).unwrap();
    let cms: kube::Api<ConfigMap> = kube::Api::namespaced(client.clone(), "kube-system");
    assert!(cms.get("kubeadm-config").await.is_ok());
    let nss: kube::Api<Namespace> = kube::Api::all(client);
    assert!(
        !nss.list(&Default::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );

    let other = pki::Authority::new("kubernetes").unwrap();
    let foreign = pki::kubeconfig("c1", w.url(), &other, None)
        .unwrap()
        // The server's CA stays the cluster's: only the client certificate is foreign.
        .replace(&base64_of(&other.cert_pem), &base64_of(&w.ca.cert_pem));
    let kc = kube::config::Kubeconfig::from_yaml(&foreign).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let nss: kube::Api<Namespace> = kube::Api::all(kube::Client::try_from(config).unwrap());
    match nss.list(&Default::default()).await {
        Err(kube::Error::Api(s)) => assert_eq!(s.code, 401),
        other => panic!("a foreign client certificate: {other:?}"),
    }

    let Some(kubectl) = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("kubectl"))
            .find(|k| k.is_file())
    }) else {
        println!("skip: the kubectl half (no kubectl on PATH)");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("kubeconfig");
    std::fs::write(&path, &text).unwrap();
    let out = tokio::process::Command::new(&kubectl)
        .arg("--kubeconfig")
        .arg(&path)
        .args(["get", "ns", "-o", "name"])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("namespace/kube-system"));
    let out = tokio::process::Command::new(&kubectl)
        .arg("--kubeconfig")
        .arg(&path)
        .args(["auth", "whoami", "-o", "json"])
        .output()
        .await
        .unwrap();
    let who: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(
        who["status"]["userInfo"]["username"], "kubernetes-admin",
        "{who}"
    );
    drop(w);
    clusters.shutdown().await;
}

fn base64_of(s: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(s)
}

/// CABPK tells the init config from a worker join by the owner Machine's
/// `cluster.x-k8s.io/control-plane` label (`util.IsControlPlaneMachine`): on a Cluster whose
/// infrastructure is provisioned and whose control plane is not yet initialized, the mock in
/// its `worker-join` mode generates data for the labelled control-plane Machine the tool
/// creates and none for the same Machine unlabelled (a worker waits for
/// `ControlPlaneInitialized`). SC-bootstrap judges the labelled one (`init config of the first
/// control-plane Machine`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_init_config_needs_its_machine_labelled_control_plane() {
    use capi_conformance::contract::{Contract, Role};
    use capi_conformance::mock::{MockOptions, MockProvider, core::CoreReads};
    use capi_conformance::scenarios::{
        baseline,
        core_sim::{ClusterSpec, MachineSpec, controller_owner_ref},
    };
    let (server, core) = core_server(
        capi_conformance::capi_core::crds::CoreCrds::Minimal,
        run_namespace(),
    )
    .await;
    let mock = MockProvider::start(
        server.client(),
        MockOptions {
            core: CoreReads::parse("worker-join").unwrap(),
            ..MockOptions::default()
        },
    );
    let env = run_env(server.client(), None);
    let subject =
        baseline::mock_subject(Role::BootstrapConfig, Contract::V1Beta2, "p", false).unwrap();
    let config = subject.resource.clone();
    env.create_cluster_of(
        &subject,
        "c1",
        ClusterSpec {
            endpoint: Some(("cp.capi-conformance.invalid", 6443)),
            ..ClusterSpec::default()
        },
    )
    .await
    .unwrap();
    env.set_infra_provisioned("c1", true).await.unwrap();
    let configs: kube::Api<kube::api::DynamicObject> =
        kube::Api::namespaced_with(server.client(), "run-ns", &config);
    for (machine, control_plane) in [("m-cp", true), ("m-unlabelled", false)] {
        let bc = format!("{machine}-bc");
        let infra = env
            .create_infra_machine(Contract::V1Beta2, machine, "c1")
            .await
            .unwrap();
        let m = env
            .create_machine(
                machine,
                "c1",
                (&infra, machine),
                MachineSpec {
                    bootstrap_config: Some((&config, &bc)),
                    control_plane,
                    ..MachineSpec::default()
                },
            )
            .await
            .unwrap();
        let obj: kube::api::DynamicObject = serde_json::from_value(serde_json::json!({
            "apiVersion": config.api_version, "kind": config.kind,
            "metadata": {"name": bc, "labels": {"cluster.x-k8s.io/cluster-name": "c1"},
                         "ownerReferences": [controller_owner_ref(&m)]},
            "spec": {},
        }))
        .unwrap();
        configs.create(&Default::default(), &obj).await.unwrap();
    }
    let created = |name: &'static str, tries: u32| {
        let configs = configs.clone();
        async move {
            for _ in 0..tries {
                let c = configs.get(name).await.unwrap();
                let v = serde_json::to_value(&c).unwrap();
                if v.pointer("/status/initialization/dataSecretCreated")
                    == Some(&serde_json::json!(true))
                {
                    return true;
                }
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
            }
            false
        }
    };
    assert!(
        created("m-cp-bc", 100).await,
        "the init config of the labelled control-plane Machine got no data"
    );
    assert!(
        !created("m-unlabelled-bc", 15).await,
        "an unlabelled Machine is a worker: no data before ControlPlaneInitialized"
    );
    mock.shutdown().await;
    core.shutdown().await;
}

/// The Cluster's `controlPlaneEndpoint` is its workload cluster: reserved before the Cluster
/// exists, served once the control plane is initialized with a certificate of the CA in
/// `<cluster>-ca` at that moment (here a provider's own, made before the gate opened, as KCP
/// and CABPK's init make it), so a kubeconfig a provider builds from endpoint and CA (as KCP's
/// `reconcileKubeconfig` does) reaches it. A `<cluster>-kubeconfig` the provider wrote is kept;
/// the tool writes its own only where there is none.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_endpoint_is_the_workload_cluster_served_with_the_providers_ca() {
    use capi_conformance::capi_core::{pki, workload::WorkloadClusters};
    use capi_conformance::scenarios::core_sim::ClusterSpec;
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    let (server, core) = core_server(
        capi_conformance::capi_core::crds::CoreCrds::Minimal,
        run_namespace(),
    )
    .await;
    let workloads = WorkloadClusters::default();
    let env = run_env(server.client(), Some(workloads.clone()));
    let secrets: kube::Api<Secret> = kube::Api::namespaced(server.client(), "run-ns");
    let create_secret = |v: serde_json::Value| {
        let secrets = secrets.clone();
        async move {
            let s: Secret = serde_json::from_value(v).unwrap();
            secrets.create(&Default::default(), &s).await.unwrap();
        }
    };
    for (cluster, provider_kubeconfig) in [("c1", false), ("c2", true)] {
        let (host, port) = env.control_plane_endpoint(cluster).unwrap();
        assert_eq!(host, "127.0.0.1");
        env.create_cluster(
            cluster,
            ClusterSpec {
                endpoint: Some((&host, port)),
                ..ClusterSpec::default()
            },
        )
        .await
        .unwrap();
        // The provider's own CA, before the control plane is initialized.
        let provider_ca = pki::Authority::new("kubernetes").unwrap();
        create_secret(pki::certificate_secret(
            cluster,
            "ca",
            &provider_ca.cert_pem,
            &provider_ca.key_pem,
        ))
        .await;
        if provider_kubeconfig {
            create_secret(pki::kubeconfig_secret(cluster, "provider's own")).await;
        }
        env.set_control_plane_initialized(cluster).await.unwrap();
        let wc = workloads.get("run-ns", cluster).expect("started");
        // A kubeconfig built from the Cluster's endpoint and the provider's CA reaches it
        // (credentials: the workload server's token; client certificates are another matter).
        let url = format!("https://{host}:{port}");
        let text = pki::kubeconfig(cluster, &url, &provider_ca, Some(wc.token())).unwrap();
        let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        let cms: kube::Api<ConfigMap> = kube::Api::namespaced(client, "kube-system");
        assert!(cms.get("kubeadm-config").await.is_ok(), "{cluster}");
        // The tool did not replace the provider's CA.
        let ca = secrets.get(&format!("{cluster}-ca")).await.unwrap();
        assert_eq!(
            ca.data.unwrap()["tls.crt"].0,
            provider_ca.cert_pem.as_bytes()
        );
        let kubeconfig = secrets.get(&format!("{cluster}-kubeconfig")).await.unwrap();
        let value = String::from_utf8(kubeconfig.data.unwrap()["value"].0.clone()).unwrap();
        if provider_kubeconfig {
            assert_eq!(value, "provider's own");
        } else {
            assert!(
                value.contains(&url),
                "the tool's kubeconfig points at the endpoint"
            );
        }
    }
    workloads.shutdown().await;
    core.shutdown().await;
}

/// On a run against a live cluster the tool has no workload cluster to offer (the provider runs
/// in the cluster; the tool's servers do not): the worker join of a CABPK-like provider (the
/// mock's `worker-join` mode) cannot create its join token, and the cells that need it are
/// inconclusive with the reason, never failed; the init config, which needs no workload
/// cluster, is judged as usual. The same subject on an embedded side (workload clusters) passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_run_leaves_worker_join_cells_inconclusive_not_failed() {
    use capi_conformance::capi_core::workload::WorkloadClusters;
    use capi_conformance::contract::{Contract, Role};
    use capi_conformance::mock::{MockOptions, MockProvider, core::CoreReads};
    use capi_conformance::scenarios::{Settings, baseline, runner};
    let (server, core) = core_server(
        capi_conformance::capi_core::crds::CoreCrds::Minimal,
        Vec::new(),
    )
    .await;
    let mock = MockProvider::start(
        server.client(),
        MockOptions {
            core: CoreReads::parse("worker-join").unwrap(),
            ..MockOptions::default()
        },
    );
    let subject =
        baseline::mock_subject(Role::BootstrapConfig, Contract::V1Beta2, "p", false).unwrap();
    for (ns, workloads) in [
        ("live", None),
        ("embedded", Some(WorkloadClusters::default())),
    ] {
        let side = runner::Side {
            client: server.client(),
            namespace: ns.into(),
            run_id: ns.into(),
            watch_filter: None,
            pause_core: false,
            settings: Settings {
                step_timeout: std::time::Duration::from_secs(3),
                ..Settings::EMBEDDED
            },
            guard: Default::default(),
            events: Default::default(),
            trouble: Default::default(),
            workloads: workloads.clone(),
            ledger: None,
            node_writes: Default::default(),
        };
        side.create_namespace().await.unwrap();
        let run = runner::run_subject(&side, &subject).await;
        assert!(
            run.environment_error.is_none(),
            "{ns}: {:?}",
            run.environment_error
        );
        let outcome = |rule: id::RuleId| {
            run.verdicts
                .get(rule)
                .map(|v| (v.outcome, v.reason.clone()))
        };
        let name = outcome(id::bootstrap::DATA_SECRET_NAME);
        let created = outcome(id::bootstrap::DATA_SECRET_CREATED);
        if workloads.is_none() {
            let (o, reason) = name.expect("data-secret-name judged");
            assert_eq!(o, Outcome::Inconclusive, "{ns}: {reason:?}");
            assert!(reason.unwrap().contains("--embedded"));
            assert_ne!(created.map(|c| c.0), Some(Outcome::Fail), "{ns}");
        } else {
            assert_eq!(name.map(|n| n.0), Some(Outcome::Pass), "{ns}");
            assert_eq!(created.map(|c| c.0), Some(Outcome::Pass), "{ns}");
        }
        assert!(!run.verdicts.failed(), "{ns}: {:?}", run.verdicts);
        if let Some(w) = workloads {
            w.shutdown().await;
        }
    }
    mock.shutdown().await;
    core.shutdown().await;
}

/// A control-plane Machine whose Node is in the workload cluster, with core's Machine controller
/// (simulated) playing the node's agent for `writes`: what it reports, and a client of the
/// workload cluster. The "control plane" owning the Machine is a ConfigMap: the controller only
/// matches the owner's kind and name.
async fn a_node_agent_run(
    writes: Vec<serde_json::Value>,
) -> (
    capi_conformance::scenarios::core_sim::MachineProgress,
    kube::Client,
    // Kept while the caller reads the workload cluster.
    (
        capi_conformance::apiserver::EmbeddedServer,
        capi_conformance::capi_core::workload::WorkloadClusters,
    ),
) {
    use capi_conformance::capi_core::{pki, workload::WorkloadClusters};
    use capi_conformance::scenarios::core_sim::node_agent::NodeWrites;
    use capi_conformance::scenarios::core_sim::{ClusterSpec, MachineSpec, machine_resource};
    use k8s_openapi::api::core::v1::{ConfigMap, Node};
    let (server, _core) = core_server(
        capi_conformance::capi_core::crds::CoreCrds::Minimal,
        run_namespace(),
    )
    .await;
    let workloads = WorkloadClusters::default();
    let mut env = run_env(server.client(), Some(workloads.clone()));
    env.node_writes = NodeWrites::new(writes).unwrap();
    env.create_cluster("c1", ClusterSpec::default())
        .await
        .unwrap();
    env.set_infra_provisioned("c1", true).await.unwrap();
    env.set_control_plane_initialized("c1").await.unwrap();
    let w = workloads.get_or_start("run-ns", "c1").await.unwrap();
    let text = pki::kubeconfig("c1", w.url(), &w.ca, None).unwrap();
    let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    let workload = kube::Client::try_from(config).unwrap();
    let node: Node = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "n1"},
        "spec": {"providerID": "in-memory://n1"},
        "status": {"conditions": [{"type": "Ready", "status": "True"}]},
    }))
    .unwrap();
    kube::Api::<Node>::all(workload.clone())
        .create(&Default::default(), &node)
        .await
        .unwrap();
    let cp: ConfigMap =
        serde_json::from_value(serde_json::json!({"metadata": {"name": "cp"}})).unwrap();
    let cp = kube::Api::<ConfigMap>::namespaced(server.client(), "run-ns")
        .create(&Default::default(), &cp)
        .await
        .unwrap();
    let cp_resource = kube::discovery::ApiResource::erase::<ConfigMap>(&());
    let infra = kube::discovery::ApiResource {
        group: "infrastructure.example.com".into(),
        version: "v1".into(),
        api_version: "infrastructure.example.com/v1".into(),
        kind: "NoMachine".into(),
        plural: "nomachines".into(),
    };
    env.create_machine(
        "m1",
        "c1",
        (&infra, "m1"),
        MachineSpec {
            data_secret: Some("m1-data"),
            control_plane: true,
            ..MachineSpec::default()
        },
    )
    .await
    .unwrap();
    env.merge_patch(
        &machine_resource(),
        "m1",
        serde_json::json!({
            "metadata": {"ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
                "name": "cp", "uid": cp.metadata.uid}]},
            "spec": {"providerID": "in-memory://n1"},
        }),
        "test: the control plane's Machine with its providerID",
    )
    .await
    .unwrap();
    let sim = env.start_machine_controller("c1", &cp_resource, "cp");
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(30);
    let progress = loop {
        let p = sim.progress();
        if p.with_node > 0 || p.node_agent_failed.is_some() {
            break p;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the Machine never got its Node: {p:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    sim.stop().await;
    (progress, workload, (server, workloads))
}

/// `--workload-object`: once the control plane's Machine has its Node, its objects are in the
/// workload cluster; an object it cannot take (a kind it does not serve) is reported as the
/// failed write, which makes `control-plane/initialized` inconclusive rather than failed
/// (`control_plane::run`), and the Machine keeps waiting.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_agent_writes_once_the_node_is_there_and_a_refused_write_is_reported() {
    use k8s_openapi::api::core::v1::Secret;
    let secret = serde_json::json!({"apiVersion": "v1", "kind": "Secret",
        "metadata": {"name": "agent-serving", "namespace": "kube-system"}});
    let (progress, workload, _servers) = a_node_agent_run(vec![secret]).await;
    assert_eq!(progress.node_agent_failed, None, "{progress:?}");
    assert_eq!(progress.with_node, 1, "{progress:?}");
    assert!(
        kube::Api::<Secret>::namespaced(workload, "kube-system")
            .get_opt("agent-serving")
            .await
            .unwrap()
            .is_some()
    );
    let widget = serde_json::json!({"apiVersion": "widgets.example.com/v1", "kind": "Widget",
        "metadata": {"name": "w1", "namespace": "kube-system"}});
    let (progress, ..) = a_node_agent_run(vec![widget]).await;
    let why = progress.node_agent_failed.clone().unwrap_or_default();
    assert!(
        why.contains("playing the node's agent") && why.contains("Widget"),
        "{progress:?}"
    );
    assert_eq!(progress.with_node, 0, "{progress:?}");
}
