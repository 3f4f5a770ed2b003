//! `check` on a live cluster: the static cells with the live part of `all/rbac-aggregation`,
//! then the scenarios (the in-process mock as baseline when its CRDs are on the cluster), in
//! run namespaces the run creates, binds its role in and cleans up.

use super::{
    RunOptions, cluster_baseline, environment_inconclusive, interrupt, merge_into, new_run_id,
    report_leftovers,
};
use crate::client_retry::TroubleLog;
use crate::plan::Plan;
use crate::report::Matrix;
use crate::run::access as run_access;
use crate::scenarios::Subject;
use crate::scenarios::cleanup::CleanupGuard;
use crate::scenarios::runner::{RunOutput, RunPlan, Side, run_all};
use crate::source::cluster::{CORE_CLUSTER_CRD, core_installed};
use capi_contract::suite::Rule;

/// Runs `plan` on the cluster `client` reaches (a client whose retries report to `trouble`).
pub async fn run(
    client: &kube::Client,
    plan: &Plan,
    opts: &RunOptions,
    trouble: &TroubleLog,
) -> anyhow::Result<Matrix> {
    let mut matrix = super::live_static_matrix(client, plan, opts).await?;
    if let Some(scenarios) = &plan.scenarios {
        let run_id = new_run_id();
        matrix.context.run_id = Some(run_id.clone());
        let out = scenarios_on_cluster(
            client,
            opts,
            trouble,
            &plan.rules,
            scenarios.targets.clone(),
            &run_id,
        )
        .await?;
        merge_into(&mut matrix, &out, &plan.rules);
    }
    super::finish(&mut matrix, plan);
    Ok(matrix)
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

/// Scenarios on a real cluster: needs CAPI core's CRDs (or `--install-core-crds`, which the
/// embedded mode always does) and the mock's CRDs for the baseline.
async fn scenarios_on_cluster(
    client: &kube::Client,
    args: &RunOptions,
    trouble: &TroubleLog,
    rules: &[Rule],
    subjects: Vec<Subject>,
    run_id: &str,
) -> anyhow::Result<RunOutput> {
    if !core_installed(client).await? && !args.install_core_crds {
        let reason = format!(
            "CAPI core CRDs are not installed ({} absent); install CAPI core or pass --install-core-crds",
            CORE_CLUSTER_CRD
        );
        return Ok(RunOutput {
            results: environment_inconclusive(rules, &subjects, &reason),
            columns: subjects.iter().map(|s| s.column.clone()).collect(),
            ..RunOutput::default()
        });
    }
    let settings = args.settings;
    let guard = CleanupGuard::default();
    let mock_docs = cluster_baseline::mock_crd_documents()?;
    // From the first object this run creates until its cleanup ends, Ctrl-C stops the work and
    // cleans up instead of killing the process.
    let section = interrupt::section();
    let mut baseline_mock = None;
    // The conversion of the CRDs the run installs (core's and the mock's versions differ in
    // shape), served here for the run.
    let mut conversion = None;
    let work = async {
        // With consent: the missing core CRDs and the mock's CRDs (baseline), labelled with
        // the run, removed at cleanup; pre-existing CRDs are never touched.
        if args.install_core_crds {
            let core = crate::capi_core::EmbeddedCore::start(
                client.clone(),
                crate::capi_core::crds::CoreCrds::Minimal,
            )
            .await?;
            let docs = cluster_baseline::installable_documents(&core)?;
            conversion = Some(core);
            cluster_baseline::install_missing(client, docs, run_id, &guard, settings.step_timeout)
                .await?;
        }
        let with_baseline = cluster_baseline::all_present(client, &mock_docs).await?;
        // Keep CAPI core's controllers off the tool's objects when they run (docs/architecture.md "Lifecycle scenarios").
        let pause_core = core_controllers_running(client).await;
        let side = |ns: String, filter: Option<String>| Side {
            client: client.clone(),
            namespace: ns,
            run_id: run_id.to_string(),
            watch_filter: filter,
            pause_core,
            settings,
            guard: guard.clone(),
            events: args.events.clone(),
            trouble: trouble.clone(),
            workloads: None,
            ledger: None,
            node_writes: args.node_writes.clone(),
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
    let finished = match &args.denials {
        // A refused request ends the run: cleanup follows, and `check` reports the denial.
        Some(denials) => tokio::select! {
            finished = section.run(work) => finished,
            () = denials.denied() => Some(Err(anyhow::anyhow!("a request of the run was refused"))),
        },
        None => section.run(work).await,
    };
    let leftovers = guard
        .cleanup(client, settings.step_timeout, args.force_cleanup)
        .await;
    if let Some(m) = baseline_mock {
        m.shutdown().await;
    }
    if let Some(c) = conversion {
        c.shutdown().await;
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
        super::write_report_dir(dir, &out)?;
    }
    Ok(out)
}
