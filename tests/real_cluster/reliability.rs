//! Reliability on the real thing: kube-apiserver restarted once and etcd restarted once during
//! a run, every watch cut by the server every few seconds; the verdict stays the clean run's
//! (the embedded run's, which a clean run beside the real cluster equals: `mock.rs`), and
//! nothing the run created is left.

use super::cluster::{ONE_AT_A_TIME, RealCluster};
use super::support::{check, cleanup_finds, differences, mock_cmd, mock_components, snapshot};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restarts_and_cut_watches_leave_the_verdict_and_nothing_behind() {
    let _one = ONE_AT_A_TIME.lock().await;
    let test = "restarts_and_cut_watches_leave_the_verdict_and_nothing_behind";
    // Watches end after 5–10 s (kube-apiserver's --min-request-timeout: each watch lasts a
    // random time between it and twice it).
    let Some(cluster) = RealCluster::start_with(test, &["--min-request-timeout=5"]) else {
        return;
    };
    let kc = cluster.kubeconfig().to_str().unwrap().to_string();
    let components = mock_components(cluster.dir());
    let scenarios = "SC-infracluster,SC-inframachine,SC-bootstrap,SC-controlplane";
    let args = |kc: &str| {
        vec![
            "check".to_string(),
            "--kubeconfig".into(),
            kc.to_string(),
            "--crds".into(),
            components.to_str().unwrap().to_string(),
            "--scenarios".into(),
            scenarios.into(),
            "--provider-cmd".into(),
            mock_cmd(""),
        ]
    };
    let before = snapshot(cluster.kubeconfig());
    // The clean verdict is the embedded run's: the mock beside a real cluster equals it cell for
    // cell (`mock.rs`), so a clean real run would only repeat that test here.
    let clean = check(&["check", "--embedded", "--scenarios", scenarios]).await;
    assert_eq!(clean.code, Some(0), "{}", clean.stderr);
    let troubled = {
        let a = args(&kc);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        let started = std::time::Instant::now();
        let run = async {
            let run = check(&a).await;
            (run, started.elapsed())
        };
        let trouble = async {
            tokio::time::sleep(Duration::from_secs(12)).await;
            tokio::task::block_in_place(|| cluster.restart_apiserver());
            tokio::time::sleep(Duration::from_secs(10)).await;
            tokio::task::block_in_place(|| cluster.restart_etcd());
            started.elapsed()
        };
        let ((run, ran), troubled_until) = tokio::join!(run, trouble);
        // Both restarts happened while the run went on.
        assert!(
            ran > troubled_until,
            "the run ended ({ran:?}) before the restarts did ({troubled_until:?})"
        );
        run
    };
    let diff = differences(&clean.cells(), &troubled.cells());
    assert!(
        diff.is_empty(),
        "clean vs restarted:\n{}\n{}",
        diff.join("\n"),
        troubled.stderr
    );
    assert_eq!(troubled.code, Some(0), "{}", troubled.stderr);
    assert_eq!(snapshot(cluster.kubeconfig()), before);
    assert_eq!(cleanup_finds(cluster.kubeconfig()), Vec::<String>::new());
}
