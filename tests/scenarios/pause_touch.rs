//! The paused annotation without evidence (contract v1beta1, no Paused condition): a write
//! after the touch may be a reconcile begun before the annotation, so the scenario touches once
//! more ("pause: touch again", docs/core-simulation.md "Timing"). A provider
//! that acts while paused acts on that touch too and still fails; a quiet one never gets there.

use super::common::{embedded, lifecycle};
use capi_conformance::contract::Contract;
use capi_conformance::report::{Matrix, Outcome};

const TOUCH_AGAIN: &str = "pause: touch again";

/// The target's SC-infracluster records at v1beta1: the names of their steps.
fn v1beta1_steps(m: &Matrix) -> Vec<String> {
    let steps: Vec<String> = m
        .scenarios
        .iter()
        .filter(|s| {
            !s.column.baseline
                && s.scenario == "SC-infracluster"
                && s.column.contract == Some(Contract::V1Beta1)
        })
        .flat_map(|s| s.steps.iter().map(|st| st.name.clone()))
        .collect();
    assert!(
        steps.iter().any(|s| s == "pause: paused annotation"),
        "no v1beta1 pause by annotation: {steps:#?}"
    );
    steps
}

/// The v1beta1 target cells of `all/pause`.
fn v1beta1_pause(m: &Matrix) -> Vec<(Outcome, String)> {
    let cells: Vec<_> = lifecycle(m, false)
        .filter(|r| r.rule_id == "all/pause" && r.column.contract == Some(Contract::V1Beta1))
        .map(|r| {
            let ev: Vec<String> = r.evidence.iter().map(|e| format!("{e:?}")).collect();
            (r.outcome, format!("{:?} {}", r.reason, ev.join(" ")))
        })
        .collect();
    assert!(!cells.is_empty(), "no v1beta1 all/pause cell");
    cells
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_quiet_provider_is_touched_once_and_one_acting_while_paused_fails_after_two_touches() {
    let words = ["--scenarios", "SC-infracluster"];
    let (quiet, acting) = tokio::join!(
        embedded(&words, ""),
        embedded(&words, "all/pause:annotation")
    );
    // The healthy mock writes nothing after the touch: no second touch, all/pause passes.
    let steps = v1beta1_steps(&quiet);
    assert!(
        !steps.iter().any(|s| s.starts_with(TOUCH_AGAIN)),
        "{steps:#?}"
    );
    for (outcome, why) in v1beta1_pause(&quiet) {
        assert_eq!(outcome, Outcome::Pass, "{why}");
    }
    // The faulty mock (a variant acting only while paused by the annotation, so that this path
    // alone judges it) acts on every change while paused: it writes after the first touch, is
    // touched again, writes again, and fails with the second touch's change in its evidence.
    let steps = v1beta1_steps(&acting);
    assert!(
        steps.iter().any(|s| s.starts_with(TOUCH_AGAIN)),
        "{steps:#?}"
    );
    for (outcome, why) in v1beta1_pause(&acting) {
        assert_eq!(outcome, Outcome::Fail, "{why}");
        assert!(why.contains("after a second touch"), "{why}");
    }
}
