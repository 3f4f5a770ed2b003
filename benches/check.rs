//! `check --embedded` benchmarks: wall time of the default run (mock as target, both
//! contracts, baseline first), and the validator's detection latency: from a provider's write
//! to the scenario step that waits for it seeing it (p50/p99).

use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
use capi_conformance::cli::{Cli, Command};
use capi_conformance::client_retry::RetryingClient;
use capi_conformance::commands::check::embedded_matrix;
use capi_conformance::scenarios::observer::watch_object;
use capi_conformance::scenarios::timeline::Recorder;
use capi_conformance::source::embedded::base_documents;
use clap::Parser;
use criterion::{Criterion, criterion_group, criterion_main};
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;
use serde_json::json;
use std::time::{Duration, Instant};

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap()
}

fn default_check(c: &mut Criterion) {
    let rt = runtime();
    let args = match Cli::parse_from([
        "capi-conformance",
        "check",
        "--embedded",
        "--progress",
        "never",
    ])
    .command
    {
        Command::Check(a) => *a,
        _ => unreachable!(),
    };
    let mut group = c.benchmark_group("check");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(60));
    group.bench_function("embedded_default", |b| {
        b.iter(|| {
            let m = rt.block_on(embedded_matrix(&args, "")).unwrap();
            assert!(!m.results.is_empty());
        })
    });
    group.finish();
}

/// Provider write (status patch by a stand-in provider) → the recorder's waiter wakes.
fn detection_latency(_: &mut Criterion) {
    let rt = runtime();
    let mut samples = rt.block_on(async {
        let server = EmbeddedServer::new(ServerOptions::default());
        server
            .apply_documents(base_documents().unwrap())
            .await
            .unwrap();
        let client = server.retrying_client();
        let res = ApiResource {
            group: "cluster.x-k8s.io".into(),
            version: "v1beta2".into(),
            api_version: "cluster.x-k8s.io/v1beta2".into(),
            kind: "Cluster".into(),
            plural: "clusters".into(),
        };
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), "default", &res);
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": "latency"}, "spec": {}
        }))
        .unwrap();
        api.create(&PostParams::default(), &obj).await.unwrap();
        let recorder = Recorder::new();
        let mut observer = watch_object(
            client.clone(),
            &res,
            Some("default"),
            "latency",
            recorder.clone(),
        );
        observer.ready(Duration::from_secs(5)).await;
        let mut samples = Vec::new();
        for i in 0..300 {
            let waiter = {
                let r = recorder.clone();
                tokio::spawn(async move {
                    let got = r
                        .wait_for("Cluster/latency", Duration::from_secs(5), move |v| {
                            v.pointer("/status/n").and_then(|n| n.as_i64()) == Some(i)
                        })
                        .await;
                    (Instant::now(), got.is_ok())
                })
            };
            tokio::task::yield_now().await;
            let t0 = Instant::now();
            api.patch_status(
                "latency",
                &PatchParams::default(),
                &Patch::Merge(json!({"status": {"n": i}})),
            )
            .await
            .unwrap();
            let (t1, ok) = waiter.await.unwrap();
            assert!(ok);
            samples.push(t1.saturating_duration_since(t0));
        }
        samples
    });
    samples.sort();
    let p = |q: f64| samples[((samples.len() as f64 - 1.0) * q).round() as usize];
    println!(
        "check/detection_latency: n={} p50={:?} p99={:?} max={:?}",
        samples.len(),
        p(0.50),
        p(0.99),
        samples[samples.len() - 1]
    );
}

criterion_group!(benches, detection_latency, default_check);
criterion_main!(benches);
