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

use crate::shared_data::shared_or_skip;
use crate::support::root;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const REQUIRE: &str = "CAPI_CONFORMANCE_REQUIRE_SARIF_CONSUMER";

/// The installed consumers.
struct Consumers {
    /// A Python with `sarif-tools` and `check-jsonschema`.
    python: PathBuf,
    /// The Multitool executable (`sarif-2.1.0.json` beside it).
    multitool: PathBuf,
}

fn from_env_or(var: &str, default: PathBuf) -> PathBuf {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or(default)
}

impl Consumers {
    fn find(test: &str) -> Option<Consumers> {
        let python = from_env_or(
            "CAPI_CONFORMANCE_PYTHON",
            root().join("target/ci-venv/bin/python"),
        );
        let multitool = from_env_or(
            "CAPI_CONFORMANCE_SARIF_MULTITOOL",
            root().join(
                "target/ci-node/node_modules/@microsoft/sarif-multitool-linux/Sarif.Multitool",
            ),
        );
        let mut missing = Vec::new();
        let has_modules = python.is_file()
            && Command::new(&python)
                .args(["-c", "import sarif, check_jsonschema"])
                .output()
                .is_ok_and(|o| o.status.success());
        if !has_modules {
            missing.push(format!(
                "{} with sarif-tools and check-jsonschema",
                python.display()
            ));
        }
        if !multitool.is_file() || !multitool.with_file_name("sarif-2.1.0.json").is_file() {
            missing.push(format!(
                "{} (npm @microsoft/sarif-multitool)",
                multitool.display()
            ));
        }
        if missing.is_empty() {
            return Some(Consumers { python, multitool });
        }
        let what = missing.join("; ");
        if std::env::var(REQUIRE).as_deref() == Ok("1") {
            panic!(
                "{test}: SARIF consumers missing: {what} ({REQUIRE}=1 requires them; .ci/run installs them)"
            );
        }
        eprintln!(
            "skipped: {test}: SARIF consumers not installed: {what} (.ci/run installs them; set {REQUIRE}=1 to fail instead)"
        );
        None
    }

    fn schema(&self) -> PathBuf {
        self.multitool.with_file_name("sarif-2.1.0.json")
    }

    /// The Multitool's findings on `sarif` as (rule id, level): its GitHub and SARIF rule sets,
    /// every level, the schema it ships; the rule that fetches every URI over HTTP is off (no
    /// network here).
    fn multitool_findings(&self, sarifs: &[&Path], work: &Path) -> Vec<(String, String, String)> {
        let config = work.join("multitool-config.xml");
        std::fs::write(
            &config,
            "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Properties>\n  \
             <Properties Key=\"SARIF2006.UrisShouldBeReachable.Options\">\n    \
             <Property Key=\"RuleEnabled\" Value=\"Disabled\" Type=\"Driver.RuleEnabledState\" />\n  \
             </Properties>\n</Properties>\n",
        )
        .unwrap();
        let out = work.join("multitool-findings.sarif");
        let output = Command::new(&self.multitool)
            .arg("validate")
            .args(sarifs)
            .arg("--config")
            .arg(&config)
            .arg("--json-schema")
            .arg(self.schema())
            .args(["--rule-kind", "Gh;Sarif", "--level", "Error;Warning;Note"])
            .args(["--kind", "Fail", "--log", "ForceOverwrite", "--output"])
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "the Multitool failed: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
        let log: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        log["runs"][0]["results"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|r| {
                (
                    r["ruleId"].as_str().unwrap_or("?").to_string(),
                    // SARIF's default level is warning.
                    r["level"].as_str().unwrap_or("warning").to_string(),
                    format!(
                        "{} {}",
                        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
                        r["message"]["arguments"]
                    ),
                )
            })
            .collect()
    }

    /// Asserts the Multitool finds no error or warning in any of `sarifs` (notes are advice,
    /// e.g. "add code snippets") and every one fits the schema for check-jsonschema.
    fn assert_valid(&self, sarifs: &[&Path], work: &Path) {
        let findings = self.multitool_findings(sarifs, work);
        let bad: Vec<_> = findings
            .iter()
            .filter(|(_, level, _)| level == "error" || level == "warning")
            .collect();
        assert!(bad.is_empty(), "SARIF Multitool: {bad:#?}");
        let output = Command::new(&self.python)
            .args(["-m", "check_jsonschema", "--schemafile"])
            .arg(self.schema())
            .args(sarifs)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "check-jsonschema: {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// The results as sarif-tools' `sarif csv` lists them.
    fn rows(&self, sarif: &Path, work: &Path) -> Vec<Row> {
        let csv = work.join("results.csv");
        let output = Command::new(&self.python)
            .args(["-m", "sarif", "csv", "--output"])
            .arg(&csv)
            .arg(sarif)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "sarif csv: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        // CSV (messages span lines) to JSON with Python's own reader.
        let output = Command::new(&self.python)
            .args([
                "-c",
                "import csv, json, sys; print(json.dumps(list(csv.DictReader(open(sys.argv[1], newline='')))))",
            ])
            .arg(&csv)
            .output()
            .unwrap();
        assert!(output.status.success());
        let rows: Vec<Value> = serde_json::from_slice(&output.stdout).unwrap();
        rows.iter()
            .map(|r| Row {
                rule: r["Code"].as_str().unwrap().to_string(),
                severity: r["Severity"].as_str().unwrap().to_string(),
                uri: r["Location"].as_str().unwrap().to_string(),
                line: r["Line"].as_str().unwrap().parse().unwrap(),
            })
            .collect()
    }
}

impl Consumers {
    /// The results of each log as sarif-tools' loader reads them (`get_records`: the rows its
    /// `csv`, `summary` and `html` commands print), one Python process for every log.
    fn records(&self, sarifs: &[&Path]) -> Vec<Vec<Row>> {
        let script = r#"
import json, sys
from sarif import loader
out = []
for path in sys.argv[1:]:
    records = loader.load_sarif_file(path).get_records()
    out.append([{k: str(r[k]) for k in ("Code", "Severity", "Location", "Line")} for r in records])
print(json.dumps(out))
"#;
        let output = Command::new(&self.python)
            .arg("-c")
            .arg(script)
            .args(sarifs)
            .output()
            .unwrap();
        assert!(
            output.status.success(),
            "sarif-tools: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        let logs: Vec<Vec<Value>> = serde_json::from_slice(&output.stdout).unwrap();
        logs.iter()
            .map(|rows| {
                rows.iter()
                    .map(|r| Row {
                        rule: r["Code"].as_str().unwrap().to_string(),
                        severity: r["Severity"].as_str().unwrap().to_string(),
                        uri: r["Location"].as_str().unwrap().to_string(),
                        line: r["Line"].as_str().unwrap().parse().unwrap(),
                    })
                    .collect()
            })
            .collect()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
struct Row {
    rule: String,
    severity: String,
    uri: String,
    line: u32,
}

fn tool(args: &[&str], cwd: &Path) -> (i32, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    (
        output.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// 1-based start line of each document of a YAML stream (the line after each `---`).
fn document_starts(text: &str) -> Vec<u32> {
    let mut starts = vec![1];
    for (i, line) in text.lines().enumerate() {
        if line.trim_end() == "---" {
            starts.push(i as u32 + 2);
        }
    }
    starts
}

/// 1-based line of the first line of `text` equal to `wanted` (trimmed) at or after `from`.
fn line_of(text: &str, wanted: &str, from: u32) -> u32 {
    text.lines()
        .enumerate()
        .skip(from.saturating_sub(1) as usize)
        .find(|(_, l)| l.trim() == wanted)
        .map(|(i, _)| i as u32 + 1)
        .unwrap_or_else(|| panic!("no line `{wanted}` after line {from}"))
}

/// A provider repository (a git work tree) with `config/` = the conformant v1beta2 fixture
/// broken three ways in `infrastructure-components.yaml`: FooMachine cluster-scoped (MUST),
/// FooCluster outside the `cluster-api` category (MAY), and FooMachineTemplate cluster-scoped
/// but waived by annotation.
struct Repo {
    dir: tempfile::TempDir,
}

const COMPONENTS: &str = "config/infrastructure-components.yaml";

impl Repo {
    fn new() -> Repo {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(dir.path().join(".git")).unwrap();
        let fixture = root().join("fixtures/conformant-v1beta2");
        std::fs::create_dir_all(dir.path().join("config")).unwrap();
        for entry in std::fs::read_dir(&fixture).unwrap().flatten() {
            std::fs::copy(
                entry.path(),
                dir.path().join("config").join(entry.file_name()),
            )
            .unwrap();
        }
        let path = dir.path().join(COMPONENTS);
        let text = std::fs::read_to_string(&path).unwrap();
        let mut docs: Vec<String> = text.split("\n---\n").map(str::to_string).collect();
        let find = |docs: &[String], name: &str| {
            docs.iter()
                .position(|d| d.contains(&format!("  name: {name}\n")))
                .unwrap_or_else(|| panic!("no document {name}"))
        };
        let machine = find(&docs, "foomachines.infrastructure.foo.example.io");
        docs[machine] = docs[machine].replacen("scope: Namespaced", "scope: Cluster", 1);
        let cluster = find(&docs, "fooclusters.infrastructure.foo.example.io");
        docs[cluster] = docs[cluster].replacen("    - cluster-api\n", "    - foo\n", 1);
        let template = find(&docs, "foomachinetemplates.infrastructure.foo.example.io");
        docs[template] = docs[template]
            .replacen("scope: Namespaced", "scope: Cluster", 1)
            .replacen(
                "metadata:\n  labels:",
                "metadata:\n  annotations:\n    capi-conformance.io/waive: all/namespaced\n    \
                 capi-conformance.io/waive-reason: templates are shared across namespaces\n  labels:",
                1,
            );
        assert!(docs[template].contains("capi-conformance.io/waive"));
        std::fs::write(&path, docs.join("\n---\n")).unwrap();
        Repo { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn components(&self) -> String {
        std::fs::read_to_string(self.path().join(COMPONENTS)).unwrap()
    }

    /// Document index of the CRD `name` in the components file.
    fn doc_index(&self, name: &str) -> usize {
        self.components()
            .split("\n---\n")
            .position(|d| d.contains(&format!("  name: {name}\n")))
            .unwrap()
    }

    /// `lint config/ --sarif … --json …` from `cwd` (a directory of the repo); the SARIF log
    /// and the JSON report.
    fn lint(&self, cwd: &str) -> (PathBuf, Value, Value) {
        let cwd = self.path().join(cwd);
        let reports = self.path().join("reports");
        let config = self.path().join("config");
        let rel = pathdiff(&config, &cwd);
        let sarif = reports.join("capi-conformance.sarif");
        let json = reports.join("report.json");
        let (code, stderr) = tool(
            &[
                "lint",
                &rel,
                "--sarif",
                sarif.to_str().unwrap(),
                "--json",
                json.to_str().unwrap(),
            ],
            &cwd,
        );
        assert_eq!(code, 1, "a MUST fails: {stderr}");
        (sarif.clone(), read_json(&sarif), read_json(&json))
    }
}

/// `to` relative to `from` (both under one temp directory).
fn pathdiff(to: &Path, from: &Path) -> String {
    let mut up = PathBuf::new();
    let mut base = from.to_path_buf();
    while !to.starts_with(&base) {
        up.push("..");
        base.pop();
    }
    let rest = to.strip_prefix(&base).unwrap();
    let joined = up.join(rest);
    if joined.as_os_str().is_empty() {
        ".".into()
    } else {
        joined.to_string_lossy().into_owned()
    }
}

/// Results as rows, read by us from the log (what the consumer must read back too).
fn our_rows(log: &Value) -> Vec<Row> {
    let mut rows: Vec<Row> = log["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let pl = &r["locations"][0]["physicalLocation"];
            Row {
                rule: r["ruleId"].as_str().unwrap().into(),
                severity: r["level"].as_str().unwrap().into(),
                uri: pl["artifactLocation"]["uri"].as_str().unwrap().into(),
                line: pl["region"]["startLine"].as_u64().unwrap() as u32,
            }
        })
        .collect();
    rows.sort();
    rows
}

/// The line the JSON report places a failing cell's evidence at: its source line when the
/// kustomize mapping filled it, else the start of the document it names by index.
fn expected_line(evidence: &Value, text: &str) -> u32 {
    if let Some(line) = evidence["source"]["line"].as_u64() {
        return line as u32;
    }
    let location = evidence["location"].as_str().unwrap();
    let index: usize = location.rsplit_once('#').unwrap().1.parse().unwrap();
    document_starts(text)[index]
}

/// What the consumers must read back, from the JSON report of the same run: every failing
/// cell (and every waived failure) at its evidence's line.
fn expected_rows(report: &Value, text: &str) -> Vec<Row> {
    let mut rows = Vec::new();
    for r in report["results"].as_array().unwrap() {
        let outcome = r["outcome"].as_str().unwrap();
        let evidence = r["evidence"].as_array().cloned().unwrap_or_default();
        let waived_fail = outcome == "waived"
            && evidence
                .first()
                .and_then(|e| e["message"].as_str())
                .is_some_and(|m| m.starts_with("outcome without the waiver: fail"));
        if outcome != "fail" && !waived_fail {
            continue;
        }
        let placed = evidence
            .iter()
            .find(|e| e["source"].is_object())
            .or_else(|| evidence.iter().find(|e| e["location"].is_string()))
            .unwrap_or_else(|| panic!("fixture failure without a place: {r}"));
        let severity = match r["level"].as_str().unwrap() {
            "MUST" => "error",
            "SHOULD" => "warning",
            _ => "note",
        };
        rows.push(Row {
            rule: r["rule_id"].as_str().unwrap().into(),
            severity: severity.into(),
            uri: COMPONENTS.into(),
            line: expected_line(placed, text),
        });
    }
    rows.sort();
    rows
}

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
