//! The in-process `check` and what tests ask of its cells, shared by the test binaries that run
//! it (`tests/kopf.rs`, `tests/scenarios.rs`; included with `#[path]`).

use capi_conformance::cli::{CheckArgs, Cli, Command};
use capi_conformance::report::combine::LIFECYCLE_PART;
use capi_conformance::report::{Phase, RuleResult};
use clap::Parser;

/// The arguments of `capi-conformance check <words>`.
pub fn check_args<S: AsRef<str>>(words: &[S]) -> CheckArgs {
    let mut argv = vec!["capi-conformance", "check"];
    argv.extend(words.iter().map(AsRef::as_ref));
    match Cli::try_parse_from(argv).unwrap().command {
        Command::Check(a) => *a,
        _ => unreachable!("parsed a check"),
    }
}

/// Whether a scenario judged the cell: a lifecycle cell, or a static rule's cell with its
/// lifecycle part folded in (one verdict per rule and column; the part is named
/// `lifecycle: …` in the evidence).
pub fn lifecycle_judged(r: &RuleResult) -> bool {
    let part = format!("{LIFECYCLE_PART}: ");
    r.phase == Phase::Lifecycle || r.evidence.iter().any(|e| e.message.starts_with(&part))
}
