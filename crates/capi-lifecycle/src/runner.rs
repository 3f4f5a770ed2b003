//! Runs the scripts for a set of subjects, the baseline (mock) first, and turns verdicts into
//! matrix cells: a rule the baseline could not pass is `inconclusive (environment: …)` for the
//! target, never `fail`.

use super::cleanup::CleanupGuard;
use super::env::Env;
use super::script::ScriptRun;
use super::timeline::Recorder;
use super::verdicts::Verdicts;
use super::{RUN_LABEL, Settings, Subject, script_for};
use crate::client_retry::TroubleLog;
use crate::events::{Event, Events, ScenarioEnd};
use capi_contract::contract::Role;
use capi_contract::model::{Outcome, Phase, RuleResult, ScenarioRecord, StepRecord, TimelineEntry};
use capi_contract::suite::{Rule, RuleKind};
use k8s_openapi::api::core::v1::Namespace;
use kube::api::{Api, PostParams};
use std::time::Instant;

/// Where one side (baseline or target) runs.
#[derive(Clone)]
pub struct Side {
    pub client: kube::Client,
    pub namespace: String,
    pub run_id: String,
    pub watch_filter: Option<String>,
    pub pause_core: bool,
    pub settings: Settings,
    pub guard: CleanupGuard,
    /// Where the side's scenarios tell their progress.
    pub events: Events,
    /// The requests of the run's clients that failed past their budget.
    pub trouble: TroubleLog,
    /// The workload clusters `<cluster>-kubeconfig` points at (embedded runs).
    pub workloads: Option<crate::capi_core::workload::WorkloadClusters>,
    /// The writes the embedded server refused with an injected fault (`--server-faults`) and
    /// the states it stored.
    pub ledger: Option<embedded_apiserver::Ledger>,
    /// What a control-plane node's agent writes into its workload cluster (`--workload-object`,
    /// [`crate::core_sim::node_agent`]).
    pub node_writes: crate::core_sim::node_agent::NodeWrites,
}

impl Side {
    /// Creates the side's namespace (labelled with the run id) and tracks it for cleanup.
    pub async fn create_namespace(&self) -> anyhow::Result<()> {
        let ns: Namespace = serde_json::from_value(serde_json::json!({
            "metadata": {"name": self.namespace, "labels": {RUN_LABEL: self.run_id}}
        }))?;
        let api: Api<Namespace> = Api::all(self.client.clone());
        // Tracked first: a create interrupted by Ctrl-C may still have happened. The name
        // carries the run id, so an existing one is this run's too.
        let resource = kube::discovery::ApiResource::erase::<Namespace>(&());
        self.guard.track(&resource, None, &self.namespace);
        match api.create(&PostParams::default(), &ns).await {
            Ok(_) => {}
            Err(kube::Error::Api(s)) if s.code == 409 => {}
            Err(e) => anyhow::bail!("cannot create namespace {}: {e}", self.namespace),
        }
        Ok(())
    }
}

/// What one script did for one subject.
#[derive(Debug, Clone)]
pub struct SubjectRun {
    pub subject: Subject,
    pub script: Option<&'static str>,
    pub verdicts: Verdicts,
    pub steps: Vec<StepRecord>,
    pub timeline: Vec<TimelineEntry>,
    pub environment_error: Option<String>,
    pub duration_ms: u64,
    /// Last observed state of every watched object (for `--report-dir`).
    pub final_objects: Vec<serde_json::Value>,
}

impl SubjectRun {
    pub fn failed(&self) -> bool {
        self.environment_error.is_some() || self.verdicts.failed()
    }

    /// The scenario record for reports, with its whole timeline whatever the verdict (runs are
    /// compared through [`capi_contract::model::Matrix::without_timings`]).
    pub fn record(&self) -> Option<ScenarioRecord> {
        let script = self.script?;
        Some(ScenarioRecord {
            scenario: script.to_string(),
            column: self.subject.column.clone(),
            steps: self.steps.clone(),
            timeline: self.timeline.clone(),
        })
    }
}

/// Runs the script of `subject` on `side`.
pub async fn run_subject(side: &Side, subject: &Subject) -> SubjectRun {
    let started = Instant::now();
    let trouble_since = tokio::time::Instant::now();
    let script = script_for(subject.role());
    let mut out = SubjectRun {
        subject: subject.clone(),
        script,
        verdicts: Verdicts::default(),
        steps: Vec::new(),
        timeline: Vec::new(),
        environment_error: None,
        duration_ms: 0,
        final_objects: Vec::new(),
    };
    if script.is_none() || subject.sample.is_none() {
        return out;
    }
    let env = Env {
        client: side.client.clone(),
        namespace: side.namespace.clone(),
        run_id: side.run_id.clone(),
        watch_filter: side.watch_filter.clone(),
        pause_core: side.pause_core,
        recorder: Recorder::new(),
        guard: side.guard.clone(),
        settings: side.settings,
        round_trips: Default::default(),
        events: side.events.clone(),
        workloads: side.workloads.clone(),
        ledger: side.ledger.clone(),
        node_writes: side.node_writes.clone(),
        trouble: side.trouble.clone(),
        core_version: subject.core_version,
        scopes: super::scope::Scopes::new(
            subject.companions.cluster_scoped.clone(),
            &side.namespace,
        ),
    };
    // The objects the sample refers to exist before the scenario, as on a real cluster.
    let resolved = match env.resolve_sample_references(subject).await {
        Ok(r) => r,
        Err(e) => {
            out.environment_error = Some(e.to_string());
            return out;
        }
    };
    let subject = resolved.as_ref().unwrap_or(subject);
    let mut run = ScriptRun::new(&env, subject);
    // Every wait is bounded by the step timeout; this only guards against a hung API server.
    let overall = side
        .settings
        .step_timeout
        .max(side.settings.backoff_allowance)
        * 40
        + side.settings.quiet_window * 20;
    let finished = tokio::time::timeout(overall, async {
        match subject.role() {
            Role::InfraCluster => super::infra_cluster::run(&mut run).await,
            Role::InfraMachine => super::infra_machine::run(&mut run).await,
            Role::BootstrapConfig => super::bootstrap::run(&mut run).await,
            Role::ControlPlane => super::control_plane::run(&mut run).await,
            Role::InfraMachinePool => super::machine_pool::run(&mut run).await,
            Role::IpamPool => super::ipam::run(&mut run).await,
            r if r.is_template() => super::template::run(&mut run).await,
            _ => {}
        }
        // What only the provider's webhooks decide, for every kind (SC-webhooks).
        super::webhooks::run(&mut run).await;
    })
    .await;
    if finished.is_err() {
        run.environment_error = Some(format!(
            "scenario did not finish within {}s",
            overall.as_secs()
        ));
        run.end_step();
    }
    out.verdicts = std::mem::take(&mut run.verdicts);
    out.steps = std::mem::take(&mut run.steps);
    out.environment_error = run.environment_error.take();
    let found = side.trouble.in_namespace(
        &side.namespace,
        trouble_since,
        &super::server_trouble::resources(&out.subject),
    );
    super::server_trouble::apply(&mut out.verdicts, &mut out.environment_error, &found);
    drop(run);
    out.timeline = env.recorder.entries();
    out.final_objects = env.recorder.last_states();
    out.duration_ms = u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX);
    displayed(&env.scopes, &mut out);
    out
}

/// The names a run's report shows: cluster-scoped objects without their side's tag
/// ([`super::scope::Scopes::display`]), the same in every run.
fn displayed(scopes: &super::scope::Scopes, out: &mut SubjectRun) {
    for e in &mut out.timeline {
        e.object = scopes.display(&e.object);
    }
    for v in out.verdicts.0.values_mut() {
        v.reason = v.reason.as_deref().map(|r| scopes.display(r));
        for e in &mut v.evidence {
            e.message = scopes.display(&e.message);
            e.object = e.object.as_deref().map(|o| scopes.display(o).into());
        }
    }
    out.environment_error = out.environment_error.as_deref().map(|e| scopes.display(e));
}

/// The contract whose text a column's rules are read in: the column's, or for an IPAM pool (a
/// kind CAPI reaches without a contract label) v1beta2's, which for pools says what v1beta1's
/// says (as the static checks' `CheckCtx::rule_contract`).
pub fn rule_contract(
    column: &capi_contract::model::Column,
) -> Option<capi_contract::contract::Contract> {
    column
        .contract
        .or((column.role == Role::IpamPool).then_some(capi_contract::contract::Contract::V1Beta2))
}

/// Whether a catalog rule is judged by a lifecycle scenario.
pub fn is_scenario_rule(rule: &Rule) -> bool {
    rule.kind == RuleKind::Scenario || rule.scenario.is_some()
}

/// The lifecycle cells of one subject's column. `baseline`: the mock's run of the same role and
/// contract, if the target is not itself the baseline.
pub fn cells(rules: &[Rule], run: &SubjectRun, baseline: Option<&SubjectRun>) -> Vec<RuleResult> {
    let column = &run.subject.column;
    let Some(contract) = rule_contract(column) else {
        return Vec::new();
    };
    let script = run.script.unwrap_or("a scenario");
    rules
        .iter()
        .filter(|r| {
            is_scenario_rule(r) && r.applies_to_role(column.role) && r.applies_to_contract(contract)
        })
        .map(|rule| {
            let (outcome, reason, evidence) = decide(rule, run, baseline, script);
            RuleResult {
                rule_id: rule.id.clone(),
                column: column.clone(),
                level: rule.level_for(Some(contract)),
                phase: Phase::Lifecycle,
                outcome,
                reason,
                evidence,
                duration_ms: Some(run.duration_ms),
            }
        })
        .collect()
}

fn decide(
    rule: &Rule,
    run: &SubjectRun,
    baseline: Option<&SubjectRun>,
    script: &str,
) -> (Outcome, Option<String>, Vec<capi_contract::model::Evidence>) {
    if run.script.is_none() {
        return (
            Outcome::Skip,
            Some("no scenario drives this role".into()),
            Vec::new(),
        );
    }
    if run.subject.sample.is_none() {
        return (
            Outcome::Skip,
            Some(capi_contract::model::NO_SAMPLE_REASON.into()),
            Vec::new(),
        );
    }
    if let Some(b) = baseline {
        if let Some(e) = &b.environment_error {
            return (
                Outcome::Inconclusive,
                Some(format!(
                    "environment: the baseline mock could not run {script}: {e}"
                )),
                Vec::new(),
            );
        }
        if let Some(v) = b.verdicts.get(&rule.id)
            && matches!(v.outcome, Outcome::Fail | Outcome::Inconclusive)
        {
            return (
                Outcome::Inconclusive,
                Some(format!(
                    "environment: the baseline mock failed this rule too ({})",
                    v.reason.clone().unwrap_or_default()
                )),
                Vec::new(),
            );
        }
    }
    match run.verdicts.get(&rule.id) {
        Some(v) => (v.outcome, v.reason.clone(), v.evidence.clone()),
        None => match &run.environment_error {
            Some(e) => (
                Outcome::Inconclusive,
                Some(format!(
                    "environment: {script} stopped before judging this rule: {e}"
                )),
                Vec::new(),
            ),
            None => (
                Outcome::Skip,
                Some(format!(
                    "not driven by {script}: the scenario has no step that judges this rule yet"
                )),
                Vec::new(),
            ),
        },
    }
}

/// Everything one `check` asks of the scenario engine.
pub struct RunPlan {
    pub baseline: Side,
    pub target: Side,
    pub targets: Vec<Subject>,
    /// Run the mock baseline first (off only when the caller has no mock to run).
    pub with_baseline: bool,
    /// The mock's subjects (from the installed mock CRDs); missing roles fall back to
    /// [`super::baseline::mock_subject`].
    pub baseline_subjects: Vec<Subject>,
    pub parallel: usize,
    pub rules: Vec<Rule>,
}

/// What the scenario engine contributes to the matrix.
#[derive(Debug, Default)]
pub struct RunOutput {
    pub results: Vec<RuleResult>,
    pub columns: Vec<capi_contract::model::Column>,
    pub records: Vec<ScenarioRecord>,
    pub runs: Vec<SubjectRun>,
    /// What the run noted on the way (a provider process started again).
    pub notes: Vec<capi_contract::model::Note>,
}

/// Longest first: the lifecycle scripts before the templates' (a few requests each), contract
/// v1beta1 before v1beta2 (no Paused condition to end its pause windows early), and within a
/// contract the scripts with the most steps first (the control plane's, which makes Machines,
/// then the cluster's pause windows, then the bootstrap and machine scripts). With fewer slots
/// than subjects, a long script started last would end the run late
/// (longest-processing-time-first scheduling); the order does not change any verdict.
fn longest_first(subjects: &mut [Subject]) {
    subjects.sort_by_key(|s| {
        let role = s.role();
        let length = match role {
            Role::ControlPlane => 0,
            Role::InfraCluster => 1,
            Role::BootstrapConfig => 2,
            Role::InfraMachine => 3,
            Role::InfraMachinePool => 4,
            _ => 5,
        };
        (
            role.is_template() || super::script_for(role).is_none(),
            s.column.contract != Some(capi_contract::contract::Contract::V1Beta1),
            length,
        )
    });
}

async fn run_many(side: &Side, mut subjects: Vec<Subject>, plan: &RunPlan) -> Vec<SubjectRun> {
    use futures::StreamExt;
    longest_first(&mut subjects);
    side.events.emit(Event::ScenariosPlanned {
        count: subjects.len(),
    });
    futures::stream::iter(subjects)
        .map(|s| async move {
            let run = run_subject(side, &s).await;
            side.events.emit(Event::ScenarioFinished {
                scenario: format!("{} {}", run.script.unwrap_or("-"), s.column.id()),
                end: if run.environment_error.is_some() {
                    ScenarioEnd::Inconclusive
                } else if run.verdicts.failed() {
                    ScenarioEnd::Fail
                } else {
                    ScenarioEnd::Ok
                },
                duration_ms: run.duration_ms,
            });
            run
        })
        .buffer_unordered(plan.parallel.max(1))
        .collect()
        .await
}

/// Runs the baseline (mock) subjects first, then the targets; builds the cells.
pub async fn run_all(plan: &RunPlan) -> RunOutput {
    let baseline_runs = run_baseline(plan).await;
    run_targets(plan, baseline_runs).await
}

/// The baseline phase: the mock's run of every (role, contract) the targets need.
pub async fn run_baseline(plan: &RunPlan) -> Vec<SubjectRun> {
    // One baseline run per role, contract and scope: a cluster-scoped kind's baseline is the
    // mock's cluster-scoped kind of the role, where it has one.
    let mut wanted: Vec<(Role, Option<capi_contract::contract::Contract>, bool)> = plan
        .targets
        .iter()
        .filter(|s| rule_contract(&s.column).is_some())
        .map(Subject::baseline_key)
        .collect();
    wanted.sort();
    wanted.dedup();
    let baseline_subjects: Vec<Subject> = if plan.with_baseline {
        wanted
            .iter()
            .filter_map(|(r, c, scoped)| {
                plan.baseline_subjects
                    .iter()
                    .find(|s| s.baseline_key() == (*r, *c, *scoped))
                    .cloned()
                    .or_else(|| {
                        super::baseline::mock_subject_scoped(
                            *r,
                            *c,
                            super::baseline::BASELINE_PROVIDER,
                            true,
                            *scoped,
                        )
                    })
            })
            .collect()
    } else {
        Vec::new()
    };
    run_many(&plan.baseline, baseline_subjects, plan).await
}

/// The target phase (after [`run_baseline`]): runs the targets and builds every cell.
pub async fn run_targets(plan: &RunPlan, baseline_runs: Vec<SubjectRun>) -> RunOutput {
    let target_runs = run_target_subjects(plan).await;
    cells_of(plan, baseline_runs, target_runs)
}

/// The targets' scripts alone (their cells need the baseline's runs: [`cells_of`]).
pub async fn run_target_subjects(plan: &RunPlan) -> Vec<SubjectRun> {
    run_many(&plan.target, plan.targets.clone(), plan).await
}

/// Every cell of the baseline's and the targets' runs: a target cell without a baseline run
/// of its role and contract is inconclusive, as is one whose rule the baseline could not pass.
pub fn cells_of(
    plan: &RunPlan,
    baseline_runs: Vec<SubjectRun>,
    target_runs: Vec<SubjectRun>,
) -> RunOutput {
    let mut out = RunOutput::default();
    for b in &baseline_runs {
        out.results.extend(cells(&plan.rules, b, None));
        out.columns.push(b.subject.column.clone());
        out.records.extend(b.record());
    }
    for t in &target_runs {
        let base = baseline_runs
            .iter()
            .find(|b| b.subject.baseline_key() == t.subject.baseline_key());
        let mut c = cells(&plan.rules, t, base);
        if plan.with_baseline && base.is_none() {
            for cell in &mut c {
                if matches!(cell.outcome, Outcome::Pass | Outcome::Fail) {
                    cell.outcome = Outcome::Inconclusive;
                    cell.reason =
                        Some("environment: no baseline run for this role and contract".into());
                }
            }
        }
        out.results.extend(c);
        out.columns.push(t.subject.column.clone());
        out.records.extend(t.record());
    }
    out.runs = baseline_runs.into_iter().chain(target_runs).collect();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use capi_contract::contract::{Contract, Level};
    use capi_contract::model::{Column, Evidence};
    use kube::discovery::ApiResource;

    fn rule(id: &str) -> Rule {
        Rule {
            id: id.into(),
            title: id.into(),
            level: Level::Must,
            levels: Default::default(),
            condition: None,
            contracts: vec![Contract::V1Beta2],
            roles: vec![Role::InfraMachine],
            kind: RuleKind::Scenario,
            doc: "https://example.invalid".into(),
            description: String::new(),
            remediation: String::new(),
            check: None,
            field_check: Default::default(),
            scenario: Some("SC-inframachine".into()),
            faults: vec![],
        }
    }

    fn run(baseline: bool, verdicts: Verdicts) -> SubjectRun {
        SubjectRun {
            subject: Subject {
                column: Column {
                    provider: "p".into(),
                    kind: "PMachine".into(),
                    role: Role::InfraMachine,
                    contract: Some(Contract::V1Beta2),
                    baseline,
                },
                resource: ApiResource {
                    group: "g".into(),
                    version: "v1beta2".into(),
                    api_version: "g/v1beta2".into(),
                    kind: "PMachine".into(),
                    plural: "pmachines".into(),
                },
                base: None,
                sample: Some(serde_json::json!({})),
                schema: None,
                companions: Default::default(),
                core_version: "v1beta2",
            },
            script: Some("SC-inframachine"),
            verdicts,
            steps: vec![],
            timeline: vec![],
            environment_error: None,
            duration_ms: 1,
            final_objects: vec![],
        }
    }

    #[test]
    fn baseline_failure_makes_target_inconclusive_and_unjudged_rules_skip() {
        use capi_contract::rule_ids::infra_machine::{
            DELETE as A, FINALIZER as B, PROVIDER_ID as C,
        };
        let rules = vec![rule(&A), rule(&B), rule(&C)];
        let mut bv = Verdicts::default();
        bv.fail(A, "mock broke", Evidence::msg("x"));
        bv.pass(B);
        let mut tv = Verdicts::default();
        tv.fail(A, "target broke", Evidence::msg("y"));
        tv.fail(B, "target broke", Evidence::msg("y"));
        let base = run(true, bv);
        let target = run(false, tv);
        let cells = cells(&rules, &target, Some(&base));
        let by = |id: &str| cells.iter().find(|c| c.rule_id == id).unwrap().outcome;
        assert_eq!(by(&A), Outcome::Inconclusive);
        assert_eq!(by(&B), Outcome::Fail);
        assert_eq!(by(&C), Outcome::Skip);
        assert!(cells.iter().all(|c| c.phase == Phase::Lifecycle));
    }

    #[test]
    fn no_sample_skips_everything() {
        let mut t = run(false, Verdicts::default());
        t.subject.sample = None;
        let cells = cells(&[rule("a")], &t, None);
        assert_eq!(cells[0].outcome, Outcome::Skip);
        assert!(cells[0].reason.as_deref().unwrap().contains("no sample"));
        // The cell the verdict counts as unjudged for lack of a sample.
        assert!(capi_contract::model::is_unjudged_for_lack_of_sample(
            &cells[0]
        ));
    }
}
