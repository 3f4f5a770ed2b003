//! `lint PATH...`: load documents, evaluate every static rule ([`crate::checks::evaluate_rules`]),
//! print the report, exit with the verdict's code (input errors: exit 2 via `main`).

use crate::checks::{ConfigFile, LintOptions};
use crate::cli::{LintArgs, ReportArgs};
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
    opts.manager_help = read_manager_help(r)?;
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

/// Largest `--manager-help` file read (a `--help` text is a few KiB).
const MAX_MANAGER_HELP: u64 = 1 << 20;

/// Reads `--manager-help FILE`, if given.
pub fn read_manager_help(r: &ReportArgs) -> anyhow::Result<Option<String>> {
    let Some(path) = &r.manager_help else {
        return Ok(None);
    };
    let len = std::fs::metadata(path)
        .with_context(|| format!("--manager-help {}: cannot read the file", path.display()))?
        .len();
    if len > MAX_MANAGER_HELP {
        anyhow::bail!(
            "--manager-help {}: {len} bytes is not a --help text (limit {MAX_MANAGER_HELP} bytes)",
            path.display()
        );
    }
    let bytes = std::fs::read(path)
        .with_context(|| format!("--manager-help {}: cannot read the file", path.display()))?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
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
