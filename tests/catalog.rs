//! The rule catalog through the binary: `rules` in every format, the generated reference in
//! docs/rules.md, and `explain`.

use capi_conformance::suite::{Catalog, Rule};
use std::path::Path;
use std::process::{Command, Output};

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_capi-conformance"))
        .args(args)
        .output()
        .expect("run the capi-conformance binary")
}

fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("utf-8 stdout")
}

fn stderr(out: &Output) -> String {
    String::from_utf8(out.stderr.clone()).expect("utf-8 stderr")
}

#[test]
fn docs_rules_md_is_up_to_date() {
    let out = run(&["rules", "-o", "markdown"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/rules.md");
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == stdout(&out),
        "docs/rules.md is stale (or missing); regenerate it with:\n    \
         cargo run -- rules -o markdown > docs/rules.md"
    );
}

#[test]
fn rules_json_has_every_rule() {
    let out = run(&["rules", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rules: Vec<Rule> = serde_json::from_str(&stdout(&out)).expect("rules -o json parses");
    let catalog = Catalog::embedded().unwrap();
    let got: Vec<&str> = rules.iter().map(|r| r.id.as_str()).collect();
    let want: Vec<&str> = catalog.rules().iter().map(|r| r.id.as_str()).collect();
    assert_eq!(got, want);
    assert_eq!(got.len(), 171);
    assert!(got.contains(&"infra-machinepool/initialization-provisioned"));
}

/// `rules -o json` shows, for each scenario rule, the mock fault that exercises it.
#[test]
fn rules_json_names_the_mock_fault_of_each_scenario_rule() {
    let out = run(&["rules", "-o", "json"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rules: Vec<Rule> = serde_json::from_str(&stdout(&out)).expect("rules -o json parses");
    let by_id = |id: &str| rules.iter().find(|r| r.id == id).expect(id).clone();
    assert_eq!(
        by_id("infra-machine/provider-id-before-provisioned").faults,
        vec!["infra-machine/provider-id-before-provisioned".to_string()]
    );
    assert_eq!(
        by_id("bootstrap/secret-value").faults,
        vec!["bootstrap/secret-value".to_string()]
    );
    assert!(
        by_id("all/namespaced").faults.is_empty(),
        "static rules have no fault"
    );
    let with_fault = rules.iter().filter(|r| !r.faults.is_empty()).count();
    assert_eq!(with_fault, capi_conformance::mock::faults::FAULTS.len());
}

#[test]
fn rules_yaml_parses_back() {
    let out = run(&["rules", "-o", "yaml"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let rules: Vec<Rule> = serde_saphyr::from_str(&stdout(&out)).expect("rules -o yaml parses");
    assert_eq!(rules.len(), 171);
}

#[test]
fn rules_table_without_tty_is_plain() {
    let out = run(&["rules"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        !text.contains('\u{1b}'),
        "no ANSI colour when stdout is a pipe"
    );
    assert!(text.contains("| infra-machine/provider-id "));
    assert!(text.contains("171 rules"));
}

#[test]
fn explain_known_rule() {
    let out = run(&["explain", "infra-machine/provisioned"]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.starts_with("infra-machine/provisioned — "));
    assert!(text.contains("v1beta1: `status.ready` (boolean)"));
    assert!(text.contains("v1beta2: `status.initialization.provisioned` (boolean)"));
    assert!(text.contains("How to fix:"));
    assert!(text.contains(
        "https://cluster-api.sigs.k8s.io/developer/providers/contracts/infra-machine.html#inframachine-initialization-completed"
    ));
}

#[test]
fn explain_unknown_rule_exits_2_with_suggestions() {
    let out = run(&["explain", "all/crd-nam"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(stdout(&out).is_empty());
    let err = stderr(&out);
    assert!(err.contains("unknown rule `all/crd-nam`"), "{err}");
    let suggestions = err
        .split("closest rule ids: ")
        .nth(1)
        .unwrap_or_default()
        .trim();
    let ids: Vec<&str> = suggestions.split(", ").collect();
    assert_eq!(ids.len(), 3, "{err}");
    assert_eq!(ids[0], "all/crd-name");
}
