//! What a script concluded per rule id, before it becomes matrix cells.

use capi_contract::model::{Evidence, Outcome};
use capi_contract::rule_ids::RuleId;
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct Verdict {
    pub outcome: Outcome,
    pub reason: Option<String>,
    pub evidence: Vec<Evidence>,
}

/// Rule id → verdict. A failure sticks: later passes for the same rule do not hide it.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Verdicts(pub BTreeMap<String, Verdict>);

impl Verdicts {
    fn put(&mut self, rule: &str, v: Verdict) {
        match self.0.get(rule) {
            Some(old) if old.outcome == Outcome::Fail => {}
            Some(old) if old.outcome == Outcome::Pass && v.outcome == Outcome::Skip => {}
            _ => {
                self.0.insert(rule.to_string(), v);
            }
        }
    }

    /// Adds the verdicts of a part of the script that ran concurrently (same precedence as
    /// judging them here: a failure sticks, a pass beats a skip).
    pub fn merge(&mut self, other: Verdicts) {
        for (rule, v) in other.0 {
            self.put(&rule, v);
        }
    }

    pub fn pass(&mut self, rule: RuleId) {
        self.put(
            &rule,
            Verdict {
                outcome: Outcome::Pass,
                reason: None,
                evidence: Vec::new(),
            },
        );
    }

    pub fn fail(&mut self, rule: RuleId, reason: impl Into<String>, evidence: Evidence) {
        self.put(
            &rule,
            Verdict {
                outcome: Outcome::Fail,
                reason: Some(reason.into()),
                evidence: vec![evidence],
            },
        );
    }

    pub fn skip(&mut self, rule: RuleId, reason: impl Into<String>) {
        self.put(
            &rule,
            Verdict {
                outcome: Outcome::Skip,
                reason: Some(reason.into()),
                evidence: Vec::new(),
            },
        );
    }

    /// The environment kept the rule from being judged.
    pub fn inconclusive(&mut self, rule: RuleId, reason: impl Into<String>) {
        self.put(
            &rule,
            Verdict {
                outcome: Outcome::Inconclusive,
                reason: Some(reason.into()),
                evidence: Vec::new(),
            },
        );
    }

    /// Pass when `ok`, else fail with `reason`.
    pub fn check(&mut self, rule: RuleId, ok: bool, reason: impl Into<String>, evidence: Evidence) {
        if ok {
            self.pass(rule);
        } else {
            self.fail(rule, reason, evidence);
        }
    }

    /// Adds `evidence` to the verdict of `rule`, if it has one (what a judged rule did not
    /// cover: a path the sample did not allow).
    pub fn note(&mut self, rule: RuleId, evidence: Evidence) {
        if let Some(v) = self.0.get_mut(rule.as_str()) {
            v.evidence.push(evidence);
        }
    }

    pub fn get(&self, rule: impl AsRef<str>) -> Option<&Verdict> {
        self.0.get(rule.as_ref())
    }

    pub fn failed(&self) -> bool {
        self.0.values().any(|v| v.outcome == Outcome::Fail)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_sticks_and_pass_beats_skip() {
        use capi_contract::rule_ids::all::{PAUSE, PAUSED_CONDITION, READY_CONDITION_LIFECYCLE};
        let mut v = Verdicts::default();
        v.fail(PAUSE, "no", Evidence::msg("x"));
        v.pass(PAUSE);
        assert_eq!(v.get(PAUSE).unwrap().outcome, Outcome::Fail);
        v.pass(PAUSED_CONDITION);
        v.skip(PAUSED_CONDITION, "later");
        assert_eq!(v.get(PAUSED_CONDITION).unwrap().outcome, Outcome::Pass);
        v.check(READY_CONDITION_LIFECYCLE, false, "bad", Evidence::msg("y"));
        assert!(v.failed());
    }
}
