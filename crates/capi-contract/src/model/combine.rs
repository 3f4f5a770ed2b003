//! One verdict per rule and column when a rule is evaluated in more than one part (e.g.
//! `all/rbac-aggregation`: the static reading of the ClusterRoles, and the effective check by
//! SubjectAccessReview; `all/conditions`: the schema, and the values a live provider writes):
//! the parts fold into one cell ([`fold`], [`merge_cells`]).
//!
//! - a waiver covers every part (waived stays waived);
//! - fail if any part fails, with every part's evidence;
//! - inconclusive if a part could not run (and none failed);
//! - skip only when every part skips;
//! - otherwise pass (a part that skipped says why in the evidence).

use super::{Evidence, Outcome, RuleResult};
use crate::suite::{Rule, RuleKind};
use std::collections::HashMap;

/// How a scenario's part is named in the evidence of a folded cell.
pub const LIFECYCLE_PART: &str = "lifecycle";

/// One more part of a cell's rule: its outcome, reason and evidence.
#[derive(Debug, Clone, PartialEq)]
pub struct Part {
    /// Names the part in evidence, e.g. `effective RBAC (SubjectAccessReview)`.
    pub label: String,
    pub outcome: Outcome,
    pub reason: Option<String>,
    pub evidence: Vec<Evidence>,
}

/// The outcome of two parts of one rule.
pub fn combined_outcome(a: Outcome, b: Outcome) -> Outcome {
    use Outcome::*;
    match (a, b) {
        (Waived, _) | (_, Waived) => Waived,
        (Fail, _) | (_, Fail) => Fail,
        (Inconclusive, _) | (_, Inconclusive) => Inconclusive,
        (Skip, Skip) => Skip,
        _ => Pass,
    }
}

/// Folds `part` into `cell` (the cell keeps its rule, column, level and phase).
pub fn fold(cell: &mut RuleResult, part: Part) {
    let before = cell.outcome;
    let outcome = combined_outcome(before, part.outcome);
    let part_reason = part.reason.as_ref().map(|r| format!("{}: {r}", part.label));
    cell.reason = match outcome {
        // The part that decided gives the reason; two failures give both.
        Outcome::Fail if before == Outcome::Fail && part.outcome == Outcome::Fail => {
            match (cell.reason.take(), part_reason) {
                (Some(a), Some(b)) => Some(format!("{a}; {b}")),
                (a, b) => a.or(b),
            }
        }
        _ if outcome == before => cell.reason.take(),
        _ if outcome == part.outcome => part_reason,
        _ => None,
    };
    // Every part's evidence is shown; a part without evidence says what it found.
    if part.evidence.is_empty() {
        let what = match (part.outcome, &part.reason) {
            (o, Some(r)) => format!("{}: {o}: {r}", part.label),
            (o, None) => format!("{}: {o}", part.label),
        };
        cell.evidence.push(Evidence::msg(what));
    } else {
        cell.evidence.extend(part.evidence.into_iter().map(|mut e| {
            e.message = format!("{}: {}", part.label, e.message);
            e
        }));
    }
    cell.outcome = outcome;
}

/// Adds a scenario run's cells (`parts`) to `results`, keeping one cell per (rule, column):
/// - a cell of a column the static engine has no cell in is added as it is;
/// - a scenario rule's static cell (`kind: scenario`: the static engine has no part of such a
///   rule, only the reason it has no verdict) gives way to the scenario's cell;
/// - a static rule with a scenario part (`scenario:` in the catalog) folds the scenario's cell
///   into its static cell ([`fold`], the part labelled [`LIFECYCLE_PART`]); the cell's phase
///   becomes the part's when the part decided the outcome.
pub fn merge_cells(results: &mut Vec<RuleResult>, parts: Vec<RuleResult>, rules: &[Rule]) {
    let scenario_only: std::collections::HashSet<&str> = rules
        .iter()
        .filter(|r| r.kind == RuleKind::Scenario)
        .map(|r| r.id.as_str())
        .collect();
    let mut at: HashMap<(String, super::Column), usize> = results
        .iter()
        .enumerate()
        .map(|(i, r)| ((r.rule_id.to_string(), r.column.clone()), i))
        .collect();
    for part in parts {
        let key = (part.rule_id.to_string(), part.column.clone());
        match at.get(&key) {
            None => {
                at.insert(key, results.len());
                results.push(part);
            }
            Some(&i) if scenario_only.contains(part.rule_id.as_str()) => results[i] = part,
            Some(&i) => fold_result(&mut results[i], part),
        }
    }
}

/// Folds another part's cell of the same rule and column into `cell` ([`fold`]).
fn fold_result(cell: &mut RuleResult, part: RuleResult) {
    let before = cell.outcome;
    let (phase, duration) = (part.phase, part.duration_ms);
    fold(
        cell,
        Part {
            label: LIFECYCLE_PART.into(),
            outcome: part.outcome,
            reason: part.reason,
            evidence: part.evidence,
        },
    );
    if cell.outcome != before && cell.outcome == part.outcome {
        cell.phase = phase;
    }
    cell.duration_ms = cell.duration_ms.or(duration);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contract::{Level, Role};
    use crate::model::{Column, Phase};

    fn cell(outcome: Outcome, reason: Option<&str>) -> RuleResult {
        RuleResult {
            rule_id: "all/rbac-aggregation".into(),
            column: Column {
                provider: "p".into(),
                kind: "K".into(),
                role: Role::InfraMachine,
                contract: None,
                baseline: false,
            },
            level: Level::Must,
            phase: Phase::Static,
            outcome,
            reason: reason.map(str::to_string),
            evidence: vec![Evidence::msg("static evidence")],
            duration_ms: None,
        }
    }

    fn part(outcome: Outcome, reason: Option<&str>) -> Part {
        Part {
            label: "effective".into(),
            outcome,
            reason: reason.map(str::to_string),
            evidence: Vec::new(),
        }
    }

    #[test]
    fn outcome_table() {
        use Outcome::*;
        let all = [Pass, Fail, Skip, Inconclusive, Waived];
        for a in all {
            for b in all {
                let got = combined_outcome(a, b);
                assert_eq!(got, combined_outcome(b, a), "symmetric for {a:?}, {b:?}");
                let want = if a == Waived || b == Waived {
                    Waived
                } else if a == Fail || b == Fail {
                    Fail
                } else if a == Inconclusive || b == Inconclusive {
                    Inconclusive
                } else if a == Skip && b == Skip {
                    Skip
                } else {
                    Pass
                };
                assert_eq!(got, want, "{a:?} + {b:?}");
            }
        }
    }

    #[test]
    fn reasons_and_evidence_of_both_parts() {
        let mut c = cell(Outcome::Pass, None);
        fold(&mut c, part(Outcome::Fail, Some("may not list foos")));
        assert_eq!(c.outcome, Outcome::Fail);
        assert_eq!(c.reason.as_deref(), Some("effective: may not list foos"));
        assert_eq!(c.evidence.len(), 2);
        assert_eq!(c.evidence[1].message, "effective: fail: may not list foos");

        let mut c = cell(Outcome::Fail, Some("roles lack list"));
        fold(&mut c, part(Outcome::Fail, Some("may not list foos")));
        assert_eq!(
            c.reason.as_deref(),
            Some("roles lack list; effective: may not list foos")
        );

        let mut c = cell(Outcome::Pass, None);
        fold(&mut c, part(Outcome::Skip, Some("core not installed")));
        assert_eq!(c.outcome, Outcome::Pass);
        assert_eq!(c.reason, None);
        assert!(c.evidence[1].message.contains("skip: core not installed"));

        let mut c = cell(Outcome::Pass, None);
        fold(&mut c, part(Outcome::Inconclusive, Some("SAR failed")));
        assert_eq!(c.outcome, Outcome::Inconclusive);
        assert_eq!(c.reason.as_deref(), Some("effective: SAR failed"));

        let mut c = cell(Outcome::Skip, Some("SIG group"));
        fold(&mut c, part(Outcome::Pass, None));
        assert_eq!((c.outcome, c.reason), (Outcome::Pass, None));

        let mut c = cell(Outcome::Fail, Some("roles lack list"));
        fold(&mut c, part(Outcome::Pass, None));
        assert_eq!(c.outcome, Outcome::Fail);
        assert_eq!(c.reason.as_deref(), Some("roles lack list"));
    }

    fn rule(id: &str, kind: RuleKind) -> Rule {
        Rule {
            id: id.into(),
            title: id.into(),
            level: Level::Must,
            levels: Default::default(),
            condition: None,
            contracts: vec![],
            roles: vec![Role::InfraMachine],
            kind,
            doc: String::new(),
            description: String::new(),
            remediation: String::new(),
            check: None,
            field_check: Default::default(),
            scenario: Some("SC-inframachine".into()),
            faults: vec![],
        }
    }

    fn lifecycle(id: &str, kind: &str, outcome: Outcome) -> RuleResult {
        let mut r = cell(outcome, None);
        r.rule_id = id.into();
        r.column.kind = kind.into();
        r.phase = Phase::Lifecycle;
        r.evidence = vec![Evidence::msg("seen live")];
        r.duration_ms = Some(7);
        r
    }

    #[test]
    fn scenario_cells_replace_placeholders_and_fold_into_static_parts() {
        let rules = [rule("s", RuleKind::Scenario), rule("c", RuleKind::Static)];
        let mut placeholder = cell(Outcome::Skip, Some("no scenario yet"));
        placeholder.rule_id = "s".into();
        let mut schema = cell(Outcome::Pass, None);
        schema.rule_id = "c".into();
        let mut results = vec![placeholder, schema];
        merge_cells(
            &mut results,
            vec![
                lifecycle("s", "K", Outcome::Pass),
                lifecycle("c", "K", Outcome::Fail),
                lifecycle("s", "Other", Outcome::Skip),
            ],
            &rules,
        );
        assert_eq!(results.len(), 3, "{results:#?}");
        let s = &results[0];
        assert_eq!(
            (s.outcome, s.phase, s.reason.clone()),
            (Outcome::Pass, Phase::Lifecycle, None)
        );
        assert_eq!(s.evidence, vec![Evidence::msg("seen live")]);
        let c = &results[1];
        assert_eq!((c.outcome, c.phase), (Outcome::Fail, Phase::Lifecycle));
        assert_eq!(c.evidence.len(), 2, "both parts' evidence");
        assert_eq!(c.evidence[1].message, "lifecycle: seen live");
        assert_eq!(c.duration_ms, Some(7));
        assert_eq!(results[2].column.kind.as_str(), "Other");

        // A lifecycle skip beside a static pass: pass, the skip said in the evidence.
        let mut schema = cell(Outcome::Pass, None);
        schema.rule_id = "c".into();
        let mut results = vec![schema];
        let mut skipped = lifecycle("c", "K", Outcome::Skip);
        skipped.reason = Some("not driven".into());
        skipped.evidence.clear();
        merge_cells(&mut results, vec![skipped], &rules);
        assert_eq!(
            (results[0].outcome, results[0].phase),
            (Outcome::Pass, Phase::Static)
        );
        assert_eq!(
            results[0].evidence[1].message,
            "lifecycle: skip: not driven"
        );
    }
}
