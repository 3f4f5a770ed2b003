//! Report writers: snapshots of every format, determinism, JUnit structure, file outputs.

#[path = "report/fixtures.rs"]
mod fixtures;
#[path = "report/support.rs"]
mod support;

#[path = "report/content.rs"]
mod content;
#[path = "report/html_page.rs"]
mod html_page;
#[path = "report/junit.rs"]
mod junit;
#[path = "report/migration.rs"]
mod migration;
#[path = "report/odd_matrices.rs"]
mod odd_matrices;
#[path = "report/sarif.rs"]
mod sarif;
#[path = "report/write_outputs.rs"]
mod write_outputs;

use capi_conformance::cli::OutputFormat;
use support::{FORMATS, html, render, shuffled};

// ---------- snapshots ----------

#[test]
fn table_synthetic() {
    insta::assert_snapshot!(render(&fixtures::synthetic(), OutputFormat::Table));
}

#[test]
fn table_all_pass() {
    insta::assert_snapshot!(render(&fixtures::all_pass(), OutputFormat::Table));
}

#[test]
fn json_synthetic() {
    insta::assert_snapshot!(render(&fixtures::synthetic(), OutputFormat::Json));
}

#[test]
fn json_all_pass() {
    insta::assert_snapshot!(render(&fixtures::all_pass(), OutputFormat::Json));
}

#[test]
fn yaml_synthetic() {
    insta::assert_snapshot!(render(&fixtures::synthetic(), OutputFormat::Yaml));
}

#[test]
fn junit_synthetic() {
    insta::assert_snapshot!(render(&fixtures::synthetic(), OutputFormat::Junit));
}

#[test]
fn junit_all_pass() {
    insta::assert_snapshot!(render(&fixtures::all_pass(), OutputFormat::Junit));
}

#[test]
fn markdown_synthetic() {
    insta::assert_snapshot!(render(&fixtures::synthetic(), OutputFormat::Markdown));
}

#[test]
fn markdown_all_pass() {
    insta::assert_snapshot!(render(&fixtures::all_pass(), OutputFormat::Markdown));
}

#[test]
fn html_synthetic() {
    insta::assert_snapshot!(html(&fixtures::synthetic()));
}

#[test]
fn html_all_pass() {
    insta::assert_snapshot!(html(&fixtures::all_pass()));
}

/// A kind without a sample object makes a failure-free run inconclusive
/// (exit 3); every writer names the kind and shows the lifecycle coverage.
#[test]
fn table_no_sample() {
    insta::assert_snapshot!(render(&fixtures::no_sample(), OutputFormat::Table));
}

#[test]
fn json_no_sample() {
    insta::assert_snapshot!(render(&fixtures::no_sample(), OutputFormat::Json));
}

#[test]
fn junit_no_sample() {
    insta::assert_snapshot!(render(&fixtures::no_sample(), OutputFormat::Junit));
}

#[test]
fn markdown_no_sample() {
    insta::assert_snapshot!(render(&fixtures::no_sample(), OutputFormat::Markdown));
}

#[test]
fn html_no_sample() {
    insta::assert_snapshot!(html(&fixtures::no_sample()));
}

#[test]
fn no_sample_verdict_is_inconclusive_exit_3() {
    use capi_conformance::report::Verdict;
    let m = fixtures::no_sample();
    assert_eq!(m.verdict(), Verdict::Inconclusive);
    assert_eq!(
        m.summary().gating_unjudged,
        1,
        "the SHOULD cell does not gate"
    );
    let kinds: Vec<String> = m
        .gating_kinds_without_sample()
        .into_iter()
        .map(|(p, k)| format!("{p}/{k}"))
        .collect();
    assert_eq!(kinds, ["acme/AcmeCluster"]);
}

// ---------- determinism ----------

#[test]
fn rendering_twice_and_from_shuffled_input_is_byte_identical() {
    for m in [
        fixtures::synthetic(),
        fixtures::all_pass(),
        fixtures::no_sample(),
        fixtures::large(12),
    ] {
        for f in FORMATS {
            let a = render(&m, f);
            assert_eq!(a, render(&m, f), "{f:?} differs between two renders");
            assert_eq!(a, render(&shuffled(&m), f), "{f:?} depends on input order");
        }
        assert_eq!(html(&m), html(&m));
        assert_eq!(html(&m), html(&shuffled(&m)));
    }
}

#[test]
fn an_already_sorted_matrix_renders_like_its_shuffled_copy() {
    // A sorted, clean matrix is written straight from the matrix (no prepared copy); the
    // shuffled one goes through the copy. Both must give the same bytes.
    for m in [
        fixtures::synthetic(),
        fixtures::all_pass(),
        fixtures::large(30),
    ] {
        let mut sorted = m.clone();
        sorted.sort();
        for f in FORMATS {
            assert_eq!(
                render(&sorted, f),
                render(&shuffled(&m), f),
                "{f:?} differs between the sorted and the shuffled matrix"
            );
        }
    }
}

#[test]
fn streamed_json_is_the_report_document_serialised() {
    use capi_conformance::report::ReportDocument;
    for m in [
        fixtures::synthetic(),
        fixtures::all_pass(),
        fixtures::no_sample(),
        fixtures::large(30),
    ] {
        let mut sorted = m.clone();
        sorted.sort();
        for m in [m, sorted] {
            let json = render(&m, OutputFormat::Json);
            let doc: ReportDocument = serde_json::from_str(&json).unwrap();
            let again = serde_json::to_string_pretty(&doc).unwrap() + "\n";
            assert_eq!(
                json, again,
                "field order or skip rules differ from ReportDocument"
            );
            let mut streamed = Vec::new();
            capi_conformance::report::render_to(
                &m,
                OutputFormat::Json,
                &capi_conformance::report::RenderOptions::default(),
                &mut streamed,
            )
            .unwrap();
            assert_eq!(String::from_utf8(streamed).unwrap(), json);
        }
    }
}
