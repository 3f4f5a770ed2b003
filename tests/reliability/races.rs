//! Races a provider cannot win: judgements that depend on the provider having seen a change of
//! another object must wait until it can have seen it, so that verdicts hold
//! with controllers we did not write.

use super::common::{check_args, new_server};
use capi_conformance::commands::check::embedded;
use capi_conformance::mock::core::CoreReads;
use capi_conformance::report::{Matrix, Outcome, Phase};
use std::time::Duration;

/// How far the target mock's Cluster cache lags the server (a controller-runtime informer).
const LAG: Duration = Duration::from_millis(1000);

/// `check --embedded --scenarios SC-infracluster` with the target mock reading Clusters through
/// a cache [`LAG`] behind, `propagation` for the tool's pause, and `faults` on the target.
async fn run(propagation: Duration, faults: &str) -> Matrix {
    let words = [
        "--embedded",
        "--progress",
        "never",
        "--scenarios",
        "SC-infracluster",
        "--quiet-window",
        "2s",
    ];
    let mut opts = check_args(&words).options().unwrap();
    opts.run.settings.propagation = propagation;
    if let Some(e) = &mut opts.embedded {
        e.target_core_reads = CoreReads {
            informer_lag: Some(LAG),
            ..CoreReads::default()
        };
        e.target_faults = faults.into();
    }
    embedded(&new_server(), &opts).await.unwrap()
}

/// `all/pause` of the target's columns.
fn target_pause(m: &Matrix) -> Vec<(String, Outcome, Option<String>)> {
    let cells: Vec<_> = m
        .results
        .iter()
        .filter(|r| r.phase == Phase::Lifecycle && !r.column.baseline && r.rule_id == "all/pause")
        .map(|r| (r.column.id(), r.outcome, r.reason.clone()))
        .collect();
    assert!(!cells.is_empty(), "no target all/pause cell");
    cells
}

/// A provider whose Cluster cache lags (as a controller-runtime manager's informer may) sees
/// the owner reference before the pause when the tool adopts right after pausing: it acts,
/// legitimately, and the old order judged that as acting while paused. The tool now adopts
/// only once a watch shows the pause and the provider had `propagation` to see it: the same
/// provider passes, and one that really acts while paused still fails.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_provider_with_a_lagging_cluster_cache_is_judged_after_it_can_see_the_pause() {
    let _shared = super::common::sharing_the_machine().await;
    let started = std::time::Instant::now();
    let fair = LAG + Duration::from_millis(500);
    let (old_order, new_order, acting) = tokio::join!(
        run(Duration::ZERO, ""),
        run(fair, ""),
        run(fair, "all/pause")
    );
    for (column, outcome, reason) in target_pause(&old_order) {
        println!("old order: {column} {outcome:?} {reason:?}");
        assert_eq!(
            outcome,
            Outcome::Fail,
            "{column}: adopting right after pausing must show the race ({reason:?})"
        );
    }
    let failed: Vec<_> = new_order
        .results
        .iter()
        .filter(|r| r.outcome == Outcome::Fail)
        .map(|r| format!("{} {} {:?}", r.rule_id, r.column.id(), r.reason))
        .collect();
    assert!(failed.is_empty(), "{failed:#?}");
    for (column, outcome, reason) in target_pause(&new_order) {
        assert_eq!(outcome, Outcome::Pass, "{column}: {reason:?}");
    }
    for (column, outcome, reason) in target_pause(&acting) {
        assert_eq!(outcome, Outcome::Fail, "{column}: {reason:?}");
    }
    println!("three runs took {:?}", started.elapsed());
}
