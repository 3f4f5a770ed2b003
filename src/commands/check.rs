//! `check`: arguments → source (a cluster, or the embedded server) → plan → run → the report
//! writers; exit code from the verdict.

pub mod sonobuoy;

use crate::capi_core::EmbeddedCore;
use crate::cli::CheckArgs;
use crate::client_retry::{RetryLayer, RetryPolicy, RetryingClient, TroubleLog, forbidden};
use crate::manifests::installation::Installation;
use crate::plan::Plan;
use crate::report::Matrix;
use crate::run::management::{ClusterManagement, Management};
use crate::run::{CheckOptions, EmbeddedOptions, RunOptions, interrupt, progress};
use crate::source::Source;
use anyhow::Context;
use capi_contract::checks::LintOptions;
use capi_contract::inventory::Document;
use capi_contract::suite::Catalog;
use embedded_apiserver::{EmbeddedServer, ServerOptions};
use std::io::IsTerminal;

/// `check` against the cluster of the kubeconfig; with `--sonobuoy` (or Sonobuoy's results
/// directory in the environment) as a Sonobuoy plugin ([`sonobuoy`]).
pub async fn run(mut args: CheckArgs) -> anyhow::Result<i32> {
    let Some(plugin) = sonobuoy::Sonobuoy::resolve(
        args.sonobuoy,
        std::env::var_os(sonobuoy::RESULTS_DIR_ENV),
        args.report.junit.as_deref(),
    )?
    else {
        return run_check(args).await;
    };
    args.report.junit = Some(plugin.junit().to_path_buf());
    let result = run_check(args).await;
    let reported = match &result {
        Ok(_) => plugin.done(),
        Err(err) => plugin.failed(err),
    };
    match (reported, result) {
        (Err(e), Ok(_)) => Err(e),
        (Err(e), Err(err)) => {
            eprintln!("error: {e:#}");
            Err(err)
        }
        (Ok(()), result) => result,
    }
}

async fn run_check(args: CheckArgs) -> anyhow::Result<i32> {
    interrupt::install();
    let (events, _live) = progress::events(args.progress.into());
    let mut opts = args.options()?;
    opts.run.events = events;
    let matrix = if args.embedded {
        embedded(&EmbeddedServer::new(ServerOptions::default()), &opts).await?
    } else if opts.embedded.is_some() {
        installing_on_cluster(&args, opts).await?
    } else {
        on_cluster(&args, opts).await?
    };
    crate::report::write_outputs(
        &matrix,
        &args.report.outputs(),
        std::io::stdout().is_terminal(),
    )?;
    Ok(matrix.verdict().exit_code())
}

/// `check --embedded` on `server` (fresh; it outlives the run, tests inspect it): the embedded
/// source → plan → run, with CAPI core's part (conversion webhook, workload clusters) started
/// for the run and stopped after it.
pub async fn embedded(server: &EmbeddedServer, opts: &CheckOptions) -> anyhow::Result<Matrix> {
    let embedded = opts.embedded.clone().unwrap_or_default();
    let core = crate::source::embedded::start_core(server, &embedded.inputs).await?;
    let trouble = TroubleLog::default();
    let client = server.retrying_client_layered(
        RetryLayer::new(RetryPolicy::within(opts.run.settings.step_timeout)).reporting_to(&trouble),
    );
    let result = with_core(
        Management::Embedded(server),
        (&client, &trouble),
        opts,
        &embedded,
        &core,
    )
    .await;
    core.shutdown().await;
    result
}

/// `check --kubeconfig … --crds …` (or `--provider-cmd`, `--core-crds`): the embedded run's
/// flow on a real cluster. The run installs CAPI core's CRDs (unless core is installed), the
/// mock's and the provider's components, starts the managers here against the cluster with
/// its webhooks pointed at them, and puts the cluster back as it was afterwards, also when
/// interrupted.
async fn installing_on_cluster(args: &CheckArgs, mut opts: CheckOptions) -> anyhow::Result<Matrix> {
    if args.server_faults.is_some() {
        anyhow::bail!(
            "--server-faults needs --embedded (it injects faults into the embedded API server)"
        );
    }
    let embedded = opts.embedded.clone().unwrap_or_default();
    let conn = crate::kubeconn::connect(&args.kube.options()).await?;
    let trouble = TroubleLog::default();
    let denials = forbidden::Denials::default();
    let client = forbidden::client(
        conn.config.clone(),
        RetryLayer::new(RetryPolicy::within(opts.run.settings.step_timeout)).reporting_to(&trouble),
        &denials,
    )
    .map_err(|e| anyhow::anyhow!("cannot build a client for {}: {e}", conn.source))?;
    opts.statics.source = conn.config.cluster_url.to_string();
    opts.run.denials = Some(denials.clone());
    let source = conn.source.clone();
    let core_installed = crate::source::cluster::core_installed(&client)
        .await
        .with_context(|| format!("reading {source}"))?;
    if core_installed && embedded.inputs.core_crds.is_some() {
        anyhow::bail!(
            "CAPI core's CRDs are installed on this cluster ({source}); --core-crds would replace them: leave it out"
        );
    }
    let management = ClusterManagement {
        conn,
        installation: Installation::new(&crate::run::new_run_id()),
        core_installed,
        core_running: crate::run::cluster::core_controllers_running(&client).await,
    };
    // From here on the run changes the cluster: an interrupt ends the scenarios, then the cluster
    // is put back.
    let _section = interrupt::section();
    let core = crate::capi_core::EmbeddedCore::start(
        client.clone(),
        crate::source::embedded::core_crds(&embedded.inputs),
    )
    .await?;
    let result = with_core(
        Management::Cluster(&management),
        (&client, &trouble),
        &opts,
        &embedded,
        &core,
    )
    .await;
    let (created, changed) = management.installation.counts();
    let left = management.restore(&client).await;
    core.shutdown().await;
    if let Some(denial) = denials.first() {
        return Err(denial.into());
    }
    let mut matrix = result?;
    matrix.notes.push(crate::report::Note {
        source: "cluster".into(),
        message: format!(
            "the run installed {created} object(s) and changed {changed} on {source}; {}",
            if left.is_empty() {
                "all were put back as they were".to_string()
            } else {
                format!("not put back: {}", left.join("; "))
            }
        ),
    });
    Ok(matrix)
}

/// The embedded run's flow on `management` (with CAPI core's part started for it): source →
/// plan → run, through `client` (whose retries report to `trouble`).
async fn with_core(
    management: Management<'_>,
    (client, trouble): (&kube::Client, &TroubleLog),
    opts: &CheckOptions,
    embedded: &EmbeddedOptions,
    core: &EmbeddedCore,
) -> anyhow::Result<Matrix> {
    let read = Source::Embedded {
        management,
        client,
        inputs: &embedded.inputs,
        core,
    }
    .read()
    .await?;
    let mut installed = read.installed;
    let mut plan = if installed.mock_components {
        // The components are the mock's own (its webhook mode): its kinds are the target.
        let mut opts = opts.clone();
        if let Some(s) = &mut opts.scenarios {
            s.mock_targets = Some(true);
        }
        plan(read.loaded.documents, &opts)?
    } else {
        plan(read.loaded.documents, opts)?
    };
    plan.fill_samples_from_cluster(client).await;
    let notes = std::mem::take(&mut installed.notes);
    if installed.serving.is_none() {
        // With the provider's webhooks, after the provider serves them (run::embedded).
        plan.dry_run_samples(client, "default").await?;
    }
    let mut matrix = crate::run::embedded::run(
        management,
        client,
        &plan,
        &opts.run,
        embedded,
        crate::run::embedded::Prepared {
            installed: &installed,
            workloads: &core.workloads,
            conversion: &core.webhook,
        },
        trouble,
    )
    .await?;
    matrix.notes.extend(notes);
    let reached = core.workloads.clusters_with_join_tokens().await;
    if !reached.is_empty() {
        matrix.notes.push(crate::report::Note {
            source: "workload clusters".into(),
            message: format!(
                "workload clusters with bootstrap token Secrets in kube-system (a bootstrap \
                 provider reached them and created its join token): {}",
                reached.into_iter().collect::<Vec<_>>().join(", ")
            ),
        });
    }
    Ok(matrix)
}

/// `check --embedded` from command-line arguments, with the target mock's provider-wide
/// faults (tests and benches).
pub async fn embedded_matrix(args: &CheckArgs, target_faults: &str) -> anyhow::Result<Matrix> {
    embedded_matrix_on(
        &EmbeddedServer::new(ServerOptions::default()),
        args,
        target_faults,
    )
    .await
}

/// [`embedded_matrix`] on a given (fresh) server, which outlives the run.
pub async fn embedded_matrix_on(
    server: &EmbeddedServer,
    args: &CheckArgs,
    target_faults: &str,
) -> anyhow::Result<Matrix> {
    let mut opts = args.options()?;
    if let Some(e) = &mut opts.embedded {
        e.target_faults = target_faults.to_string();
    }
    embedded(server, &opts).await
}

/// The plan of a `check`: the catalog's rules over `docs`.
fn plan(docs: Vec<Document>, opts: &CheckOptions) -> anyhow::Result<Plan> {
    let catalog = Catalog::embedded()?;
    Ok(Plan::build(
        docs,
        opts.statics.clone(),
        catalog.rules(),
        opts.filter.clone(),
        opts.scenarios.as_ref(),
    )?)
}

/// `check --static-only` on the cluster `client` reaches: the cluster source → plan → run
/// (static cells and the live part of `all/rbac-aggregation` as `capi_manager`).
pub async fn cluster_static_matrix(
    client: &kube::Client,
    statics: LintOptions,
    capi_manager: &str,
) -> anyhow::Result<Matrix> {
    let opts = CheckOptions {
        statics,
        run: RunOptions {
            capi_manager: capi_manager.to_string(),
            ..RunOptions::default()
        },
        ..CheckOptions::default()
    };
    let read = Source::Cluster { client }.read().await?;
    let plan = plan(read.loaded.documents, &opts)?;
    crate::run::cluster::run(client, &plan, &opts.run, &TroubleLog::default()).await
}

/// `check` on the cluster of the kubeconfig: the cluster source → plan → run.
async fn on_cluster(args: &CheckArgs, mut opts: CheckOptions) -> anyhow::Result<Matrix> {
    if !args.vars.is_empty() {
        anyhow::bail!("--var needs --crds (it sets clusterctl variables of those manifests)");
    }
    if args.server_faults.is_some() {
        anyhow::bail!(
            "--server-faults needs --embedded (it injects faults into the embedded API server)"
        );
    }
    let conn = crate::kubeconn::connect(&args.kube.options()).await?;
    let trouble = TroubleLog::default();
    let denials = forbidden::Denials::default();
    let client = forbidden::client(
        conn.config.clone(),
        RetryLayer::new(RetryPolicy::within(opts.run.settings.step_timeout)).reporting_to(&trouble),
        &denials,
    )
    .map_err(|e| anyhow::anyhow!("cannot build a client for {}: {e}", conn.source))?;
    opts.statics.source = conn.config.cluster_url.to_string();
    opts.run.denials = Some(denials.clone());
    let result = async {
        let read = Source::Cluster { client: &client }.read().await?;
        let mut plan = plan(read.loaded.documents, &opts)?;
        // Best effort, outside the denial recording: listing provider templates cluster-wide is
        // a permission `rbac` deliberately does not grant (pass --sample instead).
        if let Ok(plain) = conn.client() {
            plan.fill_samples_from_cluster(&plain).await;
        }
        crate::run::cluster::run(&client, &plan, &opts.run, &trouble).await
    }
    .await;
    // A request the cluster refused makes any verdict meaningless: report the permission.
    if let Some(denial) = denials.first() {
        return Err(denial.into());
    }
    result
}
