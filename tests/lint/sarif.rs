//! `lint --sarif` end to end, read by SARIF consumers no one here wrote:
//! - Microsoft's SARIF Multitool (`validate`, npm `@microsoft/sarif-multitool`): the OASIS
//!   2.1.0 schema it ships plus its SARIF and GitHub-ingestion rule sets (GH1001 "every result
//!   has a physical location", GH1003 "region.startLine", …);
//! - `check-jsonschema` (PyPI) against the same official schema (the Multitool does not report
//!   values its deserializer rejects, such as an unknown `level`);
//! - Microsoft's `sarif-tools` (PyPI, the `sarif` CLI): reads the results back as
//!   (rule, severity, file, line) rows.
//!
//! `.ci/run` installs them (`target/ci-venv`, `target/ci-node`) and sets
//! `CAPI_CONFORMANCE_REQUIRE_SARIF_CONSUMER=1`; without them these tests print one skip line
//! (and fail under that variable). `CAPI_CONFORMANCE_PYTHON` and
//! `CAPI_CONFORMANCE_SARIF_MULTITOOL` point elsewhere.

#[path = "sarif/consumers.rs"]
mod consumers;
#[path = "sarif/logs.rs"]
mod logs;

use crate::shared_data::shared_or_skip;
use consumers::Consumers;
use logs::*;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

#[test]
fn lint_sarif_places_each_finding_at_its_file_and_line() {
    let repo = Repo::new();
    let text = repo.components();
    // From the repository root and from a subdirectory: URIs are relative to the work tree.
    for cwd in ["", "config"] {
        let (_, log, report) = repo.lint(cwd);
        let rows = our_rows(&log);
        assert_eq!(rows, expected_rows(&report, &text), "lint from `{cwd}`");
        let machine = repo.doc_index("foomachines.infrastructure.foo.example.io");
        let cluster = repo.doc_index("fooclusters.infrastructure.foo.example.io");
        let starts = document_starts(&text);
        // At the document start, or at the field's line once source lines are filled.
        let at_field_or_doc = |line: u32, doc: usize, field: &str| {
            line == starts[doc] || line == line_of(&text, field, starts[doc])
        };
        // The MUST failure at FooMachine, the MAY failure at FooCluster, the waived one
        // suppressed.
        let namespaced: Vec<&Row> = rows.iter().filter(|r| r.rule == "all/namespaced").collect();
        assert_eq!(namespaced.len(), 2, "{rows:#?}");
        assert!(
            namespaced.iter().any(
                |r| r.severity == "error" && at_field_or_doc(r.line, machine, "scope: Cluster")
            ),
            "{rows:#?}"
        );
        let category = rows.iter().find(|r| r.rule == "all/category").unwrap();
        assert_eq!(category.severity, "note");
        assert!(
            at_field_or_doc(category.line, cluster, "categories:"),
            "{category:?}"
        );
        let results = log["runs"][0]["results"].as_array().unwrap();
        let suppressed: Vec<&Value> = results
            .iter()
            .filter(|r| r["suppressions"].is_array())
            .collect();
        assert_eq!(suppressed.len(), 1);
        assert_eq!(suppressed[0]["ruleId"], "all/namespaced");
        assert_eq!(suppressed[0]["suppressions"][0]["kind"], "inSource");
        assert!(
            suppressed[0]["properties"]["column"]
                .as_str()
                .unwrap()
                .contains("FooMachineTemplate")
        );
        // The root is the work tree; the artifact resolves to the file that was linted.
        let root = log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
            .as_str()
            .unwrap();
        let root_path = std::fs::canonicalize(repo.path()).unwrap();
        assert_eq!(root, format!("file://{}/", root_path.display()));
        for r in results {
            let loc = &r["locations"][0]["physicalLocation"]["artifactLocation"];
            assert_eq!(loc["uriBaseId"], "%SRCROOT%");
        }
    }
}

#[test]
fn lint_sarif_is_the_same_bytes_run_after_run() {
    let repo = Repo::new();
    let (sarif, mut first, _) = repo.lint("");
    let first_bytes = std::fs::read(&sarif).unwrap();
    let (_, mut second, _) = repo.lint("");
    let second_bytes = std::fs::read(&sarif).unwrap();
    // Only the run's start time differs (tests of the writer inject the clock).
    for log in [&mut first, &mut second] {
        log["runs"][0]["invocations"][0]
            .as_object_mut()
            .unwrap()
            .remove("startTimeUtc");
    }
    assert_eq!(first, second);
    let strip = |bytes: &[u8]| -> String {
        String::from_utf8_lossy(bytes)
            .lines()
            .filter(|l| !l.contains("\"startTimeUtc\""))
            .collect::<Vec<_>>()
            .join("\n")
    };
    assert_eq!(strip(&first_bytes), strip(&second_bytes));
}

#[test]
fn lint_sarif_result_is_at_the_line_of_the_failing_field() {
    let repo = Repo::new();
    let text = repo.components();
    let (_, log, _) = repo.lint("");
    let machine = repo.doc_index("foomachines.infrastructure.foo.example.io");
    let scope = line_of(&text, "scope: Cluster", document_starts(&text)[machine]);
    let rows = our_rows(&log);
    assert!(
        rows.contains(&Row {
            rule: "all/namespaced".into(),
            severity: "error".into(),
            uri: COMPONENTS.into(),
            line: scope,
        }),
        "the MUST failure sits at `scope: Cluster` (line {scope}): {rows:#?}"
    );
    let cluster = repo.doc_index("fooclusters.infrastructure.foo.example.io");
    let category = line_of(&text, "categories:", document_starts(&text)[cluster]);
    assert!(
        rows.iter()
            .any(|r| r.rule == "all/category" && r.line == category),
        "the MAY failure sits at the `categories:` field (line {category}): {rows:#?}"
    );
}

#[test]
fn outside_consumers_validate_and_read_back_lint_sarif() {
    let test = "outside_consumers_validate_and_read_back_lint_sarif";
    let Some(consumers) = Consumers::find(test) else {
        return;
    };
    let repo = Repo::new();
    let (sarif, log, report) = repo.lint("");
    let work = tempfile::tempdir().unwrap();
    consumers.assert_valid(&[&sarif], work.path());
    let mut rows = consumers.rows(&sarif, work.path());
    rows.sort();
    assert_eq!(rows, our_rows(&log), "sarif-tools reads what we wrote");
    assert_eq!(rows, expected_rows(&report, &repo.components()));
    assert!(
        rows.iter()
            .any(|r| r.rule == "all/namespaced" && r.severity == "error")
    );

    // The consumers are live: a log GitHub would reject (a result without locations) and one
    // outside the schema (an unknown level) are caught.
    let mut broken = log.clone();
    broken["runs"][0]["results"][0]
        .as_object_mut()
        .unwrap()
        .remove("locations");
    let broken_path = work.path().join("broken.sarif");
    std::fs::write(&broken_path, serde_json::to_string(&broken).unwrap()).unwrap();
    let findings = consumers.multitool_findings(&[&broken_path], work.path());
    assert!(
        findings
            .iter()
            .any(|(id, level, _)| id.starts_with("GH") && level == "error"),
        "the Multitool must flag a result without locations: {findings:#?}"
    );
    let mut bad_level = log.clone();
    bad_level["runs"][0]["results"][0]["level"] = Value::from("fatal");
    std::fs::write(&broken_path, serde_json::to_string(&bad_level).unwrap()).unwrap();
    let output = Command::new(&consumers.python)
        .args(["-m", "check_jsonschema", "--schemafile"])
        .arg(consumers.schema())
        .arg(&broken_path)
        .output()
        .unwrap();
    assert!(
        !output.status.success(),
        "check-jsonschema must reject level `fatal`"
    );
}

#[test]
fn outside_consumers_validate_lint_sarif_of_real_providers() {
    let test = "outside_consumers_validate_lint_sarif_of_real_providers";
    let Some(consumers) = Consumers::find(test) else {
        return;
    };
    let Some(corpus) = shared_or_skip("corpus", test) else {
        return;
    };
    let work = tempfile::tempdir().unwrap();
    let mut checked = 0;
    let mut providers: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.join("components.yaml").is_file())
        .collect();
    providers.sort();
    let mut runs = Vec::new();
    for dir in providers {
        let name = dir.file_name().unwrap().to_string_lossy().into_owned();
        let sarif = work.path().join(format!("{name}.sarif"));
        let json = work.path().join(format!("{name}.json"));
        let mut args = vec!["lint", "components.yaml"];
        if dir.join("metadata.yaml").is_file() {
            args.push("metadata.yaml");
        }
        let (sarif_s, json_s) = (sarif.display().to_string(), json.display().to_string());
        args.extend(["--sarif", &sarif_s, "--json", &json_s]);
        let (code, stderr) = tool(&args, &dir);
        assert!(code == 0 || code == 1, "{name}: exit {code}: {stderr}");
        runs.push((name, dir, sarif, json));
    }
    // One Multitool run and one sarif-tools run over every log.
    let logs: Vec<&Path> = runs.iter().map(|(_, _, s, _)| s.as_path()).collect();
    consumers.assert_valid(&logs, work.path());
    let records = consumers.records(&logs);
    for ((name, dir, sarif, json), rows) in runs.iter().zip(records) {
        let log = read_json(sarif);
        let report = read_json(json);
        let fails = report["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["outcome"] == "fail" && r["column"]["baseline"] != true)
            .count();
        assert!(
            rows.len() >= fails,
            "{name}: every failing cell is a result"
        );
        // Every row names a file of the provider and a line inside it; rows with their own
        // evidence location sit at that document's start (or its source line).
        let root = log["runs"][0]["originalUriBaseIds"]["%SRCROOT%"]["uri"]
            .as_str()
            .unwrap()
            .strip_prefix("file://")
            .unwrap()
            .to_string();
        let mut starts_by_file = std::collections::BTreeMap::new();
        for row in &rows {
            let file = PathBuf::from(format!("{root}{}", row.uri));
            assert!(file.is_file(), "{name}: {} is not a file", file.display());
            let text = std::fs::read_to_string(&file).unwrap();
            assert!(
                row.line >= 1 && row.line as usize <= text.lines().count(),
                "{name}: line {} outside {}",
                row.line,
                file.display()
            );
            starts_by_file.entry(row.uri.clone()).or_insert_with(|| {
                document_starts(&text)
                    .into_iter()
                    .collect::<BTreeSet<u32>>()
            });
        }
        let expected: Vec<Row> = {
            let text = std::fs::read_to_string(dir.join("components.yaml")).unwrap();
            report["results"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["outcome"] == "fail" && r["column"]["baseline"] != true)
                .filter_map(|r| {
                    let e = r["evidence"].as_array()?.iter().find(|e| {
                        e["source"].is_object()
                            || e["location"]
                                .as_str()
                                .is_some_and(|l| l.starts_with("components.yaml#"))
                    })?;
                    Some(Row {
                        rule: r["rule_id"].as_str()?.to_string(),
                        severity: String::new(),
                        uri: String::new(),
                        line: expected_line(e, &text),
                    })
                })
                .collect()
        };
        for want in &expected {
            assert!(
                rows.iter()
                    .any(|r| r.rule == want.rule && r.line == want.line),
                "{name}: {} not read back at line {}: {rows:#?}",
                want.rule,
                want.line
            );
        }
        // The rest (anchored findings with no place of their own) sit at a document start
        // (their kind's CRD) or at line 1 (the provider's file).
        for row in &rows {
            assert!(
                starts_by_file[&row.uri].contains(&row.line)
                    || row.line == 1
                    || expected
                        .iter()
                        .any(|e| e.rule == row.rule && e.line == row.line),
                "{name}: {row:?} is neither a document start, line 1, nor an evidence line"
            );
        }
        checked += 1;
    }
    assert!(checked >= 10, "only {checked} providers checked");
}
