//! The static rule engine: a [`StaticPlan`] (documents → inventory → one column per (provider,
//! kind, role, contract), [`plan`]) → [`evaluate_plan`] → a [`Matrix`] with one cell per
//! applicable rule. [`evaluate_rules`] does both for callers with documents in hand.
//!
//! How a rule is evaluated:
//! - `kind: scenario` → `skip` with [`LintOptions::scenario_skip`] (`lint`: "needs a live
//!   provider (run `check`)"; `check` replaces the cell with the scenario's); `kind: review` →
//!   `skip` "review only".
//! - `kind: static` with `check.fields` → the generic [`schema::run_field_check`] interpreter.
//! - every other static rule → the function registered under its id in [`registry`]
//!   (one file per concern: naming, scope, labels, subresources, rbac, templates, clusterctl,
//!   roles). A static rule without an implementation is reported as `skip` saying so.
//!
//! On a column without contract (a CRD without contract label) the label rules fail and every
//! other rule is `skip` ("no contract label"), because without a label neither CAPI nor we can
//! tell which version and field paths apply.

pub mod clusterctl;
pub mod labels;
mod locate;
pub mod naming;
pub mod plan;
pub mod rbac;
pub mod registry;
pub mod roles;
pub mod schema;
pub mod scope;
pub mod subresources;
pub mod templates;
pub mod waivers;

#[cfg(test)]
mod tests;

use crate::contract::{Contract, FailOn, Role};
use crate::inventory::{
    ClassifiedCrd, CrdVersion, Document, InputError, InputNote, Inventory, Provider, SchemaNode,
};
use crate::model::ContractSelection;
use crate::model::{
    Column, Evidence, Matrix, Note, Outcome, Phase, RuleResult, RunContext, SharedStr,
};
use crate::rule_ids as id;
use crate::suite::{Rule, RuleKind};
use serde_json::Value;
use std::collections::BTreeMap;

pub use plan::{PlannedColumn, StaticPlan};
pub use waivers::{ConfigFile, ConfigWaiver};

/// Options of a static evaluation.
#[derive(Debug, Clone)]
pub struct LintOptions {
    pub contract: ContractSelection,
    /// With `--migration <contract>`: also check every CRD under this contract (beside what
    /// its labels declare), so the migration report has the target columns.
    pub also_contract: Option<Contract>,
    pub fail_on: FailOn,
    /// `--role Kind=Role` and config overrides (command line wins).
    pub roles: BTreeMap<String, Role>,
    /// Waivers from `--config`.
    pub waivers: Vec<ConfigWaiver>,
    pub no_waivers: bool,
    /// `--manager-help FILE`: the manager binary's `--help` output (evidence for flag rules).
    pub manager_help: Option<String>,
    /// Without `--manager-help`: the `--help` runs of the managers the tool runs itself
    /// (`check --embedded --provider-cmd`), one per command.
    pub manager_help_runs: Vec<HelpRun>,
    /// Broken documents become `Matrix.problems` instead of an error.
    pub keep_going: bool,
    /// Problems found while loading (only with `keep_going`).
    pub load_problems: Vec<InputError>,
    /// Notes from loading (skipped kustomize patches, rendered roots, files not read).
    pub load_notes: Vec<InputNote>,
    /// `lint` or `check`.
    pub command: String,
    /// What was examined (paths joined, or a cluster URL).
    pub source: String,
    pub started_at: jiff::Timestamp,
    /// Why a scenario rule has no verdict from the static engine: `lint`'s "needs a live
    /// provider (run `check`)"; `check` says why no scenario judged it there.
    pub scenario_skip: String,
}

/// What running a manager's command line with `--help` gave (see
/// [`LintOptions::manager_help_runs`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HelpRun {
    /// The command as run, `--help` included.
    pub command: String,
    /// Its usage text (what it printed); `Err`: why there is none.
    pub output: Result<String, String>,
}

/// [`LintOptions::scenario_skip`] of `lint`.
pub const NEEDS_LIVE_PROVIDER: &str = "needs a live provider (run `check`)";

impl LintOptions {
    /// The run context of an evaluation with these options (no server, no run id).
    pub fn run_context(&self) -> RunContext {
        RunContext {
            tool_version: env!("CARGO_PKG_VERSION").to_string(),
            command: self.command.clone(),
            source: self.source.clone(),
            started_at: self.started_at,
            server_version: None,
            fail_on: self.fail_on,
            run_id: None,
        }
    }
}

impl Default for LintOptions {
    fn default() -> Self {
        LintOptions {
            contract: ContractSelection::Declared,
            also_contract: None,
            fail_on: FailOn::default(),
            roles: BTreeMap::new(),
            waivers: Vec::new(),
            no_waivers: false,
            manager_help: None,
            manager_help_runs: Vec::new(),
            keep_going: false,
            load_problems: Vec::new(),
            load_notes: Vec::new(),
            command: "lint".into(),
            source: String::new(),
            started_at: jiff::Timestamp::UNIX_EPOCH,
            scenario_skip: NEEDS_LIVE_PROVIDER.into(),
        }
    }
}

/// What one check says about one column.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub outcome: Outcome,
    pub reason: Option<String>,
    pub evidence: Vec<Evidence>,
}

impl Finding {
    pub fn pass(evidence: Vec<Evidence>) -> Finding {
        Finding {
            outcome: Outcome::Pass,
            reason: None,
            evidence,
        }
    }
    pub fn pass_msg(message: impl Into<String>) -> Finding {
        Finding::pass(vec![Evidence::msg(message)])
    }
    pub fn fail(reason: impl Into<String>, evidence: Vec<Evidence>) -> Finding {
        Finding {
            outcome: Outcome::Fail,
            reason: Some(reason.into()),
            evidence,
        }
    }
    pub fn fail_msg(reason: impl Into<String>) -> Finding {
        Finding::fail(reason, Vec::new())
    }
    pub fn skip(reason: impl Into<String>) -> Finding {
        Finding::skip_with(reason, Vec::new())
    }
    /// The inputs cannot decide the rule (the reason says what would).
    pub fn inconclusive(reason: impl Into<String>) -> Finding {
        Finding {
            outcome: Outcome::Inconclusive,
            reason: Some(reason.into()),
            evidence: Vec::new(),
        }
    }
    pub fn skip_with(reason: impl Into<String>, evidence: Vec<Evidence>) -> Finding {
        Finding {
            outcome: Outcome::Skip,
            reason: Some(reason.into()),
            evidence,
        }
    }
}

/// Everything a check sees for one column.
pub struct CheckCtx<'a> {
    pub inv: &'a Inventory,
    pub provider: &'a Provider,
    /// `None` for the provider-wide column.
    pub crd: Option<&'a ClassifiedCrd>,
    pub role: Role,
    pub contract: Option<Contract>,
    /// The CRD version the column's contract maps to (`None` if the CRD lacks it).
    pub version: Option<&'a CrdVersion>,
    /// Name of the version the contract label maps to (even if the CRD lacks it).
    pub version_name: Option<String>,
    pub opts: &'a LintOptions,
    /// RBAC of the inputs, indexed once per evaluation.
    pub rbac: &'a rbac::RbacIndexes,
    /// The controller containers of the inputs' Deployments, found once per evaluation
    /// ([`clusterctl::manager_containers`]).
    pub manager_containers: &'a [&'a Value],
    /// `CustomResourceDefinition/<name>` of `crd`, spelled once per column for evidence.
    pub crd_object: Option<SharedStr>,
    /// Input location of `crd`, spelled once per column for evidence.
    pub crd_location: Option<SharedStr>,
}

impl<'a> CheckCtx<'a> {
    /// The contract whose text the column's rules are read in: the column's, or for an IPAM
    /// pool (a kind CAPI reaches without a contract label) the v1beta2 text, which for pools
    /// says what v1beta1's says.
    pub fn rule_contract(&self) -> Option<Contract> {
        self.contract
            .or((self.role == Role::IpamPool).then_some(Contract::V1Beta2))
    }

    /// The CRD, its mapped version and that version's schema, or the skip finding explaining
    /// why there is none.
    pub fn schema(&self) -> Result<(&'a ClassifiedCrd, &'a CrdVersion, &'a SchemaNode), Finding> {
        let Some(crd) = self.crd else {
            return Err(Finding::skip("provider-wide column has no CRD"));
        };
        let Some(version) = self.version else {
            return Err(Finding::skip(format!(
                "the contract label maps to version {}, which the CRD does not define (see all/contract-label-versions)",
                self.version_name.as_deref().unwrap_or("?")
            )));
        };
        let Some(schema) = version.schema.as_ref() else {
            return Err(Finding::skip(format!(
                "version {} has no openAPIV3Schema",
                version.name
            )));
        };
        Ok((crd, version, schema))
    }

    /// Evidence naming this column's CRD.
    pub fn ev(&self, message: impl Into<String>) -> Evidence {
        Evidence {
            message: message.into(),
            object: self.crd_object.clone(),
            path: None,
            resource_version: None,
            location: self.crd_location.clone(),
            source: None,
        }
    }

    /// Evidence naming this column's CRD at one of its fields (a path as
    /// [`crate::inventory::lines::parse_path`] reads it: `spec.names.categories`,
    /// `spec.versions[v1beta2].subresources.status`): findings are reported at that field's line.
    pub fn ev_at(&self, path: impl Into<String>, message: impl Into<String>) -> Evidence {
        Evidence {
            path: Some(path.into()),
            ..self.ev(message)
        }
    }

    /// Evidence at a field of the column's CRD version schema (`status.ready`).
    pub fn schema_ev(&self, version: &str, path: &str, message: impl Into<String>) -> Evidence {
        self.ev_at(
            format!("spec.versions[{version}].schema.openAPIV3Schema: {path}"),
            message,
        )
    }
}

/// Evidence pointing at an input document.
pub fn doc_ev(doc: &Document, message: impl Into<String>) -> Evidence {
    let kind = doc.value.get("kind").and_then(Value::as_str).unwrap_or("?");
    let name = doc
        .value
        .get("metadata")
        .and_then(|m| m.get("name"))
        .and_then(Value::as_str)
        .unwrap_or("?");
    Evidence {
        message: message.into(),
        object: Some(format!("{kind}/{name}").into()),
        path: None,
        resource_version: None,
        location: Some(doc.origin.location().into()),
        source: None,
    }
}

/// Rules whose outcome is about the labels themselves: evaluated even without a contract.
const LABEL_RULES: [crate::rule_ids::RuleId; 4] = [
    id::all::CONTRACT_LABEL,
    id::all::CONTRACT_LABEL_VERSIONS,
    id::all::CONTRACT_LABEL_UNAMBIGUOUS,
    id::template::LABELS_VERSIONS,
];

fn evaluate_cell(rule: &Rule, ctx: &CheckCtx) -> Finding {
    match rule.kind {
        RuleKind::Scenario => return Finding::skip(ctx.opts.scenario_skip.clone()),
        RuleKind::Review => return Finding::skip("review only"),
        RuleKind::Static => {}
    }
    // IPAM pools are judged without a contract label: CAPI never reads one for them (core and
    // infrastructure providers reach a pool through `IPAddressClaim.spec.poolRef`: apiGroup,
    // kind, name) and the IPAM contract asks none; their rules are the same in both contracts
    // ([`CheckCtx::rule_contract`]; docs/contract.md §17).
    if ctx.crd.is_some()
        && ctx.rule_contract().is_none()
        && !LABEL_RULES.iter().any(|r| *r == *rule.id)
    {
        return Finding::skip(
            "no contract label on the CRD: cannot tell which contract and version apply (pass --contract to check against one)",
        );
    }
    // The catalog parsed the `check` block when it loaded (`Rule::field_check`).
    if let Some(fc) = rule.field_check.as_ref() {
        return schema::run_field_check(fc, ctx);
    }
    match registry::get(&rule.id) {
        Some(f) => f(rule, ctx),
        None => Finding::skip("no static implementation for this rule yet"),
    }
}

/// Whether `rule` has a cell in `column` (its roles and contracts include the column's).
fn applies(rule: &Rule, column: &Column) -> bool {
    rule.applies_to_role(column.role) && column.contract.is_none_or(|c| rule.applies_to_contract(c))
}

/// Evaluates every rule of `rules` against the documents: [`StaticPlan::build`], then
/// [`evaluate_plan`].
pub fn evaluate_rules(
    docs: Vec<Document>,
    opts: &LintOptions,
    rules: &[Rule],
) -> Result<Matrix, InputError> {
    let plan = StaticPlan::build(docs, opts, rules)?;
    Ok(evaluate_plan(&plan, opts, rules))
}

/// Evaluates the planned rule × column cells of `plan` (`rules`: the ones it was planned for).
pub fn evaluate_plan(plan: &StaticPlan, opts: &LintOptions, rules: &[Rule]) -> Matrix {
    let inv = &plan.inventory;
    let problems = plan.problems.clone();
    let columns = &plan.columns;
    let rbac_index = rbac::RbacIndexes::build(inv);
    let manager_containers = clusterctl::manager_containers(inv);
    let contexts: Vec<CheckCtx> = columns
        .iter()
        .map(|pc| {
            let provider = &inv.providers[pc.provider];
            let crd = pc.crd.map(|i| &provider.crds[i]);
            CheckCtx {
                inv,
                provider,
                crd,
                role: pc.column.role,
                contract: pc.column.contract,
                version: crd
                    .zip(pc.version_name.as_deref())
                    .and_then(|(c, v)| c.crd.version(v)),
                version_name: pc.version_name.clone(),
                opts,
                rbac: &rbac_index,
                manager_containers: &manager_containers,
                crd_object: crd.map(|c| c.crd.object_ref().into()),
                crd_location: crd.map(|c| c.crd.origin.location().into()),
            }
        })
        .collect();
    // Evaluated rule by rule, in the matrix's final order (rules in catalog order, columns
    // sorted), into one allocation of the final size: 30k results for a 1,000-CRD input, and
    // growing or regrouping them would copy them all into fresh pages.
    let applicable = |p: &Rule| columns.iter().filter(|pc| applies(p, &pc.column)).count();
    let mut results: Vec<RuleResult> = Vec::with_capacity(rules.iter().map(applicable).sum());
    let mut used = std::collections::HashSet::new();
    for rule in rules {
        let before = results.len();
        for (pc, ctx) in columns.iter().zip(&contexts) {
            if !applies(rule, &pc.column) {
                continue;
            }
            let mut finding = evaluate_cell(rule, ctx);
            // Every failure on a CRD names the CRD (and so its source line).
            if finding.outcome == Outcome::Fail && finding.evidence.is_empty() && ctx.crd.is_some()
            {
                let message = finding.reason.clone().unwrap_or_default();
                finding.evidence.push(ctx.ev(message));
            }
            if !opts.no_waivers {
                waivers::apply(rule, ctx, &pc.column, &mut finding);
            }
            // Evidence pushed one by one has room for four; 30k results keep theirs.
            finding.evidence.shrink_to_fit();
            results.push(RuleResult {
                rule_id: rule.id.clone(),
                column: pc.column.clone(),
                level: rule.level_for(pc.column.contract),
                phase: Phase::Static,
                outcome: finding.outcome,
                reason: finding.reason,
                evidence: finding.evidence,
                duration_ms: None,
            });
        }
        if results.len() > before {
            used.insert(rule.id.as_str());
        }
    }
    drop(contexts);
    locate::locate_failures(&mut results, inv);
    let mut matrix = Matrix {
        context: opts.run_context(),
        rules: rules
            .iter()
            .filter(|r| used.contains(r.id.as_str()))
            .cloned()
            .collect(),
        columns: columns.iter().map(|c| c.column.clone()).collect(),
        results,
        problems,
        notes: opts
            .load_notes
            .iter()
            .map(|n| Note {
                source: n.source.clone(),
                message: n.message.clone(),
            })
            .collect(),
        scenarios: Vec::new(),
    };
    matrix.sort();
    matrix
}

/// The public entry shared by `lint` and `check --static-only`: every rule of the catalog
/// (static ones evaluated, scenario/review ones reported as `skip`) against the documents.
pub fn evaluate(
    docs: Vec<Document>,
    opts: &LintOptions,
    catalog: &crate::suite::Catalog,
) -> anyhow::Result<Matrix> {
    Ok(evaluate_rules(docs, opts, catalog.rules())?)
}
