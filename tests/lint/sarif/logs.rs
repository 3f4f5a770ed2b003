//! What the `lint --sarif` tests build and compare: a provider repository broken three ways,
//! the tool run in it, and the (rule, severity, file, line) rows a log must hold.

use crate::support::root;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Row {
    pub(super) rule: String,
    pub(super) severity: String,
    pub(super) uri: String,
    pub(super) line: u32,
}

pub(super) fn tool(args: &[&str], cwd: &Path) -> (i32, String) {
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

pub(super) fn read_json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// 1-based start line of each document of a YAML stream (the line after each `---`).
pub(super) fn document_starts(text: &str) -> Vec<u32> {
    let mut starts = vec![1];
    for (i, line) in text.lines().enumerate() {
        if line.trim_end() == "---" {
            starts.push(i as u32 + 2);
        }
    }
    starts
}

/// 1-based line of the first line of `text` equal to `wanted` (trimmed) at or after `from`.
pub(super) fn line_of(text: &str, wanted: &str, from: u32) -> u32 {
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
pub(super) struct Repo {
    pub(super) dir: tempfile::TempDir,
}

pub(super) const COMPONENTS: &str = "config/infrastructure-components.yaml";

impl Repo {
    pub(super) fn new() -> Repo {
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

    pub(super) fn path(&self) -> &Path {
        self.dir.path()
    }

    pub(super) fn components(&self) -> String {
        std::fs::read_to_string(self.path().join(COMPONENTS)).unwrap()
    }

    /// Document index of the CRD `name` in the components file.
    pub(super) fn doc_index(&self, name: &str) -> usize {
        self.components()
            .split("\n---\n")
            .position(|d| d.contains(&format!("  name: {name}\n")))
            .unwrap()
    }

    /// `lint config/ --sarif … --json …` from `cwd` (a directory of the repo); the SARIF log
    /// and the JSON report.
    pub(super) fn lint(&self, cwd: &str) -> (PathBuf, Value, Value) {
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
pub(super) fn pathdiff(to: &Path, from: &Path) -> String {
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
pub(super) fn our_rows(log: &Value) -> Vec<Row> {
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
pub(super) fn expected_line(evidence: &Value, text: &str) -> u32 {
    if let Some(line) = evidence["source"]["line"].as_u64() {
        return line as u32;
    }
    let location = evidence["location"].as_str().unwrap();
    let index: usize = location.rsplit_once('#').unwrap().1.parse().unwrap();
    document_starts(text)[index]
}

/// What the consumers must read back, from the JSON report of the same run: every failing
/// cell (and every waived failure) at its evidence's line.
pub(super) fn expected_rows(report: &Value, text: &str) -> Vec<Row> {
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
