//! Every mock fault, with the faulty mock as the (in-process) target, fails exactly the rule it
//! names while the healthy baseline passes; and every scenario rule the healthy mock passes has
//! such a fault (the catalog walk).

use super::common::{embedded, failed_scenario_rules, lifecycle};
use capi_conformance::mock::FAULTS;
use capi_conformance::report::Outcome;
use capi_conformance::scenarios::runner::is_scenario_rule;
use capi_conformance::scenarios::script_for;
use capi_conformance::suite::{Catalog, Rule};
use futures::StreamExt;
use std::collections::BTreeSet;

/// Rules that are the same behaviour under another id: a fault of the first also fails these.
const SAME_BEHAVIOUR: &[(&str, &[&str])] = &[
    // The role pages restate all/pause for their role.
    (
        "all/pause",
        &["control-plane/pause", "infra-machinepool/pause"],
    ),
    ("control-plane/pause", &["all/pause"]),
    ("infra-machinepool/pause", &["all/pause"]),
    // One "not ready" behaviour is judged on status.ready and on b2's initialization flag.
    (
        "infra-machinepool/ready",
        &["infra-machinepool/initialization-provisioned"],
    ),
];

/// Couplings inside the mock (not in the scenarios). None today: each fault breaks one behaviour.
const MOCK_COUPLED: &[(&str, &[&str])] = &[];

/// Scenario rules about admission (dry-run apply, clone validation): the API server and the
/// provider's webhooks decide them, the mock has no webhook, so no mock fault can fail them.
const ADMISSION_RULES: &[&str] = &[
    "template/ssa-dry-run",
    "template/clone-compatible",
    "infra-machine-template/ssa-dry-run",
    "infra-machinepool-template/ssa-dry-run",
    "bootstrap-template/ssa-dry-run",
];

fn expected(fault: &str) -> BTreeSet<String> {
    let mut want: BTreeSet<String> = [fault.to_string()].into();
    for (f, also) in SAME_BEHAVIOUR.iter().chain(MOCK_COUPLED) {
        if *f == fault {
            want.extend(also.iter().map(|s| s.to_string()));
        }
    }
    want
}

/// The scripts that exercise a rule (one per role it applies to).
fn scripts_of(rule: &Rule) -> String {
    let mut s: Vec<&str> = rule.roles.iter().filter_map(|r| script_for(*r)).collect();
    s.sort_unstable();
    s.dedup();
    s.join(",")
}

fn catalog_faults(catalog: &Catalog) -> Vec<(Rule, &'static str)> {
    FAULTS
        .iter()
        .filter_map(|(id, _)| {
            catalog
                .get(id)
                .filter(|r| is_scenario_rule(r) && !scripts_of(r).is_empty())
                .map(|r| (r.clone(), *id))
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_fault_fails_exactly_its_rule_and_the_baseline_passes() {
    let catalog = Catalog::embedded().unwrap();
    let cases = catalog_faults(&catalog);
    assert!(
        cases.len() > 30,
        "only {} faults map to scenario rules",
        cases.len()
    );
    let outcomes: Vec<(String, BTreeSet<String>, BTreeSet<String>)> = futures::stream::iter(cases)
        .map(|(rule, fault)| async move {
            let scripts = scripts_of(&rule);
            let m = embedded(&["--scenarios", &scripts], fault).await;
            (
                fault.to_string(),
                failed_scenario_rules(&m, false),
                failed_scenario_rules(&m, true),
            )
        })
        .buffer_unordered(3)
        .collect()
        .await;
    let mut wrong = Vec::new();
    for (fault, target, baseline) in outcomes {
        let want = expected(&fault);
        if target != want || !baseline.is_empty() {
            wrong.push(format!(
                "{fault}: target failed {target:?}, baseline failed {baseline:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_rule_the_mock_passes_has_a_fault() {
    let catalog = Catalog::embedded().unwrap();
    let m = embedded(&[], "").await;
    let judged: BTreeSet<String> = lifecycle(&m, false)
        .filter(|r| r.outcome == Outcome::Pass && r.rule_id != "all/rbac-aggregation")
        .map(|r| r.rule_id.clone())
        .collect();
    let with_fault: BTreeSet<String> = catalog_faults(&catalog)
        .into_iter()
        .flat_map(|(r, _)| expected(&r.id))
        .chain(ADMISSION_RULES.iter().map(|s| s.to_string()))
        .collect();
    let missing: Vec<&String> = judged.difference(&with_fault).collect();
    assert!(
        missing.is_empty(),
        "scenario rules without a fault that fails them: {missing:?}"
    );
    assert!(judged.len() > 30);
}
