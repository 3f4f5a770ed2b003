//! The rule catalog: every `suites/*.yaml` file parsed into [`Rule`] values and validated.
//!
//! The YAML files are embedded in the binary ([`Catalog::embedded`]); tests can build a catalog
//! from their own sources ([`Catalog::from_yaml_sources`]). Validation errors name the file and
//! the rule id so that a bad edit to a suite file is found at once.

use super::check_spec::FieldCheck;
use super::rule::{ParsedCheck, Rule, RuleKind};
use crate::contract::{Contract, Role};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

/// The suite files compiled into the binary, as `(file name, YAML text)`.
const EMBEDDED: [(&str, &str); 9] = [
    ("all.yaml", include_str!("../../../../suites/all.yaml")),
    (
        "templates.yaml",
        include_str!("../../../../suites/templates.yaml"),
    ),
    (
        "infra-cluster.yaml",
        include_str!("../../../../suites/infra-cluster.yaml"),
    ),
    (
        "infra-machine.yaml",
        include_str!("../../../../suites/infra-machine.yaml"),
    ),
    (
        "infra-machinepool.yaml",
        include_str!("../../../../suites/infra-machinepool.yaml"),
    ),
    (
        "bootstrap.yaml",
        include_str!("../../../../suites/bootstrap.yaml"),
    ),
    (
        "control-plane.yaml",
        include_str!("../../../../suites/control-plane.yaml"),
    ),
    ("ipam.yaml", include_str!("../../../../suites/ipam.yaml")),
    (
        "clusterctl.yaml",
        include_str!("../../../../suites/clusterctl.yaml"),
    ),
];

/// Scenario scripts a rule may name (docs/contract.md §4.1).
pub const SCENARIOS: [&str; 8] = [
    "SC-infracluster",
    "SC-inframachine",
    "SC-bootstrap",
    "SC-controlplane",
    "SC-machinepool",
    "SC-template",
    "SC-ipam",
    "SC-webhooks",
];

/// Why a catalog could not be loaded.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum CatalogError {
    #[error("{file}: not a known suite file (expected one of: {known})")]
    UnknownFile { file: String, known: String },
    #[error("{file}: invalid YAML or rule shape: {message}")]
    Parse { file: String, message: String },
    #[error("{file}: rule `{id}` is defined twice (first in {first_file})")]
    DuplicateId {
        file: String,
        id: String,
        first_file: String,
    },
    #[error("{file}: rule `{id}` does not belong in this file (allowed id prefixes: {allowed})")]
    WrongArea {
        file: String,
        id: String,
        allowed: String,
    },
    #[error("{file}: rule `{id}` has no roles")]
    EmptyRoles { file: String, id: String },
    #[error("{file}: rule `{id}` has no contracts")]
    EmptyContracts { file: String, id: String },
    #[error("{file}: rule `{id}` is a scenario rule but names no `scenario`")]
    MissingScenario { file: String, id: String },
    #[error("{file}: rule `{id}` names unknown scenario `{scenario}`")]
    UnknownScenario {
        file: String,
        id: String,
        scenario: String,
    },
    #[error("{file}: rule `{id}` has a `check` that is not a field check: {message}")]
    BadCheck {
        file: String,
        id: String,
        message: String,
    },
    #[error("{file}: rule `{id}` has a doc link that is not https: `{doc}`")]
    BadDoc {
        file: String,
        id: String,
        doc: String,
    },
    #[error(
        "{file}: rule `{id}` overrides the level for {contract}, which is not in its contracts"
    )]
    LevelOutsideContracts {
        file: String,
        id: String,
        contract: Contract,
    },
}

/// The validated rule catalog, sorted by rule id.
#[derive(Debug, Clone)]
pub struct Catalog {
    rules: Vec<Rule>,
    index: BTreeMap<String, usize>,
    /// Rule id → the suite file it came from.
    files: BTreeMap<String, String>,
}

impl Catalog {
    /// The catalog compiled into this binary.
    pub fn embedded() -> Result<Catalog, CatalogError> {
        Catalog::from_yaml_sources(&EMBEDDED)
    }

    /// The embedded catalog, loaded once per process.
    pub fn shared() -> Result<&'static Catalog, CatalogError> {
        static CATALOG: OnceLock<Result<Catalog, CatalogError>> = OnceLock::new();
        CATALOG
            .get_or_init(Catalog::embedded)
            .as_ref()
            .map_err(Clone::clone)
    }

    /// Builds a catalog from `(file name, YAML text)` pairs. The file name (its last path
    /// component, without `.yaml`) decides which rule-id prefixes the file may contain.
    pub fn from_yaml_sources<N: AsRef<str>, T: AsRef<str>>(
        sources: &[(N, T)],
    ) -> Result<Catalog, CatalogError> {
        let mut rules: Vec<Rule> = Vec::new();
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        for (name, text) in sources {
            let file = name.as_ref().to_string();
            let allowed = allowed_prefixes(&file).ok_or_else(|| CatalogError::UnknownFile {
                file: file.clone(),
                known: known_files(),
            })?;
            let parsed: Vec<Rule> = parse_rules(&file, text.as_ref())?;
            for mut rule in parsed {
                validate_rule(&file, allowed, &rule)?;
                rule.field_check = parse_check(&file, &rule)?;
                if let Some(first_file) = files.get(rule.id.as_str()) {
                    return Err(CatalogError::DuplicateId {
                        file,
                        id: rule.id.to_string(),
                        first_file: first_file.clone(),
                    });
                }
                files.insert(rule.id.to_string(), file.clone());
                rules.push(rule);
            }
        }
        rules.sort_by(|a, b| a.id.cmp(&b.id));
        let index = rules
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id.to_string(), i))
            .collect();
        Ok(Catalog {
            rules,
            index,
            files,
        })
    }

    /// Every rule, sorted by id.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Fills each rule's `faults` with the fault names `fault_for(rule_id)` knows (the mock
    /// provider names its faults by rule id), so `rules -o json` shows which fault exercises a rule.
    pub fn annotate_faults(&mut self, fault_for: impl Fn(&str) -> Option<&'static str>) {
        for rule in &mut self.rules {
            if let Some(f) = fault_for(&rule.id)
                && !rule.faults.iter().any(|x| x == f)
            {
                rule.faults.push(f.to_string());
            }
        }
    }

    /// Keeps the rules `keep` accepts (a contract's or a role's documentation: `rules --contract`).
    pub fn retain(&mut self, keep: impl Fn(&Rule) -> bool) {
        self.rules.retain(|r| keep(r));
        self.files
            .retain(|id, _| self.rules.iter().any(|r| r.id.as_str() == id));
        self.index = self
            .rules
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id.to_string(), i))
            .collect();
    }

    /// The catalog as it reads under one contract: its rules only, each with that contract's
    /// level (the other contract's levels and name dropped).
    pub fn under_contract(&mut self, contract: Contract) {
        self.retain(|r| r.applies_to_contract(contract));
        for rule in &mut self.rules {
            rule.level = rule.level_for(Some(contract));
            rule.levels.clear();
            rule.contracts = vec![contract];
        }
    }

    pub fn len(&self) -> usize {
        self.rules.len()
    }

    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The rule with this id.
    pub fn get(&self, id: &str) -> Option<&Rule> {
        self.index.get(id).and_then(|&i| self.rules.get(i))
    }

    /// The suite file a rule was defined in (e.g. `infra-machine.yaml`).
    pub fn file_of(&self, id: &str) -> Option<&str> {
        self.files.get(id).map(String::as_str)
    }

    /// Rules that apply to `role` (sorted by id).
    pub fn for_role(&self, role: Role) -> Vec<&Rule> {
        self.rules
            .iter()
            .filter(|r| r.applies_to_role(role))
            .collect()
    }

    /// Rules with a static part (`kind: static`), whether or not they also have a scenario.
    pub fn static_rules(&self) -> Vec<&Rule> {
        self.rules
            .iter()
            .filter(|r| r.kind == RuleKind::Static)
            .collect()
    }

    /// Rules a lifecycle scenario exercises: every rule naming a `scenario` (scenario-only rules
    /// and static rules with a dynamic part).
    pub fn scenario_rules(&self) -> Vec<&Rule> {
        self.rules.iter().filter(|r| r.scenario.is_some()).collect()
    }

    /// Rules of a given scenario script (e.g. `SC-inframachine`).
    pub fn rules_of_scenario(&self, scenario: &str) -> Vec<&Rule> {
        self.rules
            .iter()
            .filter(|r| r.scenario.as_deref() == Some(scenario))
            .collect()
    }

    /// Review-only rules (not mechanically checkable).
    pub fn review_rules(&self) -> Vec<&Rule> {
        self.rules
            .iter()
            .filter(|r| r.kind == RuleKind::Review)
            .collect()
    }

    /// The parsed field check of a rule, if it has one (validated at load time).
    pub fn field_check(&self, id: &str) -> Option<FieldCheck> {
        self.get(id)?.field_check.as_deref().cloned()
    }

    /// Up to `n` rule ids closest to `query` (edit distance on the id, ties by id), for
    /// "did you mean" messages.
    pub fn closest_ids(&self, query: &str, n: usize) -> Vec<&str> {
        let mut scored: Vec<(usize, &str)> = self
            .rules
            .iter()
            .map(|r| (id_distance(query, &r.id), r.id.as_str()))
            .collect();
        scored.sort();
        scored.into_iter().take(n).map(|(_, id)| id).collect()
    }
}

/// Distance used for suggestions: the Levenshtein distance between `query` and the id, or
/// between `query` and the id's name part (after the `/`) when the query has no `/`, whichever
/// is smaller.
fn id_distance(query: &str, id: &str) -> usize {
    let full = levenshtein(query, id);
    if query.contains('/') {
        return full;
    }
    let name = id.rsplit('/').next().unwrap_or(id);
    full.min(levenshtein(query, name))
}

fn levenshtein(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    let mut cur = vec![0; b.len() + 1];
    for (i, ca) in a.iter().enumerate() {
        cur[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != cb);
            cur[j + 1] = (prev[j + 1] + 1).min(cur[j] + 1).min(prev[j] + cost);
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    prev[b.len()]
}

/// Suite file stem → rule-id prefixes it may define.
const AREAS: [(&str, &[&str]); 9] = [
    ("all", &["all"]),
    ("templates", &["template"]),
    (
        "infra-cluster",
        &["infra-cluster", "infra-cluster-template"],
    ),
    (
        "infra-machine",
        &["infra-machine", "infra-machine-template"],
    ),
    (
        "infra-machinepool",
        &["infra-machinepool", "infra-machinepool-template"],
    ),
    ("bootstrap", &["bootstrap", "bootstrap-template"]),
    (
        "control-plane",
        &["control-plane", "control-plane-template"],
    ),
    ("ipam", &["ipam"]),
    ("clusterctl", &["clusterctl"]),
];

fn file_stem(file: &str) -> &str {
    let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
    base.strip_suffix(".yaml")
        .or_else(|| base.strip_suffix(".yml"))
        .unwrap_or(base)
}

fn allowed_prefixes(file: &str) -> Option<&'static [&'static str]> {
    let stem = file_stem(file);
    AREAS
        .iter()
        .find(|(area, _)| *area == stem)
        .map(|(_, prefixes)| *prefixes)
}

fn known_files() -> String {
    AREAS
        .iter()
        .map(|(area, _)| format!("{area}.yaml"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn parse_rules(file: &str, text: &str) -> Result<Vec<Rule>, CatalogError> {
    // An empty file (or one holding only comments) is an empty list.
    if text
        .lines()
        .all(|l| l.trim().is_empty() || l.trim_start().starts_with('#'))
    {
        return Ok(Vec::new());
    }
    serde_saphyr::from_str::<Vec<Rule>>(text).map_err(|e| CatalogError::Parse {
        file: file.to_string(),
        message: e.to_string(),
    })
}

fn validate_rule(file: &str, allowed: &[&str], rule: &Rule) -> Result<(), CatalogError> {
    let err_ctx = || (file.to_string(), rule.id.to_string());
    let prefix = rule.id.split_once('/');
    match prefix {
        Some((p, name)) if allowed.contains(&p) && !name.is_empty() => {}
        _ => {
            let (file, id) = err_ctx();
            return Err(CatalogError::WrongArea {
                file,
                id,
                allowed: allowed.join(", "),
            });
        }
    }
    if rule.roles.is_empty() {
        let (file, id) = err_ctx();
        return Err(CatalogError::EmptyRoles { file, id });
    }
    if rule.contracts.is_empty() {
        let (file, id) = err_ctx();
        return Err(CatalogError::EmptyContracts { file, id });
    }
    if rule.kind == RuleKind::Scenario && rule.scenario.is_none() {
        let (file, id) = err_ctx();
        return Err(CatalogError::MissingScenario { file, id });
    }
    if let Some(scenario) = &rule.scenario
        && !SCENARIOS.contains(&scenario.as_str())
    {
        let (file, id) = err_ctx();
        return Err(CatalogError::UnknownScenario {
            file,
            id,
            scenario: scenario.clone(),
        });
    }
    if !rule.doc.starts_with("https://") || rule.doc.len() <= "https://".len() {
        let (file, id) = err_ctx();
        return Err(CatalogError::BadDoc {
            file,
            id,
            doc: rule.doc.clone(),
        });
    }
    if let Some(contract) = rule.levels.keys().find(|c| !rule.contracts.contains(c)) {
        let (file, id) = err_ctx();
        return Err(CatalogError::LevelOutsideContracts {
            file,
            id,
            contract: *contract,
        });
    }
    Ok(())
}

/// The rule's `check`, parsed and validated once, at load ([`Rule::field_check`]).
fn parse_check(file: &str, rule: &Rule) -> Result<ParsedCheck, CatalogError> {
    let Some(check) = &rule.check else {
        return Ok(ParsedCheck::default());
    };
    validate_check(rule, check)
        .map(|c| ParsedCheck(Some(Arc::new(c))))
        .map_err(|message| CatalogError::BadCheck {
            file: file.to_string(),
            id: rule.id.to_string(),
            message,
        })
}

/// A `check` must be a [`FieldCheck`] whose keys are `both` or one of the rule's contracts,
/// with at least one field.
fn validate_check(rule: &Rule, check: &serde_json::Value) -> Result<FieldCheck, String> {
    let parsed: FieldCheck = serde_json::from_value(check.clone()).map_err(|e| e.to_string())?;
    if parsed.fields.values().all(Vec::is_empty) {
        return Err("`fields` lists no field".to_string());
    }
    for key in parsed.fields.keys() {
        if key == "both" {
            continue;
        }
        match Contract::parse(key) {
            Some(c) if c.as_str() == key && rule.contracts.contains(&c) => {}
            _ => {
                return Err(format!(
                    "`fields` key `{key}` is neither `both` nor one of the rule's contracts"
                ));
            }
        }
    }
    Ok(parsed)
}

#[cfg(test)]
#[path = "catalog_tests.rs"]
mod tests;
