//! The catalog walk: every static rule has `fixtures/violations/<id with / as __>.yaml`; linting
//! it fails that rule (in the targeted columns) and changes no other rule's outcome compared
//! with the conformant baseline (compared over the cells both runs have).
//!
//! Violation file: `{base, patches: [{target, patch | delete}], add: [documents], roles: {Kind: role}, expect}`.
//! `target` is a CRD name, `Kind/name` of another object, or `metadata` (the clusterctl metadata).

use crate::support::*;
use capi_conformance::checks::LintOptions;
use capi_conformance::cli::ContractSelection;
use capi_conformance::contract::Role;
use capi_conformance::inventory::{Document, Origin};
use capi_conformance::report::{Matrix, Outcome};
use capi_conformance::suite::RuleKind;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Violation {
    base: String,
    #[serde(default)]
    patches: Vec<PatchSpec>,
    #[serde(default)]
    add: Vec<Value>,
    #[serde(default)]
    roles: BTreeMap<String, String>,
    expect: String,
    /// Rules whose outcome necessarily changes with this violation (the same fact seen by a
    /// second rule); each listed id must say why in `why`.
    #[serde(default)]
    also: Vec<String>,
    #[serde(default)]
    why: Option<String>,
    /// Input file renames (base name → base name), for file-name rules.
    #[serde(default)]
    rename: BTreeMap<String, String>,
    /// Where added documents claim to come from, relative to the base fixture directory
    /// (default: the components file).
    #[serde(default)]
    added_file: Option<String>,
    /// `--contract` for this violation (and its baseline).
    #[serde(default)]
    contract: Option<String>,
    /// `--manager-help` text for this violation (evidence for flag rules).
    #[serde(default)]
    manager_help: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct PatchSpec {
    target: String,
    #[serde(default)]
    patch: Option<Value>,
    #[serde(default)]
    delete: bool,
}

fn target_of(doc: &Value) -> (String, String) {
    let kind = doc["kind"].as_str().unwrap_or("").to_string();
    let name = doc["metadata"]["name"].as_str().unwrap_or("").to_string();
    (kind, name)
}

fn matches(doc: &Value, target: &str) -> bool {
    let (kind, name) = target_of(doc);
    if target == "metadata" {
        return capi_conformance::inventory::is_clusterctl_metadata(doc);
    }
    if kind == "CustomResourceDefinition" && name == target {
        return true;
    }
    format!("{kind}/{name}") == target
}

fn violation_docs(v: &Violation) -> Vec<Document> {
    let mut docs = load_whole(&fixtures().join(&v.base));
    for p in &v.patches {
        let before = docs.len();
        let hit = docs.iter().position(|d| matches(&d.value, &p.target));
        let idx =
            hit.unwrap_or_else(|| panic!("patch target {} not found in {}", p.target, v.base));
        if p.delete {
            docs.remove(idx);
            assert_eq!(docs.len(), before - 1);
            continue;
        }
        let ops: json_patch::Patch =
            serde_json::from_value(p.patch.clone().expect("patch or delete")).unwrap();
        json_patch::patch(&mut docs[idx].value, &ops)
            .unwrap_or_else(|e| panic!("{}: {e}", p.target));
    }
    for d in &mut docs {
        let base = std::path::Path::new(&d.origin.file)
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .to_string();
        if let Some(new) = v.rename.get(&base) {
            d.origin.file = std::path::Path::new(&d.origin.file)
                .with_file_name(new)
                .display()
                .to_string();
        }
    }
    for (i, value) in v.add.iter().enumerate() {
        docs.push(Document::new(
            value.clone(),
            Origin::new(
                fixtures()
                    .join(&v.base)
                    .join(
                        v.added_file
                            .as_deref()
                            .unwrap_or("infrastructure-components.yaml"),
                    )
                    .display()
                    .to_string(),
                1000 + i,
                1,
            ),
        ));
    }
    docs
}

fn outcomes(m: &Matrix) -> HashMap<(String, String), Outcome> {
    m.results
        .iter()
        .map(|r| ((r.rule_id.to_string(), r.column.id()), r.outcome))
        .collect()
}

pub fn file_for(id: &str) -> std::path::PathBuf {
    fixtures()
        .join("violations")
        .join(format!("{}.yaml", id.replace('/', "__")))
}

#[test]
fn every_static_rule_has_a_violation_that_breaks_only_that_rule() {
    let catalog = catalog();
    let mut baselines: HashMap<String, HashMap<(String, String), Outcome>> = HashMap::new();
    let mut errors = Vec::new();
    let statics: Vec<_> = catalog
        .rules()
        .iter()
        .filter(|r| r.kind == RuleKind::Static)
        .collect();
    assert!(!statics.is_empty());
    for rule in statics {
        let path = file_for(&rule.id);
        let Ok(text) = std::fs::read_to_string(&path) else {
            errors.push(format!(
                "{}: no violation fixture ({})",
                rule.id,
                path.display()
            ));
            continue;
        };
        let v: Violation =
            serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert_eq!(v.expect, rule.id, "{}", path.display());
        let contract = match v.contract.as_deref() {
            None => ContractSelection::Declared,
            Some("v1beta1") => ContractSelection::V1beta1,
            Some("v1beta2") => ContractSelection::V1beta2,
            Some(other) => panic!("{}: unknown contract {other}", path.display()),
        };
        if !v.also.is_empty() {
            assert!(v.why.is_some(), "{}: `also` needs a `why`", path.display());
        }
        let base = baselines
            .entry(format!("{}/{:?}", v.base, v.contract))
            .or_insert_with(|| {
                let opts = LintOptions {
                    contract,
                    ..LintOptions::default()
                };
                outcomes(&lint_docs(load(&fixtures().join(&v.base)), &opts))
            });
        let opts = LintOptions {
            contract,
            roles: v
                .roles
                .iter()
                .map(|(k, r)| (k.clone(), Role::parse(r).unwrap()))
                .collect(),
            manager_help: v.manager_help.clone(),
            ..LintOptions::default()
        };
        let m = lint_docs(violation_docs(&v), &opts);
        let got = outcomes(&m);
        let failed: Vec<_> = got
            .iter()
            .filter(|((id, _), o)| *id == rule.id && **o == Outcome::Fail)
            .collect();
        if failed.is_empty() {
            errors.push(format!("{}: the violation does not fail the rule", rule.id));
        }
        let mut changed: Vec<String> = got
            .iter()
            .filter(|((id, col), o)| {
                *id != rule.id
                    && !v.also.contains(id)
                    && base
                        .get(&(id.clone(), col.clone()))
                        .is_some_and(|b| b != *o)
            })
            .map(|((id, col), o)| {
                format!(
                    "{id} {col}: {:?} -> {o:?}",
                    base[&(id.clone(), col.clone())]
                )
            })
            .collect();
        changed.sort();
        if !changed.is_empty() {
            errors.push(format!(
                "{}: the violation also changes {changed:?}",
                rule.id
            ));
        }
    }
    assert!(
        errors.is_empty(),
        "{} problem(s):\n{}",
        errors.len(),
        errors.join("\n")
    );
}

#[test]
fn every_violation_file_names_a_static_rule() {
    let catalog = catalog();
    let dir = fixtures().join("violations");
    for entry in std::fs::read_dir(&dir).unwrap() {
        let p = entry.unwrap().path();
        let id = p.file_stem().unwrap().to_str().unwrap().replace("__", "/");
        let rule = catalog.get(&id);
        assert!(
            rule.is_some_and(|r| r.kind == RuleKind::Static),
            "{}: not a static rule of the catalog",
            p.display()
        );
    }
}
