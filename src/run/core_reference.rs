//! `check --embedded --core-cmd`: a real CAPI core manager as the reference of the core
//! simulation. The core manager runs as its components' Deployment runs it (`--core-crds`: the
//! components file), watching a namespace of its own; the in-process mock reconciles that
//! namespace and another one, where the simulation plays core. The same trace
//! ([`crate::scenarios::core_reference`]) runs on both at once, and every field the contract
//! names that differs is reported: where they differ, the simulation is wrong.

use super::management::Management;
use super::manager_launch::{LaunchRequest, ManagerLaunch};
use super::processes::{start_provider, wait_for_watches, wait_until_serving_restarting};
use crate::scenarios::Settings;
use crate::scenarios::cleanup::CleanupGuard;
use crate::scenarios::core_reference::{
    Core, Difference, Snapshot, compared_fields, differences, trace,
};
use crate::scenarios::env::{Env, EnvError};
use crate::scenarios::runner::Side;
use anyhow::Context;
use capi_mock_provider::{MockOptions, MockProvider};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// What `--core-cmd` asks.
pub struct Request<'a> {
    /// The core manager's command (placeholders as `--provider-cmd`'s).
    pub command: &'a str,
    /// Core's components (`--core-crds`): the Deployment the command runs as.
    pub components: &'a [Value],
    pub run_id: &'a str,
    pub settings: Settings,
    /// Where the core manager's log goes.
    pub log_dir: &'a Path,
}

/// The comparison's outcome.
pub struct Outcome {
    pub steps: usize,
    pub fields: usize,
    pub differences: Vec<Difference>,
    pub log: PathBuf,
    /// How the manager was run (the Deployment's args and env), for the report.
    pub launch_note: Option<String>,
}

impl Outcome {
    /// The report's lines: one summary, then one per difference.
    pub fn notes(&self) -> Vec<String> {
        let mut out = vec![format!(
            "core reference: {} steps of the mock provider (a Cluster with a Machine; then a Cluster whose control plane makes its Machine), {} fields the contract names compared between the real core manager (log: {}) and the simulation: {}",
            self.steps,
            self.fields,
            self.log.display(),
            if self.differences.is_empty() {
                "all equal".to_string()
            } else {
                format!(
                    "{} differ (the simulation is wrong there)",
                    self.differences.len()
                )
            }
        )];
        out.extend(
            self.differences
                .iter()
                .map(|d| format!("core reference: {d}")),
        );
        out
    }
}

/// A trace's environment: namespace `ns`, the mock reconciling it.
fn env_for(side: &Side) -> Env {
    Env {
        client: side.client.clone(),
        namespace: side.namespace.clone(),
        run_id: side.run_id.clone(),
        watch_filter: None,
        pause_core: false,
        recorder: Default::default(),
        guard: side.guard.clone(),
        settings: side.settings,
        round_trips: Default::default(),
        events: side.events.clone(),
        workloads: None,
        ledger: None,
        node_writes: Default::default(),
        trouble: side.trouble.clone(),
        core_version: crate::capi_core::conversion::V1BETA2,
        scopes: Default::default(),
    }
}

/// Runs the trace under the real core manager and under the simulation, concurrently, and
/// compares them. `Err`: the core manager or the environment failed (the message says which,
/// with the manager's log).
pub async fn compare(
    management: Management<'_>,
    client: &kube::Client,
    req: &Request<'_>,
) -> anyhow::Result<Outcome> {
    let real_ns = format!("capi-conformance-{}-core-real", req.run_id);
    let sim_ns = format!("capi-conformance-{}-core-sim", req.run_id);
    let guard = CleanupGuard::default();
    // A real core acts more slowly than the simulation's writes (its informers, its patch
    // helper): three step timeouts per step.
    let settings = Settings {
        step_timeout: req.settings.step_timeout * 3,
        ..req.settings
    };
    let side = |ns: &str| Side {
        client: client.clone(),
        namespace: ns.to_string(),
        run_id: req.run_id.to_string(),
        watch_filter: None,
        pause_core: false,
        settings,
        guard: guard.clone(),
        events: Default::default(),
        trouble: Default::default(),
        workloads: None,
        ledger: None,
        node_writes: Default::default(),
    };
    let (real, sim) = (side(&real_ns), side(&sim_ns));
    real.create_namespace().await?;
    sim.create_namespace().await?;
    let mocks: Vec<capi_mock_provider::MockHandle> = [&real_ns, &sim_ns]
        .into_iter()
        .map(|ns| {
            MockProvider::start(
                client.clone(),
                MockOptions {
                    watch_namespace: Some(ns.clone()),
                    ..MockOptions::default()
                },
            )
        })
        .collect();
    let log = req.log_dir.join(format!("core-{}.log", req.run_id));
    let mut manager = CoreManager::default();
    let work = async {
        let launch_note = manager
            .start(management, req, &real_ns, &log, settings.step_timeout)
            .await?;
        let (real_env, sim_env) = (env_for(&real), env_for(&sim));
        let (r, s) = tokio::join!(
            trace(&real_env, Core::Real),
            trace(&sim_env, Core::Simulated)
        );
        let name = |e: EnvError, who: &str| anyhow::anyhow!("{who}: {e}");
        let r: Vec<Snapshot> = r.map_err(|e| {
            name(
                e,
                &format!("under the real core (its log: {})", log.display()),
            )
        })?;
        let s: Vec<Snapshot> = s.map_err(|e| name(e, "under the simulation"))?;
        anyhow::Ok(Outcome {
            steps: r.len().max(s.len()),
            fields: compared_fields(&r, &s),
            differences: differences(&r, &s),
            log: log.clone(),
            launch_note,
        })
    };
    let section = super::interrupt::section();
    let finished = section.run(work).await;
    guard
        .cleanup(client, Duration::from_millis(500), true)
        .await;
    manager.stop().await;
    for m in mocks {
        m.shutdown().await;
    }
    drop(section);
    match finished {
        Some(r) => r.context("--core-cmd"),
        None => anyhow::bail!("interrupted (run {})", req.run_id),
    }
}

/// The started core manager and what it needs while it runs.
#[derive(Default)]
struct CoreManager {
    process: Option<super::processes::ProviderProcess>,
    access: Option<super::management::ProviderAccess>,
    cert_dir: Option<crate::serving::CertDir>,
    aborts: Vec<super::interrupt::AbortRemove>,
}

impl CoreManager {
    /// Starts the manager watching `namespace`, waits until it is ready and watches; returns
    /// how its Deployment's args and env were applied.
    async fn start(
        &mut self,
        management: Management<'_>,
        req: &Request<'_>,
        namespace: &str,
        log: &Path,
        wait: Duration,
    ) -> anyhow::Result<Option<String>> {
        use crate::serving::placeholders::{free_addr, free_port};
        let access = management
            .provider_access(&format!("capi-conformance-{}-core.kubeconfig", req.run_id))
            .await?;
        self.aborts.push(super::interrupt::remove_dir_on_abort(
            access.kubeconfig.path(),
        ));
        let serving = crate::serving::Plan::local()?;
        let dir = crate::serving::CertDir::create(
            &format!("capi-conformance-{}-core-webhook-", req.run_id),
            &serving.certs,
        )?;
        self.aborts
            .push(super::interrupt::remove_dir_on_abort(dir.path()));
        let placeholders = crate::serving::Placeholders {
            kubeconfig: access.kubeconfig.path().display().to_string(),
            namespace: namespace.to_string(),
            watch_filter: String::new(),
            webhook_cert_dir: Some(dir.path().display().to_string()),
            webhook_cert_path: Some(dir.cert_path().display().to_string()),
            webhook_key_path: Some(dir.key_path().display().to_string()),
            webhook_ca_path: Some(dir.ca_path().display().to_string()),
            webhook_port: Some(free_port()?),
            metrics_addr: Some(free_addr()?),
            health_addr: Some(free_addr()?),
        };
        let request = LaunchRequest {
            command: req.command.to_string(),
            args: true,
            env: true,
        };
        let launch = ManagerLaunch::from_components(req.components, &request)
            .context("running the core manager as the --core-crds Deployment runs it")?;
        let mut line = placeholders.expand(req.command);
        let mut env: &[super::manager_launch::env::EnvVar] = &[];
        if let Some(l) = &launch {
            line = l.command_line(&line, &placeholders);
            env = &l.env;
        }
        // Core watches only its own namespace of the run: the simulation's and the provider
        // scenarios' core objects are not its.
        if !line.contains("--namespace") {
            line.push_str(&format!(" --namespace={namespace}"));
        }
        let mut process = start_provider(&line, env, log)?;
        let health = crate::serving::placeholders::uses(req.command, "{health-addr}")
            || launch.as_ref().is_some_and(|l| l.uses("{health-addr}"));
        let ready = wait_until_serving_restarting(
            &mut process,
            &[],
            placeholders.health_addr.filter(|_| health),
            wait,
        )
        .await;
        self.process = Some(process);
        self.cert_dir = Some(dir);
        let restarts = ready.map_err(|why| {
            anyhow::anyhow!(
                "the core manager {:?}: {why} (its output: {})",
                req.command,
                log.display()
            )
        })?;
        if let Some(l) = &access.listener {
            wait_for_watches(l, 1, wait).await;
        }
        self.access = Some(access);
        // The note is worded for `--provider-cmd`, whose Deployment parts can be turned off.
        let note = launch.map(|l| {
            let note = l.note.replacen("--provider-cmd", "--core-cmd", 1);
            match note.split_once("; turn off with") {
                Some((kept, _)) => kept.to_string(),
                None => note,
            }
        });
        Ok(note
            .into_iter()
            .chain(restarts)
            .reduce(|a, b| format!("{a}; {b}")))
    }

    async fn stop(&mut self) {
        if let Some(p) = self.process.take() {
            p.stop().await;
        }
        if let Some(a) = self.access.take() {
            a.close().await;
        }
        self.cert_dir = None;
        self.aborts.clear();
    }
}
