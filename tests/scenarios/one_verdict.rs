//! One verdict per rule × column. A rule with a static and a scenario part is
//! one cell; the JSON `results` hold one entry per (rule_id, column) and the JUnit report one
//! testcase per cell, for `lint`, `check --static-only`, `check --embedded` and a
//! `--provider-cmd` run; in `check` no cell says "needs a live provider (run `check`)".

use capi_conformance::checks::NEEDS_LIVE_PROVIDER;
use quick_xml::events::Event;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;

fn bin() -> &'static str {
    env!("CARGO_BIN_EXE_capi-conformance")
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name)
}

/// Runs the tool with `-o json --junit FILE`; returns the JSON report and the JUnit text.
fn run(what: &str, args: &[&str]) -> (Value, String) {
    let dir = tempfile::tempdir().unwrap();
    let junit = dir.path().join("junit.xml");
    let out = Command::new(bin())
        .args(args)
        .args(["-o", "json", "--junit"])
        .arg(&junit)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{what}: exit {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{what}: {e}: {}", String::from_utf8_lossy(&out.stderr)));
    (report, std::fs::read_to_string(&junit).unwrap())
}

/// (suite, classname, name) of every `<testcase>`.
fn testcases(xml: &str) -> Vec<(String, String, String)> {
    let mut reader = quick_xml::Reader::from_str(xml);
    let mut suite = String::new();
    let mut out = Vec::new();
    loop {
        match reader.read_event().unwrap() {
            Event::Eof => break,
            Event::Start(e) | Event::Empty(e) => {
                let attr = |key: &[u8]| {
                    e.attributes()
                        .filter_map(Result::ok)
                        .find(|a| a.key.as_ref() == key)
                        .map(|a| a.unescape_value().unwrap().into_owned())
                        .unwrap_or_default()
                };
                match e.name().as_ref() {
                    b"testsuite" => suite = attr(b"name"),
                    b"testcase" => out.push((suite.clone(), attr(b"classname"), attr(b"name"))),
                    _ => {}
                }
            }
            _ => {}
        }
    }
    out
}

/// One JSON result per (rule_id, column) and one JUnit testcase per result; in `check` no cell
/// is the static engine's "needs a live provider". Returns the results by (rule_id, column).
fn assert_one_verdict(
    what: &str,
    report: &Value,
    junit: &str,
) -> BTreeMap<(String, String), Value> {
    let results = report["results"].as_array().unwrap();
    assert!(results.len() > 20, "{what}: only {} results", results.len());
    let mut cells = BTreeMap::new();
    for r in results {
        let key = (
            r["rule_id"].as_str().unwrap().to_string(),
            r["column"].as_str().unwrap().to_string(),
        );
        if let Some(prev) = cells.insert(key.clone(), r.clone()) {
            panic!("{what}: two results for {key:?}:\n{prev:#}\n{r:#}");
        }
    }
    let cases = testcases(junit);
    let unique: BTreeSet<&(String, String, String)> = cases.iter().collect();
    assert_eq!(unique.len(), cases.len(), "{what}: a JUnit testcase twice");
    assert_eq!(
        cases.len(),
        results.len(),
        "{what}: one JUnit testcase per cell"
    );
    if report["context"]["command"] == "check" {
        let live: Vec<&(String, String)> = cells
            .iter()
            .filter(|(_, r)| r["reason"].as_str() == Some(NEEDS_LIVE_PROVIDER))
            .map(|(k, _)| k)
            .collect();
        assert!(live.is_empty(), "{what}: {live:?}");
    }
    cells
}

#[test]
fn lint_has_one_verdict_per_rule_and_column() {
    let path = fixture("conformant-v1beta2");
    let (report, junit) = run("lint", &["lint", path.to_str().unwrap()]);
    let cells = assert_one_verdict("lint", &report, &junit);
    // lint cannot judge scenario rules and says so.
    assert!(
        cells
            .values()
            .any(|r| r["reason"].as_str() == Some(NEEDS_LIVE_PROVIDER))
    );
}

#[test]
fn check_static_only_has_one_verdict_per_rule_and_column() {
    let (report, junit) = run(
        "check --static-only",
        &[
            "check",
            "--embedded",
            "--static-only",
            "--progress",
            "never",
        ],
    );
    let cells = assert_one_verdict("check --static-only", &report, &junit);
    assert!(
        cells.values().all(|r| r["phase"] == "static"),
        "a static-only run has only static cells"
    );
    assert!(
        cells
            .values()
            .any(|r| r["reason"].as_str() == Some(capi_conformance::plan::STATIC_ONLY)),
        "scenario rules say the scenarios did not run"
    );
}

/// `check --embedded`: a static rule with a scenario part (`all/conditions`) is one cell per
/// column, holding both parts' evidence.
#[test]
fn check_embedded_has_one_verdict_per_rule_and_column() {
    let (report, junit) = run(
        "check --embedded",
        &["check", "--embedded", "--progress", "never"],
    );
    let cells = assert_one_verdict("check --embedded", &report, &junit);
    let merged: Vec<&Value> = cells
        .iter()
        .filter(|((rule, column), _)| rule == "all/conditions" && !column.contains("(baseline)"))
        .map(|(_, r)| r)
        .filter(|r| {
            r["evidence"].as_array().is_some_and(|ev| {
                ev.iter().any(|e| {
                    e["message"]
                        .as_str()
                        .is_some_and(|m| m.starts_with("lifecycle: "))
                })
            })
        })
        .collect();
    assert!(
        !merged.is_empty(),
        "all/conditions: no cell folding its static and lifecycle parts"
    );
    assert!(merged.iter().all(|r| r["outcome"] == "pass"), "{merged:#?}");
}

/// A `--provider-cmd` run (the mock as its own process).
#[test]
fn provider_cmd_run_has_one_verdict_per_rule_and_column() {
    let cmd = format!(
        "{} mock-provider run --kubeconfig {{kubeconfig}} --watch-namespace {{namespace}}",
        bin()
    );
    let dir = tempfile::tempdir().unwrap();
    let (report, junit) = run(
        "--provider-cmd",
        &[
            "check",
            "--embedded",
            "--progress",
            "never",
            "--scenarios",
            "SC-inframachine",
            "--provider-cmd",
            &cmd,
            "--report-dir",
            dir.path().to_str().unwrap(),
        ],
    );
    let cells = assert_one_verdict("--provider-cmd", &report, &junit);
    assert!(
        cells
            .iter()
            .any(|((rule, _), r)| rule.starts_with("infra-machine/") && r["phase"] == "lifecycle"),
        "the scenario judged the provider"
    );
}
