//! How much of a run's lifecycle was judged, per target provider ([`LifecycleCoverage`]), and
//! which lifecycle cells were not judged because their kind had no sample object
//! ([`is_unjudged_for_lack_of_sample`]): such cells stay `skip` (per rule, that is what
//! happened), but they keep the run from a PASS ([`super::Matrix::verdict`]): a gate that
//! checked nothing dynamic must not say green.

use super::{Matrix, Outcome, Phase, RuleResult, SharedStr};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// The reason of every lifecycle cell of a target kind that had no sample object to create
/// (`--sample`, an existing template in the cluster, or the mock's defaults for mock kinds).
/// The scenario engine writes exactly this text; [`is_unjudged_for_lack_of_sample`] reads it.
pub const NO_SAMPLE_REASON: &str = "no sample object: pass --sample FILE holding an object of this kind or its Template (or install a template of this kind)";

/// How many skip reasons [`LifecycleCoverage::skip_reasons`] keeps.
pub const TOP_SKIP_REASONS: usize = 3;

/// Whether `r` is a target's lifecycle cell that no scenario judged because its kind had no
/// sample object (baseline cells never count: the mock always has its samples).
pub fn is_unjudged_for_lack_of_sample(r: &RuleResult) -> bool {
    !r.column.baseline
        && r.phase == Phase::Lifecycle
        && r.outcome == Outcome::Skip
        && r.reason.as_deref() == Some(NO_SAMPLE_REASON)
}

/// One skip reason and how many cells gave it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReasonCount {
    pub reason: String,
    pub count: usize,
}

/// The lifecycle cells (phase `lifecycle`) of one target provider: how many a scenario judged,
/// how many it skipped and why.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LifecycleCoverage {
    pub provider: SharedStr,
    pub pass: usize,
    pub fail: usize,
    pub inconclusive: usize,
    pub waived: usize,
    pub skip: usize,
    /// The most frequent skip reasons (at most [`TOP_SKIP_REASONS`]), most frequent first,
    /// then by text.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub skip_reasons: Vec<ReasonCount>,
    /// The kinds whose lifecycle cells were skipped for lack of a sample object, sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub kinds_without_sample: Vec<SharedStr>,
}

impl LifecycleCoverage {
    /// Cells a scenario decided (pass, fail, inconclusive or waived).
    pub fn judged(&self) -> usize {
        self.pass + self.fail + self.inconclusive + self.waived
    }
}

/// The lifecycle coverage of every target provider with a lifecycle cell, by provider name.
/// Empty when no scenario ran for a target (`lint`, `--static-only`, `--scenarios none`).
pub fn lifecycle_coverage(m: &Matrix) -> Vec<LifecycleCoverage> {
    struct Acc<'a> {
        cov: LifecycleCoverage,
        reasons: BTreeMap<&'a str, usize>,
        kinds: std::collections::BTreeSet<&'a str>,
    }
    let mut by: BTreeMap<&str, Acc<'_>> = BTreeMap::new();
    for r in m.target_results().filter(|r| r.phase == Phase::Lifecycle) {
        let acc = by.entry(r.column.provider.as_str()).or_insert_with(|| Acc {
            cov: LifecycleCoverage {
                provider: r.column.provider.clone(),
                ..LifecycleCoverage::default()
            },
            reasons: BTreeMap::new(),
            kinds: Default::default(),
        });
        match r.outcome {
            Outcome::Pass => acc.cov.pass += 1,
            Outcome::Fail => acc.cov.fail += 1,
            Outcome::Inconclusive => acc.cov.inconclusive += 1,
            Outcome::Waived => acc.cov.waived += 1,
            Outcome::Skip => {
                acc.cov.skip += 1;
                *acc.reasons
                    .entry(r.reason.as_deref().unwrap_or("-"))
                    .or_default() += 1;
                if is_unjudged_for_lack_of_sample(r) {
                    acc.kinds.insert(r.column.kind.as_str());
                }
            }
        }
    }
    by.into_values()
        .map(|acc| {
            let mut reasons: Vec<ReasonCount> = acc
                .reasons
                .into_iter()
                .map(|(reason, count)| ReasonCount {
                    reason: reason.to_string(),
                    count,
                })
                .collect();
            // Stable: equal counts keep the reasons' text order.
            reasons.sort_by_key(|r| std::cmp::Reverse(r.count));
            reasons.truncate(TOP_SKIP_REASONS);
            LifecycleCoverage {
                skip_reasons: reasons,
                kinds_without_sample: acc.kinds.into_iter().map(SharedStr::from).collect(),
                ..acc.cov
            }
        })
        .collect()
}

/// The target kinds (provider, kind; sorted, each once) whose lifecycle cells at or above
/// `--fail-on` were not judged for lack of a sample object: what makes a run without failures
/// inconclusive rather than PASS.
pub fn gating_kinds_without_sample(m: &Matrix) -> Vec<(SharedStr, SharedStr)> {
    let fail_on = m.context.fail_on;
    let kinds: std::collections::BTreeSet<(&SharedStr, &SharedStr)> = m
        .results
        .iter()
        .filter(|r| is_unjudged_for_lack_of_sample(r) && r.level.gates(fail_on))
        .map(|r| (&r.column.provider, &r.column.kind))
        .collect();
    kinds
        .into_iter()
        .map(|(p, k)| (p.clone(), k.clone()))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Contract, FailOn, Level, Role};
    use crate::model::{Column, RunContext, Verdict};

    fn column(kind: &str, role: Role, baseline: bool) -> Column {
        Column {
            provider: if baseline { "mock" } else { "acme" }.into(),
            kind: kind.into(),
            role,
            contract: Some(Contract::V1Beta2),
            baseline,
        }
    }

    fn cell(
        rule: &str,
        column: &Column,
        level: Level,
        outcome: Outcome,
        reason: &str,
    ) -> RuleResult {
        RuleResult {
            rule_id: rule.into(),
            column: column.clone(),
            level,
            phase: Phase::Lifecycle,
            outcome,
            reason: (!reason.is_empty()).then(|| reason.to_string()),
            evidence: Vec::new(),
            duration_ms: None,
        }
    }

    fn matrix(results: Vec<RuleResult>, fail_on: FailOn) -> Matrix {
        Matrix {
            context: RunContext {
                tool_version: "0".into(),
                command: "check".into(),
                source: "embedded".into(),
                started_at: jiff::Timestamp::UNIX_EPOCH,
                server_version: None,
                fail_on,
                run_id: None,
            },
            rules: Vec::new(),
            columns: Vec::new(),
            results,
            problems: Vec::new(),
            notes: Vec::new(),
            scenarios: Vec::new(),
        }
    }

    const NOT_DRIVEN: &str = "not driven by SC-inframachine (needs a workload cluster)";

    /// A target kind without a sample keeps a failure-free run from PASS (exit 3), names the
    /// kind, and counts the cells; a failure still fails; the baseline, non-gating levels and
    /// other skip reasons never count.
    #[test]
    fn kinds_without_a_sample_make_the_verdict_inconclusive() {
        use Outcome::*;
        let machine = column("AcmeMachine", Role::InfraMachine, false);
        let cluster = column("AcmeCluster", Role::InfraCluster, false);
        let mock = column("MockMachine", Role::InfraMachine, true);
        let must = FailOn::Level(Level::Must);
        let judged = vec![
            cell("infra-machine/provider-id", &machine, Level::Must, Pass, ""),
            cell(
                "infra-machine/addresses",
                &machine,
                Level::Must,
                Skip,
                NOT_DRIVEN,
            ),
            cell(
                "infra-machine/provider-id",
                &mock,
                Level::Must,
                Skip,
                NO_SAMPLE_REASON,
            ),
        ];
        let m = matrix(judged.clone(), must);
        assert_eq!(m.verdict(), Verdict::Pass);
        assert_eq!(m.summary().gating_unjudged, 0);
        assert!(m.gating_kinds_without_sample().is_empty());

        let mut unjudged = judged.clone();
        unjudged.push(cell(
            "infra-cluster/ready",
            &cluster,
            Level::Must,
            Skip,
            NO_SAMPLE_REASON,
        ));
        unjudged.push(cell(
            "infra-cluster/paused",
            &cluster,
            Level::Should,
            Skip,
            NO_SAMPLE_REASON,
        ));
        let m = matrix(unjudged.clone(), must);
        assert_eq!(m.summary().gating_unjudged, 1);
        assert_eq!(m.verdict(), Verdict::Inconclusive);
        assert_eq!(m.verdict().exit_code(), 3);
        assert_eq!(
            m.gating_kinds_without_sample(),
            [(SharedStr::from("acme"), SharedStr::from("AcmeCluster"))]
        );

        // Below --fail-on (or --fail-on never) it does not gate.
        let m = matrix(unjudged.clone(), FailOn::Never);
        assert_eq!(m.verdict(), Verdict::Pass);
        assert!(m.gating_kinds_without_sample().is_empty());

        // A gating failure is still a failure.
        let mut failing = unjudged.clone();
        failing.push(cell(
            "infra-machine/delete",
            &machine,
            Level::Must,
            Fail,
            "x",
        ));
        assert_eq!(matrix(failing, must).verdict(), Verdict::Fail);

        // The same reason on a static cell (not a lifecycle cell) does not count.
        let mut static_only = judged;
        let mut c = cell(
            "infra-cluster/ready",
            &cluster,
            Level::Must,
            Skip,
            NO_SAMPLE_REASON,
        );
        c.phase = Phase::Static;
        static_only.push(c);
        assert_eq!(matrix(static_only, must).verdict(), Verdict::Pass);
    }

    #[test]
    fn verdict_of_orders_failure_input_error_inconclusive_pass() {
        let s = |f, i, u| super::super::Summary {
            gating_failures: f,
            gating_inconclusive: i,
            gating_unjudged: u,
            ..Default::default()
        };
        assert_eq!(Matrix::verdict_of(&s(1, 1, 1), true), Verdict::Fail);
        assert_eq!(Matrix::verdict_of(&s(0, 1, 1), true), Verdict::InputError);
        assert_eq!(
            Matrix::verdict_of(&s(0, 0, 1), false),
            Verdict::Inconclusive
        );
        assert_eq!(
            Matrix::verdict_of(&s(0, 1, 0), false),
            Verdict::Inconclusive
        );
        assert_eq!(Matrix::verdict_of(&s(0, 0, 0), false), Verdict::Pass);
    }

    /// Per provider: judged vs skipped, the top skip reasons (most frequent first), the kinds
    /// without a sample; the baseline and static cells are not counted.
    #[test]
    fn coverage_counts_target_lifecycle_cells_per_provider() {
        use Outcome::*;
        let machine = column("AcmeMachine", Role::InfraMachine, false);
        let cluster = column("AcmeCluster", Role::InfraCluster, false);
        let mock = column("MockMachine", Role::InfraMachine, true);
        let mut stat = cell("all/crd-labels", &machine, Level::Must, Pass, "");
        stat.phase = Phase::Static;
        let m = matrix(
            vec![
                cell("a", &machine, Level::Must, Pass, ""),
                cell("b", &machine, Level::Must, Fail, "x"),
                cell("c", &machine, Level::Should, Inconclusive, "environment: x"),
                cell("d", &machine, Level::May, Waived, "w"),
                cell("e", &machine, Level::Must, Skip, NOT_DRIVEN),
                cell("a", &cluster, Level::Must, Skip, NO_SAMPLE_REASON),
                cell("b", &cluster, Level::Must, Skip, NO_SAMPLE_REASON),
                cell("c", &cluster, Level::Must, Skip, "other"),
                cell("d", &cluster, Level::Must, Skip, "another"),
                cell("a", &mock, Level::Must, Pass, ""),
                stat,
            ],
            FailOn::Level(Level::Must),
        );
        let cov = m.lifecycle_coverage();
        assert_eq!(cov.len(), 1);
        let c = &cov[0];
        assert_eq!(c.provider, "acme");
        assert_eq!(
            (c.pass, c.fail, c.inconclusive, c.waived, c.skip),
            (1, 1, 1, 1, 5)
        );
        assert_eq!(c.judged(), 4);
        let reasons: Vec<(&str, usize)> = c
            .skip_reasons
            .iter()
            .map(|r| (r.reason.as_str(), r.count))
            .collect();
        assert_eq!(
            reasons,
            [(NO_SAMPLE_REASON, 2), ("another", 1), (NOT_DRIVEN, 1)]
        );
        assert_eq!(c.kinds_without_sample, ["AcmeCluster"]);
        // No lifecycle cell (lint, --static-only): no coverage at all.
        let mut stat = cell("x", &machine, Level::Must, Skip, "needs a live provider");
        stat.phase = Phase::Static;
        assert!(
            matrix(vec![stat], FailOn::Level(Level::Must))
                .lifecycle_coverage()
                .is_empty()
        );
    }
}
