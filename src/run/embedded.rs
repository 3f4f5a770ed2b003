//! `check --embedded`: the embedded API server with CAPI core CRDs and the mock provider
//! installed; the mock runs in-process as the baseline. The target is the mock itself (no
//! `--crds`/`--provider-cmd`), or a provider's manifests (`--crds`: its components file or
//! `config/`, installed as `clusterctl init` would, [`crate::manifests`]) reconciled by its own
//! controller (`--provider-cmd`, started against the server's TCP kubeconfig). A provider whose
//! components declare webhooks serves them with the run's certificate ([`crate::serving`]): the
//! components' webhook Services are routed to it and the run waits until it serves.

use super::management::Management;
use super::processes::{
    ProviderProcess, WebhookProbe, start_provider, wait_for_watches, wait_until_serving_restarting,
};
use super::{
    EmbeddedOptions, RunOptions, environment_inconclusive, finish, merge_into, new_run_id,
    report_leftovers,
};
use crate::capi_core::workload::WorkloadClusters;
use crate::client_retry::TroubleLog;
use crate::plan::{Plan, ScenarioRuns};
use crate::report::Matrix;
use crate::scenarios::runner::{
    RunOutput, RunPlan, Side, cells_of, run_baseline, run_target_subjects, run_targets,
};
use crate::source::embedded::Installed;
use anyhow::Context;
use capi_contract::inventory::Document;
use capi_mock_provider::{FaultSet, MockHandle, MockOptions, MockProvider};
use std::path::{Path, PathBuf};
use std::time::Duration;

mod target;
use target::{TargetProcesses, TargetStart};

/// Replaces `{kubeconfig}`, `{namespace}` and `{watch_filter}` in the command.
pub fn expand_command(cmd: &str, kubeconfig: &str, namespace: &str, watch_filter: &str) -> String {
    crate::serving::Placeholders {
        kubeconfig: kubeconfig.into(),
        namespace: namespace.into(),
        watch_filter: watch_filter.into(),
        ..Default::default()
    }
    .expand(cmd)
}

/// Runs `plan` on `server` (filled by the embedded source, which left `installed`; `client` is
/// one of its retrying clients, reporting to `trouble`): the static cells with the live part of
/// `all/rbac-aggregation`, then the scenarios, the in-process mock as baseline first. The
/// scenarios' `<cluster>-kubeconfig` Secrets point at `workloads` (CAPI core's part,
/// [`crate::capi_core::EmbeddedCore`]).
pub async fn run(
    management: Management<'_>,
    client: &kube::Client,
    plan: &Plan,
    opts: &RunOptions,
    embedded: &EmbeddedOptions,
    prepared: Prepared<'_>,
    trouble: &TroubleLog,
) -> anyhow::Result<Matrix> {
    let Prepared {
        installed,
        workloads,
        conversion,
    } = prepared;
    let mut matrix = super::live_static_matrix(client, plan, opts).await?;
    if let Some(scenarios) = &plan.scenarios {
        // On a cluster the run id is the installation's (its objects carry it).
        let run_id = management
            .installation()
            .map_or_else(new_run_id, |i| i.run_id().to_string());
        matrix.context.run_id = Some(run_id.clone());
        if let Some(cmd) = &embedded.core_cmd {
            let notes =
                core_reference_notes(management, client, opts, embedded, cmd, &run_id).await?;
            matrix.notes.extend(notes);
        }
        let side = SideInputs {
            client,
            opts,
            trouble,
            workloads,
            conversion,
            run_id: &run_id,
        };
        let out = run_scenarios(management, plan, scenarios, embedded, installed, &side).await?;
        merge_into(&mut matrix, &out, &plan.rules);
    }
    finish(&mut matrix, plan);
    Ok(matrix)
}

/// `--core-cmd`: the core reference's report notes (each also on stderr).
async fn core_reference_notes(
    management: Management<'_>,
    client: &kube::Client,
    opts: &RunOptions,
    embedded: &EmbeddedOptions,
    cmd: &str,
    run_id: &str,
) -> anyhow::Result<Vec<crate::report::Note>> {
    let inputs = &embedded.inputs;
    let Some(file) = &inputs.core_crds else {
        anyhow::bail!("--core-cmd needs --core-crds (CAPI core's components file)");
    };
    let vars = crate::manifests::Variables::from_flags(&inputs.vars)?;
    let components: Vec<serde_json::Value> =
        crate::manifests::load(std::slice::from_ref(file), &vars, &inputs.kustomize)
            .with_context(|| format!("--core-crds {}", file.display()))?
            .into_iter()
            .map(|d| d.value)
            .collect();
    let dir = opts
        .report_dir
        .clone()
        .unwrap_or_else(|| PathBuf::from("reports"));
    std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let req = super::core_reference::Request {
        command: cmd,
        components: &components,
        run_id,
        settings: opts.settings,
        log_dir: &dir,
    };
    let outcome = super::core_reference::compare(management, client, &req).await?;
    let mut lines = outcome.notes();
    if let Some(n) = &outcome.launch_note {
        lines.insert(0, format!("core manager: {n}"));
    }
    Ok(lines
        .into_iter()
        .map(|message| {
            eprintln!("--core-cmd: {message}");
            crate::report::Note {
                source: "--core-cmd".into(),
                message,
            }
        })
        .collect())
}

/// What filling the server left for the run: the embedded source's [`Installed`] and CAPI
/// core's workload clusters.
#[derive(Clone, Copy)]
pub struct Prepared<'a> {
    pub installed: &'a Installed,
    pub workloads: &'a WorkloadClusters,
    /// The run's conversion webhook (core's and, for the baseline and an in-process target
    /// mock, the mock's).
    pub conversion: &'a crate::capi_core::webhook::ConversionWebhook,
}

/// What both sides of a run share.
struct SideInputs<'a> {
    client: &'a kube::Client,
    opts: &'a RunOptions,
    trouble: &'a TroubleLog,
    workloads: &'a WorkloadClusters,
    conversion: &'a crate::capi_core::webhook::ConversionWebhook,
    run_id: &'a str,
}

/// The scenario runs of the plan: baseline on the in-process mock, then the target.
async fn run_scenarios(
    management: Management<'_>,
    plan: &Plan,
    scenarios: &ScenarioRuns,
    embedded: &EmbeddedOptions,
    installed: &Installed,
    inputs: &SideInputs<'_>,
) -> anyhow::Result<RunOutput> {
    let SideInputs {
        client,
        opts,
        trouble,
        workloads,
        conversion,
        run_id,
    } = *inputs;
    let settings = opts.settings;
    let rules = &plan.rules;
    // The mock is the target without `--crds`, or when the components are its own.
    let mock_is_target = embedded.inputs.crds.is_empty() || installed.mock_components;
    // The embedded server is the run's own: what a crashed provider left finalizing in the
    // run's namespaces is released at cleanup.
    let guard = management.cleanup_guard();
    let baseline_ns = format!("capi-conformance-{run_id}-baseline");
    let baseline_filter = format!("capi-conformance-baseline-{run_id}");
    let target_ns = format!("capi-conformance-{run_id}");
    let target_filter = format!("capi-conformance-target-{run_id}");
    let side = |ns: &str, filter: Option<String>| Side {
        client: client.clone(),
        namespace: ns.to_string(),
        run_id: run_id.to_string(),
        watch_filter: filter,
        pause_core: management.core_running(),
        settings,
        guard: guard.clone(),
        events: opts.events.clone(),
        trouble: trouble.clone(),
        workloads: Some(workloads.clone()),
        ledger: management.ledger(),
        node_writes: opts.node_writes.clone(),
    };
    let baseline = side(&baseline_ns, Some(baseline_filter.clone()));
    // Target objects carry the target filter when the target controller filters on it.
    let filtered = if embedded.provider_cmd.is_empty() {
        mock_is_target
    } else {
        embedded
            .provider_cmd
            .iter()
            .any(|c| c.contains("{watch_filter}"))
    };
    let target_side = side(&target_ns, filtered.then(|| target_filter.clone()));
    baseline.create_namespace().await?;
    target_side.create_namespace().await?;

    let baseline_mock = MockProvider::start(
        client.clone(),
        MockOptions {
            watch_namespace: Some(baseline_ns.clone()),
            watch_filter: Some(baseline_filter),
            ..MockOptions::default()
        },
    );
    let mut target = TargetProcesses::default();
    let run_plan = RunPlan {
        baseline,
        target: target_side,
        targets: scenarios.targets.clone(),
        with_baseline: true,
        baseline_subjects: scenarios.baseline.clone(),
        parallel: opts.parallel,
        rules: rules.clone(),
    };
    // Baseline first; the target (in-process faulty mock or --provider-cmd) starts only after
    // it, so a target that changes shared objects (the mock's CRD-level faults, webhook
    // configurations for the mock's groups) cannot disturb the baseline, and a provider
    // process (a Go manager, on a machine of few cores) cannot slow it: what the baseline
    // could not pass is the environment's. An in-process mock target that changes nothing
    // shared runs beside the baseline: separate namespaces and watch filters, the same code, a
    // few milliseconds of CPU per reconcile (docs/performance.md).
    let concurrent = embedded.provider_cmd.is_empty()
        && mock_is_target
        && installed.deferred.is_empty()
        && !capi_mock_provider::crd_faults::changes_crds(&FaultSet::parse(&embedded.target_faults));
    let start = TargetStart {
        management,
        client,
        embedded,
        report_dir: opts.report_dir.as_deref(),
        run_id,
        target_ns: &target_ns,
        target_filter: &target_filter,
        mock_is_target,
        // A provider process may take a while to start on a loaded machine (a debug build,
        // four runs at once in CI took more than one step timeout); the wait ends at its
        // first watch, so a healthy provider never waits this long.
        wait: settings.step_timeout * 3,
        serving: installed.serving.as_ref(),
        deferred: &installed.deferred,
        launches: &installed.launches,
        conversion,
    };
    let phases = async {
        let baseline_runs = if concurrent {
            None
        } else {
            Some(run_baseline(&run_plan).await)
        };
        match target.start(&start).await {
            Ok(()) => {
                if installed.serving.is_some() {
                    // The samples pass the provider's webhooks only now that it serves them
                    // (without webhooks they were dry-run before any scenario).
                    plan.dry_run_samples(client, &target_ns).await?;
                }
                let mut out = match baseline_runs {
                    Some(b) => run_targets(&run_plan, b).await,
                    None => {
                        let (b, t) =
                            tokio::join!(run_baseline(&run_plan), run_target_subjects(&run_plan));
                        cells_of(&run_plan, b, t)
                    }
                };
                out.notes = std::mem::take(&mut target.notes);
                Ok(out)
            }
            Err(reason) => Ok(RunOutput {
                results: environment_inconclusive(rules, &run_plan.targets, &reason),
                columns: run_plan.targets.iter().map(|s| s.column.clone()).collect(),
                ..Default::default()
            }),
        }
    };
    // Until the target processes are stopped, Ctrl-C stops the work and cleans up.
    let section = super::interrupt::section();
    let finished: Option<anyhow::Result<RunOutput>> = section.run(phases).await;
    // The embedded server's namespaces go at once; a cluster's namespace controller takes a
    // few seconds, and the managers their reconciles of what it deletes.
    let wait = if management.is_embedded() {
        Duration::from_millis(500)
    } else {
        settings.step_timeout.min(Duration::from_secs(15))
    };
    let leftovers = guard.cleanup(client, wait, true).await;
    target.stop(management).await;
    baseline_mock.shutdown().await;
    drop(section);
    let Some(out) = finished else {
        anyhow::bail!("interrupted (run {run_id})");
    };
    let out = out?;
    report_leftovers(run_id, &leftovers);
    if let Some(dir) = &opts.report_dir {
        super::write_report_dir(dir, &out)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_placeholders_expand() {
        assert_eq!(
            expand_command(
                "m --kubeconfig {kubeconfig} -n {namespace} -f {watch_filter}",
                "/k",
                "ns",
                "f"
            ),
            "m --kubeconfig /k -n ns -f f"
        );
    }
}
