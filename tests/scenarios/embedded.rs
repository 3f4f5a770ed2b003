//! `check --embedded` with the healthy mock as target: every scenario rule passes or is
//! skipped with a reason, for every role under both contracts.

use super::common::{embedded, lifecycle};
use capi_conformance::contract::{Contract, Role};
use capi_conformance::report::{Outcome, Verdict};
use capi_conformance::scenarios::baseline::SCENARIO_ROLES;
use std::collections::BTreeSet;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthy_mock_passes_every_scenario_rule_for_every_role_and_contract() {
    let m = embedded(&[], "").await;
    assert_eq!(m.verdict(), Verdict::Pass, "{:?}", m.summary());
    for baseline in [false, true] {
        let failed: Vec<_> = lifecycle(&m, baseline)
            .filter(|r| r.outcome == Outcome::Fail && r.rule_id != "all/rbac-aggregation")
            .map(|r| (r.column.id(), r.rule_id.clone(), r.reason.clone()))
            .collect();
        assert!(failed.is_empty(), "{failed:#?}");
    }
    let inconclusive: Vec<_> = lifecycle(&m, false)
        .filter(|r| r.outcome == Outcome::Inconclusive)
        .collect();
    assert!(inconclusive.is_empty(), "{inconclusive:#?}");
    for baseline in [false, true] {
        let covered: BTreeSet<(Role, Contract)> = lifecycle(&m, baseline)
            .filter(|r| r.outcome == Outcome::Pass)
            .filter_map(|r| r.column.contract.map(|c| (r.column.role, c)))
            .collect();
        for role in SCENARIO_ROLES {
            for c in Contract::ALL {
                assert!(
                    covered.contains(&(role, c)),
                    "no passing scenario cell for {role:?} {c:?} (baseline {baseline})"
                );
            }
        }
    }
    // Every skip says why.
    assert!(
        lifecycle(&m, false)
            .filter(|r| r.outcome == Outcome::Skip)
            .all(|r| r.reason.as_deref().is_some_and(|s| !s.is_empty()))
    );
    // Scenario records with per-step timings for target and baseline.
    assert!(m.scenarios.iter().any(|s| s.column.baseline));
    assert!(
        m.scenarios
            .iter()
            .any(|s| !s.column.baseline && s.steps.iter().all(|st| st.duration_ms.is_some()))
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_runs_give_identical_matrices_without_timings() {
    let words = ["--scenarios", "SC-inframachine,SC-bootstrap,SC-template"];
    let mut a = embedded(&words, "").await.without_timings();
    let mut b = embedded(&words, "").await.without_timings();
    a.context.run_id = None;
    b.context.run_id = None;
    let only_a: Vec<_> = a
        .results
        .iter()
        .filter(|r| !b.results.contains(r))
        .collect();
    let only_b: Vec<_> = b
        .results
        .iter()
        .filter(|r| !a.results.contains(r))
        .collect();
    assert!(
        only_a.is_empty() && only_b.is_empty(),
        "first only: {only_a:#?}\nsecond only: {only_b:#?}"
    );
    assert_eq!(a.scenarios, b.scenarios);
    assert!(a == b, "matrices differ outside results and scenarios");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn report_dir_keeps_timeline_and_redacted_objects_of_failed_scenarios() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().to_str().unwrap().to_string();
    let m = embedded(
        &["--scenarios", "SC-bootstrap", "--report-dir", &path],
        "bootstrap/secret-label",
    )
    .await;
    assert!(
        m.scenarios
            .iter()
            .any(|s| !s.column.baseline && !s.timeline.is_empty())
    );
    let kept: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    // Only the failing target scenarios are kept (the healthy baseline is not).
    assert!(!kept.is_empty());
    assert!(
        kept.iter()
            .all(|p| !p.to_string_lossy().contains("baseline"))
    );
    for d in kept {
        let timeline = std::fs::read_to_string(d.join("timeline.json")).unwrap();
        assert!(timeline.contains("tool: set owner") || timeline.contains("tool: create"));
        let objects = std::fs::read_to_string(d.join("objects.yaml")).unwrap();
        assert!(objects.contains("kind: Secret"));
        assert!(objects.contains("<redacted>"));
        assert!(
            !objects.contains("I2Nsb3VkLWNvbmZpZw"),
            "bootstrap payload leaked"
        );
    }
}
