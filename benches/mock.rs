//! Mock provider reconcile latency: owner reference set → the contract's ready state, in-process
//! on the embedded API server (goal ≤ 10 ms with the default 5 ms provisioning delay).
//!
//! Measured 2026-11-22 on the shared 2-core build machine (load average 5–8): InfraCluster
//! 13.8 ms, InfraMachine 12.3 ms, BootstrapConfig 3.8 ms (median; the infrastructure kinds include
//! the 5 ms simulated provisioning delay and the finalizer round trip).

use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
use capi_conformance::client_retry::RetryingClient;
use capi_conformance::contract::Contract;
use capi_conformance::mock::core_crds::core_crd_documents;
use capi_conformance::mock::crds::mock_crds;
use capi_conformance::mock::kinds::{MOCK_CLUSTER, MOCK_CONFIG, MOCK_MACHINE, MockKind};
use capi_conformance::mock::{MockOptions, MockProvider};
use criterion::{Criterion, criterion_group, criterion_main};
use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, DynamicObject, GroupVersionKind};
use kube::{Client, ResourceExt};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const NS: &str = "bench";
static SEQ: AtomicUsize = AtomicUsize::new(0);

fn core_api(client: &Client, kind: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk("cluster.x-k8s.io", "v1beta2", kind);
    let ar = ApiResource::from_gvk_with_plural(&gvk, &format!("{}s", kind.to_lowercase()));
    Api::namespaced_with(client.clone(), NS, &ar)
}

async fn create(api: &Api<DynamicObject>, body: Value) -> DynamicObject {
    let obj: DynamicObject = serde_json::from_value(body).unwrap();
    api.create(&PostParams::default(), &obj).await.unwrap()
}

/// Server with CRDs, the mock, a provisioned Cluster `c` and a Machine `m` with bootstrap data.
async fn setup() -> (EmbeddedServer, Client, DynamicObject, DynamicObject) {
    let server = EmbeddedServer::new(ServerOptions::default());
    let mut docs = core_crd_documents();
    docs.extend(
        mock_crds()
            .unwrap()
            .into_iter()
            .map(|c| serde_json::to_value(c).unwrap()),
    );
    docs.push(json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}}));
    server.apply_documents(docs).await.unwrap();
    let client = server.retrying_client();
    std::mem::forget(MockProvider::start(client.clone(), MockOptions::default()));
    let clusters = core_api(&client, "Cluster");
    let cluster = create(
        &clusters,
        json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
        "metadata": {"name": "c", "namespace": NS}, "spec": {"clusterName": "c"}}),
    )
    .await;
    let status = json!({"status": {"initialization": {"infrastructureProvisioned": true}}});
    clusters
        .patch_status("c", &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
    let machine = create(&core_api(&client, "Machine"), json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Machine",
        "metadata": {"name": "m", "namespace": NS, "labels": {"cluster.x-k8s.io/cluster-name": "c"}},
        "spec": {"clusterName": "c", "bootstrap": {"dataSecretName": "boot"}}}))
    .await;
    (server, client, cluster, machine)
}

/// Creates one object, then times owner reference → `ready` true.
async fn owner_to_ready(
    client: &Client,
    kind: MockKind,
    owner: &DynamicObject,
    ready: &str,
) -> Duration {
    let contract = Contract::V1Beta2;
    let ar = kind.api_resource(contract);
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), NS, &ar);
    let name = format!("o{}", SEQ.fetch_add(1, Ordering::Relaxed));
    create(&api, json!({"apiVersion": ar.api_version, "kind": ar.kind, "metadata": {"name": name, "namespace": NS}, "spec": {}})).await;
    let is_machine = owner.types.as_ref().is_some_and(|t| t.kind == "Machine");
    let owner_ref = json!({"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": owner.types.as_ref().unwrap().kind,
        "name": owner.name_any(), "uid": owner.uid().unwrap(), "controller": is_machine});
    let body = json!({"metadata": {"ownerReferences": [owner_ref], "labels": {"cluster.x-k8s.io/cluster-name": "c"}}});
    let start = Instant::now();
    api.patch(&name, &PatchParams::default(), &Patch::Merge(&body))
        .await
        .unwrap();
    loop {
        let o = api.get(&name).await.unwrap();
        let done = ready
            .split('.')
            .try_fold(&o.data, |v, k| v.get(k))
            .and_then(Value::as_bool)
            == Some(true);
        if done {
            return start.elapsed();
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{name} never became ready"
        );
        tokio::time::sleep(Duration::from_micros(200)).await;
    }
}

fn bench(c: &mut Criterion) {
    let rt = tokio::runtime::Runtime::new().unwrap();
    let (_server, client, cluster, machine) = rt.block_on(setup());
    let mut group = c.benchmark_group("mock_owner_to_ready");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(5));
    let cases: [(&str, MockKind, &DynamicObject, &str); 3] = [
        (
            "infra_cluster_v1beta2",
            MOCK_CLUSTER,
            &cluster,
            "status.initialization.provisioned",
        ),
        (
            "infra_machine_v1beta2",
            MOCK_MACHINE,
            &machine,
            "status.initialization.provisioned",
        ),
        (
            "bootstrap_config_v1beta2",
            MOCK_CONFIG,
            &machine,
            "status.initialization.dataSecretCreated",
        ),
    ];
    for (label, kind, owner, ready) in cases {
        group.bench_function(label, |b| {
            b.to_async(&rt).iter_custom(|iters| {
                let client = client.clone();
                async move {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        total += owner_to_ready(&client, kind, owner, ready).await;
                    }
                    total
                }
            })
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
