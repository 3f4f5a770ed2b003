//! The measurement driver behind `scripts/bench.sh` (`harness = false`; not a criterion bench).
//! One subcommand per figure; each prints `metric <name> <value>` lines that the script reads:
//!
//! - `corpus DIR`: writes the generated 1,000-CRD lint corpus (`DIR/corpus.yaml`, the one
//!   `benches/lint.rs` measures) and its CRDs alone (`DIR/crds.yaml`, for `kubectl apply`).
//! - `latency`: detection latency, provider write → the scenario step sees it, for our watch
//!   observer (`scenarios::observer::watch_object` + `Recorder::wait_for`, exactly what a step
//!   waits on) and for a polling observer at the CAPI e2e framework's 10 s interval, in the same
//!   run on the same objects: N objects written at random moments while both observe them.
//! - `server`: embedded server CR GET and merge-PATCH requests/s (in-process and over the HTTPS
//!   listener, 32 concurrent clients, keep-alive as kube-rs and kubectl do), and the time for one
//!   change to reach 100 watchers.
//! - `memory`: resident memory with 10,000 custom resources stored.
//!
//! `cargo bench` runs every bench target with `--bench`; this one then only prints its usage.

use anyhow::{Context, Result, bail, ensure};
use capi_conformance::apiserver::{EmbeddedServer, ServerOptions};
use capi_conformance::client_retry::RetryingClient;
use capi_conformance::scenarios::observer::watch_object;
use capi_conformance::scenarios::timeline::Recorder;
use capi_conformance::source::embedded::base_documents;
use clap::{Parser, Subcommand};
use futures::StreamExt;
use futures::future::join_all;
use kube::api::{Api, DynamicObject, Patch, PatchParams, PostParams, WatchEvent, WatchParams};
use kube::core::{ApiResource, GroupVersionKind};
use rand::Rng;
use serde_json::{Value, json};
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

#[path = "support/corpus.rs"]
mod corpus;

#[derive(Parser)]
#[command(about = "Measurement driver for scripts/bench.sh")]
struct Driver {
    #[command(subcommand)]
    command: Measure,
}

#[derive(Subcommand)]
enum Measure {
    /// Write the 1,000-CRD corpus (corpus.yaml) and its CRDs alone (crds.yaml) to DIR.
    Corpus { dir: PathBuf },
    /// Watch observer vs polling observer, same objects, same run.
    Latency {
        /// Objects written (each once, at a random moment).
        #[arg(long, default_value_t = 200)]
        objects: usize,
        /// Writes happen at random moments within this many seconds.
        #[arg(long, default_value_t = 15)]
        window_secs: u64,
        /// The polling observer's interval (the CAPI e2e framework polls every 10 s).
        #[arg(long, default_value_t = 10)]
        poll_secs: u64,
    },
    /// GET / merge-PATCH requests/s in-process and over TCP, watch fan-out to 100 watchers.
    Server {
        /// Measuring time per figure.
        #[arg(long, default_value_t = 3)]
        seconds: u64,
    },
    /// Resident memory with this many custom resources stored.
    Memory {
        #[arg(long, default_value_t = 10_000)]
        objects: usize,
    },
}

const NAMESPACE: &str = "default";
const CONCURRENCY: usize = 32;
const WATCHERS: usize = 100;
const FANOUT_CHANGES: u64 = 50;

fn metric(name: &str, value: impl std::fmt::Display) {
    println!("metric {name} {value}");
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

/// Nearest-rank percentile of sorted samples.
fn percentile(sorted: &[Duration], q: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let rank = ((sorted.len() as f64) * q).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

fn main() -> Result<()> {
    if std::env::args().any(|a| a == "--bench") {
        println!(
            "bench_driver: run by scripts/bench.sh (subcommands corpus, latency, server, memory)"
        );
        return Ok(());
    }
    let driver = Driver::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .context("starting the tokio runtime")?;
    match driver.command {
        Measure::Corpus { dir } => write_corpus(&dir),
        Measure::Latency {
            objects,
            window_secs,
            poll_secs,
        } => runtime.block_on(latency(
            objects,
            Duration::from_secs(window_secs),
            Duration::from_secs(poll_secs),
        )),
        Measure::Server { seconds } => runtime.block_on(server(Duration::from_secs(seconds))),
        Measure::Memory { objects } => runtime.block_on(memory(objects)),
    }
}

fn write_corpus(dir: &std::path::Path) -> Result<()> {
    let text = corpus::text();
    ensure!(
        !text.is_empty(),
        "the conformant components fixture is missing"
    );
    let crds = corpus::crds_only(&text);
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("corpus.yaml"), &text).context("writing corpus.yaml")?;
    std::fs::write(dir.join("crds.yaml"), &crds).context("writing crds.yaml")?;
    metric("corpus_crds", corpus::CRDS);
    metric("corpus_bytes", text.len());
    metric("crds_bytes", crds.len());
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Detection latency

fn cluster_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("cluster.x-k8s.io", "v1beta2", "Cluster"),
        "clusters",
    )
}

fn written(value: &Value) -> bool {
    value.pointer("/status/n").and_then(Value::as_i64) == Some(1)
}

async fn latency(objects: usize, window: Duration, poll: Duration) -> Result<()> {
    ensure!(objects > 0, "--objects must be at least 1");
    let server = EmbeddedServer::new(ServerOptions::default());
    server.apply_documents(base_documents()?).await?;
    let client = server.retrying_client();
    let resource = cluster_resource();
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), NAMESPACE, &resource);
    let names: Vec<String> = (0..objects).map(|i| format!("latency-{i}")).collect();
    for name in &names {
        let obj: DynamicObject = serde_json::from_value(json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
            "metadata": {"name": name}, "spec": {}
        }))?;
        api.create(&PostParams::default(), &obj).await?;
    }
    // Our observer: one watch per object feeding one recorder, as a scenario does.
    let recorder = Recorder::new();
    let mut observers = Vec::new();
    for name in &names {
        observers.push(watch_object(
            client.clone(),
            &resource,
            Some(NAMESPACE),
            name,
            recorder.clone(),
        ));
    }
    for observer in &mut observers {
        ensure!(
            observer.ready(Duration::from_secs(30)).await,
            "a watch did not start"
        );
    }

    let start = tokio::time::Instant::now();
    let deadline = window + poll + Duration::from_secs(20);
    let mut rng = rand::rng();
    let mut tasks = Vec::new();
    for name in names {
        let write_at = start + window.mul_f64(rng.random::<f64>());
        let phase = start + poll.mul_f64(rng.random::<f64>());
        let api = api.clone();
        let recorder = recorder.clone();
        tasks.push(tokio::spawn(async move {
            observe_one(api, recorder, name, write_at, phase, poll, deadline).await
        }));
    }
    let mut watch = Vec::new();
    let mut polled = Vec::new();
    for task in tasks {
        let (w, p) = task.await.context("an observing task failed")??;
        watch.push(w);
        polled.push(p);
    }
    watch.sort();
    polled.sort();
    metric("latency_objects", objects);
    metric("latency_poll_interval_s", poll.as_secs());
    metric("latency_watch_p50_ms", ms(percentile(&watch, 0.50)));
    metric("latency_watch_p99_ms", ms(percentile(&watch, 0.99)));
    metric("latency_poll_p50_ms", ms(percentile(&polled, 0.50)));
    metric("latency_poll_p99_ms", ms(percentile(&polled, 0.99)));
    metric(
        "latency_run_s",
        format!("{:.1}", start.elapsed().as_secs_f64()),
    );
    Ok(())
}

/// Writes one object at `write_at` (a provider's status write) while a step waits for it on the
/// watch recorder and a poller GETs it every `poll` from `phase`; returns both latencies.
async fn observe_one(
    api: Api<DynamicObject>,
    recorder: Recorder,
    name: String,
    write_at: tokio::time::Instant,
    phase: tokio::time::Instant,
    poll: Duration,
    deadline: Duration,
) -> Result<(Duration, Duration)> {
    let key = format!("Cluster/{name}");
    let step = {
        let recorder = recorder.clone();
        let key = key.clone();
        tokio::spawn(async move {
            let seen = recorder.wait_for(&key, deadline, written).await;
            (Instant::now(), seen.is_ok())
        })
    };
    let poller = {
        let api = api.clone();
        let name = name.clone();
        tokio::spawn(async move {
            let mut ticks = tokio::time::interval_at(phase, poll);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let obj = api.get(&name).await?;
                if written(&serde_json::to_value(&obj)?) {
                    return Ok::<Instant, anyhow::Error>(Instant::now());
                }
            }
        })
    };
    tokio::time::sleep_until(write_at).await;
    let t0 = Instant::now();
    api.patch_status(
        &name,
        &PatchParams::default(),
        &Patch::Merge(json!({"status": {"n": 1}})),
    )
    .await
    .with_context(|| format!("writing {key}"))?;
    let (seen_at, ok) = step.await?;
    if !ok {
        bail!("the watch observer never saw the write of {key}");
    }
    let polled_at = tokio::time::timeout(deadline, poller)
        .await
        .with_context(|| format!("the poller never saw the write of {key}"))???;
    Ok((
        seen_at.saturating_duration_since(t0),
        polled_at.saturating_duration_since(t0),
    ))
}

// ---------------------------------------------------------------------------------------------
// Embedded server

fn widget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.bench.example.com"},
        "spec": {"group": "bench.example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [{"name": "v1", "served": true, "storage": true, "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "string"}, "replicas": {"type": "integer"},
                        "mode": {"type": "string", "default": "auto"}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}]}
    })
}

fn gadget(name: &str) -> Result<DynamicObject> {
    Ok(serde_json::from_value(json!({
        "apiVersion": "bench.example.com/v1", "kind": "Gadget",
        "metadata": {"name": name, "labels": {"app": "bench"}},
        "spec": {"size": "small", "replicas": 1}
    }))?)
}

fn gadgets(client: kube::Client) -> Api<DynamicObject> {
    let resource = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("bench.example.com", "v1", "Gadget"),
        "gadgets",
    );
    Api::namespaced_with(client, NAMESPACE, &resource)
}

async fn server_with_gadgets() -> Result<EmbeddedServer> {
    let server = EmbeddedServer::new(ServerOptions::default());
    server.apply_documents(vec![widget_crd()]).await?;
    Ok(server)
}

#[derive(Clone, Copy)]
enum Request {
    Get,
    MergePatch,
}

/// Requests/s of `CONCURRENCY` clients each sending `request` back to back for `time`.
async fn throughput(api: &Api<DynamicObject>, request: Request, time: Duration) -> Result<f64> {
    let counter = Arc::new(AtomicU64::new(0));
    let start = Instant::now();
    let end = start + time;
    let clients = (0..CONCURRENCY).map(|i| {
        let api = api.clone();
        let counter = counter.clone();
        async move {
            let name = format!("g{i}");
            let mut n: u64 = 1;
            while Instant::now() < end {
                n += 1;
                match request {
                    Request::Get => {
                        api.get(&name).await?;
                    }
                    Request::MergePatch => {
                        api.patch(
                            &name,
                            &PatchParams::default(),
                            &Patch::Merge(json!({"spec": {"replicas": n}})),
                        )
                        .await?;
                    }
                }
                counter.fetch_add(1, Ordering::Relaxed);
            }
            Ok::<(), kube::Error>(())
        }
    });
    for result in join_all(clients).await {
        result?;
    }
    Ok(counter.load(Ordering::Relaxed) as f64 / start.elapsed().as_secs_f64())
}

async fn server(time: Duration) -> Result<()> {
    let server = server_with_gadgets().await?;
    let listener = server.listen("127.0.0.1:0".parse()?).await?;
    let tcp = capi_conformance::client_retry::client_for_config(
        listener.config()?,
        capi_conformance::client_retry::RetryPolicy::default(),
    )?;
    let api = gadgets(server.retrying_client());
    for i in 0..CONCURRENCY {
        api.create(&PostParams::default(), &gadget(&format!("g{i}"))?)
            .await?;
    }
    for (label, client) in [("inprocess", server.retrying_client()), ("tcp", tcp)] {
        let api = gadgets(client);
        // Warm up: connections opened, code paths paged in.
        throughput(&api, Request::Get, Duration::from_millis(300)).await?;
        let get = throughput(&api, Request::Get, time).await?;
        let patch = throughput(&api, Request::MergePatch, time).await?;
        metric(&format!("server_get_{label}_rps"), format!("{get:.0}"));
        metric(&format!("server_patch_{label}_rps"), format!("{patch:.0}"));
    }
    listener.shutdown().await;
    fanout(&server).await
}

/// One merge-PATCH → every one of `WATCHERS` watch streams has the MODIFIED event; median of
/// `FANOUT_CHANGES` changes.
async fn fanout(server: &EmbeddedServer) -> Result<()> {
    let api = gadgets(server.retrying_client());
    api.create(&PostParams::default(), &gadget("target")?)
        .await?;
    let mut streams = Vec::new();
    for _ in 0..WATCHERS {
        let mut stream = api
            .watch(&WatchParams::default().fields("metadata.name=target"), "0")
            .await?
            .boxed();
        // The initial ADDED.
        let _ = stream.next().await;
        streams.push(stream);
    }
    let mut samples = Vec::new();
    for change in 0..FANOUT_CHANGES {
        let start = Instant::now();
        api.patch(
            "target",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 1000 + change}})),
        )
        .await?;
        let delivered = join_all(streams.iter_mut().map(|s| async move {
            loop {
                match s.next().await {
                    Some(Ok(WatchEvent::Modified(_))) => return true,
                    Some(Ok(WatchEvent::Bookmark(_))) => continue,
                    _ => return false,
                }
            }
        }))
        .await;
        ensure!(delivered.iter().all(|d| *d), "a watch stream ended early");
        samples.push(start.elapsed());
    }
    samples.sort();
    metric("server_fanout_watchers", WATCHERS);
    metric("server_fanout_p50_ms", ms(percentile(&samples, 0.5)));
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Memory

/// `VmRSS` or `VmHWM` of this process in KiB.
fn status_kib(field: &str) -> Result<u64> {
    let status = std::fs::read_to_string("/proc/self/status").context("reading /proc")?;
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim_start_matches(':').split_whitespace().next())
        .and_then(|kib| kib.parse().ok())
        .with_context(|| format!("no {field} in /proc/self/status"))
}

fn mib(kib: u64) -> String {
    format!("{:.1}", kib as f64 / 1024.0)
}

async fn memory(objects: usize) -> Result<()> {
    let server = server_with_gadgets().await?;
    let api = gadgets(server.retrying_client());
    let before = status_kib("VmRSS")?;
    for i in 0..objects {
        api.create(&PostParams::default(), &gadget(&format!("m{i}"))?)
            .await?;
    }
    let after = status_kib("VmRSS")?;
    metric("memory_objects", server.object_count());
    metric("memory_rss_before_mib", mib(before));
    metric("memory_rss_after_mib", mib(after));
    metric("memory_hwm_mib", mib(status_kib("VmHWM")?));
    Ok(())
}
