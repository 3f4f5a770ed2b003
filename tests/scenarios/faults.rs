//! Every mock fault, with the faulty mock as the (in-process) target, fails exactly the rule it
//! names while the healthy baseline passes; and every scenario rule the healthy mock passes has
//! such a fault (the catalog walk).

use super::common::{embedded, failed_scenario_rules, lifecycle};
use capi_conformance::mock::FAULTS;
use capi_conformance::mock::faults::FAULT_VARIANTS;
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
    // SC-template judges template/ssa-dry-run and the role's own ssa-dry-run id on one apply.
    (
        "template/ssa-dry-run",
        &[
            "infra-machine-template/ssa-dry-run",
            "infra-machinepool-template/ssa-dry-run",
            "bootstrap-template/ssa-dry-run",
        ],
    ),
    (
        "infra-machine-template/ssa-dry-run",
        &["template/ssa-dry-run"],
    ),
    (
        "infra-machinepool-template/ssa-dry-run",
        &["template/ssa-dry-run"],
    ),
    ("bootstrap-template/ssa-dry-run", &["template/ssa-dry-run"]),
    // One "not ready" behaviour is judged on status.ready and on b2's initialization flag.
    (
        "infra-machinepool/ready",
        &["infra-machinepool/initialization-provisioned"],
    ),
];

/// Couplings inside the mock (not in the scenarios).
const MOCK_COUPLED: &[(&str, &[&str])] = &[
    // A control plane that never makes the endpoint it should make is, to the endpoint-wait
    // experiment (a Cluster without endpoint), one whose endpoint comes from elsewhere, and the
    // faulty mock makes its kubeconfig without waiting for it: the same broken behaviour.
    ("control-plane/endpoint", &["control-plane/endpoint-wait"]),
];

/// Variants that leave alone a restatement of their rule: (variant, the rule it does not fail).
const VARIANT_SPARES: &[(&str, &str)] = &[
    // The machine pool's script pauses only through its Cluster (no paused annotation step),
    // which this variant honours.
    ("all/pause:annotation", "infra-machinepool/pause"),
];

/// The rules a fault (or a variant, `<rule id>:<variant>`) fails.
fn expected(fault: &str) -> BTreeSet<String> {
    let rule = fault.split_once(':').map_or(fault, |(rule, _)| rule);
    let mut want: BTreeSet<String> = [rule.to_string()].into();
    for (f, also) in SAME_BEHAVIOUR.iter().chain(MOCK_COUPLED) {
        if *f == rule {
            want.extend(also.iter().map(|s| s.to_string()));
        }
    }
    for (variant, spared) in VARIANT_SPARES {
        if *variant == fault {
            want.remove(*spared);
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

/// Every fault and fault variant of a scenario rule, with its rule (the webhook mode's faults
/// are tests/scenarios/webhooks.rs's).
fn catalog_faults(catalog: &Catalog) -> Vec<(Rule, &'static str)> {
    let variants = FAULT_VARIANTS.iter().map(|(name, id, _)| (*id, *name));
    FAULTS
        .iter()
        .map(|(id, _)| (*id, id.as_str()))
        .chain(variants)
        .filter(|(id, _)| !capi_conformance::mock::webhook::WEBHOOK_FAULTS.contains(&id.as_str()))
        .filter_map(|(id, name)| {
            catalog
                .get(id.as_str())
                .filter(|r| is_scenario_rule(r) && !scripts_of(r).is_empty())
                .map(|r| (r.clone(), name))
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
    type Outcomes = (String, BTreeSet<String>, BTreeSet<String>, String);
    let outcomes: Vec<Outcomes> = futures::stream::iter(cases)
        .map(|(rule, fault)| async move {
            let scripts = scripts_of(&rule);
            let m = embedded(&["--scenarios", &scripts], fault).await;
            let target = failed_scenario_rules(&m, false);
            // The cells of the rules it should fail and of any other it failed.
            let shown: BTreeSet<String> = expected(fault).union(&target).cloned().collect();
            (
                fault.to_string(),
                target,
                failed_scenario_rules(&m, true),
                cells_of(&m, &shown),
            )
        })
        .buffer_unordered(3)
        .collect()
        .await;
    let mut wrong = Vec::new();
    for (fault, target, baseline, cells) in outcomes {
        let want = expected(&fault);
        if target != want || !baseline.is_empty() {
            wrong.push(format!(
                "{fault}: target failed {target:?}, baseline failed {baseline:?}; the target's cells of its rules: {cells}"
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The target's cells of `rules` (lifecycle, or static with a scenario part), with outcome and
/// reason (what a failing case shows).
fn cells_of(m: &capi_conformance::report::Matrix, rules: &BTreeSet<String>) -> String {
    m.results
        .iter()
        .filter(|r| !r.column.baseline && rules.contains(r.rule_id.as_str()))
        .map(|r| {
            format!(
                "{} {}: {:?} {}",
                r.rule_id,
                r.column.id(),
                r.outcome,
                r.reason.as_deref().unwrap_or("")
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_scenario_rule_the_mock_passes_has_a_fault() {
    let catalog = Catalog::embedded().unwrap();
    let m = embedded(&[], "").await;
    let judged: BTreeSet<String> = lifecycle(&m, false)
        .filter(|r| r.outcome == Outcome::Pass && r.rule_id != "all/rbac-aggregation")
        .map(|r| r.rule_id.to_string())
        .collect();
    let with_fault: BTreeSet<String> = catalog_faults(&catalog)
        .into_iter()
        .flat_map(|(r, _)| expected(&r.id))
        .collect();
    let missing: Vec<&String> = judged.difference(&with_fault).collect();
    assert!(
        missing.is_empty(),
        "scenario rules without a fault that fails them: {missing:?}"
    );
    assert!(judged.len() > 30);
}

/// Rule ids of lifecycle cells with `outcome` in a `-o json` report, split by baseline.
fn failed_in_report(report: &serde_json::Value, baseline: bool) -> BTreeSet<String> {
    report["results"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter(|r| {
            r["outcome"] == "fail"
                && r["phase"] == "lifecycle"
                && r["rule_id"] != "all/rbac-aggregation"
                && r["column"]
                    .as_str()
                    .unwrap_or_default()
                    .contains("(baseline)")
                    == baseline
        })
        .filter_map(|r| r["rule_id"].as_str().map(str::to_string))
        .collect()
}

/// The faults through `--provider-cmd`: the mock as its own process over TCP with `--faults`,
/// `--rules` limiting the run to the scenarios (role × contract) that judge the fault's rules.
/// Within those rules the target fails exactly the fault's rule(s) and the baseline none. The
/// in-process walk above proves every fault over whole scripts; this one proves the process
/// path with the first two faults of each scenario script (what crosses the process boundary
/// is the same for every rule of a script: its objects, watches and the mock's writes).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_faults_through_provider_cmd_fail_exactly_their_rule() {
    let catalog = Catalog::embedded().unwrap();
    // Without `--crds` the mock's CRDs convert through the run's own webhook, not the manager's:
    // the conversion fault is the in-process walk's (above) and the webhook tests'.
    let mut per_script: std::collections::BTreeMap<String, usize> = Default::default();
    let cases: Vec<_> = catalog_faults(&catalog)
        .into_iter()
        .filter(|(_, fault)| *fault != "all/conversion-lossless")
        .filter(|(rule, _)| {
            let n = per_script.entry(scripts_of(rule)).or_default();
            *n += 1;
            *n <= 2
        })
        .collect();
    assert!(per_script.len() >= 6, "{per_script:?}");
    let started = std::time::Instant::now();
    let bin = env!("CARGO_BIN_EXE_capi-conformance");
    let dir = tempfile::tempdir().unwrap();
    let outcomes: Vec<String> = futures::stream::iter(cases)
        .map(|(_, fault)| {
            let reports = dir.path().join(fault.replace('/', "_"));
            async move {
                let want = expected(fault);
                let rules: Vec<&str> = want.iter().map(String::as_str).collect();
                let cmd = format!(
                    "{bin} mock-provider run --kubeconfig {{kubeconfig}} \
                     --watch-namespace {{namespace}} --watch-filter {{watch_filter}} --faults {fault}"
                );
                let out = tokio::process::Command::new(bin)
                    .args(["check", "--embedded", "--progress", "never", "-o", "json"])
                    .args(["--rules", &rules.join(","), "--provider-cmd", &cmd])
                    // The mock acts within milliseconds; a faulted rule waits out its deadline,
                    // and this asks which rule fails, not how long a manager may take: the
                    // in-process mock's 10 s instead of the 45 s for real managers.
                    .args(["--timeout", "10s"])
                    .arg("--report-dir")
                    .arg(&reports)
                    .output()
                    .await
                    .unwrap();
                let report: serde_json::Value =
                    serde_json::from_slice(&out.stdout).unwrap_or_default();
                let target = failed_in_report(&report, false);
                let baseline = failed_in_report(&report, true);
                if target == want && baseline.is_empty() {
                    String::new()
                } else {
                    format!(
                        "{fault}: exit {:?}, target failed {target:?}, baseline failed {baseline:?}, stderr {}",
                        out.status.code(),
                        String::from_utf8_lossy(&out.stderr)
                    )
                }
            }
        })
        .buffer_unordered(4)
        .collect()
        .await;
    let wrong: Vec<String> = outcomes.into_iter().filter(|s| !s.is_empty()).collect();
    eprintln!(
        "provider-cmd fault walk took {:.1}s",
        started.elapsed().as_secs_f64()
    );
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
