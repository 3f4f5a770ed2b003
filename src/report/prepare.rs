//! The matrix every writer formats: a sorted clone (every result's column listed), with free
//! text passed through [`redact_text`](super::redact::redact_text).

use super::model::{Evidence, Matrix, RuleResult, ScenarioRecord};
use super::redact::redact_text;
use serde::Serialize;

/// Sorted, column-complete, redacted copy of `matrix`.
pub(crate) fn prepared(matrix: &Matrix) -> Matrix {
    let mut m = matrix.clone();
    for r in &m.results {
        if !m.columns.contains(&r.column) {
            m.columns.push(r.column.clone());
        }
    }
    for s in &m.scenarios {
        if !m.columns.contains(&s.column) {
            m.columns.push(s.column.clone());
        }
    }
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
    e.message = redact_text(&e.message);
    if let Some(o) = &e.object {
        e.object = Some(redact_text(o));
    }
}
