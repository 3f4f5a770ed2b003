//! `lint PATH...`: load documents, evaluate every static rule ([`crate::checks::evaluate_rules`]),
//! print the report, exit with the verdict's code (input errors: exit 2 via `main`).

use crate::checks::{ConfigFile, LintOptions};
use crate::cli::LintArgs;
use crate::contract::FailOn;
use crate::inventory::{self, load_paths};
use crate::report::{self, Matrix};
use crate::suite::{Catalog, Rule};
use anyhow::Context;
use std::io::IsTerminal;

/// Builds the options from the command line (config file, role overrides).
pub fn options(args: &LintArgs) -> anyhow::Result<LintOptions> {
    let r = &args.report;
    let fail_on = FailOn::parse(&r.fail_on)
        .with_context(|| format!("--fail-on {}: unknown level", r.fail_on))?;
    let mut opts = LintOptions {
        contract: r.contract,
        fail_on,
        no_waivers: r.no_waivers,
        keep_going: args.keep_going,
        source: args
            .paths
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" "),
        started_at: jiff::Timestamp::now(),
        ..LintOptions::default()
    };
    if let Some(m) = &r.migration {
        opts.also_contract = Some(
            crate::contract::Contract::parse(m)
                .with_context(|| format!("--migration {m}: expected v1beta1 or v1beta2"))?,
        );
    }
    if let Some(path) = &r.config {
        let cfg = ConfigFile::load(path)?;
        opts.roles = cfg.role_overrides()?;
        opts.waivers = cfg.waivers;
    }
    opts.roles
        .extend(inventory::parse_role_overrides(&r.roles)?);
    Ok(opts)
}

/// Loads and evaluates; input errors come back as errors (one line each).
pub fn lint_matrix(args: &LintArgs, rules: &[Rule]) -> anyhow::Result<Matrix> {
    let mut opts = options(args)?;
    let loaded = load_paths(&args.paths, args.keep_going)?;
    opts.load_problems = loaded.problems;
    Ok(crate::checks::evaluate_rules(
        loaded.documents,
        &opts,
        rules,
    )?)
}

/// Runs `lint` with the embedded catalog and the report writers.
pub fn run(args: LintArgs) -> anyhow::Result<i32> {
    let catalog = Catalog::shared()?;
    let matrix = lint_matrix(&args, catalog.rules())?;
    let tty = std::io::stdout().is_terminal();
    report::write_outputs(&matrix, &args.report, tty)?;
    Ok(matrix.verdict().exit_code())
}
