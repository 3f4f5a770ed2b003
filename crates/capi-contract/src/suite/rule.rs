use crate::contract::{Contract, Level, Role};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// How a rule is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RuleKind {
    /// Pure check over CRDs, ClusterRoles, components YAML or metadata.yaml.
    Static,
    /// Needs the provider's live reconcilers (a lifecycle scenario).
    Scenario,
    /// Not mechanically checkable; listed for completeness, always `skip`.
    Review,
}

impl RuleKind {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleKind::Static => "static",
            RuleKind::Scenario => "scenario",
            RuleKind::Review => "review",
        }
    }
}

/// One rule of the catalog, as written in `suites/*.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Stable id, e.g. `infra-machine/provider-id`.
    pub id: crate::model::shared_str::SharedStr,
    pub title: String,
    /// Level when no per-contract override applies.
    pub level: Level,
    /// Per-contract level overrides (e.g. `all/terminal-failures`: b1 SHOULD, b2 MAY).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub levels: BTreeMap<Contract, Level>,
    /// For COND-MUST / COND-SHOULD rules: the condition under which the level applies.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    pub contracts: Vec<Contract>,
    pub roles: Vec<Role>,
    pub kind: RuleKind,
    /// Link to the contract documentation (with anchor).
    pub doc: String,
    /// What is checked, in one or two sentences.
    pub description: String,
    /// How to fix a failure.
    pub remediation: String,
    /// Static check parameters (paths, JSON types, …), interpreted by `checks`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub check: Option<serde_json::Value>,
    /// `check` parsed, once, when the catalog is loaded (the static engine interprets it).
    #[serde(skip)]
    pub field_check: ParsedCheck,
    /// For scenario rules: the scenario script that exercises it (e.g. `SC-inframachine`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
    /// For scenario rules: the mock-provider fault(s) that make it fail.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub faults: Vec<String>,
}

/// A rule's `check` block as parsed at load ([`Rule::with_parsed_check`]; the catalog does it
/// for every rule). It is derived from `check`, so it never makes two rules differ.
#[derive(Debug, Clone, Default)]
pub struct ParsedCheck(pub Option<std::sync::Arc<super::FieldCheck>>);

impl PartialEq for ParsedCheck {
    fn eq(&self, _: &ParsedCheck) -> bool {
        true
    }
}

impl std::ops::Deref for ParsedCheck {
    type Target = Option<std::sync::Arc<super::FieldCheck>>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl Rule {
    /// The rule with its `check` block parsed ([`Rule::field_check`]), for rules built outside
    /// the catalog (which parses and validates every rule's block when it loads).
    pub fn with_parsed_check(mut self) -> Result<Rule, serde_json::Error> {
        self.field_check = ParsedCheck(match &self.check {
            Some(v) => super::FieldCheck::from_value(v)?.map(std::sync::Arc::new),
            None => None,
        });
        Ok(self)
    }

    /// The effective level under `contract` (`None`: the rule's default level).
    pub fn level_for(&self, contract: Option<Contract>) -> Level {
        contract
            .and_then(|c| self.levels.get(&c).copied())
            .unwrap_or(self.level)
    }

    /// `MUST`, `COND-MUST`, `SHOULD`, … as the catalog writes it.
    pub fn level_label(&self, contract: Option<Contract>) -> String {
        let level = self.level_for(contract);
        if self.condition.is_some() && level != Level::May {
            format!("COND-{}", level.as_str())
        } else {
            level.as_str().to_string()
        }
    }

    pub fn applies_to_role(&self, role: Role) -> bool {
        self.roles.contains(&role)
    }

    pub fn applies_to_contract(&self, contract: Contract) -> bool {
        self.contracts.contains(&contract)
    }
}
