//! `check --rules GLOBS`: only the rules matching one of the comma-separated ids or globs
//! (`*` matches any run of characters, e.g. `infra-machine/*`, `*/pause`). The matrix keeps only
//! those rules, and only the scenarios that judge one of them run (their role × contract).

use crate::report::Matrix;
use crate::scenarios::Subject;
use crate::scenarios::runner::is_scenario_rule;
use capi_contract::suite::Rule;

/// The parsed `--rules` selection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleFilter(Vec<String>);

impl RuleFilter {
    /// `None` without the flag (every rule).
    pub fn parse(arg: Option<&str>) -> Option<RuleFilter> {
        arg.map(|s| {
            RuleFilter(
                s.split(',')
                    .map(str::trim)
                    .filter(|x| !x.is_empty())
                    .map(str::to_string)
                    .collect(),
            )
        })
    }

    pub fn matches(&self, id: &str) -> bool {
        self.0.iter().any(|g| glob_match(g, id))
    }

    /// The subjects some selected scenario rule applies to (role and contract).
    pub fn keep_subjects(&self, rules: &[Rule], subjects: Vec<Subject>) -> Vec<Subject> {
        subjects
            .into_iter()
            .filter(|s| {
                rules.iter().any(|r| {
                    is_scenario_rule(r)
                        && self.matches(&r.id)
                        && r.applies_to_role(s.role())
                        && s.column.contract.is_none_or(|c| r.applies_to_contract(c))
                })
            })
            .collect()
    }

    /// Drops the cells, rules and (then empty) columns of unselected rules.
    pub fn apply(&self, matrix: &mut Matrix) {
        matrix.results.retain(|r| self.matches(&r.rule_id));
        matrix.rules.retain(|r| self.matches(&r.id));
        let used: std::collections::HashSet<_> =
            matrix.results.iter().map(|r| r.column.clone()).collect();
        matrix.columns.retain(|c| used.contains(c));
    }
}

/// `*`-glob match over the whole text (case-sensitive, like rule ids).
pub fn glob_match(glob: &str, text: &str) -> bool {
    let parts: Vec<&str> = glob.split('*').collect();
    let [first, middle @ .., last] = parts.as_slice() else {
        return glob == text;
    };
    if parts.len() == 1 {
        return glob == text;
    }
    let Some(mut rest) = text.strip_prefix(first) else {
        return false;
    };
    for p in middle {
        match rest.find(p) {
            Some(i) => rest = &rest[i + p.len()..],
            None => return false,
        }
    }
    rest.len() >= last.len() && rest.ends_with(last)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_whole_ids() {
        assert!(glob_match("infra-machine/*", "infra-machine/provider-id"));
        assert!(!glob_match("infra-machine/*", "infra-machinepool/ready"));
        assert!(glob_match("*/pause", "control-plane/pause"));
        assert!(glob_match("all/pause", "all/pause"));
        assert!(!glob_match("all/pause", "all/paused-condition"));
        assert!(glob_match("*", "x"));
        assert!(glob_match("a*b*c", "a-b-c"));
        assert!(!glob_match("a*b*c", "a-c-b"));
        assert!(!glob_match("ab*ba", "aba"));
        let f = RuleFilter::parse(Some("bootstrap/*, all/pause")).unwrap();
        assert!(f.matches("bootstrap/secret-type") && f.matches("all/pause"));
        assert!(!f.matches("all/paused-condition"));
        assert_eq!(RuleFilter::parse(None), None);
    }
}
