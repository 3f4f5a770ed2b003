//! `check --embedded`: the embedded API server with CAPI core CRDs and the mock provider
//! installed; the mock runs in-process as the baseline. The target is the mock itself (no
//! `--crds`/`--provider-cmd`), or a provider's manifests (`--crds`: its components file or
//! `config/`, installed as `clusterctl init` would, [`crate::manifests`]) reconciled by its own
//! controller (`--provider-cmd`, started against the server's TCP kubeconfig).

use super::cluster::{
    environment_inconclusive, filter_subjects, lint_options, load_samples, merge_into, new_run_id,
    progress, report_leftovers, selected_scenarios, settings, static_matrix,
};
use crate::cli::CheckArgs;
use crate::client_retry::{RetryPolicy, RetryingClient};
use crate::plan::subjects::{self as plan, MOCK_GROUP_SUFFIX, PlanOptions};
use crate::report::Matrix;
use crate::report::report_dir;
use crate::scenarios::cleanup::CleanupGuard;
use crate::scenarios::runner::{RunPlan, Side, run_baseline, run_targets};
use crate::scenarios::{Settings, Subject};
use anyhow::Context;
use capi_contract::inventory::Inventory;
use capi_contract::suite::Catalog;
use capi_mock_provider::core_crds::core_crd_documents;
use capi_mock_provider::crds::mock_crds;
use capi_mock_provider::manifests::{aggregated_cluster_role, manager_cluster_role};
use capi_mock_provider::{FaultSet, MockHandle, MockOptions, MockProvider};
use embedded_apiserver::{EmbeddedServer, Listener, ServerOptions};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

/// What `check --embedded` runs, beyond the command-line flags (tests set the mock's faults).
#[derive(Debug, Clone, Default)]
pub struct EmbeddedOptions {
    /// Provider-wide faults of the in-process target mock.
    pub target_faults: String,
    /// How the in-process target mock reads core objects (its CAPI-like modes).
    pub target_core_reads: capi_mock_provider::core::CoreReads,
}

/// The documents every embedded run installs: core CRDs, the mock's CRDs and ClusterRoles.
pub fn base_documents() -> anyhow::Result<Vec<Value>> {
    base_documents_with(core_crd_documents())
}

/// [`base_documents`] with the given core CRDs (and the Services their conversion names),
/// e.g. those of [`crate::capi_core::EmbeddedCore`].
pub fn base_documents_with(core: Vec<Value>) -> anyhow::Result<Vec<Value>> {
    let mut docs = core;
    for crd in mock_crds().context("building the mock provider CRDs")? {
        docs.push(serde_json::to_value(crd)?);
    }
    docs.push(aggregated_cluster_role());
    docs.push(manager_cluster_role());
    docs.extend(core_manager_rbac());
    Ok(docs)
}

/// What CAPI core's own RBAC contributes (its manager role, aggregated role and binding; see
/// [`capi_mock_provider::core_rbac`]), so the effective-RBAC rule asks the same question as on a real
/// cluster.
pub fn core_manager_rbac() -> Vec<Value> {
    capi_mock_provider::core_rbac::core_manager_rbac()
}

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
    args: &'a CheckArgs,
    extra: &'a EmbeddedOptions,
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
        if let Some(cmd) = &t.args.provider_cmd {
            let subscribers = t.server.subscribers();
            let l = t
                .server
                .listen("127.0.0.1:0".parse().map_err(|e| format!("{e}"))?)
                .await
                .map_err(|e| format!("{e:#}"))?;
            let dir = t
                .args
                .report_dir
                .clone()
                .unwrap_or_else(|| PathBuf::from("reports"));
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
            let faults = FaultSet::parse(&t.extra.target_faults);
            capi_mock_provider::crd_faults::apply_crd_faults(t.client, &faults)
                .await
                .map_err(|e| format!("applying the target mock's CRD faults: {e}"))?;
            self.mock = Some(MockProvider::start(
                t.client.clone(),
                MockOptions {
                    watch_namespace: Some(t.target_ns.to_string()),
                    watch_filter: Some(t.target_filter.to_string()),
                    faults,
                    core: t.extra.target_core_reads,
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

/// Installs the `--crds` manifests as `clusterctl init` would (variables substituted, creation
/// order, CRDs Established first); objects of kinds nothing serves are skipped: each is named on
/// stderr and returned as a report note.
async fn install_provider_manifests(
    client: &kube::Client,
    args: &CheckArgs,
) -> anyhow::Result<Vec<crate::report::Note>> {
    if args.crds.is_empty() {
        if !args.vars.is_empty() {
            anyhow::bail!("--var needs --crds (it sets clusterctl variables of those manifests)");
        }
        return Ok(Vec::new());
    }
    let vars = crate::manifests::Variables::from_flags(&args.vars)?;
    let report = crate::manifests::load_and_install(client, &args.crds, &vars)
        .await
        .context("installing --crds on the embedded server")?;
    Ok(crate::manifests::skipped_lines(&report)
        .into_iter()
        .map(|(source, message)| {
            eprintln!("{source}: {message}");
            crate::report::Note { source, message }
        })
        .collect())
}

/// Runs `check --embedded` and returns the matrix (outputs are the caller's).
pub async fn embedded_matrix(args: &CheckArgs, extra: &EmbeddedOptions) -> anyhow::Result<Matrix> {
    embedded_matrix_on(&EmbeddedServer::new(ServerOptions::default()), args, extra).await
}

/// [`embedded_matrix`] on a given (fresh) server, which outlives the run (tests inspect it).
pub async fn embedded_matrix_on(
    server: &EmbeddedServer,
    args: &CheckArgs,
    extra: &EmbeddedOptions,
) -> anyhow::Result<Matrix> {
    if let Some(spec) = &args.server_faults {
        server
            .faults()
            .apply_spec(spec)
            .context("--server-faults")?;
    }
    let settings = settings(args, Settings::EMBEDDED)?;
    // CAPI core's part: its CRDs (minimal, or CAPI's released ones with --core-crds) served at
    // v1beta1 and v1beta2 through the tool's conversion webhook (crate::capi_core).
    let core_crds = match &args.core_crds {
        Some(file) => crate::capi_core::crds::CoreCrds::Released(file.clone()),
        None => crate::capi_core::crds::CoreCrds::Minimal,
    };
    let core = crate::capi_core::EmbeddedCore::start(server.client(), core_crds).await?;
    core.route(server);
    let installed = server
        .apply_documents(base_documents_with(core.documents.clone())?)
        .await
        .context("installing core and mock CRDs on the embedded server");
    if let Err(e) = installed {
        core.shutdown().await;
        return Err(e);
    }
    let result = embedded_run(server, args, extra, settings, &core).await;
    core.shutdown().await;
    result
}

async fn embedded_run(
    server: &EmbeddedServer,
    args: &CheckArgs,
    extra: &EmbeddedOptions,
    settings: Settings,
    core: &crate::capi_core::EmbeddedCore,
) -> anyhow::Result<Matrix> {
    let catalog = Catalog::embedded()?;
    let rules = catalog.rules().to_vec();
    let client = server.retrying_client_with(RetryPolicy::within(settings.step_timeout));
    let notes = install_provider_manifests(&client, args).await?;
    let opts = lint_options(&args.report, "embedded".into())?;
    let (mut matrix, docs) = static_matrix(&client, &opts, &rules, &args.capi_manager).await?;
    matrix.notes.extend(notes);
    let selection = selected_scenarios(args.scenarios.as_deref());
    if args.static_only || selection.as_ref().is_some_and(Vec::is_empty) {
        if let Some(f) = crate::plan::rule_filter::RuleFilter::parse(args.rules.as_deref()) {
            f.apply(&mut matrix);
        }
        return Ok(matrix);
    }
    let run_id = new_run_id();
    matrix.context.run_id = Some(run_id.clone());
    let mock_is_target = args.crds.is_empty();
    let (inv, _) = Inventory::build(docs, &opts.roles, true)?;
    let baseline_subjects = plan::baseline_subjects(&inv);
    let mut subjects: Vec<Subject> = plan::subjects(
        &inv,
        &PlanOptions {
            provider: args.provider.clone(),
            contract: args.report.contract,
            samples: load_samples(args)?,
        },
    )
    .into_iter()
    .filter(|s| s.resource.group.ends_with(MOCK_GROUP_SUFFIX) == mock_is_target)
    .collect();
    subjects = filter_subjects(subjects, &selection);
    let rule_filter = crate::plan::rule_filter::RuleFilter::parse(args.rules.as_deref());
    if let Some(f) = &rule_filter {
        subjects = f.keep_subjects(&rules, subjects);
    }
    plan::fill_samples_from_cluster(&client, &mut subjects).await;
    if !args.sample.is_empty() {
        let files: Vec<String> = args
            .sample
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        crate::scenarios::samples::dry_run_samples(
            &client,
            "default",
            &subjects,
            &files.join(", "),
        )
        .await?;
    }

    let guard = CleanupGuard::default();
    let baseline_ns = format!("capi-conformance-{run_id}-baseline");
    let baseline_filter = format!("capi-conformance-baseline-{run_id}");
    let target_ns = format!("capi-conformance-{run_id}");
    let target_filter = format!("capi-conformance-target-{run_id}");
    let side = |ns: &str, filter: Option<String>| Side {
        client: client.clone(),
        namespace: ns.to_string(),
        run_id: run_id.clone(),
        watch_filter: filter,
        pause_core: false,
        settings,
        guard: guard.clone(),
        workloads: Some(core.workloads.clone()),
    };
    let baseline = side(&baseline_ns, Some(baseline_filter.clone()));
    // Target objects carry the target filter when the target controller filters on it.
    let filtered = args
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
    let plan = RunPlan {
        baseline,
        target: target_side,
        targets: subjects,
        with_baseline: true,
        baseline_subjects,
        parallel: args.parallel,
        rules: rules.clone(),
        progress: progress(&args.progress),
    };
    // Baseline first; the target (in-process faulty mock or --provider-cmd) starts only after
    // it, so a target that changes shared objects (the mock's CRD-level faults) cannot disturb
    // the baseline, and the target scenarios wait until the target provider watches.
    let phases = async {
        let baseline_runs = run_baseline(&plan).await;
        let start = TargetStart {
            server,
            client: &client,
            args,
            extra,
            run_id: &run_id,
            target_ns: &target_ns,
            target_filter: &target_filter,
            mock_is_target,
            // A provider process may take a while to start on a loaded machine (a debug build,
            // four runs at once in CI took more than one step timeout); the wait ends at its
            // first watch, so a healthy provider never waits this long.
            wait: settings.step_timeout * 3,
        };
        match target.start(&start).await {
            Ok(()) => run_targets(&plan, baseline_runs).await,
            Err(reason) => crate::scenarios::runner::RunOutput {
                results: environment_inconclusive(&rules, &plan.targets, &reason),
                columns: plan.targets.iter().map(|s| s.column.clone()).collect(),
                ..Default::default()
            },
        }
    };
    // Until the target processes are stopped, Ctrl-C stops the work and cleans up.
    let section = super::interrupt::section();
    let finished = section.run(phases).await;
    let leftovers = guard
        .cleanup(&client, Duration::from_millis(500), true)
        .await;
    target.stop().await;
    baseline_mock.shutdown().await;
    drop(section);
    let Some(out) = finished else {
        anyhow::bail!("interrupted (run {run_id})");
    };
    report_leftovers(&run_id, &leftovers);
    if let Some(dir) = &args.report_dir {
        report_dir::write(dir, &out)?;
    }
    merge_into(&mut matrix, &out, &rules);
    if let Some(f) = &rule_filter {
        f.apply(&mut matrix);
    }
    Ok(matrix)
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
