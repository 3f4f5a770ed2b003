//! The SARIF writer on hand-built matrices: a snapshot, the driver's rules, where each outcome
//! goes, locations from `Evidence.source` (and the fallbacks), fingerprints, the source root.

use crate::fixtures::{self, B1, B2, col, result, rule};
use capi_conformance::cli::OutputFormat;
use capi_conformance::contract::{Level, Role};
use capi_conformance::report::{
    self, Evidence, Matrix, Outcome, Phase, Problem, RenderOptions, RuleResult, SarifBase,
    SourceLocation,
};
use capi_conformance::suite::{Catalog, RuleKind};
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

/// A `lint`-like run of one provider after kustomize mapped its findings to source lines:
/// every outcome, waivers of both kinds, a baseline, an input problem.
fn provider_run() -> Matrix {
    use Outcome::*;
    use Phase::*;
    let machine = col("foo", "FooMachine", Role::InfraMachine, B2, false);
    let machine_b1 = col("foo", "FooMachine", Role::InfraMachine, B1, false);
    let cluster = col("foo", "FooCluster", Role::InfraCluster, B2, false);
    let provider = col("foo", "*", Role::Provider, None, false);
    let mock = col("mock", "MockMachine", Role::InfraMachine, B2, true);
    let fields = rule(
        "infra-machine/provider-id",
        "InfraMachine has spec.providerID",
        Level::Must,
        &[Role::InfraMachine],
        RuleKind::Static,
    );
    let category = rule(
        "all/category",
        "CRD is in the cluster-api category",
        Level::May,
        &[Role::InfraMachine, Role::InfraCluster],
        RuleKind::Static,
    );
    let conditions = rule(
        "all/conditions",
        "Status has conditions",
        Level::Should,
        &[Role::InfraMachine, Role::InfraCluster],
        RuleKind::Static,
    );
    let rbac = rule(
        "all/rbac-owner-finalizers",
        "Core may set owner finalizers",
        Level::Should,
        &[Role::Provider],
        RuleKind::Static,
    );
    let terminal = rule(
        "all/terminal-failures",
        "Terminal failures are reported",
        Level::Should,
        &[Role::InfraMachine],
        RuleKind::Scenario,
    );

    let mut missing = ev(
        "`spec.providerID` is missing (no `providerID` in the schema)",
        CRD,
        Some("spec.versions[v1beta2].schema.openAPIV3Schema: spec.providerID"),
    );
    missing.location = Some("config/default#4".into());
    missing.source = at(BASES, 412);
    let mut missing_too = missing.clone();
    missing_too.message = "`status.addresses` is missing".into();
    missing_too.path = Some("spec.versions[v1beta2].schema.openAPIV3Schema: status".into());
    missing_too.source = at(BASES, 530);

    let mut category_ev = ev("spec.names.categories [] lacks `cluster-api`", CRD, None);
    category_ev.location = Some("config/default#4".into());
    category_ev.source = at(BASES, 17);

    let waived_annotation = with(
        result(&conditions.id, &machine, Level::Should, Static, Waived),
        "waived by annotation capi-conformance.io/waive: conditions come in v1beta3",
        vec![
            Evidence::msg("outcome without the waiver: fail (`status.conditions` is missing)"),
            {
                let mut e = ev("`status.conditions` is missing", CRD, Some("status"));
                e.source = at(BASES, 600);
                e
            },
        ],
    );
    let waived_config = with(
        result(&conditions.id, &cluster, Level::Should, Static, Waived),
        "waived by config: tracked in issue 12",
        vec![
            Evidence::msg("outcome without the waiver: fail (`status.conditions` is missing)"),
            {
                let mut e = ev(
                    "`status.conditions` is missing",
                    "CustomResourceDefinition/fooclusters.infrastructure.foo.io",
                    Some("status"),
                );
                e.location = Some("config/default#2".into());
                e
            },
        ],
    );
    let waived_pass = with(
        result(&category.id, &cluster, Level::May, Static, Waived),
        "waived by config: not needed",
        vec![Evidence::msg("outcome without the waiver: pass")],
    );

    Matrix {
        context: {
            let mut c = fixtures::context();
            c.command = "lint".into();
            c.source = "config/".into();
            c.server_version = None;
            c.run_id = None;
            c
        },
        rules: vec![
            fields.clone(),
            category.clone(),
            conditions.clone(),
            rbac.clone(),
            terminal.clone(),
        ],
        columns: vec![
            machine.clone(),
            machine_b1.clone(),
            cluster.clone(),
            provider.clone(),
            mock.clone(),
        ],
        results: vec![
            with(
                result(&fields.id, &machine, Level::Must, Static, Fail),
                "`spec.providerID` is missing (no `providerID` in the schema); `status.addresses` is missing",
                vec![missing, missing_too],
            ),
            with(
                result(&fields.id, &machine_b1, Level::Must, Static, Skip),
                "no such field under v1beta1",
                Vec::new(),
            ),
            with(
                result(&category.id, &machine, Level::May, Static, Fail),
                "spec.names.categories [] lacks `cluster-api`",
                vec![category_ev],
            ),
            waived_pass,
            waived_annotation,
            waived_config,
            with(
                result(&rbac.id, &provider, Level::Should, Static, Fail),
                "no role grants update on foomachines/finalizers",
                vec![Evidence::msg(
                    "no role grants update on foomachines/finalizers",
                )],
            ),
            with(
                result(
                    &terminal.id,
                    &machine,
                    Level::Should,
                    Lifecycle,
                    Inconclusive,
                ),
                "the API server dropped the watch 3 times",
                Vec::new(),
            ),
            with(
                result(&terminal.id, &mock, Level::Should, Lifecycle, Fail),
                "the built-in mock never reported the failure",
                Vec::new(),
            ),
            result(&category.id, &cluster, Level::May, Static, Pass),
        ],
        problems: vec![Problem {
            source: "config/broken.yaml#1".into(),
            message: "document is not a mapping".into(),
        }],
        notes: Vec::new(),
        scenarios: Vec::new(),
    }
}

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
fn every_outcome_goes_where_it_belongs() {
    let m = provider_run();
    let log = sarif(&m);
    let rs = results(&log);
    let ids: Vec<(&str, &str)> = rs
        .iter()
        .map(|r| {
            (
                r["ruleId"].as_str().unwrap(),
                r["properties"]["column"].as_str().unwrap(),
            )
        })
        .collect();
    // Fails and waived failures only: no pass, skip, waived pass, inconclusive or baseline result.
    assert_eq!(
        ids,
        [
            ("infra-machine/provider-id", "foo/FooMachine@v1beta2"),
            ("all/category", "foo/FooMachine@v1beta2"),
            ("all/conditions", "foo/FooCluster@v1beta2"),
            ("all/conditions", "foo/FooMachine@v1beta2"),
            ("all/rbac-owner-finalizers", "foo/*"),
        ]
    );
    for r in &rs {
        assert_eq!(r["kind"], "fail");
        // GitHub rejects a whole log when one result has no physical location.
        assert!(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].is_string());
        assert!(r["locations"][0]["physicalLocation"]["region"]["startLine"].as_i64() >= Some(1));
        let index = r["ruleIndex"].as_u64().unwrap() as usize;
        assert_eq!(
            run(&log)["tool"]["driver"]["rules"][index]["id"],
            r["ruleId"],
            "ruleIndex points at the rule"
        );
    }

    let waived: BTreeMap<&str, &Value> = rs
        .iter()
        .filter(|r| r["suppressions"].is_array())
        .map(|r| {
            (
                r["properties"]["column"].as_str().unwrap(),
                &r["suppressions"][0],
            )
        })
        .collect();
    assert_eq!(waived.len(), 2);
    let annotation = waived["foo/FooMachine@v1beta2"];
    assert_eq!(annotation["kind"], "inSource");
    assert_eq!(annotation["status"], "accepted");
    assert!(
        annotation["justification"]
            .as_str()
            .unwrap()
            .contains("conditions come in v1beta3")
    );
    assert_eq!(waived["foo/FooCluster@v1beta2"]["kind"], "external");
    // A waived cell without a source line sits at its document (line unknown here: 1).
    let cluster = rs
        .iter()
        .find(|r| r["properties"]["column"] == "foo/FooCluster@v1beta2")
        .unwrap();
    assert_eq!(location(cluster), ("config/default", Some("%SRCROOT%"), 1));

    // A provider-wide finding with no place of its own is anchored to the provider's first file.
    let rbac = rs
        .iter()
        .find(|r| r["ruleId"] == "all/rbac-owner-finalizers")
        .unwrap();
    assert_eq!(location(rbac), (BASES, Some("%SRCROOT%"), 1));
    assert_eq!(rbac["level"], "warning", "SHOULD → warning");

    let notes = notifications(&log);
    let texts: Vec<&str> = notes
        .iter()
        .map(|n| n["message"]["text"].as_str().unwrap())
        .collect();
    assert_eq!(notes.len(), 3, "{texts:?}");
    assert!(
        texts
            .iter()
            .any(|t| t.contains("inconclusive: the API server dropped the watch"))
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("the built-in mock baseline is fail"))
    );
    assert!(
        texts
            .iter()
            .any(|t| t.contains("input problem: config/broken.yaml#1"))
    );
    let inconclusive = notes
        .iter()
        .find(|n| {
            n["message"]["text"]
                .as_str()
                .unwrap()
                .contains("inconclusive")
        })
        .unwrap();
    assert_eq!(
        inconclusive["associatedRule"]["id"],
        "all/terminal-failures"
    );
    assert_eq!(inconclusive["level"], "warning");
    // An inconclusive scenario cell is reported at its kind's CRD (the first place it has).
    assert_eq!(
        inconclusive["locations"][0]["physicalLocation"]["region"]["startLine"],
        412
    );
    let problem = notes
        .iter()
        .find(|n| {
            n["message"]["text"]
                .as_str()
                .unwrap()
                .contains("input problem")
        })
        .unwrap();
    assert_eq!(problem["level"], "error");

    let invocation = &run(&log)["invocations"][0];
    assert_eq!(invocation["executionSuccessful"], false, "input problems");
    assert_eq!(invocation["exitCode"], m.verdict().exit_code());
    assert_eq!(invocation["startTimeUtc"], "2026-01-02T03:04:05Z");
    let summary = &run(&log)["properties"]["summary"];
    assert_eq!(summary["pass"], 1);
    assert_eq!(summary["skip"], 1);
    assert_eq!(summary["fail"], 3);
    assert_eq!(summary["waived"], 3);
    assert_eq!(summary["inconclusive"], 1);
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
