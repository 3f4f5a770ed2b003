//! The flect port against the golden table produced by gobuffalo/flect v1.0.3
//! (`tests/data/flect-golden.tsv`: `kind<TAB>plural`, `#` lines are comments; the file's header
//! says how it was produced).

#[path = "shared/shared_data.rs"]
mod shared_data;
#[path = "shared/without_shared.rs"]
mod without_shared;

use capi_conformance::contract::flect::pluralize;
use std::path::PathBuf;

/// The golden table has at least this many data rows; fewer means a truncated file.
const MIN_ROWS: usize = 1286;

fn golden_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/flect-golden.tsv")
}

/// The data rows (`kind`, `plural`) of a golden table, comments and blank lines left out.
fn rows(text: &str) -> Vec<(&str, &str)> {
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
        .filter_map(|l| l.split_once('\t'))
        .collect()
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

/// The project's copy of the table is the one the developers' shared data holds (when present).
#[test]
fn golden_table_equals_the_shared_copy() {
    let Some(shared) = shared_data::shared_or_skip("flect-golden.tsv", "flect golden shared copy")
    else {
        return;
    };
    let ours = std::fs::read_to_string(golden_path()).unwrap();
    let theirs = std::fs::read_to_string(&shared).unwrap();
    assert_eq!(rows(&ours), rows(&theirs), "{}", shared.display());
}

/// On a fresh clone (no shared data) the golden table test still runs (its table is the
/// project's), and only the comparison with the shared copy skips, or fails when required.
#[test]
fn fresh_clone_flect_tests_need_no_shared_data() {
    without_shared::assert_skip_or_fail_without_shared(
        "golden_table_equals_the_shared_copy",
        &["flect golden shared copy"],
    );
    without_shared::assert_passes_without_shared("pluralize_matches_flect_golden_table");
}
