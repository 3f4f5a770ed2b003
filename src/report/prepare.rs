//! The matrix every writer formats: a sorted clone (every result's column listed), with free
//! text passed through [`redact_text`](super::redact::redact_text).

use super::model::{Column, Evidence, Matrix, RuleResult, ScenarioRecord};
use super::redact::{MASK, is_secret_path, redact_text};
use serde::Serialize;
use std::collections::BTreeSet;

/// Sorted, column-complete, redacted copy of `matrix`.
pub(crate) fn prepared(matrix: &Matrix) -> Matrix {
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
        e.object = Some(redact_text(o));
    }
}
