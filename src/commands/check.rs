//! `check`: discovery + static rules + lifecycle scenarios on a live cluster (or the embedded
//! server) → one matrix → the report writers; exit code from the verdict.

pub mod sonobuoy;

use crate::cli::CheckArgs;
use crate::client_retry::forbidden;
use crate::run::cluster::{live_progress, run_on_cluster, settings};
use crate::run::{embedded, interrupt};
use crate::scenarios::Settings;
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
    // Every loader of the run (`--crds`, `--sample`) renders kustomize roots with it.
    if let Some(k) = &args.kustomize {
        crate::source::Kustomize::set_process_default(k);
    }
    let _live = live_progress(&args.progress);
    if args.embedded {
        let extra = embedded::EmbeddedOptions {
            target_faults: args.mock_faults.clone().unwrap_or_default(),
            ..Default::default()
        };
        let matrix = embedded::embedded_matrix(&args, &extra).await?;
        crate::report::write_outputs(
            &matrix,
            &args.report.outputs(),
            std::io::stdout().is_terminal(),
        )?;
        return Ok(matrix.verdict().exit_code());
    }
    if !args.crds.is_empty() || !args.vars.is_empty() {
        anyhow::bail!(
            "--crds and --var need --embedded (on a cluster the provider is installed already, e.g. by clusterctl init)"
        );
    }
    if args.server_faults.is_some() {
        anyhow::bail!(
            "--server-faults needs --embedded (it injects faults into the embedded API server)"
        );
    }
    let conn = crate::kubeconn::connect(&args.kube.options()).await?;
    let budget = settings(&args, Settings::REAL)?.step_timeout;
    let denials = forbidden::Denials::default();
    let client = forbidden::client(
        conn.config.clone(),
        crate::client_retry::RetryPolicy::within(budget),
        &denials,
    )
    .map_err(|e| anyhow::anyhow!("cannot build a client for {}: {e}", conn.source))?;
    let result = run_on_cluster(&args, &conn, &client).await;
    // A request the cluster refused makes any verdict meaningless: report the permission.
    if let Some(denial) = denials.first() {
        return Err(denial.into());
    }
    result
}
