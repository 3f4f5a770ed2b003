//! The cost webhooks add to a write and a read of the embedded server: one merge-PATCH of a
//! custom resource with no webhook configuration, through one validating webhook, and through
//! a mutating plus a validating webhook (each call a real HTTPS round trip to a local
//! controller-runtime-like webhook server, tests/support/webhooks.rs); and a GET converted by a
//! conversion webhook against the same GET at the storage version. The difference between the
//! `none` and `validating` rows is the added cost per admission call.

#[path = "../tests/support/webhooks.rs"]
mod webhook_support;

use std::time::Duration;

use criterion::Criterion;
use embedded_apiserver::{EmbeddedServer, ServerOptions};
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};
use webhook_support::{WebhookServer, gadget_crd, hook};

fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}}]}
    })
}

fn api(
    client: kube::Client,
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
) -> Api<DynamicObject> {
    let ar =
        ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural);
    Api::namespaced_with(client, "default", &ar)
}

fn configuration(kind: &str, hooks: Vec<Value>) -> Value {
    json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
        "metadata": {"name": "bench"}, "webhooks": hooks})
}

fn rules() -> Value {
    json!([{"operations": ["UPDATE"], "apiGroups": ["example.com"], "apiVersions": ["v1"], "resources": ["widgets"]}])
}

fn bench_admission(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let mut group = c.benchmark_group("webhooks");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(5));
    for label in ["none", "validating", "mutating+validating"] {
        let (server, hooks) = rt.block_on(async {
            let server = EmbeddedServer::new(ServerOptions::default());
            let hooks = WebhookServer::start().await;
            let cc = |p: &str| json!({"url": hooks.url(p), "caBundle": hooks.ca_bundle});
            let mut docs = vec![widget_crd()];
            if label != "none" {
                docs.push(configuration(
                    "ValidatingWebhookConfiguration",
                    vec![hook("v.bench.example.com", cc("/validate"), rules())],
                ));
            }
            if label == "mutating+validating" {
                docs.push(configuration(
                    "MutatingWebhookConfiguration",
                    vec![hook("m.bench.example.com", cc("/mutate"), rules())],
                ));
            }
            server.apply_documents(docs).await.unwrap();
            let widgets = api(server.client(), "example.com", "v1", "Widget", "widgets");
            let w: DynamicObject =
                serde_json::from_value(json!({"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": "w"}, "spec": {"replicas": 0}}))
                .unwrap();
            widgets.create(&PostParams::default(), &w).await.unwrap();
            (server, hooks)
        });
        let widgets = api(server.client(), "example.com", "v1", "Widget", "widgets");
        let mut n = 0u64;
        group.bench_function(format!("merge-patch/{label}"), |b| {
            b.to_async(rt).iter(|| {
                n += 1;
                let widgets = widgets.clone();
                let replicas = n;
                async move {
                    widgets
                        .patch(
                            "w",
                            &PatchParams::default(),
                            &Patch::Merge(json!({"spec": {"replicas": replicas}})),
                        )
                        .await
                        .unwrap()
                }
            })
        });
        let calls = server.webhook_counters().admission_calls;
        println!(
            "{label}: {calls} webhook calls over {} connections",
            hooks.connections()
        );
        assert!(
            label == "none" || calls > 0,
            "{label}: no webhook was called"
        );
        assert!(
            label != "none" || calls == 0,
            "{label}: webhooks were called"
        );
        drop(hooks);
    }
    group.finish();
}

fn bench_conversion(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let (server, _hooks) = rt.block_on(async {
        let server = EmbeddedServer::new(ServerOptions::default());
        let hooks = WebhookServer::start().await;
        let crd = gadget_crd(Some(
            json!({"url": hooks.url("/convert"), "caBundle": hooks.ca_bundle}),
        ));
        server.apply_documents(vec![crd]).await.unwrap();
        let g: DynamicObject = serde_json::from_value(
            json!({"apiVersion": "conv.example.com/v1", "kind": "Gadget",
            "metadata": {"name": "g"}, "spec": {"dimensions": {"size": "small"}}}),
        )
        .unwrap();
        api(
            server.client(),
            "conv.example.com",
            "v1",
            "Gadget",
            "gadgets",
        )
        .create(&PostParams::default(), &g)
        .await
        .unwrap();
        (server, hooks)
    });
    let mut group = c.benchmark_group("webhooks");
    group.sample_size(30);
    group.measurement_time(Duration::from_secs(5));
    for version in ["v1", "v1alpha1"] {
        let gadgets = api(
            server.client(),
            "conv.example.com",
            version,
            "Gadget",
            "gadgets",
        );
        let label = if version == "v1" {
            "get/storage-version"
        } else {
            "get/converted"
        };
        group.bench_function(label, |b| {
            b.to_async(rt).iter(|| {
                let gadgets = gadgets.clone();
                async move { gadgets.get("g").await.unwrap() }
            })
        });
    }
    assert!(server.webhook_counters().conversion_calls > 0);
    group.finish();
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = rt.enter();
    let mut c = Criterion::default().configure_from_args();
    bench_admission(&mut c, &rt);
    bench_conversion(&mut c, &rt);
    c.final_summary();
}
