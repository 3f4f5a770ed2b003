//! The embedded server measured against the real kube-apiserver v1.36: the
//! same request traces (discovery and OpenAPI documents, a kube-rs sequence, the kubectl suite's
//! commands, Python client calls) go to both, the answers are normalised (uids, times,
//! resourceVersions, …: `differential/harness.rs`) and compared on status code, body, the
//! headers clients read and watch events in order. Prints
//! `differential: N requests compared, E equal, D different (K known, …)` and fails on a
//! difference not listed in `differential/known.rs` (the list of docs/embedded-apiserver.md
//! "Differences from kube-apiserver v1.36 (measured)"), and on a listed one no longer seen.
//!
//! Needs the real control plane (`tests/support/real_cluster.rs`): without Go or the module
//! proxy it prints its skip line, or fails with `CAPI_CONFORMANCE_REQUIRE_REAL_CLUSTER=1`.

#[path = "../differential/discovery.rs"]
mod discovery;
#[path = "../differential/harness.rs"]
mod harness;
#[path = "../differential/known.rs"]
mod known;
#[path = "../differential/kube_rs.rs"]
mod kube_rs;
#[path = "../differential/kubectl.rs"]
mod kubectl;
#[path = "../differential/python.rs"]
mod python;
use super::cluster as real_cluster;

use embedded_apiserver::{EmbeddedServer, ServerOptions};
use harness::{Recorder, Target};
use known::{KNOWN, glob};

#[test]
fn the_embedded_server_answers_as_kube_apiserver_does() {
    let _one = real_cluster::ONE_AT_A_TIME.blocking_lock();
    let Some(cluster) = real_cluster::RealCluster::start("differential") else {
        return;
    };
    let started = std::time::Instant::now();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let rec = rt.block_on(async {
        let server = EmbeddedServer::new(ServerOptions::default());
        let listener = server.listen("127.0.0.1:0".parse().unwrap()).await.unwrap();
        let kubeconfig = dir.path().join("embedded.kubeconfig");
        listener.write_kubeconfig(&kubeconfig).unwrap();
        let real = Target::new("kube-apiserver", cluster.kubeconfig()).await;
        let emb = Target::new("embedded", &kubeconfig).await;
        let mut rec = Recorder::new(real, emb);
        discovery::run(&mut rec).await;
        kube_rs::run(&mut rec).await;
        kubectl::run(&mut rec, dir.path()).await;
        python::run(&mut rec, dir.path()).await;
        kube_rs::protected_namespaces(&mut rec).await;
        drop(listener);
        rec
    });
    let failures = report(&rec);
    println!("differential: took {:.1}s", started.elapsed().as_secs_f64());
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Prints every comparison and the figure; the reasons to fail.
fn report(rec: &Recorder) -> Vec<String> {
    let known: Vec<_> = KNOWN
        .iter()
        .map(|k| (k, glob(k.unit), glob(k.at)))
        .collect();
    let mut used = vec![false; KNOWN.len()];
    let (mut equal, mut different, mut all_known) = (0, 0, 0);
    let mut failures = Vec::new();
    for unit in &rec.units {
        let name = format!("{}: {}", unit.trace, unit.id);
        if unit.diffs.is_empty() {
            equal += 1;
            println!("= {name}");
            continue;
        }
        different += 1;
        println!("≠ {name}");
        let mut unknown = 0;
        for d in &unit.diffs {
            let by = known
                .iter()
                .position(|(_, u, a)| u.is_match(&name) && a.is_match(&d.at));
            let tag = match by {
                Some(i) => {
                    used[i] = true;
                    KNOWN[i].id.to_string()
                }
                None => {
                    unknown += 1;
                    "NEW".to_string()
                }
            };
            let line = format!(
                "    [{tag}] {}: kube-apiserver {} | embedded {}",
                d.at, d.real, d.embedded
            );
            println!("{line}");
            if by.is_none() {
                failures.push(format!("{name}: {line}"));
            }
        }
        if unknown == 0 {
            all_known += 1;
        }
    }
    for (trace, why) in &rec.skipped {
        println!("skipped: differential {trace} trace: {why}");
    }
    for (i, k) in KNOWN.iter().enumerate() {
        let skipped = rec
            .skipped
            .iter()
            .any(|(t, _)| k.unit.starts_with(&format!("{t}:")));
        if !used[i] && !skipped && !k.timed {
            failures.push(format!(
                "known difference {} ({} at {}) was not seen: remove it here and in docs/embedded-apiserver.md",
                k.id, k.unit, k.at
            ));
        }
    }
    println!(
        "differential: {} requests compared, {equal} equal, {different} different ({all_known} known, listed in docs/embedded-apiserver.md)",
        rec.units.len()
    );
    failures
}
