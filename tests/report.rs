//! Report writers: snapshots of every format, determinism, JUnit structure, file outputs.

#[path = "report/fixtures.rs"]
mod fixtures;

use capi_conformance::cli::{ContractSelection, OutputFormat, ReportArgs};
use capi_conformance::report::{self, Matrix, RenderOptions, ReportDocument};

const FORMATS: [OutputFormat; 5] = [
    OutputFormat::Table,
    OutputFormat::Json,
    OutputFormat::Yaml,
    OutputFormat::Junit,
    OutputFormat::Markdown,
];

fn render(m: &Matrix, f: OutputFormat) -> String {
    report::render(m, f, &RenderOptions::default()).unwrap()
}

fn html(m: &Matrix) -> String {
    report::render_html(m, &RenderOptions::default())
}

/// The same matrix with every list reversed: writers must not depend on input order.
fn shuffled(m: &Matrix) -> Matrix {
    let mut m = m.clone();
    m.columns.reverse();
    m.results.reverse();
    m.problems.reverse();
    m.scenarios.reverse();
    m
}

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

// ---------- determinism ----------

#[test]
fn rendering_twice_and_from_shuffled_input_is_byte_identical() {
    for m in [
        fixtures::synthetic(),
        fixtures::all_pass(),
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

// ---------- content ----------

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
    let m = fixtures::large(400);
    let full = render(&m, OutputFormat::Markdown);
    assert!(full.len() <= 65_536, "{} bytes", full.len());
    assert!(full.starts_with("### ❌ capi-conformance: FAIL (exit 1)"));
    let small = render(&fixtures::synthetic(), OutputFormat::Markdown);
    assert!(
        small.contains("<details><summary>Inconclusive (1), waived (1), skipped (1)</summary>")
    );
    assert!(small.contains("#### Failures (3)"));
}

#[test]
fn html_is_self_contained_and_has_the_ids_browser_tests_use() {
    let out = html(&fixtures::synthetic());
    assert!(out.starts_with("<!doctype html>"));
    for forbidden in ["<link", "src=\"http", "@import", "<script src"] {
        assert!(!out.contains(forbidden), "external asset: {forbidden}");
    }
    assert_eq!(out.matches("id=\"matrix\"").count(), 1);
    for class in [
        "cell-pass",
        "cell-fail",
        "cell-skip",
        "cell-inconclusive",
        "cell-waived",
    ] {
        assert!(
            out.contains(&format!("class=\"cell {class}")),
            "no {class} cell"
        );
    }
    assert_eq!(out.matches("id=\"timeline-SC-inframachine\"").count(), 1);
    assert_eq!(out.matches("<svg class=\"timeline\"").count(), 1);
    // Provider lane and baseline lane, 4 events each.
    assert_eq!(out.matches("<circle").count(), 8);
    // Failed cells link to an expandable failure with evidence and remediation.
    assert_eq!(out.matches("<details class=\"failure\"").count(), 3);
    assert!(out.contains("<a href=\"#failure-1\">FAIL</a>"));
    assert!(out.contains("id=\"failure-1\""));
    assert!(out.contains("<dt>Fix</dt>"));
    for filter in ["filter-level", "filter-outcome", "filter-role"] {
        assert!(out.contains(&format!("<select id=\"{filter}\">")));
    }
    // Only roles present are offered.
    assert!(out.contains("<option value=\"infra-machine\">InfraMachine</option>"));
    assert!(!out.contains("<option value=\"control-plane\">"));
}

#[test]
fn html_is_well_formed_with_unique_ids() {
    use quick_xml::events::Event;
    for m in [fixtures::synthetic(), fixtures::all_pass()] {
        let out = html(&m);
        let mut reader = quick_xml::Reader::from_str(&out);
        let mut ids = std::collections::BTreeSet::new();
        let mut depth = 0i64;
        loop {
            match reader
                .read_event()
                .unwrap_or_else(|e| panic!("malformed HTML: {e}"))
            {
                Event::Eof => break,
                Event::Start(e) => {
                    depth += 1;
                    if let Some(id) = attrs(&e).get("id") {
                        assert!(ids.insert(id.clone()), "duplicate id {id}");
                    }
                }
                Event::Empty(e) => {
                    if let Some(id) = attrs(&e).get("id") {
                        assert!(ids.insert(id.clone()), "duplicate id {id}");
                    }
                }
                Event::End(_) => depth -= 1,
                _ => {}
            }
        }
        assert_eq!(depth, 0, "unbalanced elements");
        assert!(ids.contains("matrix") && ids.contains("filters"));
    }
}

// ---------- JUnit structure ----------

#[derive(Debug, Default)]
struct Suite {
    attrs: std::collections::BTreeMap<String, String>,
    cases: Vec<Case>,
    system_out: String,
}

#[derive(Debug, Default)]
struct Case {
    attrs: std::collections::BTreeMap<String, String>,
    child: Option<(String, std::collections::BTreeMap<String, String>, String)>,
}

fn attrs(e: &quick_xml::events::BytesStart<'_>) -> std::collections::BTreeMap<String, String> {
    e.attributes()
        .map(|a| {
            let a = a.unwrap();
            (
                String::from_utf8(a.key.as_ref().to_vec()).unwrap(),
                a.unescape_value().unwrap().into_owned(),
            )
        })
        .collect()
}

fn parse_junit(xml: &str) -> Vec<Suite> {
    use quick_xml::events::Event;
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut suites: Vec<Suite> = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    let mut saw_root = false;
    loop {
        let ev = reader.read_event().unwrap();
        match ev {
            Event::Eof => break,
            Event::Start(ref e) | Event::Empty(ref e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                let a = attrs(e);
                match name.as_str() {
                    "testsuites" => saw_root = true,
                    "testsuite" => suites.push(Suite {
                        attrs: a,
                        ..Suite::default()
                    }),
                    "testcase" => suites.last_mut().unwrap().cases.push(Case {
                        attrs: a,
                        child: None,
                    }),
                    "failure" | "error" | "skipped" => {
                        let case = suites.last_mut().unwrap().cases.last_mut().unwrap();
                        case.child = Some((name.clone(), a, String::new()));
                    }
                    "system-out" => {}
                    other => panic!("unexpected element {other}"),
                }
                if matches!(ev, Event::Start(_)) {
                    stack.push(name);
                }
            }
            Event::End(_) => {
                stack.pop();
            }
            Event::CData(t) => {
                let text = String::from_utf8(t.into_inner().to_vec()).unwrap();
                match stack.last().map(String::as_str) {
                    Some("system-out") => suites.last_mut().unwrap().system_out.push_str(&text),
                    Some("failure" | "error" | "skipped") => {
                        let case = suites.last_mut().unwrap().cases.last_mut().unwrap();
                        if let Some(c) = case.child.as_mut() {
                            c.2.push_str(&text);
                        }
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }
    assert!(saw_root, "no <testsuites> root");
    suites
}

#[test]
fn junit_has_the_elements_and_attributes_ci_tools_read() {
    let m = fixtures::synthetic();
    let suites = parse_junit(&render(&m, OutputFormat::Junit));
    let names: Vec<&str> = suites.iter().map(|s| s.attrs["name"].as_str()).collect();
    assert_eq!(
        names,
        [
            "acme/static",
            "acme/lifecycle",
            "mock (baseline)/static",
            "mock (baseline)/lifecycle"
        ]
    );
    let total: usize = suites.iter().map(|s| s.cases.len()).sum();
    assert_eq!(total, m.results.len());
    for s in &suites {
        for key in [
            "name",
            "tests",
            "failures",
            "errors",
            "timestamp",
            "hostname",
            "time",
        ] {
            assert!(
                s.attrs.contains_key(key),
                "suite lacks {key}: {:?}",
                s.attrs
            );
        }
        assert_eq!(s.attrs["timestamp"], "2026-01-02T03:04:05Z");
        assert_eq!(s.attrs["hostname"], "capi-conformance");
        assert_eq!(s.attrs["tests"], s.cases.len().to_string());
        let count = |kind: &str| {
            s.cases
                .iter()
                .filter(|c| c.child.as_ref().is_some_and(|(n, _, _)| n == kind))
                .count()
                .to_string()
        };
        assert_eq!(s.attrs["failures"], count("failure"));
        assert_eq!(s.attrs["errors"], count("error"));
        for needle in [
            "tool: capi-conformance 0.1.0",
            "command: check",
            "source: https://127.0.0.1:6443",
            "server version: v1.33.0",
            "fail-on: must",
            "contract: ",
        ] {
            assert!(
                s.system_out.contains(needle),
                "system-out lacks {needle}: {}",
                s.system_out
            );
        }
        for c in &s.cases {
            for key in ["name", "classname", "time"] {
                assert!(c.attrs.contains_key(key), "testcase lacks {key}");
            }
        }
    }
    let acme_static = &suites[0];
    let skipped: usize = suites
        .iter()
        .flat_map(|s| &s.cases)
        .filter(|c| c.child.as_ref().is_some_and(|(n, _, _)| n == "skipped"))
        .count();
    assert_eq!(skipped, 2, "one skip and one waived");
    assert!(
        acme_static
            .system_out
            .contains("contract: v1beta1, v1beta2")
    );

    let case = |name: &str, classname: &str| {
        suites
            .iter()
            .flat_map(|s| &s.cases)
            .find(|c| c.attrs["name"].starts_with(name) && c.attrs["classname"] == classname)
            .unwrap_or_else(|| panic!("no testcase {name} {classname}"))
    };
    let label = case("all/crd-contract-label ", "acme.AcmeMachine@v1beta2");
    assert_eq!(
        label.attrs["name"],
        "all/crd-contract-label CRD carries the contract label"
    );
    let (kind, a, body) = label.child.as_ref().unwrap();
    assert_eq!(kind, "failure");
    assert_eq!(a["message"], "label cluster.x-k8s.io/v1beta2 is missing");
    assert!(body.contains("at components.yaml#4"));
    assert!(body.contains("fix: Make sure that"));
    assert!(body.contains("doc: https://cluster-api.sigs.k8s.io/"));

    let pid = case("infra-machine/provider-id", "acme.AcmeMachine@v1beta2");
    assert_eq!(pid.attrs["time"], "10");
    let inc = case("all/terminal-failures", "acme.AcmeMachine@v1beta1");
    assert_eq!(inc.child.as_ref().unwrap().0, "error");
    let waived = case(
        "infra-cluster/control-plane-endpoint",
        "acme.AcmeCluster@v1beta2",
    );
    let (kind, a, _) = waived.child.as_ref().unwrap();
    assert_eq!(kind, "skipped");
    assert!(a["message"].starts_with("waived: waived by CRD annotation"));
    let skip = case("infra-machine/provider-id", "acme.AcmeMachine@v1beta1");
    assert_eq!(
        skip.child.as_ref().unwrap().1["message"],
        "needs a live provider"
    );
    case("provider/rbac-aggregation", "acme.Provider");
}

#[test]
fn junit_hostname_comes_from_the_options() {
    let opts = RenderOptions {
        hostname: "ci-runner".into(),
        ..RenderOptions::default()
    };
    let xml = report::render(&fixtures::all_pass(), OutputFormat::Junit, &opts).unwrap();
    let suites = parse_junit(&xml);
    assert!(suites.iter().all(|s| s.attrs["hostname"] == "ci-runner"));
}

// ---------- write_outputs ----------

fn args(dir: &std::path::Path) -> ReportArgs {
    ReportArgs {
        output: OutputFormat::Markdown,
        junit: Some(dir.join("nested/a/junit.xml")),
        json: Some(dir.join("report.json")),
        markdown: Some(dir.join("b/summary.md")),
        html: Some(dir.join("c/report.html")),
        contract: ContractSelection::Declared,
        fail_on: "must".into(),
        roles: Vec::new(),
        config: None,
        no_waivers: false,
        migration: None,
        color: "auto".into(),
    }
}

#[test]
fn write_outputs_writes_every_file_in_one_call() {
    let dir = tempfile::tempdir().unwrap();
    let m = fixtures::synthetic();
    let a = args(dir.path());
    let mut stdout = Vec::new();
    report::write_outputs_to(&m, &a, true, &mut stdout).unwrap();
    assert_eq!(
        String::from_utf8(stdout).unwrap(),
        render(&m, OutputFormat::Markdown)
    );
    let read =
        |p: &Option<std::path::PathBuf>| std::fs::read_to_string(p.as_ref().unwrap()).unwrap();
    assert_eq!(read(&a.junit), render(&m, OutputFormat::Junit));
    assert_eq!(read(&a.json), render(&m, OutputFormat::Json));
    assert_eq!(read(&a.markdown), render(&m, OutputFormat::Markdown));
    assert_eq!(read(&a.html), html(&m));
}

#[test]
fn write_outputs_error_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("blocker");
    std::fs::write(&blocker, "a file, not a directory").unwrap();
    let mut a = args(dir.path());
    a.json = Some(blocker.join("report.json"));
    let err =
        report::write_outputs_to(&fixtures::all_pass(), &a, false, &mut Vec::new()).unwrap_err();
    assert!(format!("{err:#}").contains("report.json"), "{err:#}");
}

#[test]
fn colour_follows_the_flag_and_the_terminal() {
    assert!(report::color_enabled("always", false));
    assert!(!report::color_enabled("never", true));
    assert!(!report::color_enabled("auto", false));
}
