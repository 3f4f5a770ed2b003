//! `check --embedded`: the embedded API server with CAPI core CRDs and the mock provider
//! installed; the mock runs in-process as the baseline. The target is the mock itself (no
//! `--crds`/`--provider-cmd`), or a provider's manifests (`--crds`: its components file or
//! `config/`, installed as `clusterctl init` would, [`crate::manifests`]) reconciled by its own
//! controller (`--provider-cmd`, started against the server's TCP kubeconfig).

use super::{
    EmbeddedOptions, RunOptions, effective_rbac, environment_inconclusive, finish, merge_into,
    new_run_id, report_leftovers, static_matrix,
};
use crate::capi_core::workload::WorkloadClusters;
use crate::client_retry::TroubleLog;
use crate::plan::{Plan, ScenarioRuns};
use crate::report::Matrix;
use crate::report::report_dir;
use crate::scenarios::cleanup::CleanupGuard;
use crate::scenarios::runner::{RunOutput, RunPlan, Side, run_baseline, run_targets};
use anyhow::Context;
use capi_mock_provider::{FaultSet, MockHandle, MockOptions, MockProvider};
use embedded_apiserver::{EmbeddedServer, Listener};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

/// A started `--provider-cmd` process, its log streamed to a file.
struct ProviderProcess {
    child: tokio::process::Child,
    /// Kills the provider's process group if the run is aborted before [`Self::stop`].
    _abort: Option<super::interrupt::AbortKill>,
}

impl ProviderProcess {
    /// Stops the provider and everything it started: the command runs in its own process
    /// group (`sh -c` may fork the provider instead of exec-ing it), which gets SIGTERM, then
    /// SIGKILL for whatever is still there after 3 s.
    async fn stop(mut self) {
        #[cfg(unix)]
        if let Some(group) = self.child.id() {
            use super::interrupt::signal_group;
            signal_group("TERM", group);
            let deadline = tokio::time::Instant::now() + Duration::from_secs(3);
            let _ = tokio::time::timeout_at(deadline, self.child.wait()).await;
            while signal_group("0", group) && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            signal_group("KILL", group);
        }
        let _ = self.child.kill().await;
    }
}

/// What starting the target needs.
struct TargetStart<'a> {
    server: &'a EmbeddedServer,
    client: &'a kube::Client,
    embedded: &'a EmbeddedOptions,
    /// `--report-dir` (the provider's log goes there).
    report_dir: Option<&'a Path>,
    run_id: &'a str,
    target_ns: &'a str,
    target_filter: &'a str,
    mock_is_target: bool,
    /// How long to wait for a `--provider-cmd` provider's first watch.
    wait: Duration,
}

/// The target's controllers: an in-process faulty mock, or a `--provider-cmd` process.
#[derive(Default)]
struct TargetProcesses {
    mock: Option<MockHandle>,
    provider: Option<ProviderProcess>,
    listener: Option<Listener>,
    private_kubeconfig: Option<super::private_file::PrivateFile>,
}

impl TargetProcesses {
    /// Starts the target; `Err` is the environment problem that makes its cells inconclusive.
    async fn start(&mut self, t: &TargetStart<'_>) -> Result<(), String> {
        if let Some(cmd) = &t.embedded.provider_cmd {
            let subscribers = t.server.subscribers();
            let l = t
                .server
                .listen("127.0.0.1:0".parse().map_err(|e| format!("{e}"))?)
                .await
                .map_err(|e| format!("{e:#}"))?;
            let dir = t
                .report_dir
                .map_or_else(|| PathBuf::from("reports"), Path::to_path_buf);
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            // The kubeconfig holds the server's token: a private temp file, not the report dir.
            let kc = super::private_file::PrivateFile::create(
                &format!("capi-conformance-{}.kubeconfig", t.run_id),
                &l.kubeconfig_yaml(),
            )
            .map_err(|e| format!("{e:#}"))?;
            let kubeconfig = kc.path().to_path_buf();
            self.private_kubeconfig = Some(kc);
            self.listener = Some(l);
            let expanded = expand_command(
                cmd,
                &kubeconfig.display().to_string(),
                t.target_ns,
                t.target_filter,
            );
            let log = dir.join(format!("provider-{}.log", t.run_id));
            self.provider = Some(start_provider(&expanded, &log).map_err(|e| format!("{e:#}"))?);
            wait_for_new_watch(t.server, subscribers, t.wait).await;
        } else if t.mock_is_target {
            let faults = FaultSet::parse(&t.embedded.target_faults);
            capi_mock_provider::crd_faults::apply_crd_faults(t.client, &faults)
                .await
                .map_err(|e| format!("applying the target mock's CRD faults: {e}"))?;
            self.mock = Some(MockProvider::start(
                t.client.clone(),
                MockOptions {
                    watch_namespace: Some(t.target_ns.to_string()),
                    watch_filter: Some(t.target_filter.to_string()),
                    faults,
                    core: t.embedded.target_core_reads,
                    ..MockOptions::default()
                },
            ));
        }
        Ok(())
    }

    async fn stop(&mut self) {
        if let Some(p) = self.provider.take() {
            p.stop().await;
        }
        if let Some(l) = self.listener.take() {
            l.shutdown().await;
        }
        self.private_kubeconfig = None;
        if let Some(m) = self.mock.take() {
            m.shutdown().await;
        }
    }
}

/// Waits (at most `limit`) until the server has more watch subscribers than `before`: the
/// started provider watches, so whatever it does first (the mock's CRD faults) is in place.
/// A provider that never watches only costs the wait.
async fn wait_for_new_watch(server: &EmbeddedServer, before: usize, limit: Duration) {
    let deadline = tokio::time::Instant::now() + limit;
    while server.subscribers() <= before && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// Replaces `{kubeconfig}`, `{namespace}` and `{watch_filter}` in the command.
pub fn expand_command(cmd: &str, kubeconfig: &str, namespace: &str, watch_filter: &str) -> String {
    cmd.replace("{kubeconfig}", kubeconfig)
        .replace("{namespace}", namespace)
        .replace("{watch_filter}", watch_filter)
}

fn start_provider(cmd: &str, log: &std::path::Path) -> anyhow::Result<ProviderProcess> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    let out =
        std::fs::File::create(log).with_context(|| format!("cannot create {}", log.display()))?;
    let err = out.try_clone()?;
    let mut command = tokio::process::Command::new("sh");
    command
        .arg("-c")
        .arg(cmd)
        .stdin(Stdio::null())
        .stdout(Stdio::from(out))
        .stderr(Stdio::from(err))
        .kill_on_drop(true);
    // Its own process group, so stopping it reaches whatever the command starts.
    #[cfg(unix)]
    command.process_group(0);
    let child = command
        .spawn()
        .with_context(|| format!("cannot start --provider-cmd {cmd:?}"))?;
    // The group id is the child's pid (`process_group(0)`).
    let abort = child.id().map(super::interrupt::kill_group_on_abort);
    Ok(ProviderProcess {
        child,
        _abort: abort,
    })
}

/// Runs `plan` on `server` (filled by the embedded source; `client` is one of its retrying
/// clients, reporting to `trouble`): the static cells with the live part of
/// `all/rbac-aggregation`, then the scenarios, the in-process mock as baseline first. The
/// scenarios' `<cluster>-kubeconfig` Secrets point at `workloads` (CAPI core's part,
/// [`crate::capi_core::EmbeddedCore`]).
pub async fn run(
    server: &EmbeddedServer,
    client: &kube::Client,
    plan: &Plan,
    opts: &RunOptions,
    embedded: &EmbeddedOptions,
    trouble: &TroubleLog,
    workloads: &WorkloadClusters,
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
    if let Some(scenarios) = &plan.scenarios {
        let run_id = new_run_id();
        matrix.context.run_id = Some(run_id.clone());
        let side = SideInputs {
            client,
            opts,
            trouble,
            workloads,
            run_id: &run_id,
        };
        let out = run_scenarios(server, plan, scenarios, embedded, &side).await?;
        merge_into(&mut matrix, &out, &plan.rules);
    }
    finish(&mut matrix, plan);
    Ok(matrix)
}

/// What both sides of a run share.
struct SideInputs<'a> {
    client: &'a kube::Client,
    opts: &'a RunOptions,
    trouble: &'a TroubleLog,
    workloads: &'a WorkloadClusters,
    run_id: &'a str,
}

/// The scenario runs of the plan: baseline on the in-process mock, then the target.
async fn run_scenarios(
    server: &EmbeddedServer,
    plan: &Plan,
    scenarios: &ScenarioRuns,
    embedded: &EmbeddedOptions,
    inputs: &SideInputs<'_>,
) -> anyhow::Result<RunOutput> {
    let SideInputs {
        client,
        opts,
        trouble,
        workloads,
        run_id,
    } = *inputs;
    let settings = opts.settings;
    let rules = &plan.rules;
    let mock_is_target = embedded.inputs.crds.is_empty();
    let guard = CleanupGuard::default();
    let baseline_ns = format!("capi-conformance-{run_id}-baseline");
    let baseline_filter = format!("capi-conformance-baseline-{run_id}");
    let target_ns = format!("capi-conformance-{run_id}");
    let target_filter = format!("capi-conformance-target-{run_id}");
    let side = |ns: &str, filter: Option<String>| Side {
        client: client.clone(),
        namespace: ns.to_string(),
        run_id: run_id.to_string(),
        watch_filter: filter,
        pause_core: false,
        settings,
        guard: guard.clone(),
        events: opts.events.clone(),
        trouble: trouble.clone(),
        workloads: Some(workloads.clone()),
    };
    let baseline = side(&baseline_ns, Some(baseline_filter.clone()));
    // Target objects carry the target filter when the target controller filters on it.
    let filtered = embedded
        .provider_cmd
        .as_deref()
        .map_or(mock_is_target, |c| c.contains("{watch_filter}"));
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
    // it, so a target that changes shared objects (the mock's CRD-level faults) cannot disturb
    // the baseline, and the target scenarios wait until the target provider watches.
    let phases = async {
        let baseline_runs = run_baseline(&run_plan).await;
        let start = TargetStart {
            server,
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
        };
        match target.start(&start).await {
            Ok(()) => run_targets(&run_plan, baseline_runs).await,
            Err(reason) => RunOutput {
                results: environment_inconclusive(rules, &run_plan.targets, &reason),
                columns: run_plan.targets.iter().map(|s| s.column.clone()).collect(),
                ..Default::default()
            },
        }
    };
    // Until the target processes are stopped, Ctrl-C stops the work and cleans up.
    let section = super::interrupt::section();
    let finished = section.run(phases).await;
    let leftovers = guard
        .cleanup(client, Duration::from_millis(500), true)
        .await;
    target.stop().await;
    baseline_mock.shutdown().await;
    drop(section);
    let Some(out) = finished else {
        anyhow::bail!("interrupted (run {run_id})");
    };
    report_leftovers(run_id, &leftovers);
    if let Some(dir) = &opts.report_dir {
        report_dir::write(dir, &out)?;
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
