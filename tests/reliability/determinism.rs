//! Item 1: `check --embedded` gives the same matrix (timings aside) run after run.
//! `scripts/determinism.sh [N]` is the long variant (release build, N runs, default 50).

use super::common::{comparable, differences, embedded};
use futures::StreamExt;

/// Runs (default 10; `RELIABILITY_RUNS` for more), one after the other, as a user runs the
/// tool: each run already has its baseline and the mock target running at once. Runs side by
/// side on 2 cores (a debug build) slow the mock past the windows now and then, and a provider
/// answering later than a window leaves another, equally valid history (the cells stay the same;
/// `tests/reliability/faults.rs` compares the cells of slowed runs).
fn runs() -> usize {
    std::env::var("RELIABILITY_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ten_embedded_runs_give_identical_matrices_without_timings() {
    let _alone = super::common::alone_on_the_machine().await;
    let n = runs();
    let matrices: Vec<_> = futures::stream::iter(0..n)
        .map(|_| async { embedded(&[]).await.unwrap() })
        .buffered(1)
        .collect()
        .await;
    assert_eq!(matrices.len(), n);
    let first = comparable(&matrices[0]);
    assert!(!first.results.is_empty() && !first.scenarios.is_empty());
    let mut differing = Vec::new();
    for (i, m) in matrices.iter().enumerate().skip(1) {
        let d = differences(&first, &comparable(m));
        if !d.is_empty() {
            differing.push((i, d));
        }
    }
    assert!(
        differing.is_empty(),
        "{} of {n} runs differ from the first: {differing:#?}",
        differing.len()
    );
}
