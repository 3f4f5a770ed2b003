//! The run stage: executes a [`Plan`] and returns the one [`Matrix`] the writers format.
//!
//! The static cells are the contract crate's ([`static_matrix`]); on a cluster the live part of
//! `all/rbac-aggregation` is folded in ([`effective_rbac`]); the scenarios run on a cluster
//! ([`cluster`]) or on the embedded server ([`embedded`]), the mock baseline first, and their
//! cells join the static ones one per rule × column ([`merge_into`]). While it works the run
//! emits [`crate::events::Event`]s, which the progress display ([`progress`]) consumes.

pub mod access;
pub mod cluster;
pub mod cluster_baseline;
pub mod core_reference;
pub mod effective_rbac;
pub mod embedded;
pub mod interrupt;
pub mod management;
pub mod manager_launch;
pub mod private_file;
pub mod processes;
pub mod progress;

use crate::events::Events;
use crate::plan::{Plan, RuleFilter, ScenarioOptions};
use crate::report::{Matrix, Outcome, Phase, RuleResult, combine};
use crate::scenarios::cleanup::Leftovers;
use crate::scenarios::runner::{RunOutput, is_scenario_rule, rule_contract};
use crate::scenarios::{RUN_LABEL, Settings, Subject};
use capi_contract::checks::LintOptions;
use capi_contract::suite::Rule;
use std::path::{Path, PathBuf};

/// Everything `check` was asked, as plain options (`cli/` builds them from the arguments).
#[derive(Debug, Clone, Default)]
pub struct CheckOptions {
    /// The static engine's options (same meaning as for `lint`).
    pub statics: LintOptions,
    /// What the scenarios drive; `None` with `--static-only`.
    pub scenarios: Option<ScenarioOptions>,
    /// `--rules`.
    pub filter: Option<RuleFilter>,
    pub run: RunOptions,
    /// With `--embedded`: what the server is given and which controllers are the target.
    pub embedded: Option<EmbeddedOptions>,
}

/// How the scenarios run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    pub settings: Settings,
    /// Scenarios run concurrently.
    pub parallel: usize,
    /// `--report-dir`: timelines and final objects of failed scenarios.
    pub report_dir: Option<PathBuf>,
    /// Strip finalizers a broken provider never removes during cleanup.
    pub force_cleanup: bool,
    /// On a cluster without CAPI core: install minimal core CRDs (and the mock's) for the run.
    pub install_core_crds: bool,
    /// The identity CAPI core runs as (effective-RBAC rule).
    pub capi_manager: String,
    /// Where the run tells its progress.
    pub events: Events,
    /// The RBAC denials of the run's client: the first one stops the scenarios (and cleans
    /// up) at once, since no verdict can follow a request the cluster refused.
    pub denials: Option<crate::client_retry::forbidden::Denials>,
    /// `--workload-object`: what a control-plane node's agent writes into its workload cluster.
    pub node_writes: crate::scenarios::core_sim::node_agent::NodeWrites,
}

impl Default for RunOptions {
    fn default() -> Self {
        RunOptions {
            settings: Settings::EMBEDDED,
            parallel: 8,
            report_dir: None,
            force_cleanup: false,
            install_core_crds: false,
            capi_manager: DEFAULT_CAPI_MANAGER.into(),
            events: Events::default(),
            denials: None,
            node_writes: Default::default(),
        }
    }
}

/// The identity CAPI core's controllers run as, by default (`clusterctl init`).
pub const DEFAULT_CAPI_MANAGER: &str = "system:serviceaccount:capi-system:capi-manager";

/// `check --embedded`: the server's inputs and the target controllers.
#[derive(Debug, Clone, Default)]
pub struct EmbeddedOptions {
    pub inputs: crate::source::embedded::EmbeddedInputs,
    /// `--provider-cmd`: the providers' controller commands, one per provider (none: the mock
    /// is the target, or, with `--crds`, nothing reconciles the provider's kinds).
    pub provider_cmd: Vec<String>,
    /// `--core-cmd`: a real CAPI core manager run as the reference of the simulation
    /// ([`core_reference`]).
    pub core_cmd: Option<String>,
    /// Provider-wide faults of the in-process target mock (`--mock-faults`).
    pub target_faults: String,
    /// How the in-process target mock reads core objects (its CAPI-like modes; tests).
    pub target_core_reads: capi_mock_provider::core::CoreReads,
}

/// The static cells of the plan.
pub fn static_matrix(plan: &Plan) -> Matrix {
    capi_contract::checks::evaluate_plan(&plan.statics, &plan.options, &plan.rules)
}

/// [`static_matrix`] with the live part of `all/rbac-aggregation` asked of the server `client`
/// reaches (when the plan has that rule): how every `check` on a server starts.
pub async fn live_static_matrix(
    client: &kube::Client,
    plan: &Plan,
    opts: &RunOptions,
) -> anyhow::Result<Matrix> {
    let mut matrix = static_matrix(plan);
    if plan.rules.iter().any(|r| r.id == effective_rbac::RBAC_RULE) {
        effective_rbac::add_effective_rbac(
            client,
            &mut matrix,
            &opts.capi_manager,
            &plan.statics.inventory,
        )
        .await?;
    }
    Ok(matrix)
}

/// Random, short, DNS-label-safe run id.
pub fn new_run_id() -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    id[..8].to_string()
}

/// Adds the scenario output to the static matrix, one cell per rule × column
/// ([`combine::merge_cells`]): columns, rules, records.
pub fn merge_into(matrix: &mut Matrix, out: &RunOutput, rules: &[Rule]) {
    combine::merge_cells(&mut matrix.results, out.results.clone(), rules);
    matrix.columns.extend(out.columns.iter().cloned());
    matrix.scenarios.extend(out.records.iter().cloned());
    matrix.notes.extend(out.notes.iter().cloned());
    let used: std::collections::BTreeSet<&str> =
        matrix.results.iter().map(|r| r.rule_id.as_str()).collect();
    matrix.rules = rules
        .iter()
        .filter(|r| used.contains(r.id.as_str()))
        .cloned()
        .collect();
    matrix.sort();
}

/// The last step of every run: `--rules` drops the columns no selected rule has a cell in.
pub fn finish(matrix: &mut Matrix, plan: &Plan) {
    if let Some(f) = &plan.filter {
        f.apply(matrix);
    }
}

/// Marks every lifecycle cell of the target inconclusive with `reason` (broken environment):
/// the cells a scenario would have judged, so also those of an IPAM pool column, which has no
/// contract of its own and is judged in v1beta2's text ([`rule_contract`]).
pub fn environment_inconclusive(
    rules: &[Rule],
    subjects: &[Subject],
    reason: &str,
) -> Vec<RuleResult> {
    let mut out = Vec::new();
    for s in subjects {
        let Some(contract) = rule_contract(&s.column) else {
            continue;
        };
        for rule in rules.iter().filter(|r| {
            is_scenario_rule(r) && r.applies_to_role(s.role()) && r.applies_to_contract(contract)
        }) {
            out.push(RuleResult {
                rule_id: rule.id.clone(),
                column: s.column.clone(),
                level: rule.level_for(Some(contract)),
                phase: Phase::Lifecycle,
                outcome: Outcome::Inconclusive,
                reason: Some(format!("environment: {reason}")),
                evidence: Vec::new(),
                duration_ms: None,
            });
        }
    }
    out
}

/// `--report-dir`: the timeline and final objects of every scenario that ran (a role without a
/// script or without a sample object has nothing to keep); returns how many were written.
pub fn write_report_dir(dir: &Path, out: &RunOutput) -> anyhow::Result<usize> {
    let kept = out
        .runs
        .iter()
        .filter(|r| r.subject.sample.is_some())
        .filter_map(|r| {
            Some(crate::report::report_dir::KeptRun {
                script: r.script?,
                column: &r.subject.column,
                timeline: &r.timeline,
                final_objects: &r.final_objects,
            })
        });
    crate::report::report_dir::write(dir, kept)
}

/// Prints what cleanup could not remove.
pub fn report_leftovers(run_id: &str, leftovers: &Leftovers) {
    for l in &leftovers.0 {
        eprintln!("leftover from run {run_id}: {l}");
    }
    if !leftovers.0.is_empty() {
        eprintln!(
            "remove them with `capi-conformance cleanup --run {run_id} --force-cleanup` (objects carry {RUN_LABEL}={run_id})"
        );
    }
}
