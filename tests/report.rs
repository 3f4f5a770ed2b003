//! Report writers: snapshots of every format, determinism, JUnit structure, file outputs.

#[path = "report/fixtures.rs"]
mod fixtures;
#[path = "report/sarif.rs"]
mod sarif;

use capi_conformance::cli::{ContractSelection, OutputFormat, ReportArgs};
use capi_conformance::report::{self, Matrix, RenderOptions, ReportDocument};

const FORMATS: [OutputFormat; 6] = [
    OutputFormat::Table,
    OutputFormat::Json,
    OutputFormat::Yaml,
    OutputFormat::Junit,
    OutputFormat::Markdown,
    OutputFormat::Sarif,
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

/// The timeline of a small hand-built scenario: two lanes, overlapping steps (one failed),
/// tool writes, close events sharing a marker, an axis in seconds.
#[test]
fn timeline_svg_snapshot() {
    use capi_conformance::report::{Outcome, ScenarioRecord, StepRecord, TimelineEntry};
    let m = fixtures::synthetic();
    let column = |baseline: bool| {
        m.scenarios
            .iter()
            .find(|s| s.column.baseline == baseline)
            .unwrap()
            .column
            .clone()
    };
    let e = |at_ms: u64, object: &str, rv: &str, event: &str, changed: &[&str]| TimelineEntry {
        at_ms,
        object: object.into(),
        resource_version: rv.into(),
        event: event.into(),
        changed: changed.iter().map(|s| s.to_string()).collect(),
    };
    let step = |name: &str, at_ms: u64, duration_ms: u64, outcome: Outcome| StepRecord {
        name: name.into(),
        outcome,
        at_ms: Some(at_ms),
        duration_ms: Some(duration_ms),
    };
    let record = |baseline: bool, slow: u64, last: Outcome| ScenarioRecord {
        scenario: "SC-inframachine".into(),
        column: column(baseline),
        steps: vec![
            step("create", 0, 12, Outcome::Pass),
            step("provision", 12, slow, last),
            step("failure reason", 12, 300, Outcome::Pass),
            step("delete", 12 + slow, 40, Outcome::Pass),
        ],
        timeline: vec![
            e(1, "Cluster/c", "5", "tool: create", &[]),
            e(2, "M/m", "6", "tool: create", &[]),
            e(3, "M/m", "6", "ADDED", &["metadata.name", "spec"]),
            e(40, "M/m", "8", "MODIFIED", &["metadata.finalizers"]),
            e(41, "M/m", "9", "MODIFIED", &["status.conditions"]),
            e(
                slow - 5,
                "M/m",
                "12",
                "MODIFIED",
                &["spec.providerID", "status.ready"],
            ),
            e(12 + slow, "M/m", "13", "tool: delete", &[]),
            e(
                12 + slow,
                "M/m",
                "13",
                "MODIFIED",
                &["metadata.deletionTimestamp"],
            ),
            e(slow + 50, "M/m", "14", "DELETED", &[]),
        ],
    };
    let mut small = fixtures::synthetic();
    small.scenarios = vec![
        record(false, 1_900, Outcome::Fail),
        record(true, 450, Outcome::Pass),
    ];
    let out = html(&small);
    let svg = &out[out.find("<svg class=\"timeline\"").unwrap()..];
    let svg = &svg[..svg.find("</svg>").unwrap() + 6];
    assert_eq!(marked_entries(svg), 18);
    insta::assert_snapshot!(svg.replace("><", ">\n<"));
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
    // Provider lane and baseline lane, 4 entries each, every one in a marker.
    assert_eq!(out.matches("data-lane=\"provider\"").count(), 1);
    assert_eq!(out.matches("data-lane=\"baseline\"").count(), 1);
    assert_eq!(marked_entries(&out), 8);
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

/// Chromium on PATH, if any.
fn chromium() -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .flat_map(|d| ["chromium", "chromium-browser", "google-chrome"].map(|n| d.join(n)))
        .find(|p| p.is_file())
}

/// `chromium --headless --dump-dom` of `file`, killed after 90 s.
fn dump_dom(bin: &std::path::Path, file: &std::path::Path) -> String {
    dump_dom_url(
        bin,
        &format!("file://{}", file.display()),
        &file.with_extension("dom"),
    )
}

/// `chromium --headless --dump-dom` of `url` (written to `out_path`), killed after 90 s.
fn dump_dom_url(bin: &std::path::Path, url: &str, out_path: &std::path::Path) -> String {
    use std::process::{Command, Stdio};
    let out = std::fs::File::create(out_path).unwrap();
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--virtual-time-budget=2000",
            "--dump-dom",
        ])
        .arg(url)
        .stdout(out)
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if std::time::Instant::now() > deadline {
            child.kill().unwrap();
            panic!("chromium did not finish in 90 s");
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    std::fs::read_to_string(out_path).unwrap()
}

/// Renders the HTML report in headless Chromium (when installed; set
/// `CAPI_CONFORMANCE_REQUIRE_BROWSER=1` to make its absence a failure), drives the filters and a
/// failure link from a script, and checks the resulting DOM.
#[test]
fn html_filters_and_failure_links_work_in_a_real_browser() {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("CAPI_CONFORMANCE_REQUIRE_BROWSER").is_none(),
            "chromium is not on PATH"
        );
        eprintln!("skipped: chromium is not on PATH");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let driver = r#"<script>
      var s = document.getElementById('filter-outcome'); s.value = 'fail'; s.dispatchEvent(new Event('change'));
      var r = document.getElementById('filter-role'); r.value = 'provider'; r.dispatchEvent(new Event('change'));
      location.hash = '#failure-2';
    </script></body>"#;
    let page = html(&fixtures::synthetic()).replace("</body>", driver);
    let file = dir.path().join("report.html");
    std::fs::write(&file, page).unwrap();
    let dom = dump_dom(&bin, &file);
    assert!(
        dom.contains("id=\"matrix\""),
        "no matrix in the DOM:\n{dom}"
    );
    let rows: Vec<(&str, bool)> = dom
        .split("<tr class=\"rule-row\" data-rule=\"")
        .skip(1)
        .map(|rest| {
            let id = &rest[..rest.find('"').unwrap()];
            let tag = &rest[..rest.find('>').unwrap()];
            (id, tag.contains("hidden"))
        })
        .collect();
    let visible: Vec<&str> = rows.iter().filter(|(_, h)| !h).map(|(id, _)| *id).collect();
    assert_eq!(rows.len(), 6);
    assert_eq!(visible, ["provider/clusterctl-metadata"]);
    assert!(dom.contains("<details class=\"failure\" id=\"failure-2\""));
    let f2 = &dom[dom.find("id=\"failure-2\"").unwrap()..];
    let f2_tag = &f2[..f2.find('>').unwrap()];
    assert!(f2_tag.contains("open"), "failure-2 not expanded: {f2_tag}");
    assert!(dom.contains("id=\"timeline-SC-inframachine\""));
    assert_eq!(marked_entries(&dom), 8);
}

/// How many timeline entries the markers of an HTML report (or its DOM) stand for.
fn marked_entries(html: &str) -> usize {
    html.split("<g class=\"event ")
        .skip(1)
        .map(|g| {
            let count = &g[g.find("data-count=\"").unwrap() + 12..];
            count[..count.find('"').unwrap()].parse::<usize>().unwrap()
        })
        .sum()
}

/// The opening tag of the element whose opening tag starts with `start`.
fn opening_tag<'a>(dom: &'a str, start: &str) -> &'a str {
    let at = dom
        .find(start)
        .unwrap_or_else(|| panic!("{start} not in the DOM"));
    let rest = &dom[at..];
    &rest[..rest.find('>').unwrap()]
}

/// Per provider table of the matrix: (its wrapper is hidden, it has a visible rule row).
fn matrix_tables(dom: &str) -> Vec<(bool, bool)> {
    dom.split("<div class=\"table-wrap\"")
        .skip(1)
        .filter(|chunk| chunk.contains("matrix-table"))
        .map(|chunk| {
            let wrap_hidden = chunk[..chunk.find('>').unwrap()].contains("hidden");
            let table = &chunk[..chunk.find("</table>").unwrap()];
            let row_visible = table
                .split("<tr class=\"rule-row\"")
                .skip(1)
                .any(|row| !row[..row.find('>').unwrap()].contains("hidden"));
            (wrap_hidden, row_visible)
        })
        .collect()
}

/// The report's URL query presets a view (what `scripts/screenshot.sh` photographs): filters,
/// expanded failures, only the named sections; provider tables left without rows are hidden.
#[test]
fn html_view_from_the_url_query_works_in_a_real_browser() {
    let Some(bin) = chromium() else {
        assert!(
            std::env::var_os("CAPI_CONFORMANCE_REQUIRE_BROWSER").is_none(),
            "chromium is not on PATH"
        );
        eprintln!("skipped: chromium is not on PATH");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.html");
    std::fs::write(&file, html(&fixtures::synthetic())).unwrap();
    let url = format!(
        "file://{}?outcome=fail&role=provider&open=failure-2&only=matrix,timeline-SC-inframachine",
        file.display()
    );
    let dom = dump_dom_url(&bin, &url, &dir.path().join("view.dom"));
    let visible: Vec<&str> = dom
        .split("<tr class=\"rule-row\" data-rule=\"")
        .skip(1)
        .filter(|rest| !rest[..rest.find('>').unwrap()].contains("hidden"))
        .map(|rest| &rest[..rest.find('"').unwrap()])
        .collect();
    assert_eq!(visible, ["provider/clusterctl-metadata"]);
    assert!(opening_tag(&dom, "<details class=\"failure\" id=\"failure-2\"").contains("open"));
    assert!(!opening_tag(&dom, "<details class=\"failure\" id=\"failure-1\"").contains("open"));
    for (id, hidden) in [
        ("matrix", false),
        ("failures", true),
        ("reasons", true),
        ("scenarios", false),
        ("timeline-SC-inframachine", false),
    ] {
        let tag = opening_tag(&dom, &format!("id=\"{id}\""));
        assert_eq!(tag.contains("hidden"), hidden, "section {id}: {tag}");
    }

    // Without rows left, a provider's table goes; with rows, it stays.
    let mut tables = matrix_tables(&dom);
    let url = format!("file://{}?outcome=waived&role=provider", file.display());
    let dom = dump_dom_url(&bin, &url, &dir.path().join("empty.dom"));
    tables.extend(matrix_tables(&dom));
    assert!(
        tables.iter().all(|(hidden, rows)| hidden != rows),
        "{tables:?}"
    );
    assert!(tables.iter().any(|(hidden, _)| *hidden), "{tables:?}");
    assert!(tables.iter().any(|(hidden, _)| !hidden), "{tables:?}");
}

// ---------- odd matrices ----------

fn every_output(m: &Matrix) -> Vec<String> {
    let mut outs: Vec<String> = FORMATS.iter().map(|f| render(m, *f)).collect();
    outs.push(html(m));
    outs
}

#[test]
fn empty_matrix_renders_in_every_format() {
    let mut m = fixtures::all_pass();
    m.rules.clear();
    m.columns.clear();
    m.results.clear();
    let outs = every_output(&m);
    assert!(outs[0].contains("Summary: 0 pass, 0 fail"));
    let doc: ReportDocument = serde_json::from_str(&outs[1]).unwrap();
    assert!(doc.results.is_empty());
    assert!(outs[3].contains("<testsuites"));
}

#[test]
fn baseline_only_matrix_shows_the_baseline_as_its_own_provider() {
    let mut m = fixtures::synthetic();
    m.results.retain(|r| r.column.baseline);
    m.columns.retain(|c| c.baseline);
    m.scenarios.retain(|s| s.column.baseline);
    let table = render(&m, OutputFormat::Table);
    assert!(table.contains("Provider mock (baseline)"), "{table}");
    assert!(table.contains("SC-inframachine"));
    let page = html(&m);
    assert!(page.contains("id=\"timeline-SC-inframachine\""));
}

#[test]
fn results_of_rules_missing_from_the_catalog_still_render() {
    let mut m = fixtures::synthetic();
    m.rules.retain(|r| r.id != "all/crd-contract-label");
    for out in every_output(&m) {
        assert!(out.contains("all/crd-contract-label"));
    }
    // Columns only named by results are added.
    let mut m = fixtures::synthetic();
    m.columns.clear();
    assert_eq!(
        render(&m, OutputFormat::Table),
        render(&fixtures::synthetic(), OutputFormat::Table)
    );
}

mod random {
    use super::*;
    use capi_conformance::contract::Level;
    use capi_conformance::report::{Outcome, Phase};
    use proptest::prelude::*;

    fn outcome() -> impl Strategy<Value = Outcome> {
        prop_oneof![
            Just(Outcome::Pass),
            Just(Outcome::Fail),
            Just(Outcome::Skip),
            Just(Outcome::Inconclusive),
            Just(Outcome::Waived),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(48))]

        /// Any subset of the synthetic cells, with any outcomes, phases and reasons: every
        /// writer succeeds, output is independent of input order, and JSON counts match.
        #[test]
        fn any_matrix_renders_deterministically(
            cells in proptest::collection::vec(
                (0usize..6, 0usize..6, any::<bool>(), outcome(), proptest::option::of("[a-z <>&|*`:=]{0,20}")),
                0..30,
            )
        ) {
            let base = fixtures::synthetic();
            let mut m = base.clone();
            m.results = cells
                .iter()
                .map(|(r, c, lifecycle, o, reason)| {
                    let mut res = fixtures::result(
                        &base.rules[*r].id,
                        &base.columns[*c],
                        Level::Must,
                        if *lifecycle { Phase::Lifecycle } else { Phase::Static },
                        *o,
                    );
                    res.reason = reason.clone();
                    res
                })
                .collect();
            let outs = every_output(&m);
            prop_assert_eq!(&outs, &every_output(&shuffled(&m)));
            let doc: ReportDocument = serde_json::from_str(&outs[1]).unwrap();
            prop_assert_eq!(doc.summary, m.summary());
            prop_assert_eq!(doc.exit_code, m.verdict().exit_code());
            let table_summary = format!("verdict {}", match m.verdict() {
                capi_conformance::report::Verdict::Pass => "PASS",
                capi_conformance::report::Verdict::Fail => "FAIL",
                capi_conformance::report::Verdict::InputError => "INPUT ERROR",
                capi_conformance::report::Verdict::Inconclusive => "INCONCLUSIVE",
            });
            prop_assert!(outs[0].contains(&table_summary));
        }
    }
}

// ---------- migration ----------

fn with_migration() -> RenderOptions {
    RenderOptions {
        migration: Some(capi_conformance::contract::Contract::V1Beta2),
        ..RenderOptions::default()
    }
}

#[test]
fn migration_lists_what_older_contract_kinds_must_change() {
    use capi_conformance::contract::{Contract, Role};
    use capi_conformance::report::Outcome;
    let mut m = fixtures::synthetic();
    // A kind checked only under v1beta1 cannot be assessed for v1beta2.
    let legacy = fixtures::col("acme", "AcmeLegacy", Role::Other, fixtures::B1, false);
    m.results.push(fixtures::result(
        "all/crd-contract-label",
        &legacy,
        capi_conformance::contract::Level::Must,
        capi_conformance::report::Phase::Static,
        Outcome::Pass,
    ));
    let mig = report::migration::migration(&m, Contract::V1Beta2);
    assert_eq!(mig.to, Contract::V1Beta2);
    let kinds: Vec<(&str, bool, usize)> = mig
        .kinds
        .iter()
        .map(|k| (k.kind.as_str(), k.checked, k.items.len()))
        .collect();
    // AcmeCluster is only on v1beta2 (nothing to migrate); the baseline never appears.
    assert_eq!(kinds, [("AcmeMachine", true, 2), ("AcmeLegacy", false, 0)]);
    let items: Vec<(&str, Option<Outcome>, Outcome)> = mig.kinds[0]
        .items
        .iter()
        .map(|i| (i.rule_id.as_str(), i.from_outcome, i.to_outcome))
        .collect();
    assert_eq!(
        items,
        [
            ("all/crd-contract-label", Some(Outcome::Pass), Outcome::Fail),
            (
                "infra-machine/provider-id",
                Some(Outcome::Skip),
                Outcome::Fail
            ),
        ]
    );
    assert_eq!(mig.changes(), 2);
    assert_eq!(mig.unchecked(), 1);
    // Nothing is older than v1beta1.
    assert!(
        report::migration::migration(&m, Contract::V1Beta1)
            .kinds
            .is_empty()
    );
}

#[test]
fn table_with_migration() {
    insta::assert_snapshot!(
        report::render(
            &fixtures::synthetic(),
            OutputFormat::Table,
            &with_migration()
        )
        .unwrap()
    );
}

#[test]
fn markdown_with_migration() {
    insta::assert_snapshot!(
        report::render(
            &fixtures::synthetic(),
            OutputFormat::Markdown,
            &with_migration()
        )
        .unwrap()
    );
}

#[test]
fn migration_is_a_section_of_every_format() {
    let m = fixtures::synthetic();
    let opts = with_migration();
    let doc: ReportDocument =
        serde_json::from_str(&report::render(&m, OutputFormat::Json, &opts).unwrap()).unwrap();
    assert_eq!(doc.migration.as_ref().unwrap().changes(), 2);
    let plain: ReportDocument = serde_json::from_str(&render(&m, OutputFormat::Json)).unwrap();
    assert!(plain.migration.is_none());
    let yaml = report::render(&m, OutputFormat::Yaml, &opts).unwrap();
    assert!(yaml.contains("migration:"));
    let suites = parse_junit(&report::render(&m, OutputFormat::Junit, &opts).unwrap());
    let mig = suites
        .iter()
        .find(|s| s.attrs["name"] == "acme/migration to v1beta2")
        .expect("migration suite");
    assert_eq!(mig.cases.len(), 1);
    assert_eq!(mig.cases[0].attrs["classname"], "acme.AcmeMachine@v1beta2");
    let (kind, a, body) = mig.cases[0].child.as_ref().unwrap();
    assert_eq!(kind, "failure");
    assert_eq!(a["message"], "2 change(s) needed for v1beta2");
    assert!(body.contains("infra-machine/provider-id [MUST]"));
    let page = report::render_html(&m, &opts);
    assert!(page.contains("<section id=\"migration\" data-to=\"v1beta2\">"));
    assert!(!html(&m).contains("id=\"migration\""));
}

#[test]
fn write_outputs_takes_the_migration_flag() {
    let dir = tempfile::tempdir().unwrap();
    let mut a = args(dir.path());
    a.migration = Some("v1beta2".into());
    let mut stdout = Vec::new();
    report::write_outputs_to(&fixtures::synthetic(), &a.outputs(), false, &mut stdout).unwrap();
    assert!(
        String::from_utf8(stdout)
            .unwrap()
            .contains("#### Migration to `v1beta2`")
    );
    let json = std::fs::read_to_string(a.json.as_ref().unwrap()).unwrap();
    assert!(json.contains("\"migration\""));
    a.migration = Some("v2".into());
    let err =
        report::write_outputs_to(&fixtures::synthetic(), &a.outputs(), false, &mut Vec::new())
            .unwrap_err();
    assert!(format!("{err:#}").contains("--migration: unknown contract `v2`"));
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
    let mut m = fixtures::all_pass();
    m.context.started_at = "2026-01-02T03:04:05.123456789Z".parse().unwrap();
    let xml = report::render(&m, OutputFormat::Junit, &opts).unwrap();
    let suites = parse_junit(&xml);
    assert!(suites.iter().all(|s| s.attrs["hostname"] == "ci-runner"));
    // Whole seconds only: strict readers reject fractions.
    assert!(
        suites
            .iter()
            .all(|s| s.attrs["timestamp"] == "2026-01-02T03:04:05Z")
    );
}

// ---------- write_outputs ----------

fn args(dir: &std::path::Path) -> ReportArgs {
    ReportArgs {
        output: OutputFormat::Markdown,
        junit: Some(dir.join("nested/a/junit.xml")),
        json: Some(dir.join("report.json")),
        markdown: Some(dir.join("b/summary.md")),
        html: Some(dir.join("c/report.html")),
        sarif: Some(dir.join("d/report.sarif")),
        contract: ContractSelection::Declared,
        fail_on: "must".into(),
        roles: Vec::new(),
        config: None,
        no_waivers: false,
        manager_help: None,
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
    report::write_outputs_to(&m, &a.outputs(), true, &mut stdout).unwrap();
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
    // SARIF files are relative to the git work tree of the current directory.
    let opts = RenderOptions {
        sarif: report::SarifBase::discover(&m),
        ..RenderOptions::default()
    };
    assert!(opts.sarif.root.is_some());
    assert_eq!(
        read(&a.sarif),
        report::render(&m, OutputFormat::Sarif, &opts).unwrap()
    );
}

#[test]
fn write_outputs_error_names_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let blocker = dir.path().join("blocker");
    std::fs::write(&blocker, "a file, not a directory").unwrap();
    let mut a = args(dir.path());
    a.json = Some(blocker.join("report.json"));
    let err = report::write_outputs_to(&fixtures::all_pass(), &a.outputs(), false, &mut Vec::new())
        .unwrap_err();
    assert!(format!("{err:#}").contains("report.json"), "{err:#}");
}

#[test]
fn colour_follows_the_flag_and_the_terminal() {
    assert!(report::color_enabled("always", false));
    assert!(!report::color_enabled("never", true));
    assert!(!report::color_enabled("auto", false));
}
