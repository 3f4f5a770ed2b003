//! `check`'s flags and what they become: the plain [`CheckOptions`] of the plan and run
//! stages (timing settings, scenarios, the embedded server's inputs), and `--progress`.

use super::{KubeArgs, ReportArgs};
use crate::documents::Kustomize;
use crate::kubeconn::parse_duration;
use crate::plan::{RuleFilter, ScenarioOptions};
use crate::run::progress::Progress;
use crate::run::{CheckOptions, EmbeddedOptions, RunOptions};
use crate::scenarios::Settings;
use crate::source::embedded::EmbeddedInputs;
use clap::{Args, ValueEnum};
use std::path::PathBuf;
use std::time::Duration;

#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// Start the embedded API server with core CRDs and the mock provider; no cluster needed.
    #[arg(long)]
    pub embedded: bool,
    /// Only the static rules (no lifecycle scenarios).
    #[arg(long = "static-only")]
    pub static_only: bool,
    /// Scenarios to run (comma-separated ids, or `none`).
    #[arg(long, value_name = "LIST")]
    pub scenarios: Option<String>,
    /// Only these rules (comma-separated ids or `*` globs, e.g. `infra-machine/*,*/pause`): the
    /// matrix keeps only them and only the scenarios judging one of them run.
    #[arg(long = "rules", value_name = "GLOBS")]
    pub rules: Option<String>,
    /// Only check this provider (as grouped by the inventory).
    #[arg(long)]
    pub provider: Option<String>,
    /// Only these kinds get lifecycle scenarios (comma-separated kind names or `*` globs, e.g.
    /// `DevCluster,DevMachine` or `Dev*`); every kind keeps its static rules. For kinds that
    /// cannot run here (CAPD's Docker* kinds need a Docker engine): their scenario rules skip as
    /// not selected instead of making the verdict inconclusive for a missing --sample.
    #[arg(long, value_name = "GLOBS")]
    pub kinds: Option<String>,
    /// Scenarios run concurrently (the default runs every embedded scenario of one provider at
    /// once: the run is bounded by quiet windows, not CPU).
    #[arg(long, default_value_t = 8)]
    pub parallel: usize,
    /// With --embedded: the provider's manifests to install, as `clusterctl init` would: its
    /// release `components.yaml`, its `config/` tree, or any files or directories of CRDs, RBAC,
    /// Namespaces, Services, webhook configurations, Deployments (stored, not run).
    #[arg(long, value_name = "PATH")]
    pub crds: Vec<PathBuf>,
    /// The kustomize that renders kustomize roots among the inputs (`--crds config/`): a
    /// program (`kustomize`, `kubectl`, a path) or a program with its arguments. Default:
    /// `kustomize` on PATH, else `kubectl`.
    #[arg(long, value_name = "CMD")]
    pub kustomize: Option<String>,
    /// A clusterctl variable of the --crds manifests (`${NAME}`), over the environment and the
    /// manifests' defaults (repeatable).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// With --embedded: the provider's controller command, run by `sh -c` against the embedded
    /// server. Placeholders: `{kubeconfig}` the server's kubeconfig (a private temporary file);
    /// `{namespace}` the run's target namespace; `{watch_filter}` the run's watch-filter label
    /// value; `{webhook-cert-dir}` a private directory with `tls.crt`, `tls.key`, `ca.crt` (the
    /// run's serving certificate for the components' webhook Services); `{webhook-cert-path}`,
    /// `{webhook-key-path}`, `{webhook-ca-path}` those three files; `{webhook-port}` a free port
    /// the webhook Services are routed to; `{metrics-addr}`, `{health-addr}` `127.0.0.1:<free
    /// port>` each (the run waits for `GET /readyz` there when there are no webhooks). With a
    /// Deployment among --crds, the manager container's args are appended (except flags the
    /// command sets; addresses, ports, cert dir and kubeconfig become the run's; leader election
    /// off) and its env is set (`status.podIP` = 127.0.0.1; Secrets and ConfigMaps of the
    /// components); a report note lists both.
    ///
    /// Several providers in one run, as `clusterctl init` installs them (e.g. a control plane
    /// with its bootstrap companion): one `--crds` and one `--provider-cmd` per provider, given
    /// in the same order; the i-th command runs the Deployment of the i-th `--crds` input that
    /// has one, with its own ports, and its components' webhook Services are routed to it.
    /// Every provider's kinds get their own columns.
    #[arg(long = "provider-cmd", value_name = "CMD")]
    pub provider_cmd: Vec<String>,
    /// With --provider-cmd: do not append the args of the components' manager Deployment.
    #[arg(long = "no-deployment-args", requires = "provider_cmd")]
    pub no_deployment_args: bool,
    /// With --provider-cmd: do not set the env of the components' manager Deployment.
    #[arg(long = "no-deployment-env", requires = "provider_cmd")]
    pub no_deployment_env: bool,
    /// Sample provider objects (YAML of the provider's kinds with provider-specific spec).
    #[arg(long, value_name = "FILE")]
    pub sample: Vec<PathBuf>,
    /// Objects a control-plane node's own agent writes into its workload cluster and no
    /// in-memory machine writes (e.g. RKE2's `kube-system/rke2-serving` Secret): created in a
    /// control plane's workload cluster once one of its Machines has its Node
    /// (docs/core-simulation.md "What a node's agent writes").
    #[arg(long = "workload-object", value_name = "FILE")]
    pub workload_object: Vec<PathBuf>,
    /// With --embedded: install CAPI core's released CRDs from FILE (its components file, e.g.
    /// cluster-api-components.yaml of v1.11 or newer) instead of the tool's minimal ones; both
    /// serve cluster.x-k8s.io v1beta1 and v1beta2, converted as CAPI core converts.
    #[arg(long = "core-crds", value_name = "FILE")]
    pub core_crds: Option<PathBuf>,
    /// With --embedded and --core-crds (CAPI core's components file): run a real CAPI core
    /// manager (e.g. cluster-api-manager) as the reference of the core simulation, as its
    /// Deployment in that file runs it, with the placeholders of --provider-cmd and
    /// `--namespace` of its own. Before the scenarios, one Cluster and one Machine of the mock
    /// provider are taken through their life under it and under the simulation at once; every
    /// field the contract names that differs (references, owner references, labels,
    /// annotations, what core copies) is a report note. The scenarios still play core.
    #[arg(long = "core-cmd", value_name = "CMD", requires = "core_crds")]
    pub core_cmd: Option<String>,
    /// On a real cluster without CAPI core: install minimal core CRDs of our own.
    #[arg(long = "install-core-crds")]
    pub install_core_crds: bool,
    /// Strip finalizers a broken provider never removes during cleanup.
    #[arg(long = "force-cleanup")]
    pub force_cleanup: bool,
    /// Quiet window for "must not act" assertions (e.g. `300ms`, `30s`).
    #[arg(long = "quiet-window", value_name = "DURATION")]
    pub quiet_window: Option<String>,
    /// Deadline per scenario step (e.g. `10s`), fixed. Without it a step's deadline grows
    /// with the retry backoff a provider may be in (gates the scenario kept closed, API server
    /// faults the tool met: docs/core-simulation.md "Timing").
    #[arg(long, value_name = "DURATION")]
    pub timeout: Option<String>,
    /// Directory keeping the timeline and final objects of every scenario run, passing or not.
    #[arg(long = "report-dir", value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
    /// Run as a Sonobuoy plugin: write the JUnit report into Sonobuoy's results directory
    /// ($SONOBUOY_RESULTS_DIR, else /tmp/sonobuoy/results), then the `done` file naming it. On by
    /// itself when SONOBUOY_RESULTS_DIR is set.
    #[arg(long, conflicts_with = "junit")]
    pub sonobuoy: bool,
    /// Progress display.
    #[arg(long, value_enum, default_value_t = ProgressArg::Auto)]
    pub progress: ProgressArg,
    /// The identity CAPI core runs as, for the effective-RBAC rule.
    #[arg(
        long = "capi-manager",
        default_value = "system:serviceaccount:capi-system:capi-manager"
    )]
    pub capi_manager: String,
    /// With --embedded and the mock as target: provider-wide faults of the target mock
    /// (comma-separated rule ids; for demonstrating and testing failures).
    #[arg(long = "mock-faults", value_name = "LIST", hide = true)]
    pub mock_faults: Option<String>,
    /// With --embedded: fault injection in the embedded API server, same spec as `serve
    /// --faults`, e.g. `drop-watch=2s,force-410=20,429=5%,500=5%,latency=200ms,slow-establish=1s`.
    #[arg(long = "server-faults", value_name = "SPEC")]
    pub server_faults: Option<String>,
    #[command(flatten)]
    pub kube: KubeArgs,
    #[command(flatten)]
    pub report: ReportArgs,
}

impl CheckArgs {
    /// `--kustomize`: what renders the kustomize roots among `--crds`, `--core-crds` and
    /// `--sample`.
    fn kustomize(&self) -> Kustomize {
        Kustomize::from_flag(self.kustomize.as_deref())
    }

    /// Everything `check` was asked, as the plain options of the plan and run stages (reads
    /// `--manager-help`, `--config` and the `--sample` files).
    pub fn options(&self) -> anyhow::Result<CheckOptions> {
        // The run installs the provider itself (and starts its managers here): on the embedded
        // server, or on the cluster of the kubeconfig.
        let installs = self.embedded
            || !self.crds.is_empty()
            || !self.provider_cmd.is_empty()
            || self.core_crds.is_some()
            || self.core_cmd.is_some();
        // A manager run here is timed as on the embedded server, wherever its API server is.
        let defaults = if !self.provider_cmd.is_empty() {
            Settings::EMBEDDED_PROVIDER
        } else if self.embedded {
            Settings::EMBEDDED
        } else {
            Settings::REAL
        };
        let mut statics = self.report.lint_options(
            "check",
            if self.embedded {
                "embedded".into()
            } else {
                String::new()
            },
        )?;
        if self.embedded && statics.manager_help.is_none() {
            // all/multi-instance-flags: each manager's own --help output.
            statics.manager_help_runs = crate::source::manager_help::help_runs(&self.provider_cmd);
        }
        let selection = crate::plan::selected_scenarios(self.scenarios.as_deref());
        let filter = RuleFilter::parse(self.rules.as_deref());
        let scenarios = if self.static_only || selection.as_ref().is_some_and(Vec::is_empty) {
            statics.scenario_skip = crate::plan::STATIC_ONLY.into();
            None
        } else {
            Some(ScenarioOptions {
                provider: self.provider.clone(),
                contract: self.report.contract,
                samples: crate::source::load_samples(&self.sample, &self.kustomize())?,
                sample_files: self.sample.clone(),
                selection,
                mock_targets: installs.then_some(self.crds.is_empty()),
                baseline_from_inventory: installs,
                only_judged: filter.is_some(),
                kinds: self.kinds.as_deref().map(|k| {
                    k.split(',')
                        .map(str::trim)
                        .filter(|k| !k.is_empty())
                        .map(str::to_string)
                        .collect()
                }),
            })
        };
        Ok(CheckOptions {
            statics,
            scenarios,
            filter,
            run: RunOptions {
                settings: settings(self, defaults)?,
                parallel: self.parallel,
                report_dir: self.report_dir.clone(),
                force_cleanup: self.force_cleanup,
                install_core_crds: self.install_core_crds,
                capi_manager: self.capi_manager.clone(),
                events: Default::default(),
                denials: None,
                node_writes: node_writes(self)?,
            },
            embedded: installs.then(|| EmbeddedOptions {
                inputs: EmbeddedInputs {
                    crds: self.crds.clone(),
                    vars: self.vars.clone(),
                    server_faults: self.server_faults.clone(),
                    serve_webhooks: !self.provider_cmd.is_empty(),
                    core_crds: self.core_crds.clone(),
                    kustomize: self.kustomize(),
                    managers: self
                        .provider_cmd
                        .iter()
                        .map(|command| crate::run::manager_launch::LaunchRequest {
                            command: command.clone(),
                            args: !self.no_deployment_args,
                            env: !self.no_deployment_env,
                        })
                        .collect(),
                },
                provider_cmd: self.provider_cmd.clone(),
                core_cmd: self.core_cmd.clone(),
                target_faults: self.mock_faults.clone().unwrap_or_default(),
                target_core_reads: Default::default(),
            }),
        })
    }
}

/// Timing settings from `--quiet-window` and `--timeout` over the defaults for the mode.
fn settings(args: &CheckArgs, defaults: Settings) -> anyhow::Result<Settings> {
    let mut s = defaults;
    if let Some(q) = &args.quiet_window {
        s.quiet_window = parse_duration(q)?.unwrap_or(Duration::ZERO);
    }
    if let Some(t) = &args.timeout {
        s.step_timeout = parse_duration(t)?.unwrap_or(Duration::from_secs(3600));
        // The deadline asked for is the deadline.
        s.backoff_allowance = Duration::ZERO;
        s.fault_allowance = Duration::ZERO;
    }
    Ok(s)
}

/// `--progress`, turned into the run's [`Progress`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ProgressArg {
    /// A live status line when stderr is a terminal, else nothing.
    Auto,
    /// The live line on a terminal, else one line per finished scenario (CI logs).
    Always,
    /// No progress display.
    Never,
}

impl From<ProgressArg> for Progress {
    fn from(arg: ProgressArg) -> Progress {
        match arg {
            ProgressArg::Auto => Progress::Auto,
            ProgressArg::Always => Progress::Always,
            ProgressArg::Never => Progress::Never,
        }
    }
}

/// `--workload-object`: the files' objects, each naming its apiVersion, kind and name.
fn node_writes(
    args: &CheckArgs,
) -> anyhow::Result<crate::scenarios::core_sim::node_agent::NodeWrites> {
    let objects = crate::source::load_samples(&args.workload_object, &args.kustomize())?;
    crate::scenarios::core_sim::node_agent::NodeWrites::new(objects).map_err(|e| {
        anyhow::anyhow!(
            "{e} (in {})",
            args.workload_object
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        )
    })
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    /// `check --help` names every `--provider-cmd` placeholder and the opt-outs.
    #[test]
    fn help_lists_every_provider_cmd_placeholder() {
        let mut cli = super::super::Cli::command();
        let help = cli
            .find_subcommand_mut("check")
            .map(|c| c.render_long_help().to_string())
            .unwrap_or_default();
        let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
        for p in crate::serving::placeholders::ALL {
            assert!(flat.contains(&format!("`{p}`")), "{p} not in check --help");
        }
        assert!(flat.contains("--no-deployment-args") && flat.contains("--no-deployment-env"));
    }
}
