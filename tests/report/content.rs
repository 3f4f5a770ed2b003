//! What the writers put in (and keep out of) a report: secrets, JSON round trip, table
//! colour, width and folding, Markdown size limits.

use crate::fixtures;
use crate::support::{FORMATS, every_output, html, render};
use capi_conformance::cli::OutputFormat;
use capi_conformance::report::{self, RenderOptions, ReportDocument};

#[test]
fn secret_like_values_never_reach_any_output() {
    let m = fixtures::synthetic();
    let mut outputs: Vec<String> = FORMATS.iter().map(|f| render(&m, *f)).collect();
    outputs.push(html(&m));
    for out in outputs {
        assert!(!out.contains("s3cr3t-value"), "secret leaked:\n{out}");
        assert!(
            out.contains("bootstrapToken"),
            "evidence was dropped instead of masked"
        );
    }
}

#[test]
fn evidence_about_a_secret_like_field_loses_its_message() {
    let mut m = fixtures::synthetic();
    let r = m
        .results
        .iter_mut()
        .find(|r| r.outcome == capi_conformance::report::Outcome::Fail)
        .unwrap();
    r.evidence.push(capi_conformance::report::Evidence {
        message: "value was 'hunter2'".into(),
        object: Some("Secret/capi-conformance-r1/m-1-bootstrap".into()),
        path: Some("data.value".into()),
        resource_version: None,
        location: None,
        source: None,
    });
    for out in every_output(&m) {
        assert!(!out.contains("hunter2"));
        assert!(out.contains("value of a secret-like field"));
    }
}

#[test]
fn json_report_round_trips_and_carries_verdict_and_exit_code() {
    let m = fixtures::synthetic();
    let doc: ReportDocument = serde_json::from_str(&render(&m, OutputFormat::Json)).unwrap();
    assert_eq!(doc.schema_version, report::REPORT_SCHEMA_VERSION);
    assert_eq!(doc.exit_code, 1);
    assert_eq!(doc.summary, m.summary());
    assert_eq!(doc.results.len(), m.results.len());
    assert_eq!(doc.context.fail_on, "must");
    let gating: Vec<&str> = doc
        .results
        .iter()
        .filter(|r| r.gating)
        .map(|r| r.rule_id.as_str())
        .collect();
    assert_eq!(
        gating,
        ["all/crd-contract-label", "infra-machine/provider-id"]
    );
    let yaml: ReportDocument = serde_saphyr::from_str(&render(&m, OutputFormat::Yaml)).unwrap();
    assert_eq!(yaml, doc);
}

#[test]
fn table_colour_only_when_asked() {
    let m = fixtures::synthetic();
    let plain = render(&m, OutputFormat::Table);
    assert!(!plain.contains('\u{1b}'));
    let opts = RenderOptions {
        color: true,
        ..RenderOptions::default()
    };
    let coloured = report::render(&m, OutputFormat::Table, &opts).unwrap();
    assert!(coloured.contains('\u{1b}'));
}

#[test]
fn table_stays_readable_for_fifty_crds_under_two_contracts() {
    let m = fixtures::large(50);
    let out = render(&m, OutputFormat::Table);
    let widest = out.lines().map(|l| l.chars().count()).max().unwrap();
    assert!(widest <= 160, "a line is {widest} characters wide");
    // Each of the 100 columns (50 kinds × b1, b2) heads exactly one table column.
    for k in 0..50 {
        let header = format!(" BigCloudThing{k:02} ");
        assert_eq!(
            out.matches(&header).count(),
            2,
            "{header} not shown once per contract"
        );
    }
    assert!(out.contains("table 1 of "));
    // Failures are listed (5 failing kinds × the rules of their role).
    assert!(out.contains("\nFailures ("));
}

#[test]
fn table_keeps_to_a_given_terminal_width() {
    let opts = RenderOptions {
        width: Some(100),
        ..RenderOptions::default()
    };
    for m in [fixtures::synthetic(), fixtures::large(20)] {
        let out = report::render(&m, OutputFormat::Table, &opts).unwrap();
        for line in out
            .lines()
            .filter(|l| l.starts_with(['┌', '│', '└', '╞', '├']))
        {
            assert!(line.chars().count() <= 100, "too wide: {line}");
        }
    }
}

#[test]
fn rules_skipped_in_every_column_of_a_table_are_folded_into_one_line() {
    use capi_conformance::report::Outcome;
    let mut m = fixtures::synthetic();
    for r in m
        .results
        .iter_mut()
        .filter(|r| r.rule_id == "infra-machine/provider-id")
    {
        r.outcome = Outcome::Skip;
        r.reason = Some("needs a live provider".into());
    }
    let out = render(&m, OutputFormat::Table);
    assert!(
        out.contains("Skipped in every column above (1): infra-machine/provider-id\n"),
        "{out}"
    );
    assert!(
        !out.contains("│ infra-machine/provider-id"),
        "folded row still in the table:\n{out}"
    );
    assert!(out.contains("3 × skip: needs a live provider"));
    // A table whose rows all skip keeps them (nothing would be left to show).
    let mut m = fixtures::all_pass();
    for r in &mut m.results {
        r.outcome = Outcome::Skip;
    }
    let out = render(&m, OutputFormat::Table);
    assert!(out.contains("│ all/crd-contract-label"));
    assert!(!out.contains("Skipped in every column above"));
}

#[test]
fn long_failure_text_wraps_to_the_width() {
    let mut m = fixtures::synthetic();
    let long = "word ".repeat(80);
    m.results
        .iter_mut()
        .find(|r| {
            r.rule_id == "infra-machine/provider-id"
                && r.outcome == capi_conformance::report::Outcome::Fail
        })
        .unwrap()
        .reason = Some(long);
    let opts = RenderOptions {
        width: Some(100),
        ..RenderOptions::default()
    };
    let out = report::render(&m, OutputFormat::Table, &opts).unwrap();
    let why = out
        .lines()
        .position(|l| l.starts_with("       why: word"))
        .unwrap();
    let lines: Vec<&str> = out.lines().skip(why).take(5).collect();
    assert!(lines.iter().all(|l| l.chars().count() <= 100), "{lines:#?}");
    assert!(lines[1].starts_with("         word"));
}

#[test]
fn many_identical_reasons_are_counted_not_listed() {
    let mut m = fixtures::large(30);
    for r in &mut m.results {
        r.outcome = capi_conformance::report::Outcome::Skip;
        r.reason = Some("needs a live provider".into());
    }
    let out = render(&m, OutputFormat::Table);
    let n = m.results.len();
    assert!(out.contains(&format!("{n} × skip: needs a live provider")));
    assert!(!out.contains("      - "), "cells listed one by one:\n{out}");
}

#[test]
fn markdown_fits_a_pr_comment_even_for_huge_providers() {
    // Full matrix when it fits.
    let small = render(&fixtures::synthetic(), OutputFormat::Markdown);
    assert!(
        small.contains("<details><summary>Inconclusive (1), waived (1), skipped (1)</summary>")
    );
    assert!(small.contains("#### Failures (3)"));
    assert!(!small.contains("not shown"));
    // Too long: only rows with something other than pass.
    let mid = render(&fixtures::large(600), OutputFormat::Markdown);
    assert!(mid.len() <= 65_536, "{} bytes", mid.len());
    assert!(
        mid.contains("rule(s) passing everywhere not shown"),
        "{mid}"
    );
    // Still too long: counts per provider, failures kept.
    let m = fixtures::large(1500);
    let huge = render(&m, OutputFormat::Markdown);
    assert!(huge.len() <= 65_536, "{} bytes", huge.len());
    assert!(huge.starts_with("### ❌ capi-conformance: FAIL (exit 1)"));
    assert!(huge.contains("too large for a comment"));
    let fails = m
        .results
        .iter()
        .filter(|r| r.outcome == capi_conformance::report::Outcome::Fail)
        .count();
    assert!(
        huge.contains(&format!(
            "| `bigcloud` | {} | {fails} |",
            m.results.len() - fails
        )),
        "{huge}"
    );
    assert!(huge.contains(&format!("#### Failures ({fails})")));
    assert!(!huge.contains("Report truncated"));
    // Larger still: a few columns per failed rule, no evidence; every failed rule still named.
    let m = fixtures::large(3000);
    let brief = render(&m, OutputFormat::Markdown);
    assert!(brief.len() <= 65_536);
    assert!(brief.contains("more\n"));
    for rule in &m.rules {
        if m.results
            .iter()
            .any(|r| r.rule_id == rule.id && r.outcome == capi_conformance::report::Outcome::Fail)
        {
            assert!(
                brief.contains(&format!("**`{}`**", rule.id)),
                "{} missing",
                rule.id
            );
        }
    }
}
