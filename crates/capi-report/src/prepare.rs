//! The matrix every writer formats: a sorted clone (every result's column listed), with free
//! text passed through [`redact_text`](super::redact::redact_text).

use super::model::{Column, Evidence, Matrix, ResultOrder, RuleResult, ScenarioRecord};
use super::redact::{MASK, is_secret_path, redact_cow, redact_text};
use serde::Serialize;
use std::borrow::Cow;
use std::collections::BTreeSet;

/// Sorted, column-complete, redacted `matrix`: borrowed when it already is all of that (what
/// the static engine produces), else a prepared copy.
pub(crate) fn prepared(matrix: &Matrix) -> Cow<'_, Matrix> {
    if is_prepared(matrix) {
        Cow::Borrowed(matrix)
    } else {
        Cow::Owned(prepared_copy(matrix))
    }
}

/// Whether [`prepared_copy`] would return `matrix` unchanged: columns strictly sorted and
/// listing every result's and scenario's column, results and scenarios in order without ties
/// (so [`make_total`] has nothing to order), problems sorted, and no text that redaction
/// would change.
fn is_prepared(m: &Matrix) -> bool {
    let columns_sorted = m.columns.windows(2).all(|w| w[0] < w[1]);
    let listed = |c: &Column| m.columns.binary_search(c).is_ok();
    columns_sorted
        && m.result_order() == ResultOrder::Strict
        && m.problems.is_sorted()
        && m.notes.is_sorted()
        && m.scenarios.windows(2).all(|w| {
            w[0].column
                .cmp(&w[1].column)
                .then_with(|| w[0].scenario.cmp(&w[1].scenario))
                .is_lt()
        })
        && all_listed(&m.columns, m.results.iter().map(|r| &r.column))
        && m.scenarios.iter().all(|s| listed(&s.column))
        && m.results.iter().all(|r| {
            r.reason.as_deref().is_none_or(is_clean)
                && r.evidence.iter().all(|e| {
                    !e.path
                        .as_deref()
                        .is_some_and(|p| is_secret_path(e.object.as_deref(), p))
                        && is_clean(&e.message)
                        && e.object.as_deref().is_none_or(is_clean)
                })
        })
        && m.problems.iter().all(|p| is_clean(&p.message))
        && m.notes.iter().all(|n| is_clean(&n.message))
}

/// Whether every column of `wanted` is in the sorted `columns`. Results of one rule come in
/// column order, so the column after the last one found is tried before a binary search.
fn all_listed<'a>(columns: &[Column], wanted: impl Iterator<Item = &'a Column>) -> bool {
    let mut next = 0;
    for c in wanted {
        let found = match columns.get(next) {
            Some(n) if n == c => Ok(next),
            _ => columns.binary_search(c),
        };
        match found {
            Ok(i) => next = i + 1,
            Err(_) => return false,
        }
    }
    true
}

/// Text that [`redact_text`] leaves as it is.
fn is_clean(text: &str) -> bool {
    matches!(redact_cow(text), Cow::Borrowed(_))
}

/// Sorted, column-complete, redacted copy of `matrix`.
fn prepared_copy(matrix: &Matrix) -> Matrix {
    let mut m = matrix.clone();
    let listed: BTreeSet<&Column> = matrix.columns.iter().collect();
    let missing: BTreeSet<&Column> = matrix
        .results
        .iter()
        .map(|r| &r.column)
        .chain(matrix.scenarios.iter().map(|s| &s.column))
        .filter(|c| !listed.contains(c))
        .collect();
    m.columns.extend(missing.into_iter().cloned());
    for r in &mut m.results {
        r.reason = r.reason.as_deref().map(redact_text);
        r.evidence.iter_mut().for_each(redact_evidence);
    }
    for p in &mut m.problems {
        p.message = redact_text(&p.message);
    }
    for n in &mut m.notes {
        n.message = redact_text(&n.message);
    }
    m.sort();
    make_total(&mut m);
    m
}

/// `Matrix::sort` orders by (rule, column, phase) and scenarios by (column, scenario); entries
/// equal on those keys keep their input order. Break such ties by the entries' full content so
/// the output never depends on the order producers pushed them in.
fn make_total(m: &mut Matrix) {
    let same_result = |a: &RuleResult, b: &RuleResult| {
        a.rule_id == b.rule_id && a.column == b.column && a.phase == b.phase
    };
    sort_runs(&mut m.results, same_result);
    sort_runs(
        &mut m.scenarios,
        |a: &ScenarioRecord, b: &ScenarioRecord| a.column == b.column && a.scenario == b.scenario,
    );
}

/// Sorts each run of adjacent `same` elements by their JSON serialisation.
fn sort_runs<T: Serialize>(items: &mut [T], same: impl Fn(&T, &T) -> bool) {
    let mut start = 0;
    while start < items.len() {
        let mut end = start + 1;
        while end < items.len() && same(&items[start], &items[end]) {
            end += 1;
        }
        if end - start > 1 {
            items[start..end].sort_by_cached_key(|x| serde_json::to_string(x).unwrap_or_default());
        }
        start = end;
    }
}

fn redact_evidence(e: &mut Evidence) {
    if let Some(path) = e
        .path
        .as_deref()
        .filter(|p| is_secret_path(e.object.as_deref(), p))
    {
        e.message = format!("{MASK} (value of a secret-like field: {path})");
    }
    e.message = redact_text(&e.message);
    if let Some(o) = &e.object {
        e.object = Some(redact_text(o).into());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Outcome, Phase};
    use capi_contract::contract::{Contract, Level, Role};

    fn result(rule: &str, kind: &str, message: &str) -> RuleResult {
        RuleResult {
            rule_id: rule.into(),
            column: column(kind),
            level: Level::Must,
            phase: Phase::Static,
            outcome: Outcome::Pass,
            reason: None,
            evidence: vec![Evidence::msg(message)],
            duration_ms: None,
        }
    }

    fn column(kind: &str) -> Column {
        Column {
            provider: "p".into(),
            kind: kind.into(),
            role: Role::InfraMachine,
            contract: Some(Contract::V1Beta2),
            baseline: false,
        }
    }

    fn matrix(results: Vec<RuleResult>) -> Matrix {
        Matrix {
            context: capi_contract::checks::LintOptions::default().run_context(),
            rules: Vec::new(),
            columns: vec![column("A"), column("B")],
            results,
            problems: Vec::new(),
            notes: Vec::new(),
            scenarios: Vec::new(),
        }
    }

    #[test]
    fn borrows_only_what_is_already_prepared() {
        let clean = matrix(vec![result("r", "A", "ok"), result("r", "B", "ok")]);
        assert!(matches!(prepared(&clean), Cow::Borrowed(_)));
        assert_eq!(*prepared(&clean), prepared_copy(&clean));

        let unsorted = matrix(vec![result("r", "B", "ok"), result("r", "A", "ok")]);
        assert!(matches!(prepared(&unsorted), Cow::Owned(_)));

        let tie = matrix(vec![result("r", "A", "b"), result("r", "A", "a")]);
        let p = prepared(&tie);
        assert!(matches!(p, Cow::Owned(_)));
        assert_eq!(p.results[0].evidence[0].message, "a");

        let secret = matrix(vec![result("r", "A", "password: hunter2")]);
        let p = prepared(&secret);
        assert!(matches!(p, Cow::Owned(_)));
        assert_eq!(p.results[0].evidence[0].message, "password: <redacted>");

        let unlisted = matrix(vec![result("r", "C", "ok")]);
        let p = prepared(&unlisted);
        assert!(matches!(p, Cow::Owned(_)));
        assert_eq!(p.columns.len(), 3);
    }
}
