//! The outside SARIF consumers (SARIF Multitool, check-jsonschema, sarif-tools): finding them,
//! validating a log with each, reading its results back as rows.

use super::logs::Row;
use crate::support::root;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

pub(super) const REQUIRE: &str = "CAPI_CONFORMANCE_REQUIRE_SARIF_CONSUMER";

/// The installed consumers.
pub(super) struct Consumers {
    /// A Python with `sarif-tools` and `check-jsonschema`.
    pub(super) python: PathBuf,
    /// The Multitool executable (`sarif-2.1.0.json` beside it).
    pub(super) multitool: PathBuf,
}

pub(super) fn from_env_or(var: &str, default: PathBuf) -> PathBuf {
    std::env::var_os(var)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .unwrap_or(default)
}

impl Consumers {
    pub(super) fn find(test: &str) -> Option<Consumers> {
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

    pub(super) fn schema(&self) -> PathBuf {
        self.multitool.with_file_name("sarif-2.1.0.json")
    }

    /// The Multitool's findings on `sarif` as (rule id, level): its GitHub and SARIF rule sets,
    /// every level, the schema it ships; the rule that fetches every URI over HTTP is off (no
    /// network here).
    pub(super) fn multitool_findings(
        &self,
        sarifs: &[&Path],
        work: &Path,
    ) -> Vec<(String, String, String)> {
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
    pub(super) fn assert_valid(&self, sarifs: &[&Path], work: &Path) {
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
    pub(super) fn rows(&self, sarif: &Path, work: &Path) -> Vec<Row> {
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
    pub(super) fn records(&self, sarifs: &[&Path]) -> Vec<Vec<Row>> {
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
