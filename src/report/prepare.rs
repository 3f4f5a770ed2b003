//! The matrix every writer formats: a sorted clone (every result's column listed), with free
//! text passed through [`redact_text`](super::redact::redact_text).

use super::model::{Evidence, Matrix};
use super::redact::redact_text;

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
    m
}

fn redact_evidence(e: &mut Evidence) {
    e.message = redact_text(&e.message);
    if let Some(o) = &e.object {
        e.object = Some(redact_text(o));
    }
}
