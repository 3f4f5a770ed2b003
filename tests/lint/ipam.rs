//! An IPAM provider's repository as its owners keep it (`fixtures/ipam-kubebuilder`, ours: a
//! kubebuilder-style `config/` with two pool kinds, no contract label): every static pool rule
//! is judged, and a broken copy fails exactly the rules it breaks.

use crate::kustomize::{cells, copy_dir, kustomize_or_skip, lint_json};
use crate::support::fixtures;
use std::path::Path;

const COLUMNS: [&str; 2] = ["ipam-baz/BazGlobalIPPool", "ipam-baz/BazIPPool"];
const POOL_RULES: [&str; 2] = ["ipam/pool-crd", "ipam/pool-ready-condition"];

fn lint(config: &Path) -> (i32, serde_json::Value, String) {
    lint_json(&[config.to_str().unwrap()])
}

#[test]
fn an_ipam_repository_without_contract_labels_gets_every_pool_rule_judged() {
    if !kustomize_or_skip("lint of an IPAM provider's config/") {
        return;
    }
    let (code, report, stderr) = lint(&fixtures().join("ipam-kubebuilder/config"));
    assert_eq!(code, 0, "{stderr}");
    let cells = cells(&report);
    for col in COLUMNS {
        for rule in POOL_RULES {
            let c = cells
                .iter()
                .find(|(r, c, _)| r == rule && c == col)
                .unwrap_or_else(|| panic!("no {rule} cell on {col}: {cells:#?}"));
            assert_eq!(c.2, "pass", "{rule} on {col}");
        }
    }
    let text = report.to_string();
    assert!(!text.contains("no contract label on the CRD"), "{text}");
}

#[test]
fn a_broken_ipam_repository_fails_exactly_the_rules_it_breaks() {
    if !kustomize_or_skip("lint of a broken IPAM provider's config/") {
        return;
    }
    let good = cells(&lint(&fixtures().join("ipam-kubebuilder/config")).1);
    let dir = tempfile::tempdir().unwrap();
    copy_dir(&fixtures().join("ipam-kubebuilder/config"), dir.path());
    let bases = dir.path().join("crd/bases");
    // BazIPPool: a plural that is not flect's (the CRD name CAPI computes differs).
    let pool = bases.join("ipam.baz.example.io_bazippools.yaml");
    let text = std::fs::read_to_string(&pool).unwrap();
    std::fs::write(
        &pool,
        text.replace("plural: bazippools", "plural: bazippoolz")
            .replace("name: bazippools.ipam", "name: bazippoolz.ipam"),
    )
    .unwrap();
    // BazGlobalIPPool: conditions without their `type`.
    let global = bases.join("ipam.baz.example.io_bazglobalippools.yaml");
    let text = std::fs::read_to_string(&global).unwrap();
    std::fs::write(
        &global,
        text.replace(
            "                    type:\n                      type: string\n",
            "",
        ),
    )
    .unwrap();
    let (code, report, stderr) = lint(dir.path());
    let broken = cells(&report);
    let changed: Vec<_> = broken
        .iter()
        .filter(|b| !good.contains(b))
        .map(|(r, c, o)| format!("{r} {c} {o}"))
        .collect();
    assert_eq!(
        changed,
        vec![
            // The same fact seen by clusterctl's pre-flight (`init` refuses a CRD whose name
            // is not CalculateCRDName's).
            "clusterctl/crd-name-preflight ipam-baz/* fail".to_string(),
            "ipam/pool-crd ipam-baz/BazIPPool fail".to_string(),
            "ipam/pool-ready-condition ipam-baz/BazGlobalIPPool fail".to_string(),
        ],
        "{stderr}"
    );
    // ipam/pool-crd is a MUST: the run fails.
    assert_eq!(code, 1, "{stderr}");
}
