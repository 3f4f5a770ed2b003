//! Command-line definitions (clap), the only module that knows the command line: it turns
//! arguments into the plain options the layers below take ([`ContractSelection`],
//! [`OutputFormat`], [`ReportArgs::outputs`], [`KubeArgs::options`]). kubectl-style global
//! flags live in [`KubeArgs`] so that the binary works the same when kubectl runs it as the
//! `kubectl capi-conformance` plugin.

mod check;

use crate::kubeconn::KubeOptions;
use crate::report::Outputs;
use anyhow::Context;
use capi_contract::checks::{ConfigFile, LintOptions};
use capi_contract::contract::{Contract, FailOn};
use capi_contract::model::Choice;
pub use capi_contract::model::{ContractSelection, OutputFormat};
pub use check::{CheckArgs, ProgressArg};
use clap::builder::{PossibleValue, PossibleValuesParser, TypedValueParser};
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::path::PathBuf;

/// Parses a plain option enum of the layers below (`--contract`, `-o`), listing its
/// [`Choice::CHOICES`] as the possible values, with their help.
fn choice<T: Choice + Send + Sync>() -> impl TypedValueParser<Value = T> {
    PossibleValuesParser::new(T::CHOICES.iter().map(|(_, name, help)| {
        let value = PossibleValue::new(*name);
        if help.is_empty() {
            value
        } else {
            value.help(*help)
        }
    }))
    .try_map(|name: String| T::from_name(&name).ok_or_else(|| format!("unknown value `{name}`")))
}

/// The release image: built from `Dockerfile`, tagged with the release version (`v0.1.0`);
/// `manifests job|sonobuoy --image` defaults to it.
pub const DEFAULT_IMAGE: &str = concat!(
    "ghcr.io/capi-conformance/capi-conformance:v",
    env!("CARGO_PKG_VERSION")
);

/// `manifests job --namespace` default: where the Job and everything namespaced goes.
pub const DEFAULT_JOB_NAMESPACE: &str = "capi-conformance";

/// Parses argv (program name first) as the `capi-conformance` binary does (not as the kubectl
/// plugin, whose help names differ).
pub fn parse_from<I, T>(args: I) -> Result<Cli, clap::Error>
where
    I: IntoIterator<Item = T>,
    T: Into<std::ffi::OsString> + Clone,
{
    Cli::try_parse_from(args)
}

#[derive(Debug, Parser)]
#[command(
    name = "capi-conformance",
    version,
    about = "Checks a Cluster API provider against the CAPI provider contract, rule by rule",
    propagate_version = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Check provider manifests offline (CRDs, RBAC, clusterctl metadata) against every static rule.
    Lint(LintArgs),
    /// Check a provider on a live cluster (or the embedded server): static rules plus lifecycle scenarios.
    Check(Box<CheckArgs>),
    /// List the rule catalog.
    Rules(RulesArgs),
    /// Show one rule with what it checks and how to fix it.
    Explain(ExplainArgs),
    /// Run the embedded Kubernetes API server until Ctrl-C.
    Serve(ServeArgs),
    /// The built-in mock provider: run its controllers, or print its manifests.
    #[command(subcommand, name = "mock-provider")]
    MockProvider(MockProviderCommand),
    /// Remove objects an earlier (killed) run left behind, found by the run label.
    Cleanup(CleanupArgs),
    /// Print the RBAC the tool itself needs on a cluster.
    #[command(long_about = crate::tool_rbac::LONG_ABOUT)]
    Rbac(RbacArgs),
    /// Print what to apply to run `check` inside the cluster: a Job, or a Sonobuoy plugin.
    #[command(subcommand)]
    Manifests(ManifestsCommand),
}

#[derive(Debug, Subcommand)]
pub enum ManifestsCommand {
    /// A Namespace, a ServiceAccount, the least-privilege ClusterRoles of `rbac` bound to it, and
    /// a Job running `check` with the in-cluster configuration (the table in `kubectl logs`, the
    /// report files in the volume at /reports). Arguments after `--` are added to `check`.
    Job(JobManifestsArgs),
    /// A Sonobuoy plugin definition (driver Job, result-format junit) running `check --sonobuoy`:
    /// `sonobuoy run --plugin FILE`. Arguments after `--` are added to `check`.
    Sonobuoy(SonobuoyManifestsArgs),
}

#[derive(Debug, Clone, Args)]
pub struct JobManifestsArgs {
    /// Only the static rules (`check --static-only`), with only the read-only role.
    #[arg(long = "static-only")]
    pub static_only: bool,
    /// API group of the provider under test (repeatable), as for `rbac --group`.
    #[arg(long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// A cluster-scoped kind of the provider (repeatable), as for `rbac --cluster-scoped`.
    #[arg(long = "cluster-scoped", value_name = "RESOURCE.GROUP")]
    pub cluster_scoped: Vec<String>,
    /// Namespace of the ServiceAccount and the Job (created).
    #[arg(long, default_value = DEFAULT_JOB_NAMESPACE)]
    pub namespace: String,
    /// Container image (built from the repository's Dockerfile).
    #[arg(long, default_value = DEFAULT_IMAGE)]
    pub image: String,
    /// Mount this PersistentVolumeClaim at /reports instead of an emptyDir, so the report files
    /// outlive the pod.
    #[arg(long = "reports-claim", value_name = "CLAIM")]
    pub reports_claim: Option<String>,
    /// More `check` arguments, after `--` (e.g. `-- --fail-on should --contract all`).
    #[arg(last = true, value_name = "CHECK ARGS")]
    pub check_args: Vec<String>,
}

#[derive(Debug, Clone, Args)]
pub struct SonobuoyManifestsArgs {
    /// Only the static rules (`check --static-only`).
    #[arg(long = "static-only")]
    pub static_only: bool,
    /// Container image (built from the repository's Dockerfile).
    #[arg(long, default_value = DEFAULT_IMAGE)]
    pub image: String,
    /// More `check` arguments, after `--`.
    #[arg(last = true, value_name = "CHECK ARGS")]
    pub check_args: Vec<String>,
}

/// Report options shared by `lint` and `check`.
#[derive(Debug, Clone, Args)]
pub struct ReportArgs {
    /// Format written to stdout.
    #[arg(short = 'o', long = "output", value_parser = choice::<OutputFormat>(),
          default_value = OutputFormat::default().name())]
    pub output: OutputFormat,
    /// Also write a JUnit XML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub junit: Option<PathBuf>,
    /// Also write a JSON report to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,
    /// Also write a Markdown summary to FILE.
    #[arg(long, value_name = "FILE")]
    pub markdown: Option<PathBuf>,
    /// Also write a self-contained HTML report to FILE.
    #[arg(long, value_name = "FILE")]
    pub html: Option<PathBuf>,
    /// Also write a SARIF 2.1.0 log to FILE (GitHub code scanning): failing rules at the file
    /// and line, URIs relative to the git work tree holding the current directory.
    #[arg(long, value_name = "FILE")]
    pub sarif: Option<PathBuf>,
    /// Which contract(s) to check each CRD against.
    #[arg(long, value_parser = choice::<ContractSelection>(),
          default_value = ContractSelection::default().name())]
    pub contract: ContractSelection,
    /// Lowest rule level whose failure fails the run: must, should, may, never.
    #[arg(long = "fail-on", default_value = "must", value_parser = ["must", "should", "may", "never"])]
    pub fail_on: String,
    /// Override the role of a kind: `--role FooThing=infra-machine` (repeatable).
    #[arg(long = "role", value_name = "KIND=ROLE")]
    pub roles: Vec<String>,
    /// Configuration file (waivers, role overrides).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Ignore every waiver (annotations and config): strict gate.
    #[arg(long = "no-waivers")]
    pub no_waivers: bool,
    /// The provider manager's `--help` output (a text file): evidence for
    /// `all/multi-instance-flags` when the manifests do not set the flags.
    #[arg(long = "manager-help", value_name = "FILE")]
    pub manager_help: Option<PathBuf>,
    /// Also report what a v1beta1 provider must change for the given contract.
    #[arg(long, value_name = "CONTRACT")]
    pub migration: Option<String>,
    /// Colour in the table: auto (only on a TTY), always, never.
    #[arg(long, default_value = "auto", value_parser = ["auto", "always", "never"])]
    pub color: String,
}

impl ReportArgs {
    /// The static engine's options from the report flags, the same for `lint` and `check`
    /// (`command`; `source`: what was examined): `--fail-on`, `--contract`, `--migration`,
    /// `--no-waivers`, `--config` waivers and roles, `--role`, `--manager-help`.
    pub fn lint_options(&self, command: &str, source: String) -> anyhow::Result<LintOptions> {
        let fail_on = FailOn::parse(&self.fail_on)
            .with_context(|| format!("--fail-on {}: unknown level", self.fail_on))?;
        let mut opts = LintOptions {
            contract: self.contract,
            fail_on,
            no_waivers: self.no_waivers,
            command: command.into(),
            source,
            started_at: jiff::Timestamp::now(),
            ..LintOptions::default()
        };
        opts.manager_help = crate::source::manager_help::read(self.manager_help.as_deref())?;
        if let Some(m) = &self.migration {
            opts.also_contract = Some(
                Contract::parse(m)
                    .with_context(|| format!("--migration {m}: expected v1beta1 or v1beta2"))?,
            );
        }
        if let Some(path) = &self.config {
            let cfg = ConfigFile::load(path)?;
            opts.roles = cfg.role_overrides()?;
            opts.waivers = cfg.waivers;
        }
        opts.roles
            .extend(capi_contract::inventory::parse_role_overrides(&self.roles)?);
        Ok(opts)
    }

    /// What the run writes, for the report writers.
    pub fn outputs(&self) -> Outputs {
        Outputs {
            output: self.output,
            junit: self.junit.clone(),
            json: self.json.clone(),
            markdown: self.markdown.clone(),
            html: self.html.clone(),
            sarif: self.sarif.clone(),
            migration: self.migration.clone(),
            color: self.color.clone(),
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct LintArgs {
    /// Files or directories; `-` reads stdin. A directory that is (or holds) a kustomize root
    /// is rendered with kustomize (a repository's `config/` renders `config/default`); any other
    /// directory is read file by file (recursive *.yaml|*.yml|*.json).
    #[arg(required = true, value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// Report the usable documents and mark broken ones instead of stopping at the first error.
    #[arg(long = "keep-going")]
    pub keep_going: bool,
    /// The kustomize that renders kustomize roots: a program (`kustomize`, `kubectl`, a path;
    /// `kubectl…` runs `kubectl kustomize DIR`, anything else `CMD build DIR`) or a program with
    /// its arguments (`"kubectl.1.30 kustomize"`). Default: `kustomize` on PATH, else `kubectl`.
    #[arg(long, value_name = "CMD")]
    pub kustomize: Option<String>,
    #[command(flatten)]
    pub report: ReportArgs,
}

/// kubectl-style connection flags (kubectl passes only argv and env to a plugin).
#[derive(Debug, Clone, Default, Args)]
pub struct KubeArgs {
    /// Path to the kubeconfig file (else $KUBECONFIG, a colon-separated list, else ~/.kube/config).
    #[arg(long, value_name = "PATH", global = true)]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use.
    #[arg(long, global = true)]
    pub context: Option<String>,
    /// The kubeconfig cluster to use.
    #[arg(long, global = true)]
    pub cluster: Option<String>,
    /// The kubeconfig user to use.
    #[arg(long, global = true)]
    pub user: Option<String>,
    /// Namespace (for `check`: where CAPI core's objects would live; run namespaces are created per run).
    #[arg(short = 'n', long, global = true)]
    pub namespace: Option<String>,
    /// Timeout of a single request, e.g. `30s` (0 = none).
    #[arg(long = "request-timeout", global = true)]
    pub request_timeout: Option<String>,
    /// API server address.
    #[arg(short = 's', long, global = true)]
    pub server: Option<String>,
    /// Bearer token.
    #[arg(long, global = true)]
    pub token: Option<String>,
    /// CA certificate file.
    #[arg(long = "certificate-authority", value_name = "PATH", global = true)]
    pub certificate_authority: Option<PathBuf>,
    /// Skip TLS verification (insecure).
    #[arg(long = "insecure-skip-tls-verify", global = true)]
    pub insecure_skip_tls_verify: bool,
}

impl KubeArgs {
    /// The connection flags, for [`crate::kubeconn`].
    pub fn options(&self) -> KubeOptions {
        KubeOptions {
            kubeconfig: self.kubeconfig.clone(),
            context: self.context.clone(),
            cluster: self.cluster.clone(),
            user: self.user.clone(),
            namespace: self.namespace.clone(),
            request_timeout: self.request_timeout.clone(),
            server: self.server.clone(),
            token: self.token.clone(),
            certificate_authority: self.certificate_authority.clone(),
            insecure_skip_tls_verify: self.insecure_skip_tls_verify,
        }
    }
}

#[derive(Debug, Clone, Args)]
pub struct RulesArgs {
    #[arg(short = 'o', long = "output", value_enum, default_value_t = RulesFormat::Table)]
    pub output: RulesFormat,
    /// Only the rules of one contract, each at that contract's level: with `-o markdown`, the
    /// contract's documentation (`rules -o markdown --contract v1beta2`).
    #[arg(long, value_name = "CONTRACT", value_parser = ["v1beta1", "v1beta2"])]
    pub contract: Option<String>,
    /// Only the rules of one role (`infra-machine`, `control-plane-template`, `ipam-pool`, …).
    #[arg(long, value_name = "ROLE")]
    pub role: Option<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum RulesFormat {
    #[default]
    Table,
    Json,
    Yaml,
    Markdown,
}

#[derive(Debug, Clone, Args)]
pub struct ExplainArgs {
    /// Rule id, e.g. `infra-machine/provider-id`.
    pub rule_id: String,
}

#[derive(Debug, Clone, Args)]
pub struct ServeArgs {
    /// Listen address (loopback; port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:0")]
    pub addr: String,
    /// Write a kubeconfig for the server to PATH.
    #[arg(long = "write-kubeconfig", value_name = "PATH")]
    pub write_kubeconfig: Option<PathBuf>,
    /// Apply manifests at start (CRDs are established before ready is reported).
    #[arg(long, value_name = "PATH")]
    pub load: Vec<PathBuf>,
    /// A clusterctl variable of the --load manifests (`${NAME}`), over the environment and the
    /// manifests' defaults (repeatable).
    #[arg(long = "var", value_name = "NAME=VALUE")]
    pub vars: Vec<String>,
    /// Fault injection spec, e.g. `drop-watch=5s,expire-watch,429=0.05,500=0.05,latency=200ms`.
    #[arg(long, value_name = "SPEC")]
    pub faults: Option<String>,
    /// Allow binding a non-loopback address.
    #[arg(long = "allow-remote")]
    pub allow_remote: bool,
}

#[derive(Debug, Subcommand)]
pub enum MockProviderCommand {
    /// Run the mock provider's controllers against a cluster.
    Run(Box<MockRunArgs>),
    /// Print the YAML to install the mock provider (CRDs, RBAC, Deployment).
    Manifests(MockManifestsArgs),
}

#[derive(Debug, Clone, Args)]
pub struct MockRunArgs {
    /// Only reconcile objects in this namespace (default: all namespaces).
    #[arg(long = "watch-namespace", value_name = "NAMESPACE")]
    pub watch_namespace: Option<String>,
    /// Only reconcile objects labelled `cluster.x-k8s.io/watch-filter=<VALUE>`.
    #[arg(long = "watch-filter", value_name = "VALUE")]
    pub watch_filter: Option<String>,
    /// Only reconcile objects that also match this label selector (e.g.
    /// `!cluster.x-k8s.io/watch-filter`: leave objects another watch filter claims, such as a
    /// `check`'s baseline, alone).
    #[arg(long = "label-selector", value_name = "SELECTOR")]
    pub label_selector: Option<String>,
    /// Provider-wide faults (comma-separated fault names).
    #[arg(long)]
    pub faults: Option<String>,
    /// Simulated infrastructure provisioning delay (e.g. `5ms`).
    #[arg(long = "provision-delay", value_name = "DURATION")]
    pub provision_delay: Option<String>,
    /// Webhook mode: serve conversion, defaulting and validation over HTTPS with `tls.crt` and
    /// `tls.key` of this directory (install `mock-provider manifests --webhooks`).
    #[arg(long = "webhook-cert-dir", value_name = "DIR")]
    pub webhook_cert_dir: Option<std::path::PathBuf>,
    /// Port of the webhook server (with --webhook-cert-dir).
    #[arg(long = "webhook-port", value_name = "PORT", default_value_t = 9443)]
    pub webhook_port: u16,
    /// Address the webhook server binds (with --webhook-cert-dir).
    #[arg(long = "webhook-host", value_name = "IP", default_value = "0.0.0.0")]
    pub webhook_host: std::net::IpAddr,
    /// Read CAPI core's objects as CAPI's own providers do (comma-separated): `v1beta1` (at
    /// cluster.x-k8s.io/v1beta1, v1beta1 paths only), `infrastructure-ref` (the InfraMachine
    /// reconciler needs the Cluster's InfraCluster), `worker-join` (bootstrap data needs the
    /// cluster CA Secret and a join token on the workload cluster), `finalizer-first` (finalizer before owner and pause, as CAPI's controllers),
    /// `workqueue-backoff` (failed reconciles retried with controller-runtime's rate limiter),
    /// `owner-version` (owners resolved from the ownerReference's apiVersion in a scheme of
    /// the read core version only), `annotations-unguarded` (writes into a nil
    /// `metadata.annotations` fail), `pod-ip-endpoint` (the InfraCluster endpoint host is
    /// `$POD_IP`, as CAPI's in-memory backend), `informer-lag=<n>ms` (Clusters read from a cache
    /// that lags), `capi-like` (all but v1beta1 and the lag).
    #[arg(long = "core-reads", value_name = "MODES")]
    pub core_reads: Option<String>,
    #[command(flatten)]
    pub kube: KubeArgs,
}

#[derive(Debug, Clone, Args)]
pub struct MockManifestsArgs {
    /// Container image for the Deployment.
    #[arg(
        long,
        default_value = "ghcr.io/capi-conformance/capi-conformance:latest"
    )]
    pub image: String,
    /// Namespace the controller is installed into.
    #[arg(
        long = "target-namespace",
        default_value = "capi-conformance-mock-system"
    )]
    pub target_namespace: String,
    /// The webhook mode's components: CRDs converted by the mock's webhook, defaulting and
    /// validating webhook configurations, their Service and cert-manager Certificate.
    #[arg(long)]
    pub webhooks: bool,
}

#[derive(Debug, Clone, Args)]
pub struct CleanupArgs {
    /// Remove what this run id left.
    #[arg(long, conflicts_with = "all")]
    pub run: Option<String>,
    /// Remove what any run left.
    #[arg(long)]
    pub all: bool,
    /// Strip finalizers that block deletion.
    #[arg(long = "force-cleanup")]
    pub force_cleanup: bool,
    #[command(flatten)]
    pub kube: KubeArgs,
}

#[derive(Debug, Clone, Args)]
pub struct RbacArgs {
    /// Only what `check --static-only` needs.
    #[arg(long = "static-only")]
    pub static_only: bool,
    /// API group of the provider under test (repeatable), e.g.
    /// `--group infrastructure.cluster.x-k8s.io`; granted only inside the run namespaces.
    #[arg(long = "group", value_name = "GROUP")]
    pub groups: Vec<String>,
    /// A kind of the provider whose CRD is cluster-scoped (repeatable), as its CRD's name, e.g.
    /// `--cluster-scoped globalinclusterippools.ipam.cluster.x-k8s.io`; granted at the cluster
    /// level (its objects are in no namespace).
    #[arg(long = "cluster-scoped", value_name = "RESOURCE.GROUP")]
    pub cluster_scoped: Vec<String>,
}
