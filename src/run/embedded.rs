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
use capi_contract::inventory::{Document, Inventory};
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
}

/// The documents every embedded run installs: core CRDs, the mock's CRDs and ClusterRoles.
pub fn base_documents() -> anyhow::Result<Vec<Value>> {
    let mut docs = core_crd_documents();
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
    /// How long to wait for a `--provider-cmd` provider's first watch (and its webhook server).
    wait: Duration,
    /// Certificates and Services of the `--crds` components' webhooks (`--provider-cmd` only).
    serving: Option<&'a crate::serving::Plan>,
    /// Components installed only when the target starts (see [`split_shared`]).
    deferred: &'a [Document],
}

/// The target's controllers: an in-process faulty mock, or a `--provider-cmd` process.
#[derive(Default)]
struct TargetProcesses {
    mock: Option<MockHandle>,
    provider: Option<ProviderProcess>,
    listener: Option<Listener>,
    private_kubeconfig: Option<super::private_file::PrivateFile>,
    /// `{webhook-cert-dir}`, removed at stop (and on abort).
    cert_dir: Option<(crate::serving::CertDir, super::interrupt::AbortRemove)>,
    /// Removes the private kubeconfig on abort (it holds the server's token).
    kubeconfig_on_abort: Option<super::interrupt::AbortRemove>,
    /// Service ports routed to the provider (`namespace`, `name`, `port`), unrouted at stop.
    routes: Vec<(String, String, u16)>,
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
            let mut placeholders = crate::serving::Placeholders {
                kubeconfig: kc.path().display().to_string(),
                namespace: t.target_ns.to_string(),
                watch_filter: t.target_filter.to_string(),
                ..Default::default()
            };
            self.kubeconfig_on_abort = Some(super::interrupt::remove_dir_on_abort(kc.path()));
            self.private_kubeconfig = Some(kc);
            self.listener = Some(l);
            let probes = self.serve_webhooks(t, cmd, &mut placeholders)?;
            if !t.deferred.is_empty() {
                crate::manifests::install::install(
                    t.client,
                    t.deferred.to_vec(),
                    crate::manifests::CRD_TIMEOUT,
                )
                .await
                .map_err(|e| format!("installing the provider's webhook configurations: {e}"))?;
            }
            let expanded = placeholders.expand(cmd);
            let log = dir.join(format!("provider-{}.log", t.run_id));
            let mut provider = start_provider(&expanded, &log).map_err(|e| format!("{e:#}"))?;
            let ready =
                wait_until_serving(&mut provider, &probes, placeholders.health_addr, t.wait)
                    .await
                    .map_err(|why| {
                        let hint = if !probes.is_empty()
                            && !crate::serving::placeholders::uses_webhooks(cmd)
                        {
                            "; the components declare webhooks: give the command {webhook-cert-dir} and {webhook-port} (see README \"Your own manager\")"
                        } else {
                            ""
                        };
                        let msg = format!(
                            "--provider-cmd {cmd:?}: {why} (its output: {}){hint}",
                            log.display()
                        );
                        eprintln!("{msg}");
                        msg
                    });
            self.provider = Some(provider);
            ready?;
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
                    ..MockOptions::default()
                },
            ));
        }
        Ok(())
    }

    /// Issues the serving certificate (`{webhook-cert-dir}`), free ports for the placeholders the
    /// command uses, and routes the components' webhook Services to the provider: to
    /// `{webhook-port}` when the command takes it, else to each Service's `targetPort`. Returns
    /// where the provider's webhook server will be (address, TLS server name).
    fn serve_webhooks(
        &mut self,
        t: &TargetStart<'_>,
        cmd: &str,
        placeholders: &mut crate::serving::Placeholders,
    ) -> Result<Vec<WebhookProbe>, String> {
        use crate::serving::placeholders::{free_addr, free_port, uses, uses_webhooks};
        let local;
        let serving = match t.serving {
            Some(s) => Some(s),
            None if uses_webhooks(cmd) => {
                local = crate::serving::Plan::local().map_err(|e| e.to_string())?;
                Some(&local)
            }
            None => None,
        };
        if uses(cmd, "{metrics-addr}") {
            placeholders.metrics_addr = Some(free_addr().map_err(|e| format!("free port: {e}"))?);
        }
        if uses(cmd, "{health-addr}") {
            placeholders.health_addr = Some(free_addr().map_err(|e| format!("free port: {e}"))?);
        }
        let Some(serving) = serving else {
            return Ok(Vec::new());
        };
        let dir = crate::serving::CertDir::create(
            &format!("capi-conformance-{}-webhook-", t.run_id),
            &serving.certs,
        )
        .map_err(|e| e.to_string())?;
        let abort = super::interrupt::remove_dir_on_abort(dir.path());
        placeholders.webhook_cert_dir = Some(dir.path().display().to_string());
        placeholders.webhook_cert_path = Some(dir.cert_path().display().to_string());
        placeholders.webhook_key_path = Some(dir.key_path().display().to_string());
        placeholders.webhook_ca_path = Some(dir.ca_path().display().to_string());
        self.cert_dir = Some((dir, abort));
        if uses(cmd, "{webhook-port}") {
            placeholders.webhook_port = Some(free_port().map_err(|e| format!("free port: {e}"))?);
        }
        let client_tls = serving.certs.client_config().map_err(|e| e.to_string())?;
        let mut probes: Vec<WebhookProbe> = Vec::new();
        for svc in &serving.services {
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
            t.server
                .route_service(&svc.namespace, &svc.name, svc.port, addr);
            self.routes
                .push((svc.namespace.clone(), svc.name.clone(), svc.port));
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

    async fn stop(&mut self, server: &EmbeddedServer) {
        if let Some(p) = self.provider.take() {
            p.stop().await;
        }
        for (namespace, name, port) in self.routes.drain(..) {
            server.unroute_service(&namespace, &name, port);
        }
        self.cert_dir = None;
        if let Some(l) = self.listener.take() {
            l.shutdown().await;
        }
        self.private_kubeconfig = None;
        self.kubeconfig_on_abort = None;
        if let Some(m) = self.mock.take() {
            m.shutdown().await;
        }
    }
}

/// Where a `--provider-cmd` provider's webhook server is expected, and how to verify it.
struct WebhookProbe {
    addr: std::net::SocketAddr,
    server_name: String,
    tls: std::sync::Arc<tokio_rustls::rustls::ClientConfig>,
}

/// Waits (at most `limit`) until the provider serves: a TLS handshake with the run's
/// certificate at every probe, else (no webhooks) `GET /readyz` 200 at `{health-addr}` when
/// the command takes it. `Err`: why not, also when the provider exits first.
async fn wait_until_serving(
    provider: &mut ProviderProcess,
    probes: &[WebhookProbe],
    health: Option<std::net::SocketAddr>,
    limit: Duration,
) -> Result<(), String> {
    use crate::serving::ready::{wait_readyz, wait_tls};
    if probes.is_empty() && health.is_none() {
        return Ok(());
    }
    let ready = async {
        for p in probes {
            wait_tls(p.addr, &p.server_name, p.tls.clone(), limit)
                .await
                .map_err(|e| {
                    format!(
                        "its webhook server did not come up at {} within {}s ({e})",
                        p.addr,
                        limit.as_secs()
                    )
                })?;
        }
        if probes.is_empty()
            && let Some(addr) = health
        {
            wait_readyz(addr, limit).await.map_err(|e| {
                format!(
                    "its health endpoint {addr} was not ready within {}s ({e})",
                    limit.as_secs()
                )
            })?;
        }
        Ok(())
    };
    tokio::select! {
        r = ready => r,
        status = provider.child.wait() => Err(match status {
            Ok(s) => format!("it exited ({s}) before its webhook server came up"),
            Err(e) => format!("waiting for it failed: {e}"),
        }),
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
    crate::serving::Placeholders {
        kubeconfig: kubeconfig.into(),
        namespace: namespace.into(),
        watch_filter: watch_filter.into(),
        ..Default::default()
    }
    .expand(cmd)
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

/// What installing the `--crds` components gave the run.
#[derive(Default)]
struct Installed {
    notes: Vec<crate::report::Note>,
    /// The provider's webhook serving (`--provider-cmd` with webhooks).
    serving: Option<crate::serving::Plan>,
    /// Components installed when the target starts ([`split_shared`]).
    deferred: Vec<Document>,
    /// The components are the mock's own (its webhook mode): the mock's kinds are the target.
    mock_components: bool,
}

/// Whether `doc` is a CRD of the mock's groups.
fn is_mock_crd(doc: &Document) -> bool {
    doc.value.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
        && doc
            .value
            .pointer("/spec/group")
            .and_then(Value::as_str)
            .is_some_and(|g| g.ends_with(MOCK_GROUP_SUFFIX))
}

/// Whether webhook configuration `doc` has a rule for a mock group (or every group).
fn hooks_mock_groups(doc: &Document) -> bool {
    crate::serving::components::is_webhook_configuration(&doc.value)
        && doc
            .value
            .get("webhooks")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .flat_map(|w| {
                w.get("rules")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .flat_map(|r| {
                r.get("apiGroups")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
            })
            .filter_map(Value::as_str)
            .any(|g| g == "*" || g.ends_with(MOCK_GROUP_SUFFIX))
}

/// The baseline (the in-process mock) and a target that is the mock itself in webhook mode
/// share the mock's CRDs. So that the baseline runs on the mock's CRDs as it always does (and a
/// target's faulty webhook cannot fail it), what would route the baseline's objects through the
/// target's webhooks waits until the target starts: webhook configurations with rules for the
/// mock's groups, and the conversion settings of the mock's CRDs (installed now without them).
/// Returns the documents to install at target start; `docs` keeps what is installed now.
fn split_shared(docs: &mut Vec<Document>) -> Vec<Document> {
    if !docs.iter().any(is_mock_crd) {
        return Vec::new();
    }
    let mut deferred = Vec::new();
    let mut now = Vec::new();
    for doc in docs.drain(..) {
        if hooks_mock_groups(&doc) {
            deferred.push(doc);
        } else if is_mock_crd(&doc)
            && crate::serving::components::is_webhook_converted_crd(&doc.value)
        {
            let mut without = doc.clone();
            if let Some(spec) = without.value.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("conversion".into(), serde_json::json!({"strategy": "None"}));
            }
            now.push(without);
            deferred.push(doc);
        } else {
            now.push(doc);
        }
    }
    *docs = now;
    deferred
}

/// Installs the `--crds` manifests as `clusterctl init` would (variables substituted, creation
/// order, CRDs Established first); objects of kinds nothing serves are skipped: each is named on
/// stderr and returned as a report note. With `--provider-cmd`, the components' webhooks get a
/// serving certificate whose CA is injected first, as cert-manager would ([`crate::serving`]).
async fn install_provider_manifests(
    client: &kube::Client,
    args: &CheckArgs,
) -> anyhow::Result<Installed> {
    if args.crds.is_empty() {
        if !args.vars.is_empty() {
            anyhow::bail!("--var needs --crds (it sets clusterctl variables of those manifests)");
        }
        return Ok(Installed::default());
    }
    let vars = crate::manifests::Variables::from_flags(&args.vars)?;
    let mut docs = crate::manifests::load(&args.crds, &vars)
        .context("installing --crds on the embedded server")?;
    let mut notes = Vec::new();
    let serving = match &args.provider_cmd {
        Some(_) => {
            let mut values: Vec<Value> = docs.iter().map(|d| d.value.clone()).collect();
            let plan = crate::serving::Plan::for_components(&mut values)
                .context("issuing the provider's webhook serving certificate")?;
            for (doc, value) in docs.iter_mut().zip(values) {
                doc.value = value;
            }
            for i in &plan.injections {
                if let Err(why) = &i.outcome {
                    let message = format!("CA injection: {}: {why}", i.object);
                    eprintln!("{message}");
                    notes.push(crate::report::Note {
                        source: "--crds".into(),
                        message,
                    });
                }
            }
            for svc in plan.services.iter().filter(|s| !s.defined) {
                let message = format!(
                    "{} call(s) Service {}/{}, which the components do not define: calls to it fail (service \"{}\" not found), here as on any cluster",
                    svc.used_by.join(", "),
                    svc.namespace,
                    svc.name,
                    svc.name
                );
                eprintln!("{message}");
                notes.push(crate::report::Note {
                    source: "--crds".into(),
                    message,
                });
            }
            let used =
                !plan.services.is_empty() || plan.injections.iter().any(|i| i.outcome.is_ok());
            used.then_some(plan)
        }
        None => None,
    };
    let mock_components = docs.iter().any(is_mock_crd);
    let deferred = if args.provider_cmd.is_some() {
        split_shared(&mut docs)
    } else {
        Vec::new()
    };
    let mut report =
        crate::manifests::install::install(client, docs, crate::manifests::CRD_TIMEOUT)
            .await
            .context("installing --crds on the embedded server")?;
    if let Some(plan) = &serving {
        // cert-manager's part is played by the run: its kinds are not needed.
        for s in &mut report.skipped {
            if s.object.starts_with("cert-manager.io/") {
                s.reason = format!(
                    "not installed: cert-manager is not, and the run issued the webhook serving certificate itself (for {}) and injected its CA",
                    plan.certs.names.join(", ")
                );
            }
        }
    }
    notes.extend(
        crate::manifests::skipped_lines(&report)
            .into_iter()
            .map(|(source, message)| {
                eprintln!("{source}: {message}");
                crate::report::Note { source, message }
            }),
    );
    Ok(Installed {
        notes,
        serving,
        deferred,
        mock_components,
    })
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
    let catalog = Catalog::embedded()?;
    let rules = catalog.rules().to_vec();
    if let Some(spec) = &args.server_faults {
        server
            .faults()
            .apply_spec(spec)
            .context("--server-faults")?;
    }
    let settings = settings(args, Settings::EMBEDDED)?;
    server
        .apply_documents(base_documents()?)
        .await
        .context("installing core and mock CRDs on the embedded server")?;
    let client = server.retrying_client_with(RetryPolicy::within(settings.step_timeout));
    let Installed {
        notes,
        serving,
        deferred,
        mock_components,
    } = install_provider_manifests(&client, args).await?;
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
    let mock_is_target = args.crds.is_empty() || mock_components;
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
            serving: serving.as_ref(),
            deferred: &deferred,
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
    target.stop(server).await;
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
    use capi_contract::inventory::Origin;
    use serde_json::json;

    fn doc(v: Value) -> Document {
        Document::new(v, Origin::new("components.yaml", 0, 1))
    }

    #[test]
    fn what_would_route_the_baseline_through_the_target_waits_for_the_target() {
        let mock_crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "mockmachines.infrastructure.mock.capi-conformance.io"},
            "spec": {"group": "infrastructure.mock.capi-conformance.io",
                     "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "n"}}}}}});
        let other_crd = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "xs.infrastructure.example.com"},
            "spec": {"group": "infrastructure.example.com",
                     "conversion": {"strategy": "Webhook", "webhook": {"clientConfig": {"service": {"name": "s", "namespace": "n"}}}}}});
        let vwc = |group: &str| {
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": format!("v-{group}")},
            "webhooks": [{"name": "v.x.io", "rules": [{"apiGroups": [group]}]}]})
        };
        let service = json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "namespace": "n"}});

        // A provider of its own groups: nothing waits.
        let mut docs = vec![
            doc(other_crd.clone()),
            doc(vwc("infrastructure.example.com")),
        ];
        assert!(split_shared(&mut docs).is_empty());
        assert_eq!(docs.len(), 2);

        // The mock's own components: its CRDs now without conversion, the full CRD and the
        // configurations for its groups (or every group) at target start.
        let mut docs = vec![
            doc(mock_crd.clone()),
            doc(other_crd),
            doc(vwc("infrastructure.mock.capi-conformance.io")),
            doc(vwc("*")),
            doc(vwc("infrastructure.example.com")),
            doc(service),
        ];
        let deferred = split_shared(&mut docs);
        let names = |ds: &[Document]| -> Vec<String> {
            ds.iter()
                .map(|d| d.value["metadata"]["name"].as_str().unwrap().to_string())
                .collect()
        };
        assert_eq!(
            names(&deferred),
            [
                "mockmachines.infrastructure.mock.capi-conformance.io",
                "v-infrastructure.mock.capi-conformance.io",
                "v-*"
            ]
        );
        assert_eq!(deferred[0].value, mock_crd);
        assert_eq!(
            docs[0].value["spec"]["conversion"],
            json!({"strategy": "None"})
        );
        assert_eq!(
            names(&docs),
            [
                "mockmachines.infrastructure.mock.capi-conformance.io",
                "xs.infrastructure.example.com",
                "v-infrastructure.example.com",
                "s"
            ]
        );
    }

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
