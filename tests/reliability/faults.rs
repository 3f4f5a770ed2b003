//! Item 2: with the embedded server's faults on, `check --embedded` reaches the clean run's
//! verdicts (client retries + watch resumption); a fault that outlasts the deadline makes the
//! affected results inconclusive with the cause, never fail or pass, exit 3.

use super::common::{comparable_verdicts, differences, embedded, embedded_on, new_server};
use capi_conformance::report::{Outcome, Phase};

/// Every fault the server has, at once.
pub const ALL_FAULTS: &str =
    "drop-watch=2s,force-410=20,429=5%,500=5%,latency=200ms,slow-establish=1s";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_server_fault_at_once_gives_the_clean_verdicts() {
    let _shared = super::common::sharing_the_machine().await;
    let faulty_server = new_server();
    let (clean, faulty) = tokio::join!(
        embedded(&[]),
        embedded_on(&faulty_server, &["--server-faults", ALL_FAULTS], "")
    );
    let (clean, faulty) = (clean.unwrap(), faulty.unwrap());
    let d = differences(&comparable_verdicts(&clean), &comparable_verdicts(&faulty));
    assert!(d.is_empty(), "verdicts differ under faults: {d:#?}");
    // The faults really happened.
    let (expired, dropped) = faulty_server.faults().stats();
    let (throttled, failed) = faulty_server.faults().injected_errors();
    println!(
        "faults served: {expired} forced 410, {dropped} dropped watches, {throttled} 429, {failed} 500"
    );
    assert!(expired > 0 && dropped > 0 && throttled > 0 && failed > 0);
}

/// A resource that fails from the start: nothing about it can be judged, on either side.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn persistent_failure_makes_affected_results_inconclusive_exit_3() {
    let _shared = super::common::sharing_the_machine().await;
    persistent_failure("fail=mockmachines", false).await;
}

/// The same failure starting while both sides' scenarios run (the baseline and an in-process
/// mock target run at once): what was judged before it keeps its verdict, what it hit is
/// inconclusive, nothing is a failure.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failure_starting_mid_run_fails_nothing_exit_3() {
    let _shared = super::common::sharing_the_machine().await;
    persistent_failure("fail=mockmachines@700ms", true).await;
}

async fn persistent_failure(spec: &str, mid_run: bool) {
    let m = embedded(&[
        "--scenarios",
        "SC-inframachine",
        "--timeout",
        "2s",
        "--server-faults",
        spec,
    ])
    .await
    .unwrap();
    let affected: Vec<_> = m
        .results
        .iter()
        .filter(|r| {
            r.phase == Phase::Lifecycle
                && r.rule_id != "all/rbac-aggregation"
                && r.column.kind == "MockMachine"
        })
        .collect();
    assert!(!affected.is_empty());
    for r in &affected {
        assert!(
            r.outcome != Outcome::Fail && (mid_run || r.outcome != Outcome::Pass),
            "{} {}: {:?} {:?}",
            r.rule_id,
            r.column.id(),
            r.outcome,
            r.reason
        );
    }
    let inconclusive: Vec<_> = affected
        .iter()
        .filter(|r| r.outcome == Outcome::Inconclusive)
        .collect();
    assert!(inconclusive.iter().any(|r| !r.column.baseline));
    for r in &inconclusive {
        let reason = r.reason.as_deref().unwrap_or_default();
        assert!(
            reason.contains("500") && reason.contains("mockmachines"),
            "{} {}: {reason}",
            r.rule_id,
            r.column.id()
        );
    }
    assert_eq!(m.verdict().exit_code(), 3, "{:?}", m.summary());
}

/// The mock in its CAPI-like modes (reading core objects at v1beta1 through the conversion
/// webhook, dereferencing the Cluster's infrastructureRef, joining workers through the workload
/// cluster, finalizer first, failed reconciles retried with controller-runtime's workqueue
/// backoff) gives the clean run's cells under every server fault at once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_capi_like_mock_gives_the_clean_verdicts_under_every_server_fault() {
    let _shared = super::common::sharing_the_machine().await;
    use capi_conformance::commands::check::embedded;
    let opts = |faults: bool| {
        // A step deadline generous enough for two runs at once on a loaded 2-core CI machine
        // (a healthy step ends at its condition, so this costs nothing when things are quick).
        let mut w = vec!["--embedded", "--progress", "never", "--timeout", "90s"];
        if faults {
            w.extend(["--server-faults", ALL_FAULTS]);
        }
        let mut opts = super::common::check_args(&w).options().unwrap();
        if let Some(e) = &mut opts.embedded {
            e.target_core_reads = capi_conformance::mock::core::CoreReads::capi_like(true);
            // For measuring what the backoff costs (docs/core-simulation.md "Timing"): the
            // same run with the mock's fixed 200 ms retries.
            if std::env::var_os("MEASURE_NO_BACKOFF").is_some() {
                e.target_core_reads.workqueue_backoff = false;
            }
        }
        opts
    };
    let (clean_server, faulty_server) = (new_server(), new_server());
    let (clean_opts, faulty_opts) = (opts(false), opts(true));
    let (clean, faulty) = tokio::join!(
        embedded(&clean_server, &clean_opts),
        embedded(&faulty_server, &faulty_opts)
    );
    let (clean, faulty) = (clean.unwrap(), faulty.unwrap());
    println!(
        "longest target steps, clean: {:#?}\nunder faults: {:#?}",
        super::common::longest_steps(&clean, 6),
        super::common::longest_steps(&faulty, 6)
    );
    assert_eq!(
        clean.verdict(),
        capi_conformance::report::Verdict::Pass,
        "{:?}",
        clean.summary()
    );
    let d = differences(&comparable_verdicts(&clean), &comparable_verdicts(&faulty));
    assert!(d.is_empty(), "verdicts differ under faults: {d:#?}");
}
