//! The static half of a run's plan: the inventory of the documents and its columns, one per
//! (provider, kind, role, contract), each with the CRD version its contract maps to. Every rule
//! that applies to a column's role and contract has a cell there ([`super::evaluate_plan`]).
//!
//! Columns: a CRD gets one column per contract its labels declare (or the `--contract` forced
//! ones, or the `--migration` one beside the declared), checked against the CRD version that
//! contract's label maps to. A CRD with no contract label and no forced contract gets one column
//! without contract. Rules whose roles include `provider` get one column per provider with kind
//! `*` and role `provider`.

use super::LintOptions;
use crate::contract::{Contract, Role, labels as contract_labels};
use crate::inventory::{ClassifiedCrd, Document, InputError, Inventory};
use crate::model::{Column, Problem, SharedStr};
use crate::suite::Rule;

/// One planned column: where its provider and CRD are in the inventory.
#[derive(Debug, Clone, PartialEq)]
pub struct PlannedColumn {
    pub column: Column,
    /// Index into [`Inventory::providers`].
    pub provider: usize,
    /// Index into that provider's `crds`; `None` for the provider-wide column.
    pub crd: Option<usize>,
    /// The CRD version the column's contract maps to (even if the CRD lacks it).
    pub version_name: Option<String>,
}

/// The inventory and its columns, in the matrix's order (columns sorted).
#[derive(Debug, Clone, PartialEq)]
pub struct StaticPlan {
    pub inventory: Inventory,
    /// Documents that could not be used (with `keep_going`: loading's and the inventory's).
    pub problems: Vec<Problem>,
    pub columns: Vec<PlannedColumn>,
}

impl StaticPlan {
    /// Builds the inventory of `docs` and plans its columns for `rules`. No CRD at all is
    /// [`InputError::NoCrd`] (with `keep_going`, a problem of the plan).
    pub fn build(
        docs: Vec<Document>,
        opts: &LintOptions,
        rules: &[Rule],
    ) -> Result<StaticPlan, InputError> {
        let (inventory, crd_problems) = Inventory::build(docs, &opts.roles, opts.keep_going)?;
        let mut problems: Vec<Problem> = opts
            .load_problems
            .iter()
            .chain(crd_problems.iter())
            .map(|p| Problem {
                source: p.source_label(),
                message: p.to_string(),
            })
            .collect();
        if inventory.crd_count() == 0 {
            let err = InputError::NoCrd {
                sources: if opts.source.is_empty() {
                    "inputs".into()
                } else {
                    opts.source.clone()
                },
            };
            if !opts.keep_going {
                return Err(err);
            }
            problems.push(Problem {
                source: err.source_label(),
                message: err.to_string(),
            });
        }
        let mut columns = plan(&inventory, rules, opts);
        // Evaluated in the matrix's final order, so that `Matrix::sort` only confirms it.
        columns.sort_by(|a, b| a.column.cmp(&b.column));
        Ok(StaticPlan {
            inventory,
            problems,
            columns,
        })
    }
}

/// The version a forced contract maps to: its own label if declared, else what CAPI would
/// resolve with that contract as core's, else the storage version.
fn forced_version(crd: &ClassifiedCrd, contract: Contract) -> Option<String> {
    if let Some(d) = crd.declared.iter().find(|d| d.contract == contract) {
        return Some(d.version.clone());
    }
    if let Ok(d) = contract_labels::resolve(&crd.crd.labels, contract) {
        return Some(d.version);
    }
    crd.crd.storage_version().map(|v| v.name.clone())
}

fn plan(inv: &Inventory, rules: &[Rule], opts: &LintOptions) -> Vec<PlannedColumn> {
    let mut out = Vec::new();
    let forced = opts.contract.forced();
    for (provider, p) in inv.providers.iter().enumerate() {
        let provider_name = SharedStr::from(&p.name);
        for (index, crd) in p.crds.iter().enumerate() {
            if !rules.iter().any(|r| r.applies_to_role(crd.role)) {
                continue;
            }
            let planned =
                |contract: Option<Contract>, version_name: Option<String>| PlannedColumn {
                    column: Column {
                        provider: provider_name.clone(),
                        kind: crd.crd.kind.as_str().into(),
                        role: crd.role,
                        contract,
                        baseline: false,
                    },
                    provider,
                    crd: Some(index),
                    version_name,
                };
            match &forced {
                Some(cs) => {
                    for c in cs {
                        out.push(planned(Some(*c), forced_version(crd, *c)));
                    }
                }
                None if crd.declared.is_empty() => out.push(planned(
                    None,
                    crd.crd.storage_version().map(|v| v.name.clone()),
                )),
                None => {
                    for d in &crd.declared {
                        out.push(planned(Some(d.contract), Some(d.version.clone())));
                    }
                    if let Some(extra) = opts.also_contract
                        && !crd.declared.iter().any(|d| d.contract == extra)
                    {
                        out.push(planned(Some(extra), forced_version(crd, extra)));
                    }
                }
            }
        }
        if rules.iter().any(|r| r.applies_to_role(Role::Provider)) {
            out.push(PlannedColumn {
                column: Column {
                    provider: provider_name.clone(),
                    kind: "*".into(),
                    role: Role::Provider,
                    contract: None,
                    baseline: false,
                },
                provider,
                crd: None,
                version_name: None,
            });
        }
    }
    out
}
