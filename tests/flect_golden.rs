//! The flect port against the golden table produced by gobuffalo/flect v1.0.3
//! (`../shared/flect-golden.tsv`: `kind<TAB>plural`, `#` lines are comments).

use capi_conformance::contract::flect::pluralize;
use std::path::PathBuf;

/// The golden table has at least this many data rows; fewer means a truncated file.
const MIN_ROWS: usize = 1286;

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/flect-golden.tsv")
}

#[test]
fn pluralize_matches_flect_golden_table() {
    let path = golden_path();
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) => panic!(
            "flect golden table not readable at {} ({err}); it is required for this test",
            path.display()
        ),
    };

    let mut rows = 0;
    let mut mismatches = Vec::new();
    for (index, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let Some((kind, want)) = line.split_once('\t') else {
            panic!("line {}: expected kind<TAB>plural, got {line:?}", index + 1);
        };
        rows += 1;
        let got = pluralize(&kind.to_lowercase());
        if got != want {
            mismatches.push(format!(
                "line {}: {kind}: got {got}, want {want}",
                index + 1
            ));
        }
    }

    for mismatch in &mismatches {
        eprintln!("{mismatch}");
    }
    eprintln!(
        "flect golden: {}/{rows} rows match",
        rows - mismatches.len()
    );
    assert!(
        mismatches.is_empty(),
        "{} of {rows} golden rows differ",
        mismatches.len()
    );
    assert!(
        rows >= MIN_ROWS,
        "golden table has only {rows} rows (expected at least {MIN_ROWS}): truncated?"
    );
}
