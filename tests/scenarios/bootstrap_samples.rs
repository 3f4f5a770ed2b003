//! SC-bootstrap builds only states CAPI builds: a bootstrap config sample is put on the Machine
//! it is for, read from the kubeadm-style fields it sets. A join-only sample (a worker's, as
//! CAPI's worker `KubeadmConfigTemplate`s are) never initialises a control plane; an init-only
//! sample is never a worker's. The path the sample does not allow is a skipped step naming the
//! sample that would judge it, and the rule both paths judge carries that note.

use super::common::{embedded, lifecycle};
use capi_conformance::report::{Matrix, Outcome, ScenarioRecord, Verdict};

/// SC-bootstrap on the mock's MockConfig (contract v1beta2) with `spec` as its sample.
async fn bootstrap_with(spec: &str) -> (Matrix, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let sample = dir.path().join("config.yaml");
    std::fs::write(
        &sample,
        format!(
            "apiVersion: bootstrap.mock.capi-conformance.io/v1beta2\nkind: MockConfig\n\
             metadata:\n  name: config\n  annotations:\n    mock.capi-conformance.io/contract: v1beta2\n\
             spec:\n{spec}"
        ),
    )
    .unwrap();
    let m = embedded(
        &[
            "--scenarios",
            "SC-bootstrap",
            "--contract",
            "v1beta2",
            "--kinds",
            "MockConfig",
            "--sample",
            sample.to_str().unwrap(),
        ],
        "",
    )
    .await;
    (m, dir)
}

fn target_record(m: &Matrix) -> &ScenarioRecord {
    m.scenarios
        .iter()
        .find(|s| !s.column.baseline && s.column.kind.as_str() == "MockConfig")
        .expect("the MockConfig scenario record")
}

/// Whether the timeline shows `event` (a tool action or a watch event) of `object`.
fn has(record: &ScenarioRecord, object: &str, event: &str) -> bool {
    record
        .timeline
        .iter()
        .any(|e| e.object == object && e.event == event)
}

/// The target's judged cells all pass, nothing is inconclusive, the run is green, and
/// `bootstrap/data-secret-created` notes the path not judged (`note`).
fn judged_and_noted(m: &Matrix, note: &str) {
    let cells: Vec<_> = lifecycle(m, false)
        .filter(|r| r.column.kind.as_str() == "MockConfig")
        .collect();
    assert!(cells.len() > 5, "{cells:#?}");
    let bad: Vec<_> = cells
        .iter()
        .filter(|r| !matches!(r.outcome, Outcome::Pass | Outcome::Skip))
        .map(|r| (r.rule_id.as_str(), r.outcome, r.reason.as_deref()))
        .collect();
    assert!(bad.is_empty(), "{bad:#?}");
    // A static rule with a lifecycle part: one cell, the scenario's evidence folded in.
    let created = m
        .results
        .iter()
        .find(|r| {
            !r.column.baseline
                && r.column.kind.as_str() == "MockConfig"
                && r.rule_id == "bootstrap/data-secret-created"
        })
        .expect("a bootstrap/data-secret-created cell");
    assert!(crate::cells::lifecycle_judged(created), "{created:#?}");
    assert_eq!(created.outcome, Outcome::Pass);
    assert!(
        created.evidence.iter().any(|e| e.message.contains(note)),
        "{:#?}",
        created.evidence
    );
    assert_eq!(m.verdict(), Verdict::Pass, "{:?}", m.summary());
    let record = target_record(m);
    assert!(
        record
            .steps
            .iter()
            .any(|s| s.outcome == Outcome::Skip && s.name.starts_with(note)),
        "{:#?}",
        record.steps
    );
}

/// A worker's config (only a `joinConfiguration`): judged on a worker of an initialized
/// Cluster; no control-plane Machine is initialised from it (an older kubeadm bootstrap
/// provider rightly refuses, and the run reported a false `bootstrap/data-secret-created`
/// failure for the init config it had built).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_join_only_sample_is_never_put_on_a_control_plane_machine() {
    let (m, _dir) = bootstrap_with("  joinConfiguration:\n    nodeRegistration: {}\n").await;
    let record = target_record(&m);
    assert!(has(record, "MockConfig/mockconfig-b2-bc", "tool: create"));
    for object in ["MockConfig/mockconfig-b2-bc5", "Machine/mockconfig-b2-m5"] {
        assert!(
            !record.timeline.iter().any(|e| e.object == object),
            "{object} was built: {:#?}",
            record.timeline
        );
    }
    assert!(has(
        record,
        "Cluster/mockconfig-b2-c",
        "tool: open gate: control plane initialized"
    ));
    judged_and_noted(&m, "init config of the first control-plane Machine");
}

/// The first control-plane Machine's config (an `initConfiguration` and a
/// `clusterConfiguration`, no join): every step runs on the first control-plane Machine of a
/// Cluster whose control plane is not initialized; no worker gets it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_init_only_sample_is_judged_on_the_first_control_plane_machine() {
    let (m, _dir) = bootstrap_with(
        "  initConfiguration:\n    nodeRegistration: {}\n  clusterConfiguration: {}\n",
    )
    .await;
    let record = target_record(&m);
    assert!(has(record, "MockConfig/mockconfig-b2-bc", "tool: create"));
    assert!(
        !record
            .timeline
            .iter()
            .any(|e| e.object == "MockConfig/mockconfig-b2-bc5")
    );
    assert!(has(record, "Cluster/mockconfig-b2-c", "tool: create"));
    assert!(
        !has(
            record,
            "Cluster/mockconfig-b2-c",
            "tool: open gate: control plane initialized"
        ),
        "the init config's Cluster was initialized: {:#?}",
        record.timeline
    );
    judged_and_noted(&m, "a worker's join");
}
