//! CAPI core's own manager as the reference of the core simulation (`check --embedded
//! --core-crds <core components> --core-cmd '<cluster-api-manager> …'`): a Cluster and a Machine
//! of the mock provider, then a Cluster whose control plane (the mock's) makes its Machine,
//! taken through their life under the real core and under the simulation at once, every field
//! the contract names compared step by step (docs/core-simulation.md
//! "Checked against real core").

use super::support::{ONE_AT_A_TIME, Server, components, manager, manager_cmd, on_a_real_cluster};
use serde_json::Value;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulation_does_what_real_core_does_for_the_mock_provider() {
    compared(Server::Embedded).await;
}

/// The same comparison on a real cluster (kube-apiserver v1.36): core's manager beside it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulation_does_what_real_core_does_on_a_real_cluster() {
    on_a_real_cluster(
        "the_simulation_does_what_real_core_does_on_a_real_cluster",
        |kc| async move { compared(Server::Cluster(&kc)).await },
    )
    .await;
}

async fn compared(server: Server<'_>) {
    let dir = tempfile::tempdir().unwrap();
    let (Some(core), Some(file)) = (
        manager(dir.path(), "cluster-api-manager"),
        components("core"),
    ) else {
        return;
    };
    // One Go manager beside the tool at a time (see `ONE_AT_A_TIME`).
    let _one = ONE_AT_A_TIME.lock().await;
    let reports = dir.path().join("reports");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .arg("check")
        .args(server.args())
        .args(["--progress", "never", "-o", "json"])
        .arg("--core-crds")
        .arg(&file)
        .arg("--core-cmd")
        .arg(manager_cmd(&core))
        // The scenarios of one kind are enough beside the reference: the mock's own verdict
        // is the embedded tests' business.
        .args(["--kinds", "MockCluster"])
        .arg("--report-dir")
        .arg(&reports)
        .output()
        .await
        .expect("the tool runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}); stderr: {stderr}"));
    let notes: Vec<String> = report["notes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|n| n["source"] == "--core-cmd")
        .filter_map(|n| n["message"].as_str().map(str::to_string))
        .collect();
    let summary = notes
        .iter()
        .find(|n| n.starts_with("core reference: 7 steps"))
        .unwrap_or_else(|| panic!("no core reference summary: {notes:#?}\n{stderr}"));
    assert!(
        summary.ends_with("all equal"),
        "the simulation differs from CAPI core v1.11.11:\n{}",
        notes.join("\n")
    );
    // What was compared: 5 objects over 5 steps, then 4 objects over 2 steps (the control
    // plane's Machine with its finalizer and conditions): over 140 fields.
    let fields: usize = summary
        .split_once(" fields the contract names")
        .and_then(|(before, _)| before.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    assert!(fields > 140, "{summary}");
    assert!(
        notes.iter().any(|n| n.starts_with(
            "core manager: --core-cmd runs as Deployment capi-system/capi-controller-manager"
        )),
        "{notes:#?}"
    );
    let run_id = report["context"]["run_id"].as_str().unwrap_or_default();
    let log = std::fs::read_to_string(reports.join(format!("core-{run_id}.log")))
        .expect("the core manager's log is in the report directory");
    assert!(log.contains("Starting Controller"), "{log}");
    assert_eq!(log.matches("Observed a panic").count(), 0, "{log}");
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}
