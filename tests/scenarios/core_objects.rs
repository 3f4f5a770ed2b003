//! The core objects the tool makes, tried on the mock in its CAPI-like modes (the behaviours of
//! CAPI's own providers that our scenarios once got wrong; docs/core-simulation.md).

use super::common::{embedded_reading, failed_scenario_rules, lifecycle, scenario_passed};
use capi_conformance::report::Outcome;
use capi_conformance::rule_ids as id;

fn assert_target_clean(m: &capi_conformance::report::Matrix, what: &str) {
    let failed = failed_scenario_rules(m, false);
    assert!(failed.is_empty(), "{what}: {failed:?}");
    let inconclusive: Vec<_> = lifecycle(m, false)
        .filter(|r| r.outcome == Outcome::Inconclusive)
        .map(|r| (r.column.id(), r.rule_id.clone(), r.reason.clone()))
        .collect();
    assert!(inconclusive.is_empty(), "{what}: {inconclusive:#?}");
    assert!(
        lifecycle(m, false).any(|r| r.outcome == Outcome::Pass),
        "{what}: no target cell passed"
    );
}

/// CAPI's in-memory InfraMachine controller gets the InfraCluster named by
/// `Cluster.spec.infrastructureRef`; a Cluster without it (as the tool made them before) never
/// lets it provision.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_infra_machine_that_dereferences_the_clusters_infrastructure_ref_passes() {
    let m = embedded_reading(&["--scenarios", "SC-inframachine"], "infrastructure-ref").await;
    assert_target_clean(&m, "infrastructure-ref");
    assert!(scenario_passed(&m, false, id::infra_machine::PROVISIONED));
}

/// A provider of CAPI v1.9/v1.10 reads core objects at `cluster.x-k8s.io/v1beta1`
/// (`status.infrastructureReady`, refs with `apiVersion`): the embedded core converts what the
/// tool wrote at v1beta2, as core's conversion webhook does (no spelling written twice).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_reading_core_objects_at_v1beta1_sees_them_converted() {
    let m = embedded_reading(
        &["--scenarios", "SC-inframachine,SC-bootstrap,SC-machinepool"],
        "v1beta1,infrastructure-ref",
    )
    .await;
    assert_target_clean(&m, "v1beta1 reads");
}

/// `--core-crds` installs CAPI core's released CRDs (strict v1beta2 schemas, v1beta1 served):
/// the scenarios' core objects are valid there and read the same at both versions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scenarios_work_on_capi_cores_released_crds() {
    let Some(file) = super::shared_data::shared_or_skip(
        "corpus/capi-core/components.yaml",
        "scenarios on CAPI core's released CRDs",
    ) else {
        return;
    };
    let file = file.display().to_string();
    let m = embedded_reading(&["--core-crds", &file], "v1beta1,capi-like").await;
    assert_target_clean(&m, "--core-crds");
    let b2 = embedded_reading(&["--core-crds", &file], "").await;
    assert_target_clean(&b2, "--core-crds, v1beta2 reads");
}

/// A bootstrap provider joining a worker as CABPK does needs what an initialized control
/// plane leaves: `<cluster>-ca` (a real certificate and key) and `<cluster>-kubeconfig`
/// reaching a workload cluster where it creates its join token. Their contents never reach
/// the report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_join_finds_the_cluster_ca_and_a_workload_cluster_for_its_token() {
    let m = embedded_reading(&["--scenarios", "SC-bootstrap"], "worker-join").await;
    assert_target_clean(&m, "worker-join");
    assert!(scenario_passed(
        &m,
        false,
        id::bootstrap::DATA_SECRET_CREATED
    ));
    let json = serde_json::to_string(&m).unwrap();
    assert!(
        !json.contains("-----BEGIN"),
        "certificate material in the report"
    );
}

/// A `--sample` the installed CRD rejects is a usage error before any scenario runs (exit 2
/// through `main`), naming the sample file, the kind and the server's message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sample_the_crd_rejects_is_a_usage_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bad-sample.yaml");
    std::fs::write(
        &file,
        "apiVersion: controlplane.mock.capi-conformance.io/v1beta2\nkind: MockControlPlane\nmetadata: {name: x}\nspec: {replicas: three, version: v1.33.0}\n",
    )
    .unwrap();
    let path = file.display().to_string();
    let args = super::common::check_args(&[
        "--embedded",
        "--progress",
        "never",
        "--scenarios",
        "SC-controlplane",
        "--sample",
        &path,
    ]);
    let err = capi_conformance::commands::check::embedded_matrix(&args, "")
        .await
        .expect_err("a bad sample must stop the run");
    let text = format!("{err:#}");
    assert!(text.contains(&path), "{text}");
    assert!(text.contains("MockControlPlane"), "{text}");
    assert!(text.contains("spec.replicas"), "{text}");
    // A valid sample of the same kind runs.
    std::fs::write(
        &file,
        "apiVersion: controlplane.mock.capi-conformance.io/v1beta2\nkind: MockControlPlane\nmetadata: {name: x}\nspec: {replicas: 1, version: v1.33.0}\n",
    )
    .unwrap();
    let m = capi_conformance::commands::check::embedded_matrix(&args, "")
        .await
        .unwrap();
    assert!(lifecycle(&m, false).any(|r| r.outcome == Outcome::Pass));
}

/// CAPI's own controllers add their finalizer first, before looking up the owner and pause
/// (`finalizers.EnsureFinalizer`): the owner-gate and pause rules do not count that as acting
/// (the mock's faults that really act before the owner or while paused still fail them, see
/// faults.rs).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finalizer_added_before_owner_and_pause_is_not_acting() {
    let m = embedded_reading(
        &[
            "--scenarios",
            "SC-infracluster,SC-inframachine,SC-controlplane,SC-machinepool",
        ],
        "finalizer-first",
    )
    .await;
    assert_target_clean(&m, "finalizer-first");
    for rule in [
        id::all::PAUSE,
        id::infra_machine::OWNER_GATE,
        id::infra_cluster::OWNER_GATE,
    ] {
        assert!(scenario_passed(&m, false, rule), "{rule} not judged");
    }
}

/// Everything CAPI-like at once, reading at v1beta1 and at v1beta2: every role and contract.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_mock_in_every_capi_like_mode_passes_every_scenario() {
    for reads in ["capi-like", "v1beta1,capi-like"] {
        let m = embedded_reading(&[], reads).await;
        assert_target_clean(&m, reads);
    }
}

/// The real kubectl reads a Cluster the tool wrote at v1beta2 at both versions, converted by
/// the core conversion webhook: `kubectl get clusters.v1beta1.cluster.x-k8s.io` shows a
/// v1beta1 `ObjectReference` whose `apiVersion` comes from the referenced CRD's contract labels.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_reads_core_objects_at_both_versions() {
    use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
    let Some(kubectl) = std::env::var_os("PATH").and_then(|p| {
        std::env::split_paths(&p)
            .map(|d| d.join("kubectl"))
            .find(|k| k.is_file())
    }) else {
        println!("skip: no kubectl on PATH");
        return;
    };
    let server = EmbeddedServer::new(ServerOptions::default());
    let core = capi_conformance::capi_core::EmbeddedCore::start(
        server.client(),
        capi_conformance::capi_core::crds::CoreCrds::Minimal,
    )
    .await
    .unwrap();
    core.route(&server);
    server
        .apply_documents(
            capi_conformance::source::embedded::base_documents_with(core.documents.clone())
                .unwrap(),
        )
        .await
        .unwrap();
    let cluster: kube::api::DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "default"},
        "spec": {"infrastructureRef": {"apiGroup": "infrastructure.mock.capi-conformance.io",
                                       "kind": "MockCluster", "name": "c1"}},
    }))
    .unwrap();
    let gvk = kube::api::GroupVersionKind::gvk("cluster.x-k8s.io", "v1beta2", "Cluster");
    let ar = kube::api::ApiResource::from_gvk_with_plural(&gvk, "clusters");
    let api: kube::Api<kube::api::DynamicObject> =
        kube::Api::namespaced_with(server.client(), "default", &ar);
    api.create(&Default::default(), &cluster).await.unwrap();
    let listener = server.listen("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let dir = tempfile::tempdir().unwrap();
    let kc = dir.path().join("kubeconfig");
    std::fs::write(&kc, listener.kubeconfig_yaml()).unwrap();
    let get = |resource: &str| {
        let kubectl = kubectl.clone();
        let kc = kc.clone();
        let resource = resource.to_string();
        async move {
            let out = tokio::process::Command::new(kubectl)
                .arg("--kubeconfig")
                .arg(&kc)
                .args(["get", &resource, "c1", "-n", "default", "-o", "json"])
                .output()
                .await
                .unwrap();
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            serde_json::from_slice::<serde_json::Value>(&out.stdout).unwrap()
        }
    };
    let b1 = get("clusters.v1beta1.cluster.x-k8s.io").await;
    assert_eq!(b1["apiVersion"], "cluster.x-k8s.io/v1beta1");
    assert_eq!(
        b1["spec"]["infrastructureRef"],
        serde_json::json!({"apiVersion": "infrastructure.mock.capi-conformance.io/v1beta2",
                           "kind": "MockCluster", "name": "c1", "namespace": "default"})
    );
    assert!(
        b1["metadata"]["annotations"]["cluster.x-k8s.io/conversion-data"].is_string(),
        "{b1}"
    );
    let b2 = get("clusters.v1beta2.cluster.x-k8s.io").await;
    assert_eq!(
        b2["spec"]["infrastructureRef"]["apiGroup"],
        "infrastructure.mock.capi-conformance.io"
    );
    assert!(core.webhook.reviews() > 0);
    listener.shutdown().await;
    core.shutdown().await;
}

/// A control plane sample naming an InfraMachineTemplate: the tool creates the template given
/// in the same `--sample` documents in the run's namespace under the run's name, and the
/// scenario's object refers to that one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_samples_reference_is_created_in_the_run_namespace_and_rewritten() {
    use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
    use capi_conformance::contract::{Contract, Role};
    use capi_conformance::scenarios::{Settings, baseline, env::Env, timeline::Recorder};
    let server = EmbeddedServer::new(ServerOptions::default());
    let mut docs = capi_conformance::source::embedded::base_documents().unwrap();
    docs.push(serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "run-ns"}}));
    server.apply_documents(docs).await.unwrap();
    let env = Env {
        client: server.client(),
        namespace: "run-ns".into(),
        run_id: "r1".into(),
        watch_filter: None,
        pause_core: false,
        recorder: Recorder::new(),
        guard: Default::default(),
        settings: Settings::EMBEDDED,
        round_trips: Default::default(),
        events: Default::default(),
        workloads: None,
    };
    let mut subject =
        baseline::mock_subject(Role::ControlPlane, Contract::V1Beta2, "p", false).unwrap();
    subject.sample = Some(
        serde_json::json!({"spec": {"replicas": 1, "machineTemplate": {"infrastructureRef": {
        "apiGroup": "infrastructure.mock.capi-conformance.io", "kind": "MockMachineTemplate", "name": "tmpl"}}}}),
    );
    subject.companions.sample_documents = vec![serde_json::json!({
        "apiVersion": "infrastructure.mock.capi-conformance.io/v1beta2", "kind": "MockMachineTemplate",
        "metadata": {"name": "tmpl", "namespace": "somewhere-else", "labels": {"from": "sample"}},
        "spec": {"template": {"spec": {}}}})];
    let resolved = env
        .resolve_sample_references(&subject)
        .await
        .unwrap()
        .expect("the reference resolves");
    let name = resolved
        .sample
        .as_ref()
        .and_then(|s| s.pointer("/spec/machineTemplate/infrastructureRef/name"))
        .and_then(|v| v.as_str())
        .unwrap()
        .to_string();
    assert_eq!(name, "mockcontrolplane-b2-ref-tmpl");
    let gvk = kube::api::GroupVersionKind::gvk(
        "infrastructure.mock.capi-conformance.io",
        "v1beta2",
        "MockMachineTemplate",
    );
    let ar = kube::api::ApiResource::from_gvk_with_plural(&gvk, "mockmachinetemplates");
    let api: kube::Api<kube::api::DynamicObject> =
        kube::Api::namespaced_with(server.client(), "run-ns", &ar);
    let created = api.get(&name).await.unwrap();
    assert_eq!(created.metadata.labels.unwrap()["from"], "sample");
    // Tracked for the run's cleanup.
    let left = env
        .guard
        .cleanup(
            &server.client(),
            std::time::Duration::from_millis(200),
            true,
        )
        .await;
    assert!(left.0.is_empty(), "{:?}", left.0);
    assert!(api.get_opt(&name).await.unwrap().is_none());
}

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
    use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
    use capi_conformance::contract::{Contract, Role};
    use capi_conformance::mock::{MockOptions, MockProvider, core::CoreReads};
    use capi_conformance::scenarios::{
        Settings, baseline,
        core_sim::{ClusterSpec, MachineSpec, controller_owner_ref},
        env::Env,
        timeline::Recorder,
    };
    let server = EmbeddedServer::new(ServerOptions::default());
    let core = capi_conformance::capi_core::EmbeddedCore::start(
        server.client(),
        capi_conformance::capi_core::crds::CoreCrds::Minimal,
    )
    .await
    .unwrap();
    core.route(&server);
    let mut docs =
        capi_conformance::source::embedded::base_documents_with(core.documents.clone()).unwrap();
    docs.push(serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "run-ns"}}));
    server.apply_documents(docs).await.unwrap();
    let mock = MockProvider::start(
        server.client(),
        MockOptions {
            core: CoreReads::parse("worker-join").unwrap(),
            ..MockOptions::default()
        },
    );
    let env = Env {
        client: server.client(),
        namespace: "run-ns".into(),
        run_id: "r1".into(),
        watch_filter: None,
        pause_core: false,
        recorder: Recorder::new(),
        guard: Default::default(),
        settings: Settings::EMBEDDED,
        round_trips: Default::default(),
        events: Default::default(),
        workloads: None,
    };
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
    use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
    use capi_conformance::capi_core::{pki, workload::WorkloadClusters};
    use capi_conformance::scenarios::{
        Settings, core_sim::ClusterSpec, env::Env, timeline::Recorder,
    };
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    let server = EmbeddedServer::new(ServerOptions::default());
    let core = capi_conformance::capi_core::EmbeddedCore::start(
        server.client(),
        capi_conformance::capi_core::crds::CoreCrds::Minimal,
    )
    .await
    .unwrap();
    core.route(&server);
    let mut docs =
        capi_conformance::source::embedded::base_documents_with(core.documents.clone()).unwrap();
    docs.push(serde_json::json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "run-ns"}}));
    server.apply_documents(docs).await.unwrap();
    let workloads = WorkloadClusters::default();
    let env = Env {
        client: server.client(),
        namespace: "run-ns".into(),
        run_id: "r1".into(),
        watch_filter: None,
        pause_core: false,
        recorder: Recorder::new(),
        guard: Default::default(),
        settings: Settings::EMBEDDED,
        round_trips: Default::default(),
        events: Default::default(),
        workloads: Some(workloads.clone()),
    };
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

/// Python's `kubernetes` client (an independent reader) creates a Cluster at v1beta2 and reads
/// it at v1beta1, and the reverse, through the core conversion webhook: references
/// (`apiGroup` ↔ `apiVersion` from the MockCluster CRD's contract labels, `namespace`),
/// `status.initialization.*` ↔ `status.infrastructureReady` / `controlPlaneReady`. On the
/// tool's minimal core CRDs and on CAPI core's released ones (`../shared`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn python_reads_core_objects_converted_at_both_versions() {
    use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
    use capi_conformance::capi_core::crds::CoreCrds;
    let test = "python_reads_core_objects_converted_at_both_versions";
    let Some(python) = super::python_tools::python_with("kubernetes", test) else {
        return;
    };
    let mut crds = vec![("minimal", CoreCrds::Minimal)];
    if let Some(file) = super::shared_data::shared_or_skip(
        "corpus/capi-core/components.yaml",
        "Python reads on CAPI core's released CRDs",
    ) {
        crds.push(("released", CoreCrds::Released(file, Default::default())));
    }
    let script =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/scenarios/core_python.py");
    for (what, crds) in crds {
        let server = EmbeddedServer::new(ServerOptions::default());
        let core = capi_conformance::capi_core::EmbeddedCore::start(server.client(), crds)
            .await
            .unwrap();
        core.route(&server);
        server
            .apply_documents(
                capi_conformance::source::embedded::base_documents_with(core.documents.clone())
                    .unwrap(),
            )
            .await
            .unwrap();
        let listener = server.listen("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let dir = tempfile::tempdir().unwrap();
        let kc = dir.path().join("kubeconfig");
        std::fs::write(&kc, listener.kubeconfig_yaml()).unwrap();
        let out = tokio::process::Command::new(&python)
            .arg(&script)
            .arg(&kc)
            .arg("default")
            .output()
            .await
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.trim_end().ends_with("ok"),
            "{what} core CRDs: {stdout}{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            core.webhook.reviews() > 0,
            "{what}: no ConversionReview served"
        );
        listener.shutdown().await;
        core.shutdown().await;
    }
}

/// On a run against a live cluster the tool has no workload cluster to offer (the provider runs
/// in the cluster; the tool's servers do not): the worker join of a CABPK-like provider (the
/// mock's `worker-join` mode) cannot create its join token, and the cells that need it are
/// inconclusive with the reason, never failed; the init config, which needs no workload
/// cluster, is judged as usual. The same subject on an embedded side (workload clusters) passes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_live_run_leaves_worker_join_cells_inconclusive_not_failed() {
    use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
    use capi_conformance::capi_core::workload::WorkloadClusters;
    use capi_conformance::contract::{Contract, Role};
    use capi_conformance::mock::{MockOptions, MockProvider, core::CoreReads};
    use capi_conformance::scenarios::{Settings, baseline, runner};
    let server = EmbeddedServer::new(ServerOptions::default());
    let core = capi_conformance::capi_core::EmbeddedCore::start(
        server.client(),
        capi_conformance::capi_core::crds::CoreCrds::Minimal,
    )
    .await
    .unwrap();
    core.route(&server);
    server
        .apply_documents(
            capi_conformance::source::embedded::base_documents_with(core.documents.clone())
                .unwrap(),
        )
        .await
        .unwrap();
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
