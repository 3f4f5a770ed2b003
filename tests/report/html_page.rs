//! The HTML page and its timeline: the SVG snapshot, self-containment, well-formedness, and
//! filters, links and URL views in a real (headless) browser.

use crate::fixtures;
use crate::support::{attrs, html};

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
