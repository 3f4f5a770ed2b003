//! One file per subcommand; each returns the process exit code.

pub mod check;
pub mod cleanup;
pub mod explain;
pub mod lint;
pub mod manifests;
pub mod mock_provider;
pub mod rbac;
pub mod rules;
pub mod serve;

use crate::cli::{Cli, Command};

/// Runs the parsed command line and returns the exit code (errors are mapped by `main`).
pub async fn run(cli: Cli) -> anyhow::Result<i32> {
    match cli.command {
        Command::Lint(args) => lint::run(args),
        Command::Check(args) => check::run(*args).await,
        Command::Rules(args) => rules::run(&args),
        Command::Explain(args) => explain::run(&args),
        Command::Serve(args) => serve::run(args).await,
        Command::MockProvider(cmd) => mock_provider::run(cmd).await,
        Command::Cleanup(args) => cleanup::run(args).await,
        Command::Rbac(args) => rbac::run(&args),
        Command::Manifests(cmd) => manifests::run(&cmd),
    }
}
