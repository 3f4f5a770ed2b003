//! The contract migration report (`--migration v1beta2`): per CRD on an older contract, what
//! still has to change for the target contract. Derived from the matrix itself (docs/architecture.md "Core model": "the
//! matrix shows both columns, which is also the v1beta1→v1beta2 migration report"): every rule
//! that fails (or is inconclusive) on the kind's column under the target contract, beside its
//! outcome under the kind's older contract.

use super::layout;
use super::model::{Evidence, Matrix, Outcome, RuleResult};
use capi_contract::contract::{Contract, Role};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// One change a kind needs for the target contract.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MigrationItem {
    pub rule_id: String,
    pub title: String,
    /// Level label under the target contract (`MUST`, `COND-SHOULD`, …).
    pub level: String,
    /// Outcome of the same rule under the kind's older contract (`None`: not checked there).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from_outcome: Option<Outcome>,
    /// `fail` or `inconclusive` under the target contract.
    pub to_outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub remediation: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub doc: String,
}

/// What one CRD kind needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KindMigration {
    pub provider: String,
    pub kind: String,
    pub role: Role,
    /// The older contract(s) the kind was checked under.
    pub from: Vec<Contract>,
    /// False when the kind has no column under the target contract: nothing could be checked
    /// (run with `--contract all`).
    pub checked: bool,
    pub items: Vec<MigrationItem>,
}

impl KindMigration {
    /// The older contract(s) it was checked under, as the writers list them (`v1beta1, …`).
    pub fn from_list(&self) -> String {
        let from: Vec<&str> = self.from.iter().map(|c| c.as_str()).collect();
        from.join(", ")
    }
}

/// The migration section of a report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Migration {
    pub to: Contract,
    pub kinds: Vec<KindMigration>,
}

impl Migration {
    /// Total changes over all kinds.
    pub fn changes(&self) -> usize {
        self.kinds.iter().map(|k| k.items.len()).sum()
    }

    /// Kinds that could not be checked under the target contract.
    pub fn unchecked(&self) -> usize {
        self.kinds.iter().filter(|k| !k.checked).count()
    }
}

type CellKey<'a> = (&'a str, &'a str, &'a str, Contract);

/// The migration of every target kind that has a column under a contract older than `to`,
/// sorted by provider, role and kind; items in catalog order.
pub fn migration(m: &Matrix, to: Contract) -> Migration {
    // (provider, role, kind) → contracts the kind has columns for.
    let mut kinds: BTreeMap<(&str, Role, &str), BTreeSet<Contract>> = BTreeMap::new();
    for c in m.columns.iter().chain(m.results.iter().map(|r| &r.column)) {
        if c.baseline {
            continue;
        }
        if let Some(ct) = c.contract {
            kinds
                .entry((c.provider.as_str(), c.role, c.kind.as_str()))
                .or_default()
                .insert(ct);
        }
    }
    // (rule, provider, kind, contract) → outcomes (phases combined) and the results.
    let mut cells: BTreeMap<CellKey<'_>, Vec<&RuleResult>> = BTreeMap::new();
    for r in m.results.iter().filter(|r| !r.column.baseline) {
        if let Some(ct) = r.column.contract {
            cells
                .entry((
                    r.rule_id.as_str(),
                    r.column.provider.as_str(),
                    r.column.kind.as_str(),
                    ct,
                ))
                .or_default()
                .push(r);
        }
    }
    let ids = layout::rule_ids(m);
    let mut out = Vec::new();
    for ((provider, role, kind), contracts) in kinds {
        let from: Vec<Contract> = contracts.iter().copied().filter(|c| *c < to).collect();
        if from.is_empty() {
            continue;
        }
        let checked = contracts.contains(&to);
        let mut items = Vec::new();
        for &rule_id in &ids {
            let on = |ct: Contract| {
                cells
                    .get(&(rule_id, provider, kind, ct))
                    .map_or(&[][..], Vec::as_slice)
            };
            let target = on(to);
            let Some(worst) = target
                .iter()
                .map(|r| r.outcome)
                .reduce(layout::combine)
                .filter(|o| matches!(o, Outcome::Fail | Outcome::Inconclusive))
            else {
                continue;
            };
            let from_outcome = from
                .iter()
                .filter_map(|ct| on(*ct).iter().map(|r| r.outcome).reduce(layout::combine))
                .reduce(layout::combine);
            let first = target.iter().find(|r| r.outcome == worst);
            let rule = m.rule(rule_id);
            items.push(MigrationItem {
                rule_id: rule_id.to_string(),
                title: rule.map_or_else(String::new, |r| r.title.clone()),
                level: layout::level_label(m, rule_id, &[Some(to)]),
                from_outcome,
                to_outcome: worst,
                reason: first.and_then(|r| r.reason.clone()),
                evidence: first.map_or_else(Vec::new, |r| r.evidence.clone()),
                remediation: rule.map_or_else(String::new, |r| r.remediation.trim().to_string()),
                doc: rule.map_or_else(String::new, |r| r.doc.clone()),
            });
        }
        out.push(KindMigration {
            provider: provider.to_string(),
            kind: kind.to_string(),
            role,
            from,
            checked,
            items,
        });
    }
    Migration { to, kinds: out }
}
