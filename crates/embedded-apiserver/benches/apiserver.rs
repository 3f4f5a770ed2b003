//! Embedded API server throughput and latency: CR GET and merge-PATCH requests/s (in-process and
//! over TCP+TLS, 32 concurrent clients per batch), watch fan-out latency to 100 watchers, and
//! resident memory growth for 10,000 custom resources (printed before the benchmarks).

use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use embedded_apiserver::{EmbeddedServer, ServerOptions};
use futures::StreamExt;
use futures::future::join_all;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use serde_json::{Value, json};

const CONCURRENCY: usize = 32;

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {"size": {"type": "string"}, "replicas": {"type": "integer"}, "mode": {"type": "string", "default": "auto"}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}
    })
}

fn widget(name: &str) -> DynamicObject {
    serde_json::from_value(json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "labels": {"app": "bench"}}, "spec": {"size": "small", "replicas": 1}})).unwrap()
}

fn api(client: kube::Client) -> Api<DynamicObject> {
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("example.com", "v1", "Widget"),
        "widgets",
    );
    Api::namespaced_with(client, "default", &ar)
}

async fn installed() -> EmbeddedServer {
    let server = EmbeddedServer::new(ServerOptions::default());
    server.apply_documents(vec![crd()]).await.unwrap();
    server
}

fn rss_bytes() -> u64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| {
            s.split_whitespace()
                .nth(1)
                .and_then(|p| p.parse::<u64>().ok())
        })
        .map(|pages| pages * 4096)
        .unwrap_or(0)
}

fn report_memory(rt: &tokio::runtime::Runtime) {
    rt.block_on(async {
        let server = installed().await;
        let widgets = api(server.client());
        let before = rss_bytes();
        for i in 0..10_000 {
            widgets
                .create(&PostParams::default(), &widget(&format!("m{i}")))
                .await
                .unwrap();
        }
        let after = rss_bytes();
        println!(
            "memory: {} objects stored, RSS grew {:.1} MiB (from {:.1} to {:.1} MiB)",
            server.object_count(),
            (after.saturating_sub(before)) as f64 / 1048576.0,
            before as f64 / 1048576.0,
            after as f64 / 1048576.0
        );
    });
}

fn bench_requests(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let (server, tcp_client, listener) = rt.block_on(async {
        let server = installed().await;
        let listener = server.listen("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let client = listener.client().unwrap();
        let w = api(server.client());
        for i in 0..CONCURRENCY {
            w.create(&PostParams::default(), &widget(&format!("w{i}")))
                .await
                .unwrap();
        }
        (server, client, listener)
    });
    let mut group = c.benchmark_group("apiserver");
    group.throughput(Throughput::Elements(CONCURRENCY as u64));
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(4));
    for (label, client) in [("in-process", server.client()), ("tcp-tls", tcp_client)] {
        let widgets = api(client);
        group.bench_function(format!("get/{label}"), |b| {
            b.to_async(rt).iter(|| {
                let widgets = widgets.clone();
                async move {
                    join_all((0..CONCURRENCY).map(|i| {
                        let widgets = widgets.clone();
                        async move { widgets.get(&format!("w{i}")).await.unwrap() }
                    }))
                    .await
                }
            })
        });
        let mut n = 0u64;
        group.bench_function(format!("merge-patch/{label}"), |b| {
            b.to_async(rt).iter(|| {
                n += 1;
                let widgets = widgets.clone();
                let replicas = n;
                async move {
                    join_all((0..CONCURRENCY).map(|i| {
                        let widgets = widgets.clone();
                        async move {
                            widgets
                                .patch(
                                    &format!("w{i}"),
                                    &PatchParams::default(),
                                    &Patch::Merge(json!({"spec": {"replicas": replicas}})),
                                )
                                .await
                                .unwrap()
                        }
                    }))
                    .await
                }
            })
        });
    }
    group.finish();
    rt.block_on(listener.shutdown());
}

fn bench_fanout(c: &mut Criterion, rt: &tokio::runtime::Runtime) {
    let (server, streams) = rt.block_on(async {
        let server = installed().await;
        let widgets = api(server.client());
        widgets
            .create(&PostParams::default(), &widget("target"))
            .await
            .unwrap();
        let mut streams = Vec::new();
        for _ in 0..100 {
            let s = widgets
                .watch(&WatchParams::default().fields("metadata.name=target"), "0")
                .await
                .unwrap()
                .boxed();
            streams.push(s);
        }
        // Drain the initial ADDED on every stream.
        for s in streams.iter_mut() {
            let _ = s.next().await;
        }
        (server, streams)
    });
    let widgets = api(server.client());
    let streams = std::sync::Arc::new(tokio::sync::Mutex::new(streams));
    let mut group = c.benchmark_group("apiserver");
    group.sample_size(20);
    group.measurement_time(Duration::from_secs(4));
    // Start above the fixture's replicas so that every patch is a real change.
    let mut n = 1_000u64;
    group.bench_function("watch-fanout-100", |b| {
        b.to_async(rt).iter_custom(|iters| {
            let widgets = widgets.clone();
            let streams = streams.clone();
            n += iters;
            let base = n;
            async move {
                let mut total = Duration::ZERO;
                let mut guard = streams.lock().await;
                for i in 0..iters {
                    let start = Instant::now();
                    widgets
                        .patch(
                            "target",
                            &PatchParams::default(),
                            &Patch::Merge(json!({"spec": {"replicas": base + i}})),
                        )
                        .await
                        .unwrap();
                    join_all(guard.iter_mut().map(|s| async move {
                        loop {
                            match s.next().await {
                                Some(Ok(WatchEvent::Modified(_))) => break,
                                Some(Ok(WatchEvent::Bookmark(_))) => continue,
                                other => panic!("unexpected watch event {other:?}"),
                            }
                        }
                    }))
                    .await;
                    total += start.elapsed();
                }
                total
            }
        })
    });
    group.finish();
}

fn main() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let _guard = rt.enter();
    report_memory(&rt);
    let mut c = Criterion::default().configure_from_args();
    bench_requests(&mut c, &rt);
    bench_fanout(&mut c, &rt);
    c.final_summary();
}
