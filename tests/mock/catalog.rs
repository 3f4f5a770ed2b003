//! The fault table against the rule catalog (suites/*.yaml).

use capi_conformance::mock::faults::{FAULTS, NOT_APPLICABLE, fault_for};
use capi_conformance::mock::kinds::ALL;
use capi_conformance::suite::{Catalog, RuleKind};

#[test]
fn every_fault_is_named_by_a_catalog_rule() {
    let catalog = Catalog::shared().unwrap();
    for (id, what) in FAULTS {
        assert!(
            catalog.get(id).is_some(),
            "fault {id} ({what}) names no rule"
        );
        assert!(!what.is_empty());
    }
    for (name, rule, what) in capi_conformance::mock::faults::FAULT_VARIANTS {
        assert!(
            name.starts_with(&format!("{rule}:")) && catalog.get(rule).is_some(),
            "fault variant {name} ({what}) names no rule"
        );
    }
    for (id, _) in NOT_APPLICABLE {
        let rule = catalog
            .get(id)
            .unwrap_or_else(|| panic!("{id} is not a rule"));
        assert_eq!(rule.kind, RuleKind::Scenario, "{id}");
        assert!(
            fault_for(id).is_none(),
            "{id} is both a fault and not applicable"
        );
    }
}

#[test]
fn every_scenario_rule_of_the_mock_roles_has_a_fault_or_a_reason() {
    let catalog = Catalog::shared().unwrap();
    let roles: Vec<_> = ALL.iter().map(|k| k.role).collect();
    let mut missing = Vec::new();
    for rule in catalog.scenario_rules() {
        if rule.kind != RuleKind::Scenario || !rule.roles.iter().any(|r| roles.contains(r)) {
            continue;
        }
        let covered =
            fault_for(&rule.id).is_some() || NOT_APPLICABLE.iter().any(|(id, _)| *id == rule.id);
        if !covered {
            missing.push(rule.id.clone());
        }
    }
    assert!(
        missing.is_empty(),
        "scenario rules without a fault: {missing:?}"
    );
}

#[test]
fn fault_names_are_unique() {
    let mut ids: Vec<_> = FAULTS.iter().map(|(id, _)| *id).collect();
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(ids.len(), before);
}

#[test]
fn every_fault_is_exercised_by_a_fault_test() {
    let sources = [
        include_str!("faults_infra_cluster.rs"),
        include_str!("faults_infra_machine.rs"),
        include_str!("faults_machine_pool.rs"),
        include_str!("faults_bootstrap.rs"),
        include_str!("faults_control_plane.rs"),
        include_str!("faults_templates.rs"),
        include_str!("ipam.rs"),
        include_str!("ipam/faults.rs"),
        include_str!("ipam/crds.rs"),
        include_str!("../scenarios/webhooks.rs"),
    ]
    .concat();
    let untested: Vec<_> = FAULTS
        .iter()
        .map(|(id, _)| *id)
        .filter(|id| !sources.contains(&format!("\"{id}\"")))
        .collect();
    assert!(untested.is_empty(), "faults without a test: {untested:?}");
}
