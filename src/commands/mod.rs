//! One file per subcommand; each returns the process exit code.

pub mod explain;
pub mod rules;

use crate::cli::{Cli, Command};

pub mod check;
pub mod cleanup;
pub mod lint;
pub mod mock_provider;
pub mod serve;

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
        Command::Rbac(_) => not_built("rbac"),
    }
}

fn not_built(name: &str) -> anyhow::Result<i32> {
    anyhow::bail!("the `{name}` command is not available in this build yet")
}
