use super::*;
use crate::contract::Level;

const GOOD: &str = r#"
- id: all/example
  title: Example
  level: MUST
  contracts: [v1beta1, v1beta2]
  roles: [infra-cluster]
  kind: static
  doc: https://example.invalid/page.html#anchor
  description: d
  remediation: r
"#;

fn load(file: &str, text: &str) -> Result<Catalog, CatalogError> {
    Catalog::from_yaml_sources(&[(file, text)])
}

/// `GOOD` with one line replaced (`from` must occur).
fn good_with(from: &str, to: &str) -> String {
    assert!(GOOD.contains(from), "{from}");
    GOOD.replace(from, to)
}

#[test]
fn good_source_loads() {
    let c = load("all.yaml", GOOD).unwrap();
    assert_eq!(c.len(), 1);
    let r = c.get("all/example").unwrap();
    assert_eq!(r.level, Level::Must);
    assert_eq!(c.file_of("all/example"), Some("all.yaml"));
    assert_eq!(c.for_role(Role::InfraCluster).len(), 1);
    assert!(c.for_role(Role::InfraMachine).is_empty());
    assert_eq!(c.static_rules().len(), 1);
    assert!(c.scenario_rules().is_empty());
}

#[test]
fn path_prefix_of_the_file_name_is_ignored() {
    assert!(load("suites/all.yaml", GOOD).is_ok());
}

#[test]
fn unknown_file_is_rejected() {
    let e = load("extras.yaml", GOOD).unwrap_err();
    assert!(matches!(e, CatalogError::UnknownFile { .. }), "{e}");
}

#[test]
fn bad_yaml_is_a_parse_error_naming_the_file() {
    let e = load("all.yaml", "- id: [unclosed").unwrap_err();
    assert!(
        matches!(&e, CatalogError::Parse { file, .. } if file == "all.yaml"),
        "{e}"
    );
}

#[test]
fn unknown_field_is_a_parse_error() {
    let text = good_with("  remediation: r\n", "  remediation: r\n  colour: red\n");
    let e = load("all.yaml", &text).unwrap_err();
    assert!(matches!(e, CatalogError::Parse { .. }), "{e}");
}

#[test]
fn duplicate_id_across_files_is_rejected() {
    let e =
        Catalog::from_yaml_sources(&[("all.yaml", GOOD), ("suites/all.yaml", GOOD)]).unwrap_err();
    assert_eq!(
        e,
        CatalogError::DuplicateId {
            file: "suites/all.yaml".into(),
            id: "all/example".into(),
            first_file: "all.yaml".into(),
        }
    );
}

#[test]
fn id_prefix_must_match_the_file() {
    let e = load("ipam.yaml", GOOD).unwrap_err();
    assert!(
        matches!(&e, CatalogError::WrongArea { file, id, .. } if file == "ipam.yaml" && id == "all/example"),
        "{e}"
    );
    // A template prefix is allowed in its base role's file only.
    let t = good_with("id: all/example", "id: infra-machine-template/x");
    assert!(load("infra-machine.yaml", &t).is_ok());
    assert!(matches!(
        load("infra-cluster.yaml", &t).unwrap_err(),
        CatalogError::WrongArea { .. }
    ));
    // An id without a name part is wrong too.
    let bare = good_with("id: all/example", "id: all/");
    assert!(matches!(
        load("all.yaml", &bare).unwrap_err(),
        CatalogError::WrongArea { .. }
    ));
}

#[test]
fn empty_roles_are_rejected() {
    let text = good_with("roles: [infra-cluster]", "roles: []");
    assert!(matches!(
        load("all.yaml", &text).unwrap_err(),
        CatalogError::EmptyRoles { .. }
    ));
}

#[test]
fn empty_contracts_are_rejected() {
    let text = good_with("contracts: [v1beta1, v1beta2]", "contracts: []");
    assert!(matches!(
        load("all.yaml", &text).unwrap_err(),
        CatalogError::EmptyContracts { .. }
    ));
}

#[test]
fn scenario_rule_needs_a_scenario() {
    let text = good_with("kind: static", "kind: scenario");
    assert!(matches!(
        load("all.yaml", &text).unwrap_err(),
        CatalogError::MissingScenario { .. }
    ));
    let ok = good_with("kind: static", "kind: scenario\n  scenario: SC-ipam");
    let c = load("all.yaml", &ok).unwrap();
    assert_eq!(c.scenario_rules().len(), 1);
    assert_eq!(c.rules_of_scenario("SC-ipam").len(), 1);
    let unknown = good_with("kind: static", "kind: scenario\n  scenario: SC-nope");
    assert!(matches!(
        load("all.yaml", &unknown).unwrap_err(),
        CatalogError::UnknownScenario { .. }
    ));
}

#[test]
fn check_must_be_a_field_check() {
    let not_fields = good_with(
        "  remediation: r\n",
        "  remediation: r\n  check: {paths: [a]}\n",
    );
    assert!(matches!(
        load("all.yaml", &not_fields).unwrap_err(),
        CatalogError::BadCheck { .. }
    ));
    let bad_type = good_with(
        "  remediation: r\n",
        "  remediation: r\n  check: {fields: {both: [{path: a, type: text}]}}\n",
    );
    assert!(matches!(
        load("all.yaml", &bad_type).unwrap_err(),
        CatalogError::BadCheck { .. }
    ));
    let bad_key = good_with(
        "  remediation: r\n",
        "  remediation: r\n  check: {fields: {v1alpha4: [{path: a, type: string}]}}\n",
    );
    assert!(matches!(
        load("all.yaml", &bad_key).unwrap_err(),
        CatalogError::BadCheck { .. }
    ));
    let no_fields = good_with(
        "  remediation: r\n",
        "  remediation: r\n  check: {fields: {}}\n",
    );
    assert!(matches!(
        load("all.yaml", &no_fields).unwrap_err(),
        CatalogError::BadCheck { .. }
    ));
    let ok = good_with(
        "  remediation: r\n",
        "  remediation: r\n  check: {fields: {v1beta2: [{path: status.x, type: boolean}]}, presence: if-present}\n",
    );
    let c = load("all.yaml", &ok).unwrap();
    let fc = c.field_check("all/example").unwrap();
    assert_eq!(fc.presence, crate::suite::Presence::IfPresent);
    assert_eq!(fc.fields_for(Contract::V1Beta2).len(), 1);
    assert!(fc.fields_for(Contract::V1Beta1).is_empty());
}

#[test]
fn doc_must_be_https() {
    let text = good_with(
        "doc: https://example.invalid/page.html#anchor",
        "doc: http://example.invalid/page.html",
    );
    assert!(matches!(
        load("all.yaml", &text).unwrap_err(),
        CatalogError::BadDoc { .. }
    ));
}

#[test]
fn level_override_must_name_a_covered_contract() {
    let text = good_with(
        "contracts: [v1beta1, v1beta2]",
        "contracts: [v1beta1]\n  levels: {v1beta2: MAY}",
    );
    assert_eq!(
        load("all.yaml", &text).unwrap_err(),
        CatalogError::LevelOutsideContracts {
            file: "all.yaml".into(),
            id: "all/example".into(),
            contract: Contract::V1Beta2,
        }
    );
}

#[test]
fn closest_ids_prefer_small_edit_distance() {
    let c = Catalog::embedded().unwrap();
    let near = c.closest_ids("all/namespace", 3);
    assert_eq!(near.len(), 3);
    assert_eq!(near[0], "all/namespaced");
    let by_name = c.closest_ids("crd-nam", 1);
    assert_eq!(by_name, vec!["all/crd-name"]);
}

#[test]
fn levenshtein_basics() {
    assert_eq!(levenshtein("", "abc"), 3);
    assert_eq!(levenshtein("kitten", "sitting"), 3);
    assert_eq!(levenshtein("same", "same"), 0);
}
