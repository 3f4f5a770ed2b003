//! The cost the mock's webhook mode adds per call: the embedded server with the
//! mock's webhook-mode components (CA injected as `check --embedded --provider-cmd` does it,
//! Service routed to the mock's own HTTPS webhook server, `capi_mock_provider::webhook`), against
//! the same CRDs without webhooks.
//!
//! - `merge-patch/*`: a MockControlPlane spec change at v1beta2 (the storage version): none vs
//!   through the defaulting and the validating webhook (2 admission calls);
//! - `get/*`: a MockControlPlane read at v1beta2 vs at v1beta1 (1 conversion call).
//!
//! Added cost per admission call = (with webhooks − without) / 2; per conversion call =
//! converted − storage version. Run: `cargo bench --bench mock_webhooks` (release).

use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
use capi_conformance::mock::manifests::ManifestOptions;
use capi_conformance::mock::webhook::components::{SERVICE_NAME, webhook_manifests};
use capi_conformance::mock::webhook::{WebhookOptions, WebhookServer, serve};
use capi_conformance::mock::{FaultSet, crds::mock_crds};
use capi_conformance::serving::{CertDir, Plan};
use criterion::Criterion;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};
use std::time::Duration;

const NS: &str = "bench";

fn cp_api(client: kube::Client, version: &str) -> Api<DynamicObject> {
    let gvk = GroupVersionKind::gvk(
        "controlplane.mock.capi-conformance.io",
        version,
        "MockControlPlane",
    );
    Api::namespaced_with(
        client,
        NS,
        &ApiResource::from_gvk_with_plural(&gvk, "mockcontrolplanes"),
    )
}

/// What the server stores of the components (cert-manager kinds, RBAC and the Deployment are
/// not needed here).
fn stored(docs: Vec<Value>) -> Vec<Value> {
    docs.into_iter()
        .filter(|d| {
            matches!(
                d["kind"].as_str(),
                Some(
                    "Namespace"
                        | "CustomResourceDefinition"
                        | "Service"
                        | "MutatingWebhookConfiguration"
                        | "ValidatingWebhookConfiguration"
                )
            )
        })
        .collect()
}

/// A server with the mock's CRDs, with or without its webhooks, and MockControlPlane `cp`.
async fn setup(webhooks: bool) -> (EmbeddedServer, Option<(WebhookServer, CertDir)>) {
    let server = EmbeddedServer::new(ServerOptions::default());
    let mut docs = vec![json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}})];
    let mut serving = None;
    if webhooks {
        let mut components = webhook_manifests(&ManifestOptions::default()).unwrap();
        let plan = Plan::for_components(&mut components).unwrap();
        let dir = CertDir::create("capi-conformance-bench-webhook-", &plan.certs).unwrap();
        let hooks = serve(WebhookOptions {
            cert_dir: dir.path().to_path_buf(),
            addr: "127.0.0.1:0".parse().unwrap(),
            faults: FaultSet::default(),
        })
        .await
        .unwrap();
        for s in &plan.services {
            server.route_service(&s.namespace, &s.name, s.port, hooks.addr);
        }
        assert!(plan.services.iter().any(|s| s.name == SERVICE_NAME));
        docs.extend(stored(components));
        serving = Some((hooks, dir));
    } else {
        for crd in mock_crds().unwrap() {
            docs.push(serde_json::to_value(crd).unwrap());
        }
    }
    server.apply_documents(docs).await.unwrap();
    let cp: DynamicObject = serde_json::from_value(json!({
        "apiVersion": "controlplane.mock.capi-conformance.io/v1beta2", "kind": "MockControlPlane",
        "metadata": {"name": "cp", "namespace": NS},
        "spec": {"version": "v1.33.0", "replicas": 1}}))
    .unwrap();
    cp_api(server.client(), "v1beta2")
        .create(&PostParams::default(), &cp)
        .await
        .unwrap();
    (server, serving)
}

fn bench(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let mut group = c.benchmark_group("mock-webhooks");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(5));
    for webhooks in [false, true] {
        let label = if webhooks { "webhooks" } else { "none" };
        let (server, serving) = rt.block_on(setup(webhooks));
        let b2 = cp_api(server.client(), "v1beta2");
        let before = server.webhook_counters();
        let mut n = 0u64;
        group.bench_function(format!("merge-patch/{label}"), |b| {
            b.to_async(rt).iter(|| {
                n += 1;
                let api = b2.clone();
                let replicas = n % 5 + 1;
                async move {
                    api.patch(
                        "cp",
                        &PatchParams::default(),
                        &Patch::Merge(json!({"spec": {"replicas": replicas}})),
                    )
                    .await
                    .unwrap()
                }
            })
        });
        for version in ["v1beta2", "v1beta1"] {
            let api = cp_api(server.client(), version);
            group.bench_function(format!("get-{version}/{label}"), |b| {
                b.to_async(rt).iter(|| {
                    let api = api.clone();
                    async move { api.get("cp").await.unwrap() }
                })
            });
        }
        let after = server.webhook_counters();
        let admission = after.admission_calls - before.admission_calls;
        let conversion = after.conversion_calls - before.conversion_calls;
        println!("{label}: {admission} admission calls, {conversion} conversion calls");
        assert_eq!(webhooks, admission > 0 && conversion > 0, "{label}");
        drop(serving);
    }
    group.finish();
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = rt.enter();
    let mut c = Criterion::default().configure_from_args();
    bench(&mut c, &rt);
    c.final_summary();
}
