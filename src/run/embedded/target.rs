//! The target's controllers on the embedded server: an in-process faulty mock or the
//! `--provider-cmd` processes, started with their kubeconfig, certificate directories and
//! webhook routes, and stopped again.

use super::*;

/// What starting the target needs.
pub(super) struct TargetStart<'a> {
    pub(super) management: Management<'a>,
    pub(super) client: &'a kube::Client,
    pub(super) embedded: &'a EmbeddedOptions,
    /// `--report-dir` (the providers' logs go there).
    pub(super) report_dir: Option<&'a Path>,
    pub(super) run_id: &'a str,
    pub(super) target_ns: &'a str,
    pub(super) target_filter: &'a str,
    pub(super) mock_is_target: bool,
    /// How long to wait for a `--provider-cmd` provider's first watch (and its webhook server).
    pub(super) wait: Duration,
    /// Certificates and Services of the `--crds` components' webhooks (`--provider-cmd` only).
    pub(super) serving: Option<&'a crate::serving::Plan>,
    /// Components installed only when the target starts
    /// ([`crate::source::embedded::Installed::deferred`]).
    pub(super) deferred: &'a [Document],
    /// Each `--provider-cmd` manager's Deployment args and env (same order as the commands).
    pub(super) launches: &'a [Option<crate::run::manager_launch::ManagerLaunch>],
    /// The run's conversion webhook, which converts an in-process target mock's objects.
    pub(super) conversion: &'a crate::capi_core::webhook::ConversionWebhook,
}

/// One `--provider-cmd` of the run: its command, how its Deployment runs it, where it logs.
struct Command<'a> {
    cmd: &'a str,
    launch: Option<&'a crate::run::manager_launch::ManagerLaunch>,
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
pub(super) struct TargetProcesses {
    pub(super) mock: Option<MockHandle>,
    pub(super) providers: Vec<ProviderProcess>,
    /// The managers' kubeconfig (and the embedded server's listener it points at).
    pub(super) access: Option<crate::run::management::ProviderAccess>,
    /// `{webhook-cert-dir}`, removed at stop (and on abort); shared by every provider (one
    /// serving certificate names every webhook Service of the components).
    /// (Without the components' webhooks, each command that takes them has its own.)
    pub(super) cert_dirs: Vec<(crate::serving::CertDir, crate::run::interrupt::AbortRemove)>,
    /// Removes the private kubeconfig on abort (it holds the server's token).
    pub(super) kubeconfig_on_abort: Option<crate::run::interrupt::AbortRemove>,
    /// Service ports routed to a provider (`namespace`, `name`, `port`, where), unrouted at
    /// stop.
    pub(super) routes: Vec<(String, String, u16, std::net::SocketAddr)>,
    /// What starting the providers took beyond one start each (restarts), for the report.
    pub(super) notes: Vec<crate::report::Note>,
}

impl TargetProcesses {
    /// Starts the target; `Err` is the environment problem that makes its cells inconclusive.
    pub(super) async fn start(&mut self, t: &TargetStart<'_>) -> Result<(), String> {
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
            self.kubeconfig_on_abort = Some(crate::run::interrupt::remove_dir_on_abort(
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
                let mut env: &[crate::run::manager_launch::env::EnvVar] = &[];
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
            let abort = crate::run::interrupt::remove_dir_on_abort(dir.path());
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

    pub(super) async fn stop(&mut self, management: Management<'_>) {
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
