//! The SARIF writer on hand-built matrices: a snapshot, the driver's rules, where each outcome
//! goes, locations from `Evidence.source` (and the fallbacks), fingerprints, the source root.

#[path = "sarif/outcomes.rs"]
mod outcomes;
#[path = "sarif/provider_run.rs"]
mod provider_run;

use crate::fixtures;
use capi_conformance::cli::OutputFormat;
use capi_conformance::contract::Level;
use capi_conformance::report::{
    self, Evidence, Matrix, RenderOptions, RuleResult, SarifBase, SourceLocation,
};
use capi_conformance::suite::Catalog;
use provider_run::provider_run;
use serde_json::Value;
use std::collections::BTreeMap;

fn sarif_with(m: &Matrix, opts: &RenderOptions) -> Value {
    let text = report::render_sarif(m, opts, &m.rules).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn sarif(m: &Matrix) -> Value {
    sarif_with(m, &RenderOptions::default())
}

fn run(log: &Value) -> &Value {
    let runs = log["runs"].as_array().unwrap();
    assert_eq!(runs.len(), 1, "one run");
    &runs[0]
}

fn results(log: &Value) -> Vec<&Value> {
    run(log)["results"].as_array().unwrap().iter().collect()
}

fn notifications(log: &Value) -> Vec<&Value> {
    run(log)["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default()
}

fn location(r: &Value) -> (&str, Option<&str>, i64) {
    let pl = &r["locations"][0]["physicalLocation"];
    (
        pl["artifactLocation"]["uri"].as_str().unwrap(),
        pl["artifactLocation"]["uriBaseId"].as_str(),
        pl["region"]["startLine"].as_i64().unwrap(),
    )
}

fn ev(message: &str, object: &str, path: Option<&str>) -> Evidence {
    Evidence {
        message: message.into(),
        object: Some(object.into()),
        path: path.map(str::to_string),
        resource_version: None,
        location: None,
        source: None,
    }
}

fn at(file: &str, line: u32) -> Option<SourceLocation> {
    Some(SourceLocation {
        file: file.into(),
        line,
    })
}

fn with(mut r: RuleResult, reason: &str, evidence: Vec<Evidence>) -> RuleResult {
    r.reason = Some(reason.into());
    r.evidence = evidence;
    r
}

const CRD: &str = "CustomResourceDefinition/foomachines.infrastructure.foo.io";
const BASES: &str = "config/crd/bases/infrastructure.foo.io_foomachines.yaml";

#[test]
fn sarif_synthetic() {
    let m = fixtures::synthetic();
    insta::assert_snapshot!(report::render_sarif(&m, &RenderOptions::default(), &m.rules).unwrap());
}

#[test]
fn sarif_of_a_provider_run() {
    let m = provider_run();
    insta::assert_snapshot!(report::render_sarif(&m, &RenderOptions::default(), &m.rules).unwrap());
}

#[test]
fn failing_rule_is_reported_at_the_source_line_of_its_evidence() {
    let log = sarif(&provider_run());
    let rs = results(&log);
    let r = rs
        .iter()
        .find(|r| r["ruleId"] == "infra-machine/provider-id")
        .unwrap();
    assert_eq!(r["kind"], "fail");
    assert_eq!(r["level"], "error", "MUST → error");
    assert_eq!(location(r), (BASES, Some("%SRCROOT%"), 412));
    // The second missing field is a related location at its own line.
    let related = r["relatedLocations"].as_array().unwrap();
    assert_eq!(related.len(), 1);
    assert_eq!(
        related[0]["physicalLocation"]["region"]["startLine"], 530,
        "{related:?}"
    );
    assert_eq!(
        related[0]["message"]["text"],
        "`status.addresses` is missing"
    );
    // The object and field are a logical location too.
    let logical = &r["locations"][0]["logicalLocations"][0];
    assert_eq!(logical["name"], CRD);
    assert!(
        logical["fullyQualifiedName"]
            .as_str()
            .unwrap()
            .ends_with("spec.providerID")
    );
    let text = r["message"]["text"].as_str().unwrap();
    assert!(text.starts_with("`spec.providerID` is missing"), "{text}");
    assert!(text.contains("foo/FooMachine@v1beta2"), "{text}");

    let category = rs.iter().find(|r| r["ruleId"] == "all/category").unwrap();
    assert_eq!(category["level"], "note", "MAY → note");
    assert_eq!(location(category), (BASES, Some("%SRCROOT%"), 17));
}

#[test]
fn fingerprints_follow_the_finding_not_the_line() {
    let m = provider_run();
    let fp = |m: &Matrix| -> Vec<String> {
        results(&sarif(m))
            .iter()
            .map(|r| {
                r["partialFingerprints"]["capiConformanceFinding/v1"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect()
    };
    let before = fp(&m);
    let unique: std::collections::BTreeSet<&String> = before.iter().collect();
    assert_eq!(unique.len(), before.len(), "one fingerprint per finding");
    // Lines move (an edit above the field): the same alerts.
    let mut moved = m.clone();
    for r in &mut moved.results {
        for e in &mut r.evidence {
            if let Some(s) = &mut e.source {
                s.line += 40;
            }
        }
    }
    assert_eq!(fp(&moved), before);
    // Another file is another alert (the category finding, second in the log).
    let mut renamed = m.clone();
    renamed.results[2].evidence[0].source = at("config/crd/bases/other.yaml", 17);
    let after = fp(&renamed);
    assert_ne!(after[1], before[1]);
    assert_eq!(after[0], before[0]);
    assert_eq!(after[2..], before[2..]);
}

#[test]
fn uris_are_relative_to_the_source_root() {
    let m = provider_run();
    let opts = RenderOptions {
        sarif: SarifBase {
            root: Some("/home/runner/work/foo/foo".into()),
            cwd: Some("/home/runner/work/foo/foo/config".into()),
            document_lines: BTreeMap::from([("config/default#2".to_string(), 77)]),
        },
        ..RenderOptions::default()
    };
    let log = sarif_with(&m, &opts);
    assert_eq!(
        run(&log)["originalUriBaseIds"]["%SRCROOT%"]["uri"],
        "file:///home/runner/work/foo/foo/"
    );
    let rs = results(&log);
    // Evidence paths are relative to the current directory (`config/`), URIs to the root.
    assert_eq!(
        location(rs[0]),
        (
            "config/config/crd/bases/infrastructure.foo.io_foomachines.yaml",
            Some("%SRCROOT%"),
            412
        )
    );
    let cluster = rs
        .iter()
        .find(|r| r["properties"]["column"] == "foo/FooCluster@v1beta2")
        .unwrap();
    assert_eq!(
        location(cluster),
        ("config/config/default", Some("%SRCROOT%"), 77),
        "a document named by index sits at its start line"
    );
}

#[test]
fn driver_lists_every_catalog_rule_with_its_level_and_doc() {
    let catalog = Catalog::shared().unwrap();
    let log: Value = serde_json::from_str(
        &report::render(
            &fixtures::all_pass(),
            OutputFormat::Sarif,
            &RenderOptions::default(),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(log["version"], "2.1.0");
    assert!(
        log["$schema"]
            .as_str()
            .unwrap()
            .ends_with("sarif-schema-2.1.0.json")
    );
    let driver = &run(&log)["tool"]["driver"];
    assert_eq!(driver["name"], "capi-conformance");
    assert_eq!(driver["version"], "0.1.0");
    assert_eq!(driver["semanticVersion"], "0.1.0");
    assert!(
        driver["informationUri"]
            .as_str()
            .unwrap()
            .starts_with("https://")
    );
    let rules = driver["rules"].as_array().unwrap();
    // Every catalog rule, then the matrix's rules the catalog lacks (the fixture's own ids).
    assert!(rules.len() >= catalog.rules().len());
    for (rule, d) in catalog.rules().iter().zip(rules) {
        assert_eq!(d["id"], rule.id.as_str());
        assert_eq!(d["helpUri"], rule.doc);
        assert_eq!(d["shortDescription"]["text"], rule.title.trim());
        assert!(
            d["fullDescription"]["text"]
                .as_str()
                .unwrap()
                .starts_with(rule.description.trim())
        );
        assert!(
            d["help"]["markdown"]
                .as_str()
                .unwrap()
                .contains(rule.remediation.trim())
        );
        let level = match rule.level {
            Level::Must => "error",
            Level::Should => "warning",
            Level::May => "note",
        };
        assert_eq!(d["defaultConfiguration"]["level"], level, "{}", rule.id);
        let name = d["name"].as_str().unwrap();
        assert!(name.chars().all(|c| c.is_ascii_alphanumeric()), "{name}");
        assert!(
            d["properties"]["tags"]
                .as_array()
                .unwrap()
                .contains(&Value::from("cluster-api"))
        );
    }
    assert!(results(&log).is_empty(), "everything passed");
    assert_eq!(run(&log)["invocations"][0]["executionSuccessful"], true);
    assert_eq!(run(&log)["invocations"][0]["exitCode"], 0);
}

#[test]
fn sarif_is_the_stdout_format_too() {
    let m = provider_run();
    let dir = tempfile::tempdir().unwrap();
    let args = capi_conformance::cli::ReportArgs {
        output: OutputFormat::Sarif,
        junit: None,
        json: None,
        markdown: None,
        html: None,
        sarif: Some(dir.path().join("out.sarif")),
        contract: capi_conformance::cli::ContractSelection::Declared,
        fail_on: "must".into(),
        roles: Vec::new(),
        config: None,
        no_waivers: false,
        manager_help: None,
        migration: None,
        color: "never".into(),
    };
    let mut stdout = Vec::new();
    report::write_outputs_to(&m, &args.outputs(), true, &mut stdout).unwrap();
    let file = std::fs::read_to_string(dir.path().join("out.sarif")).unwrap();
    assert_eq!(
        String::from_utf8(stdout).unwrap(),
        file,
        "stdout and file are the same log"
    );
    let log: Value = serde_json::from_str(&file).unwrap();
    assert_eq!(results(&log).len(), 5);
}
