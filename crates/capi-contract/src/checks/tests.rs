//! Engine tests against a small in-test catalog (no dependency on `suites/`).

use super::*;
use crate::inventory::parse_text;
use crate::rule_ids::{self as id, RuleId};
use serde_json::json;

fn rule(id: impl AsRef<str>, kind: &str, roles: &[&str], check: Option<Value>) -> Rule {
    let id = id.as_ref();
    let mut v = json!({
        "id": id, "title": id, "level": "MUST", "contracts": ["v1beta1", "v1beta2"],
        "roles": roles, "kind": kind, "doc": "https://example.io", "description": "d",
        "remediation": "r"
    });
    if let Some(c) = check {
        v["check"] = c;
    }
    if kind == "scenario" {
        v["scenario"] = json!("SC-inframachine");
    }
    serde_json::from_value::<Rule>(v)
        .unwrap()
        .with_parsed_check()
        .unwrap()
}

fn catalog() -> Vec<Rule> {
    vec![
        rule(
            id::infra_machine::PROVISIONED,
            "static",
            &["infra-machine"],
            Some(json!({"fields": {
                "v1beta1": [{"path": "status.ready", "type": "boolean"}],
                "v1beta2": [{"path": "status.initialization.provisioned", "type": "boolean"}]},
                "presence": "required"})),
        ),
        rule(
            id::infra_machine::ADDRESSES,
            "static",
            &["infra-machine"],
            Some(
                json!({"fields": {"both": [{"path": "status.addresses", "type": "object-array"}]}, "presence": "if-present"}),
            ),
        ),
        rule(
            id::control_plane::STATUS_REPLICAS,
            "static",
            &["infra-machine"],
            Some(
                json!({"fields": {"both": [{"path": "status.replicas", "type": "integer"}]},
                "presence": "required", "condition_path": "spec.replicas"}),
            ),
        ),
        rule(id::all::NAMESPACED, "static", &["infra-machine"], None),
        rule(id::all::CONTRACT_LABEL, "static", &["infra-machine"], None),
        rule(
            id::infra_machine::DELETE,
            "scenario",
            &["infra-machine"],
            None,
        ),
        rule(
            id::all::NO_INTERNAL_RELIANCE,
            "review",
            &["infra-machine"],
            None,
        ),
    ]
}

fn crd(labels: &str, status: &str, spec: &str) -> String {
    format!(
        "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foomachines.infrastructure.foo.io
  labels: {labels}
spec:
  group: infrastructure.foo.io
  names: {{kind: FooMachine, listKind: FooMachineList, plural: foomachines}}
  scope: Namespaced
  versions:
  - name: v1beta1
    served: true
    storage: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {{type: object, properties: {{replicas: {{type: integer}}}}}}
          status: {{type: object, properties: {{ready: {{type: boolean}}}}}}
  - name: v1beta2
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {spec}
          status: {status}
"
    )
}

fn eval(text: &str, opts: &LintOptions) -> Matrix {
    let docs = parse_text("t.yaml", text)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    evaluate_rules(docs, opts, &catalog()).unwrap()
}

fn outcome(m: &Matrix, rule: RuleId, contract: Option<Contract>) -> (Outcome, String) {
    let rule = rule.as_str();
    let r = m
        .results
        .iter()
        .find(|r| r.rule_id == rule && r.column.contract == contract)
        .unwrap_or_else(|| panic!("no cell {rule} {contract:?}"));
    (r.outcome, r.reason.clone().unwrap_or_default())
}

const BOTH: &str = "{cluster.x-k8s.io/v1beta1: v1beta1, cluster.x-k8s.io/v1beta2: v1beta2}";

#[test]
fn each_declared_contract_is_checked_against_its_version() {
    let m = eval(
        &crd(
            BOTH,
            "{type: object, properties: {initialization: {type: object, properties: {provisioned: {type: boolean}}}}}",
            "{type: object}",
        ),
        &LintOptions::default(),
    );
    let b1 = Some(Contract::V1Beta1);
    let b2 = Some(Contract::V1Beta2);
    assert_eq!(
        outcome(&m, id::infra_machine::PROVISIONED, b1).0,
        Outcome::Pass
    );
    assert_eq!(
        outcome(&m, id::infra_machine::PROVISIONED, b2).0,
        Outcome::Pass
    );
    assert_eq!(m.columns.len(), 2);
    // Condition: v1beta1 has spec.replicas (→ status.replicas required, missing → fail);
    // v1beta2 has no spec.replicas → skip.
    assert_eq!(
        outcome(&m, id::control_plane::STATUS_REPLICAS, b1).0,
        Outcome::Fail
    );
    let (o, reason) = outcome(&m, id::control_plane::STATUS_REPLICAS, b2);
    assert_eq!(o, Outcome::Skip);
    assert!(reason.contains("condition does not hold"), "{reason}");
    // Non-static rules.
    assert_eq!(
        outcome(&m, id::infra_machine::DELETE, b2).1,
        "needs a live provider (run `check`)"
    );
    assert_eq!(
        outcome(&m, id::all::NO_INTERNAL_RELIANCE, b2).1,
        "review only"
    );
    assert_eq!(m.verdict(), crate::model::Verdict::Fail);
}

#[test]
fn wrong_type_is_a_failure_naming_both_types() {
    let m = eval(
        &crd(
            BOTH,
            "{type: object, properties: {initialization: {type: object, properties: {provisioned: {type: string}}}, addresses: {type: object}}}",
            "{type: object}",
        ),
        &LintOptions::default(),
    );
    let (o, reason) = outcome(&m, id::infra_machine::PROVISIONED, Some(Contract::V1Beta2));
    assert_eq!(o, Outcome::Fail);
    assert!(
        reason.contains("expected boolean, found string"),
        "{reason}"
    );
    let (o, reason) = outcome(&m, id::infra_machine::ADDRESSES, Some(Contract::V1Beta2));
    assert_eq!(o, Outcome::Fail);
    assert!(
        reason.contains("expected object-array, found object"),
        "{reason}"
    );
}

#[test]
fn optional_absent_fields_skip_and_open_fields_are_not_present() {
    let m = eval(
        &crd(
            BOTH,
            "{type: object, x-kubernetes-preserve-unknown-fields: true}",
            "{type: object, properties: {replicas: {type: object}}}",
        ),
        &LintOptions::default(),
    );
    let b2 = Some(Contract::V1Beta2);
    let (o, reason) = outcome(&m, id::infra_machine::PROVISIONED, b2);
    assert_eq!(o, Outcome::Skip);
    assert!(reason.contains("is open"), "{reason}");
    let (o, reason) = outcome(&m, id::infra_machine::ADDRESSES, b2);
    assert_eq!(o, Outcome::Skip);
    assert!(reason.contains("not implemented"), "{reason}");
    // spec.replicas is an empty placeholder object: the condition does not hold.
    let (o, reason) = outcome(&m, id::control_plane::STATUS_REPLICAS, b2);
    assert_eq!(o, Outcome::Skip);
    assert!(reason.contains("placeholder"), "{reason}");
}

#[test]
fn no_label_column_fails_label_rules_and_forced_contract_checks_storage_version() {
    let text = crd("{}", "{type: object}", "{type: object}");
    let m = eval(&text, &LintOptions::default());
    assert_eq!(m.columns.len(), 1);
    assert_eq!(outcome(&m, id::all::CONTRACT_LABEL, None).0, Outcome::Fail);
    let (o, reason) = outcome(&m, id::all::NAMESPACED, None);
    assert_eq!(o, Outcome::Skip);
    assert!(reason.contains("no contract label"));
    let forced = LintOptions {
        contract: ContractSelection::V1beta2,
        ..LintOptions::default()
    };
    let m = eval(&text, &forced);
    assert_eq!(
        outcome(&m, id::all::NAMESPACED, Some(Contract::V1Beta2)).0,
        Outcome::Pass
    );
    // Storage version v1beta2 has no status.initialization.provisioned.
    assert_eq!(
        outcome(&m, id::infra_machine::PROVISIONED, Some(Contract::V1Beta2)).0,
        Outcome::Fail
    );
}

#[test]
fn evaluation_is_deterministic() {
    let text = crd(BOTH, "{type: object}", "{type: object}");
    let a = serde_json::to_string(&eval(&text, &LintOptions::default())).unwrap();
    let b = serde_json::to_string(&eval(&text, &LintOptions::default())).unwrap();
    assert_eq!(a, b);
}
