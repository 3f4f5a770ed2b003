//! CAPI core's own manager as the reference of the core simulation (`check --embedded
//! --core-crds <core components> --core-cmd '<cluster-api-manager> …'`): a Cluster and a Machine
//! of the mock provider, then a Cluster whose control plane (the mock's) makes its Machine,
//! taken through their life under the real core and under the simulation at once, every field
//! the contract names compared step by step (docs/core-simulation.md
//! "Checked against real core").

use super::support::{
    ONE_AT_A_TIME, Server, built_provider, components, manager, manager_cmd, on_a_real_cluster,
};
use serde_json::Value;
use std::path::Path;

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

/// CAPI core v1.13.6, built from the module (`tools/providers/capi-core-v1.13`), its CRDs from
/// the module's `config/`: the simulation plays v1.11's core, and v1.13.6's differs in exactly
/// these fields of the about 150 compared, each a change of core's own between the lines:
/// - the Cluster's owner reference on its InfraCluster and control plane carries neither
///   `controller` nor `blockOwnerDeletion` for a Cluster without topology:
///   `internal/controllers/cluster/cluster_controller_phases.go` 115-128 of v1.13.6
///   (`SetOwnerReference` unless `spec.topology` is defined, so that other tools may own them);
///   five steps show it;
/// - a control-plane Machine has the condition `Updating` (False, `NotUpdating`), which v1.12
///   added for in-place updates (`internal/controllers/machine/machine_controller_status.go`
///   651-655).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_simulation_against_core_v1_13_differs_where_core_changed() {
    let Some((core, config)) = built_provider("capi-core-v1.13") else {
        return;
    };
    let notes = compare_with(&core, &config, Server::Embedded).await;
    let summary = notes
        .iter()
        .find(|n| n.starts_with("core reference: 7 steps"))
        .unwrap_or_else(|| panic!("no core reference summary: {notes:#?}"));
    assert!(summary.contains(": 6 differ"), "{summary}: {notes:#?}");
    let differences: Vec<&String> = notes
        .iter()
        .filter(|n| n.starts_with("core reference: after"))
        .collect();
    assert_eq!(differences.len(), 6, "{differences:#?}");
    let owner_refs = differences
        .iter()
        .filter(|n| {
            n.contains("metadata.ownerReferences: real core [{\"apiVersion\":\"cluster.x-k8s.io/v1beta2\",\"kind\":\"Cluster\"")
                && n.contains("\"blockOwnerDeletion\":true,\"controller\":true")
        })
        .count();
    assert_eq!(owner_refs, 5, "{differences:#?}");
    assert!(
        differences
            .iter()
            .any(|n| n
                .contains("status.conditions[Updating]: real core \"False\", simulation (absent)")),
        "{differences:#?}"
    );
}

async fn compared(server: Server<'_>) {
    let dir = tempfile::tempdir().unwrap();
    let (Some(core), Some(file)) = (
        manager(dir.path(), "cluster-api-manager"),
        components("core"),
    ) else {
        return;
    };
    let notes = compare_with(&core, &file, server).await;
    let summary = notes
        .iter()
        .find(|n| n.starts_with("core reference: 7 steps"))
        .unwrap_or_else(|| panic!("no core reference summary: {notes:#?}"));
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
}

/// `check --embedded` of the mock's MockCluster with `core` as `--core-cmd` and `crds` as
/// `--core-crds`: the reference's notes, after checking that core ran as its Deployment, logged
/// no panic and the run exited 0.
async fn compare_with(core: &Path, crds: &Path, server: Server<'_>) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    // One Go manager beside the tool at a time (see `ONE_AT_A_TIME`).
    let _one = ONE_AT_A_TIME.lock().await;
    let reports = dir.path().join("reports");
    let out = tokio::process::Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .arg("check")
        .args(server.args())
        .args(["--progress", "never", "-o", "json"])
        .arg("--core-crds")
        .arg(crds)
        .arg("--core-cmd")
        .arg(manager_cmd(core))
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
    notes
}
