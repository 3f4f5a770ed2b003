//! `check` on a live cluster: discovery + static rules + lifecycle scenarios → one matrix.

use super::{cluster_baseline, interrupt};
use crate::plan::rule_filter;
use crate::plan::subjects as plan;
use crate::report::report_dir;
use crate::run::access as run_access;
use crate::source::cluster as cluster_source;
pub use crate::source::cluster::{add_effective_rbac, core_installed, read_documents};

use crate::cli::{CheckArgs, ReportArgs};
use crate::plan::subjects::PlanOptions;
use crate::report::{Matrix, Outcome, Phase, RuleResult};
use crate::scenarios::cleanup::{CleanupGuard, Leftovers};
use crate::scenarios::runner::{RunOutput, RunPlan, Side, is_scenario_rule, run_all};
use crate::scenarios::{RUN_LABEL, Settings, Subject};
use anyhow::Context;
use capi_contract::checks::{ConfigFile, LintOptions};
use capi_contract::contract::FailOn;
use capi_contract::inventory::{self, Document, Inventory};
use capi_contract::suite::{Catalog, Rule};
use std::io::IsTerminal;
use std::sync::Arc;
use std::time::Duration;

/// Options of the static part, from the report flags (same meaning as for `lint`).
pub fn lint_options(r: &ReportArgs, source: String) -> anyhow::Result<LintOptions> {
    let fail_on = FailOn::parse(&r.fail_on)
        .with_context(|| format!("--fail-on {}: unknown level", r.fail_on))?;
    let mut opts = LintOptions {
        contract: r.contract,
        fail_on,
        no_waivers: r.no_waivers,
        command: "check".into(),
        source,
        started_at: jiff::Timestamp::now(),
        ..LintOptions::default()
    };
    opts.manager_help = crate::commands::lint::read_manager_help(r)?;
    if let Some(path) = &r.config {
        let cfg = ConfigFile::load(path)?;
        opts.roles = cfg.role_overrides()?;
        opts.waivers = cfg.waivers;
    }
    opts.roles
        .extend(inventory::parse_role_overrides(&r.roles)?);
    Ok(opts)
}

/// The static matrix of a cluster: its CRDs/ClusterRoles through the static engine, plus the
/// live effective-RBAC cells.
pub async fn static_matrix(
    client: &kube::Client,
    opts: &LintOptions,
    rules: &[Rule],
    capi_manager: &str,
) -> anyhow::Result<(Matrix, Vec<Document>)> {
    let docs = read_documents(client).await?;
    let mut matrix = capi_contract::checks::evaluate_rules(docs.clone(), opts, rules)?;
    if let Some(rule) = rules.iter().find(|r| r.id == cluster_source::RBAC_RULE) {
        add_effective_rbac(client, &mut matrix, rule, capi_manager, &docs).await?;
    }
    Ok((matrix, docs))
}

/// Random, short, DNS-label-safe run id.
pub fn new_run_id() -> String {
    let id = uuid::Uuid::new_v4().simple().to_string();
    id[..8].to_string()
}

/// Timing settings from flags over the defaults for the mode.
pub fn settings(args: &CheckArgs, defaults: Settings) -> anyhow::Result<Settings> {
    let mut s = defaults;
    if let Some(q) = &args.quiet_window {
        s.quiet_window = crate::kubeconn::parse_duration(q)?.unwrap_or(Duration::ZERO);
    }
    if let Some(t) = &args.timeout {
        s.step_timeout = crate::kubeconn::parse_duration(t)?.unwrap_or(Duration::from_secs(3600));
    }
    Ok(s)
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

/// Filters subjects by the `--scenarios` selection.
pub fn filter_subjects(subjects: Vec<Subject>, selection: &Option<Vec<String>>) -> Vec<Subject> {
    match selection {
        None => subjects,
        Some(list) => subjects
            .into_iter()
            .filter(|s| {
                crate::scenarios::script_for(s.role())
                    .is_some_and(|sc| list.iter().any(|x| x.eq_ignore_ascii_case(sc)))
            })
            .collect(),
    }
}

/// Adds the scenario output to the static matrix: cells, columns, rules, records.
pub fn merge_into(matrix: &mut Matrix, out: &RunOutput, rules: &[Rule]) {
    matrix.results.extend(out.results.iter().cloned());
    matrix.columns.extend(out.columns.iter().cloned());
    matrix.scenarios.extend(out.records.iter().cloned());
    let used: std::collections::BTreeSet<&str> =
        matrix.results.iter().map(|r| r.rule_id.as_str()).collect();
    matrix.rules = rules
        .iter()
        .filter(|r| used.contains(r.id.as_str()))
        .cloned()
        .collect();
    matrix.sort();
}

/// Marks every lifecycle cell of the target inconclusive with `reason` (broken environment).
pub fn environment_inconclusive(
    rules: &[Rule],
    subjects: &[Subject],
    reason: &str,
) -> Vec<RuleResult> {
    let mut out = Vec::new();
    for s in subjects {
        let Some(contract) = s.column.contract else {
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

fn progress_enabled(mode: &str) -> bool {
    match mode {
        "always" => true,
        "never" => false,
        _ => std::io::stderr().is_terminal(),
    }
}

/// The live status line (scenario n/N, current step) when progress is on and stderr is a
/// terminal; finished scenarios still get their line. Keep the guard for the run.
pub fn live_progress(mode: &str) -> Option<crate::run::progress::LiveGuard> {
    (progress_enabled(mode) && std::io::stderr().is_terminal())
        .then(crate::run::progress::install_live)
}

/// A progress callback printing one line per finished scenario to stderr (used as is when
/// stderr is not a terminal, e.g. `--progress always` in CI logs).
pub fn progress(mode: &str) -> Option<Arc<dyn Fn(String) + Send + Sync>> {
    progress_enabled(mode).then(|| {
        let f: Arc<dyn Fn(String) + Send + Sync> = Arc::new(|line: String| eprintln!("  {line}"));
        f
    })
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

pub async fn run_on_cluster(
    args: &CheckArgs,
    conn: &crate::kubeconn::Connection,
    client: &kube::Client,
) -> anyhow::Result<i32> {
    let catalog = Catalog::embedded()?;
    let rules = catalog.rules().to_vec();
    let client = client.clone();
    let source = conn.config.cluster_url.to_string();
    let opts = lint_options(&args.report, source)?;
    let (mut matrix, docs) = static_matrix(&client, &opts, &rules, &args.capi_manager).await?;
    let selection = selected_scenarios(args.scenarios.as_deref());
    if !args.static_only && selection.as_ref().is_none_or(|s| !s.is_empty()) {
        let run_id = new_run_id();
        matrix.context.run_id = Some(run_id.clone());
        let (inv, _) = Inventory::build(docs, &opts.roles, true)?;
        let samples = load_samples(args)?;
        let mut subjects = plan::subjects(
            &inv,
            &PlanOptions {
                provider: args.provider.clone(),
                contract: args.report.contract,
                samples,
            },
        );
        subjects = filter_subjects(subjects, &selection);
        if let Some(f) = rule_filter::RuleFilter::parse(args.rules.as_deref()) {
            subjects = f.keep_subjects(&rules, subjects);
        }
        // Best effort, outside the denial recording: listing provider templates cluster-wide is
        // a permission `rbac` deliberately does not grant (pass --sample instead).
        if let Ok(plain) = conn.client() {
            plan::fill_samples_from_cluster(&plain, &mut subjects).await;
        }
        let out = scenarios_on_cluster(&client, args, &rules, subjects, &run_id).await?;
        merge_into(&mut matrix, &out, &rules);
    }
    if let Some(f) = rule_filter::RuleFilter::parse(args.rules.as_deref()) {
        f.apply(&mut matrix);
    }
    crate::report::write_outputs(
        &matrix,
        &args.report.outputs(),
        std::io::stdout().is_terminal(),
    )?;
    Ok(matrix.verdict().exit_code())
}

/// The Deployment CAPI core's controllers run in (`clusterctl init` installs it).
pub const CORE_MANAGER_DEPLOYMENT: &str = "capi-controller-manager";

/// Whether CAPI core's controller manager is deployed (any namespace).
pub async fn core_controllers_running(client: &kube::Client) -> bool {
    use k8s_openapi::api::apps::v1::Deployment;
    let api: kube::Api<Deployment> = kube::Api::all(client.clone());
    let lp = kube::api::ListParams::default()
        .fields(&format!("metadata.name={CORE_MANAGER_DEPLOYMENT}"));
    api.list(&lp).await.is_ok_and(|l| !l.items.is_empty())
}

/// Reads `--sample` files into documents.
pub fn load_samples(args: &CheckArgs) -> anyhow::Result<Vec<serde_json::Value>> {
    if args.sample.is_empty() {
        return Ok(Vec::new());
    }
    let loaded = crate::source::load_paths(&args.sample, false)?;
    Ok(loaded.documents.into_iter().map(|d| d.value).collect())
}

/// Scenarios on a real cluster: needs CAPI core's CRDs (or `--install-core-crds`, which the
/// embedded mode always does) and the mock's CRDs for the baseline.
async fn scenarios_on_cluster(
    client: &kube::Client,
    args: &CheckArgs,
    rules: &[Rule],
    subjects: Vec<Subject>,
    run_id: &str,
) -> anyhow::Result<RunOutput> {
    if !core_installed(client).await? && !args.install_core_crds {
        let reason = format!(
            "CAPI core CRDs are not installed ({} absent); install CAPI core or pass --install-core-crds",
            cluster_source::CORE_CLUSTER_CRD
        );
        return Ok(RunOutput {
            results: environment_inconclusive(rules, &subjects, &reason),
            columns: subjects.iter().map(|s| s.column.clone()).collect(),
            ..RunOutput::default()
        });
    }
    let settings = settings(args, Settings::REAL)?;
    let guard = CleanupGuard::default();
    let mock_docs = cluster_baseline::mock_crd_documents()?;
    // From the first object this run creates until its cleanup ends, Ctrl-C stops the work and
    // cleans up instead of killing the process.
    let section = interrupt::section();
    let mut baseline_mock = None;
    let work = async {
        // With consent: the missing core CRDs and the mock's CRDs (baseline), labelled with
        // the run, removed at cleanup; pre-existing CRDs are never touched.
        if args.install_core_crds {
            let mut docs = cluster_baseline::core_documents();
            docs.extend(mock_docs.clone());
            cluster_baseline::install_missing(client, docs, run_id, &guard, settings.step_timeout)
                .await?;
        }
        let with_baseline = cluster_baseline::all_present(client, &mock_docs).await?;
        // Keep CAPI core's controllers off the tool's objects when they run (design.md).
        let pause_core = core_controllers_running(client).await;
        let side = |ns: String, filter: Option<String>| Side {
            client: client.clone(),
            namespace: ns,
            run_id: run_id.to_string(),
            watch_filter: filter,
            pause_core,
            settings,
            guard: guard.clone(),
            workloads: None,
        };
        let baseline_ns = format!("capi-conformance-{run_id}-baseline");
        let baseline_filter = format!("capi-conformance-baseline-{run_id}");
        let plan = RunPlan {
            baseline: side(baseline_ns.clone(), Some(baseline_filter.clone())),
            target: side(format!("capi-conformance-{run_id}"), None),
            targets: subjects,
            // The in-process mock as baseline when its CRDs are on the cluster (pre-existing
            // or installed above); otherwise the targets run alone and the baseline cells skip.
            with_baseline,
            baseline_subjects: Vec::new(),
            parallel: args.parallel,
            rules: rules.to_vec(),
            progress: progress(&args.progress),
        };
        plan.target.create_namespace().await?;
        run_access::bind_run_role(client, &plan.target.namespace, run_id).await?;
        if with_baseline {
            plan.baseline.create_namespace().await?;
            run_access::bind_run_role(client, &plan.baseline.namespace, run_id).await?;
            // The baseline mock reconciles only the run's baseline namespace and filter.
            baseline_mock = Some(capi_mock_provider::MockProvider::start(
                client.clone(),
                capi_mock_provider::MockOptions {
                    watch_namespace: Some(baseline_ns),
                    watch_filter: Some(baseline_filter),
                    ..capi_mock_provider::MockOptions::default()
                },
            ));
        }
        let out = run_all(&plan).await;
        anyhow::Ok((out, with_baseline, plan.targets))
    };
    let finished = section.run(work).await;
    let leftovers = guard
        .cleanup(client, settings.step_timeout, args.force_cleanup)
        .await;
    if let Some(m) = baseline_mock {
        m.shutdown().await;
    }
    report_leftovers(run_id, &leftovers);
    drop(section);
    let Some(finished) = finished else {
        anyhow::bail!("interrupted (run {run_id} cleaned up)");
    };
    let (mut out, with_baseline, targets) = finished?;
    if !with_baseline {
        let skipped =
            cluster_baseline::baseline_skipped(rules, &targets, cluster_baseline::NO_MOCK_CRDS);
        for c in &skipped {
            if !out.columns.contains(&c.column) {
                out.columns.push(c.column.clone());
            }
        }
        out.results.extend(skipped);
    }
    if let Some(dir) = &args.report_dir {
        report_dir::write(dir, &out)?;
    }
    Ok(out)
}
