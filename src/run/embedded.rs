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
use crate::report::report_dir;
use crate::scenarios::runner::{
    RunOutput, RunPlan, Side, cells_of, run_baseline, run_target_subjects, run_targets,
};
use crate::source::embedded::Installed;
use anyhow::Context;
use capi_contract::inventory::Document;
use capi_mock_provider::{FaultSet, MockHandle, MockOptions, MockProvider};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What starting the target needs.
struct TargetStart<'a> {
    management: Management<'a>,
    client: &'a kube::Client,
    embedded: &'a EmbeddedOptions,
    /// `--report-dir` (the providers' logs go there).
    report_dir: Option<&'a Path>,
    run_id: &'a str,
    target_ns: &'a str,
    target_filter: &'a str,
    mock_is_target: bool,
    /// How long to wait for a `--provider-cmd` provider's first watch (and its webhook server).
    wait: Duration,
    /// Certificates and Services of the `--crds` components' webhooks (`--provider-cmd` only).
    serving: Option<&'a crate::serving::Plan>,
    /// Components installed only when the target starts
    /// ([`crate::source::embedded::Installed::deferred`]).
    deferred: &'a [Document],
    /// Each `--provider-cmd` manager's Deployment args and env (same order as the commands).
    launches: &'a [Option<super::manager_launch::ManagerLaunch>],
    /// The run's conversion webhook, which converts an in-process target mock's objects.
    conversion: &'a crate::capi_core::webhook::ConversionWebhook,
}

/// One `--provider-cmd` of the run: its command, how its Deployment runs it, where it logs.
struct Command<'a> {
    cmd: &'a str,
    launch: Option<&'a super::manager_launch::ManagerLaunch>,
    log: PathBuf,
}

impl Command<'_> {
    /// Whether the command, or the Deployment's args appended to it, use placeholder `p`.
    fn uses(&self, p: &str) -> bool {
        crate::serving::placeholders::uses(self.cmd, p) || self.launch.is_some_and(|l| l.uses(p))
    }

    fn uses_webhooks(&self) -> bool {
        crate::serving::placeholders::uses_webhooks(self.cmd)
            || self.launch.is_some_and(|l| l.uses_webhooks())
    }

    /// The namespace of the Deployment it runs (its webhook Services are routed to it).
    fn namespace(&self) -> Option<&str> {
        self.launch
            .and_then(|l| l.deployment.split_once('/'))
            .map(|(ns, _)| ns)
    }
}

/// The target's controllers: an in-process faulty mock, or the `--provider-cmd` processes.
#[derive(Default)]
struct TargetProcesses {
    mock: Option<MockHandle>,
    providers: Vec<ProviderProcess>,
    /// The managers' kubeconfig (and the embedded server's listener it points at).
    access: Option<super::management::ProviderAccess>,
    /// `{webhook-cert-dir}`, removed at stop (and on abort); shared by every provider (one
    /// serving certificate names every webhook Service of the components).
    /// (Without the components' webhooks, each command that takes them has its own.)
    cert_dirs: Vec<(crate::serving::CertDir, super::interrupt::AbortRemove)>,
    /// Removes the private kubeconfig on abort (it holds the server's token).
    kubeconfig_on_abort: Option<super::interrupt::AbortRemove>,
    /// Service ports routed to a provider (`namespace`, `name`, `port`, where), unrouted at
    /// stop.
    routes: Vec<(String, String, u16, std::net::SocketAddr)>,
    /// What starting the providers took beyond one start each (restarts), for the report.
    notes: Vec<crate::report::Note>,
}

impl TargetProcesses {
    /// Starts the target; `Err` is the environment problem that makes its cells inconclusive.
    async fn start(&mut self, t: &TargetStart<'_>) -> Result<(), String> {
        let cmds = &t.embedded.provider_cmd;
        if !cmds.is_empty() {
            // The kubeconfig holds the server's token or the user's credentials: a private
            // temp file, not the report dir.
            let access = t
                .management
                .provider_access(&format!("capi-conformance-{}.kubeconfig", t.run_id))
                .await
                .map_err(|e| format!("{e:#}"))?;
            let dir = t
                .report_dir
                .map_or_else(|| PathBuf::from("reports"), Path::to_path_buf);
            std::fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            let base = crate::serving::Placeholders {
                kubeconfig: access.kubeconfig.path().display().to_string(),
                namespace: t.target_ns.to_string(),
                watch_filter: t.target_filter.to_string(),
                ..Default::default()
            };
            self.kubeconfig_on_abort = Some(super::interrupt::remove_dir_on_abort(
                access.kubeconfig.path(),
            ));
            self.access = Some(access);
            let commands: Vec<Command<'_>> = cmds
                .iter()
                .enumerate()
                .map(|(i, cmd)| {
                    let launch = t.launches.get(i).and_then(Option::as_ref);
                    let log = match (cmds.len(), launch) {
                        (1, _) => format!("provider-{}.log", t.run_id),
                        (_, Some(l)) if !l.deployment.is_empty() => format!(
                            "provider-{}-{}-{}.log",
                            t.run_id,
                            i + 1,
                            l.deployment.rsplit('/').next().unwrap_or_default()
                        ),
                        _ => format!("provider-{}-{}.log", t.run_id, i + 1),
                    };
                    Command {
                        cmd,
                        launch,
                        log: dir.join(log),
                    }
                })
                .collect();
            let mut started = Vec::with_capacity(commands.len());
            for i in 0..commands.len() {
                let mut placeholders = base.clone();
                let probes = self.serve_webhooks(t, &commands, i, &mut placeholders)?;
                started.push((placeholders, probes));
            }
            for (namespace, name, port, addr) in &self.routes {
                t.management
                    .route_service(t.client, (namespace, name, *port), *addr)
                    .await
                    .map_err(|e| format!("{e:#}"))?;
            }
            if !t.deferred.is_empty() {
                t.management
                    .install_components(t.client, t.deferred.to_vec())
                    .await
                    .map_err(|e| {
                        format!("installing the provider's webhook configurations: {e}")
                    })?;
            }
            for (c, (placeholders, _)) in commands.iter().zip(&started) {
                let mut expanded = placeholders.expand(c.cmd);
                let mut env: &[super::manager_launch::env::EnvVar] = &[];
                if let Some(launch) = c.launch {
                    expanded = launch.command_line(&expanded, placeholders);
                    env = &launch.env;
                }
                self.providers
                    .push(start_provider(&expanded, env, &c.log).map_err(|e| format!("{e:#}"))?);
            }
            // Every provider comes up at once; the first that does not is the reason.
            let waits = self.providers.iter_mut().zip(&started).zip(&commands).map(
                |((provider, (placeholders, probes)), c)| async move {
                    let cmd = c.cmd;
                    wait_until_serving_restarting(provider, probes, placeholders.health_addr, t.wait)
                        .await
                        .map(|restarts| {
                            restarts
                                .into_iter()
                                .map(|r| {
                                    let message = format!("--provider-cmd {cmd:?}: {r}");
                                    eprintln!("{message}");
                                    crate::report::Note {
                                        source: "--provider-cmd".into(),
                                        message,
                                    }
                                })
                                .collect::<Vec<_>>()
                        })
                        .map_err(|why| {
                            let hint = if !probes.is_empty() && !c.uses_webhooks() {
                                "; the components declare webhooks: give the command {webhook-cert-dir} and {webhook-port} (see docs/providers.md \"Your own manager: webhooks and serving certificates\")"
                            } else {
                                ""
                            };
                            let msg = format!(
                                "--provider-cmd {:?}: {why} (its output: {}){hint}",
                                c.cmd,
                                c.log.display()
                            );
                            eprintln!("{msg}");
                            msg
                        })
                },
            );
            for r in futures::future::join_all(waits).await {
                self.notes.extend(r?);
            }
            if let Some(l) = self.access.as_ref().and_then(|a| a.listener.as_ref()) {
                wait_for_watches(l, commands.len() as u64, t.wait).await;
            }
        } else if t.mock_is_target {
            let faults = FaultSet::parse(&t.embedded.target_faults);
            if faults.has(crate::rule_ids::all::CONVERSION_LOSSLESS) {
                // The run serves this mock's conversion webhook: it converts the target's
                // objects as the faulty mock would.
                t.conversion.lossy_in(t.target_ns);
            }
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

    /// For command `index` of `commands`: the serving certificate (`{webhook-cert-dir}`, one
    /// for all), free ports for the placeholders it uses, and the routes of its webhook
    /// Services: those in its Deployment's namespace (every Service no other command's
    /// Deployment claims goes to the first command), to `{webhook-port}` when it takes it, else
    /// to each Service's `targetPort`. Returns where its webhook server will be (address, TLS
    /// server name).
    fn serve_webhooks(
        &mut self,
        t: &TargetStart<'_>,
        commands: &[Command<'_>],
        index: usize,
        placeholders: &mut crate::serving::Placeholders,
    ) -> Result<Vec<WebhookProbe>, String> {
        use crate::serving::placeholders::{free_addr, free_port};
        let c = &commands[index];
        let local;
        let serving = match t.serving {
            Some(s) => Some(s),
            None if c.uses_webhooks() => {
                local = crate::serving::Plan::local().map_err(|e| e.to_string())?;
                Some(&local)
            }
            None => None,
        };
        if c.uses("{metrics-addr}") {
            placeholders.metrics_addr = Some(free_addr().map_err(|e| format!("free port: {e}"))?);
        }
        if c.uses("{health-addr}") {
            placeholders.health_addr = Some(free_addr().map_err(|e| format!("free port: {e}"))?);
        }
        let Some(serving) = serving else {
            return Ok(Vec::new());
        };
        if self.cert_dirs.is_empty() || t.serving.is_none() {
            let dir = crate::serving::CertDir::create(
                &format!("capi-conformance-{}-webhook-", t.run_id),
                &serving.certs,
            )
            .map_err(|e| e.to_string())?;
            let abort = super::interrupt::remove_dir_on_abort(dir.path());
            self.cert_dirs.push((dir, abort));
        }
        if let Some((dir, _)) = self.cert_dirs.last() {
            placeholders.webhook_cert_dir = Some(dir.path().display().to_string());
            placeholders.webhook_cert_path = Some(dir.cert_path().display().to_string());
            placeholders.webhook_key_path = Some(dir.key_path().display().to_string());
            placeholders.webhook_ca_path = Some(dir.ca_path().display().to_string());
        }
        if c.uses("{webhook-port}") {
            placeholders.webhook_port = Some(free_port().map_err(|e| format!("free port: {e}"))?);
        }
        let owner = |namespace: &str| {
            commands
                .iter()
                .position(|c| c.namespace() == Some(namespace))
                .unwrap_or(0)
        };
        let client_tls = serving.certs.client_config().map_err(|e| e.to_string())?;
        let mut probes: Vec<WebhookProbe> = Vec::new();
        for svc in serving
            .services
            .iter()
            .filter(|s| owner(&s.namespace) == index)
        {
            let Some(port) = placeholders.webhook_port.or(svc.target_port) else {
                eprintln!(
                    "Service {}/{} port {} (called by {}): not routed: its targetPort is not known from the components and the command has no {{webhook-port}}",
                    svc.namespace,
                    svc.name,
                    svc.port,
                    svc.used_by.join(", ")
                );
                continue;
            };
            let addr = std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port));
            self.routes
                .push((svc.namespace.clone(), svc.name.clone(), svc.port, addr));
            let [server_name, _] = svc.dns_names();
            if !probes.iter().any(|p| p.addr == addr) {
                probes.push(WebhookProbe {
                    addr,
                    server_name,
                    tls: client_tls.clone(),
                });
            }
        }
        if let (Some(port), true) = (placeholders.webhook_port, probes.is_empty()) {
            probes.push(WebhookProbe {
                addr: std::net::SocketAddr::from((std::net::Ipv4Addr::LOCALHOST, port)),
                server_name: "localhost".into(),
                tls: client_tls,
            });
        }
        Ok(probes)
    }

    async fn stop(&mut self, management: Management<'_>) {
        futures::future::join_all(self.providers.drain(..).map(ProviderProcess::stop)).await;
        for (namespace, name, port, _) in self.routes.drain(..) {
            management.unroute_service(&namespace, &name, port);
        }
        self.cert_dirs.clear();
        if let Some(a) = self.access.take() {
            a.close().await;
        }
        self.kubeconfig_on_abort = None;
        if let Some(m) = self.mock.take() {
            m.shutdown().await;
        }
    }
}

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
    // few milliseconds of CPU per reconcile (issue 25; docs/performance.md).
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
