//! One verdict per rule and column when a rule is evaluated in more than one part (e.g.
//! `all/rbac-aggregation`: the static reading of the ClusterRoles, and the effective check by
//! SubjectAccessReview): the parts fold into one cell.
//!
//! - a waiver covers every part (waived stays waived);
//! - fail if any part fails, with every part's evidence;
//! - inconclusive if a part could not run (and none failed);
//! - skip only when every part skips;
//! - otherwise pass (a part that skipped says why in the evidence).

use super::{Evidence, Outcome, RuleResult};

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
}
