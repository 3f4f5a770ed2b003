//! The plan stage: what one run judges, chosen once from the inventory and the options, the
//! same way for `lint` and every `check` mode.
//!
//! A [`Plan`] is the rules the run judges ([`rule_filter`] for `--rules`), the static rule ×
//! column cells (the contract crate's [`StaticPlan`]: the inventory and its columns) and, for
//! `check`, the scenario × column runs ([`subjects`]: the provider's kinds per contract, the
//! mock's baseline kinds). The run stage (`crate::run`) executes it; nothing after this stage
//! chooses what is judged.

pub mod rule_filter;
pub mod subjects;

use crate::scenarios::Subject;
use capi_contract::checks::{LintOptions, StaticPlan};
use capi_contract::inventory::{Document, InputError};
use capi_contract::model::ContractSelection;
use capi_contract::suite::Rule;
pub use rule_filter::RuleFilter;
use serde_json::Value;
use std::path::PathBuf;
use subjects::{MOCK_GROUP_SUFFIX, PlanOptions};

/// What the scenarios of a `check` are asked to drive.
#[derive(Debug, Clone, Default)]
pub struct ScenarioOptions {
    /// `--provider`: only this provider's kinds.
    pub provider: Option<String>,
    pub contract: ContractSelection,
    /// Documents of the `--sample` files.
    pub samples: Vec<Value>,
    /// The `--sample` files (named when a sample is not valid for its CRD).
    pub sample_files: Vec<PathBuf>,
    /// `--scenarios`: only these scripts (`None`: all).
    pub selection: Option<Vec<String>>,
    /// Which kinds are targets: `Some(true)` only the mock's (the embedded mock as target),
    /// `Some(false)` all but the mock's (a provider installed beside the baseline mock),
    /// `None` every kind.
    pub mock_targets: Option<bool>,
    /// Plan the mock's kinds found in the inventory as baseline subjects.
    pub baseline_from_inventory: bool,
    /// Only the targets some judged scenario rule applies to (set with `--rules`).
    pub only_judged: bool,
    /// `--kinds`: only target kinds matching one of these globs get lifecycle scenarios (`None`:
    /// every kind); the others keep their static cells and skip the scenario rules as "not
    /// selected", which is the user's stated choice, not a missing sample.
    pub kinds: Option<Vec<String>>,
}

/// The scenario × column runs of a plan.
#[derive(Debug, Clone, Default)]
pub struct ScenarioRuns {
    /// The provider's kinds under each contract (target columns).
    pub targets: Vec<Subject>,
    /// The `--sample` files the targets' samples come from.
    pub sample_files: Vec<PathBuf>,
    /// The mock's kinds (baseline columns); a role and contract missing here is played by the
    /// mock's defaults ([`crate::scenarios::baseline::mock_subject`]).
    pub baseline: Vec<Subject>,
}

/// Everything a run judges.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The rules judged, in catalog order (only those `--rules` selects).
    pub rules: Vec<Rule>,
    /// `--rules`, kept to trim columns no selected rule has a cell in.
    pub filter: Option<RuleFilter>,
    /// The options of the static engine (levels, waivers, roles).
    pub options: LintOptions,
    /// The static rule × column cells.
    pub statics: StaticPlan,
    /// The scenario runs; `None` when the run judges static rules only (`lint`,
    /// `check --static-only`, `--scenarios none`).
    pub scenarios: Option<ScenarioRuns>,
}

impl Plan {
    /// Plans `docs` for `rules` (the catalog's, narrowed by `filter`), with scenarios when
    /// `scenarios` is given.
    pub fn build(
        docs: Vec<Document>,
        mut options: LintOptions,
        rules: &[Rule],
        filter: Option<RuleFilter>,
        scenarios: Option<&ScenarioOptions>,
    ) -> Result<Plan, InputError> {
        let rules: Vec<Rule> = match &filter {
            Some(f) => rules.iter().filter(|r| f.matches(&r.id)).cloned().collect(),
            None => rules.to_vec(),
        };
        let scenarios = scenarios.filter(|s| s.selection.as_ref().is_none_or(|l| !l.is_empty()));
        if scenarios.is_some() {
            options.scenario_skip = NO_SCENARIO_HERE.into();
        }
        let statics = StaticPlan::build(docs, &options, &rules)?;
        let scenarios = scenarios.map(|s| scenario_runs(&statics, &rules, s));
        Ok(Plan {
            rules,
            filter,
            options,
            statics,
            scenarios,
        })
    }

    /// Fills the samples the targets lack from the cluster (an existing template of the kind).
    pub async fn fill_samples_from_cluster(&mut self, client: &kube::Client) {
        if let Some(s) = &mut self.scenarios {
            subjects::fill_samples_from_cluster(client, &mut s.targets).await;
        }
    }

    /// Checks the targets' `--sample` objects against the installed CRDs (a server-side dry-run
    /// in `namespace`) before any scenario runs: a sample the CRD rejects is a usage error
    /// ([`crate::scenarios::samples::BadSample`]). Nothing to check without `--sample` files.
    pub async fn dry_run_samples(
        &self,
        client: &kube::Client,
        namespace: &str,
    ) -> Result<(), crate::scenarios::samples::BadSample> {
        let Some(s) = &self.scenarios else {
            return Ok(());
        };
        if s.sample_files.is_empty() {
            return Ok(());
        }
        let files: Vec<String> = s
            .sample_files
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        crate::scenarios::samples::dry_run_samples(client, namespace, &s.targets, &files.join(", "))
            .await
    }
}

/// Why a scenario rule has no verdict in a column of a `check` whose scenarios ran elsewhere.
pub const NO_SCENARIO_HERE: &str = "no lifecycle scenario judged this column (its kind has no scenario, no contract label, or was not selected)";

/// Why scenario rules have no verdict in `check --static-only` (or `--scenarios none`).
pub const STATIC_ONLY: &str = "lifecycle scenarios not run (--static-only or --scenarios none)";

fn scenario_runs(statics: &StaticPlan, rules: &[Rule], opts: &ScenarioOptions) -> ScenarioRuns {
    let inv = &statics.inventory;
    let targets = subjects::subjects(
        inv,
        &PlanOptions {
            provider: opts.provider.clone(),
            contract: opts.contract,
            samples: opts.samples.clone(),
        },
    )
    .into_iter()
    .filter(|s| {
        opts.mock_targets
            .is_none_or(|mock| s.resource.group.ends_with(MOCK_GROUP_SUFFIX) == mock)
    })
    .filter(|s| {
        opts.kinds.as_ref().is_none_or(|globs| {
            globs
                .iter()
                .any(|g| rule_filter::glob_match(g, &s.resource.kind))
        })
    })
    .filter(|s| match &opts.selection {
        None => true,
        // SC-webhooks runs after every kind's own script.
        Some(list) => crate::scenarios::script_for(s.role()).is_some_and(|sc| {
            list.iter()
                .any(|x| x.eq_ignore_ascii_case(sc) || x.eq_ignore_ascii_case("SC-webhooks"))
        }),
    })
    .filter(|s| !opts.only_judged || rule_filter::judged_by_some(rules, s))
    .collect();
    let baseline = if opts.baseline_from_inventory {
        subjects::baseline_subjects(inv)
    } else {
        Vec::new()
    };
    ScenarioRuns {
        targets,
        sample_files: opts.sample_files.clone(),
        baseline,
    }
}

/// Which scenarios `--scenarios` selects (`None` = all; empty = none).
pub fn selected_scenarios(arg: Option<&str>) -> Option<Vec<String>> {
    match arg {
        None => None,
        Some(s) if s.trim() == "none" => Some(Vec::new()),
        Some(s) => Some(
            s.split(',')
                .map(|x| x.trim().to_string())
                .filter(|x| !x.is_empty())
                .collect(),
        ),
    }
}
