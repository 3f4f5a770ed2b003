//! capi-report: renders the one result model ([`Matrix`], the contract crate's [`model`],
//! re-exported here) as a report: table, JSON, YAML, JUnit, Markdown, HTML and SARIF, the
//! `--report-dir` files ([`report_dir`]) and the report files of a run ([`write_outputs`]).
//!
//! Every writer goes through [`prepare::prepared`] first: a sorted clone whose free text is
//! redacted, so output is byte-identical across runs and never shows a secret-like value.

mod document;
mod html;
mod json_writer;
mod junit;
mod layout;
mod markdown;
pub mod migration;
mod output;
pub mod paths;
mod prepare;
pub mod redact;
pub mod report_dir;
pub mod sarif;
mod table;
mod text;
mod timeline;

/// The result model (it lives in the contract crate, shared by every layer).
pub use capi_contract::model::{self, combine};
pub use document::{REPORT_SCHEMA_VERSION, ReportDocument};
pub use model::SharedStr;
pub use model::{
    Column, Evidence, Matrix, Note, Outcome, Phase, Problem, RuleResult, RunContext,
    ScenarioRecord, SourceLocation, StepRecord, Summary, TimelineEntry, Verdict,
};
pub use output::{Outputs, color_enabled, write_outputs, write_outputs_to};
pub use sarif::SarifBase;

use capi_contract::contract::Contract;
use capi_contract::model::OutputFormat;
pub use migration::{KindMigration, Migration, MigrationItem};

/// How a report is rendered. Nothing here depends on the clock or the environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderOptions {
    /// ANSI colour in the table (the other formats ignore it).
    pub color: bool,
    /// Host name written into JUnit suites (fixed, so output does not depend on the machine).
    pub hostname: String,
    /// Table width in characters; `None` lets cells keep their natural width.
    pub width: Option<u16>,
    /// Most target columns in one table (the table and Markdown matrices are split into
    /// chunks, grouped by role, so 50 CRDs × 2 contracts stay readable).
    pub max_columns: usize,
    /// `--migration`: add a section listing what each older-contract CRD must change for this
    /// contract.
    pub migration: Option<Contract>,
    /// SARIF only: the source root artifact URIs are relative to, and the input documents'
    /// start lines ([`SarifBase::discover`] fills it for a run; the default takes evidence paths
    /// as relative to the root already).
    pub sarif: SarifBase,
}

impl Default for RenderOptions {
    fn default() -> Self {
        RenderOptions {
            color: false,
            hostname: "capi-conformance".to_string(),
            width: None,
            max_columns: 8,
            migration: None,
            sarif: SarifBase::default(),
        }
    }
}

/// Renders `matrix` in `format`. Output is sorted and byte-identical for the same matrix.
pub fn render(
    matrix: &Matrix,
    format: OutputFormat,
    opts: &RenderOptions,
) -> anyhow::Result<String> {
    use anyhow::Context as _;
    let m = prepare::prepared(matrix);
    match format {
        OutputFormat::Table => Ok(table::render(&m, opts)),
        OutputFormat::Json => {
            let mut out = Vec::new();
            document::write_json(&m, opts, &mut out)?;
            String::from_utf8(out).context("the JSON report is not UTF-8")
        }
        OutputFormat::Yaml => document::to_yaml(&m, opts),
        OutputFormat::Junit => junit::render(&m, opts),
        OutputFormat::Markdown => Ok(markdown::render(&m, opts)),
        OutputFormat::Sarif => sarif::render(&m, opts),
    }
}

/// Writes `matrix` in `format` to `out`: the bytes [`render`] returns, with the JSON report
/// serialised straight into `out` (no copy of the matrix, no whole-report string).
pub fn render_to(
    matrix: &Matrix,
    format: OutputFormat,
    opts: &RenderOptions,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    use anyhow::Context as _;
    match format {
        OutputFormat::Json => document::write_json(&prepare::prepared(matrix), opts, out),
        _ => out
            .write_all(render(matrix, format, opts)?.as_bytes())
            .context("writing the report"),
    }
}

/// Renders the SARIF log with `rules` as the tool's rule catalog (`render` with
/// [`OutputFormat::Sarif`] uses the embedded catalog).
pub fn render_sarif(
    matrix: &Matrix,
    opts: &RenderOptions,
    rules: &[capi_contract::suite::Rule],
) -> anyhow::Result<String> {
    sarif::render_with(&prepare::prepared(matrix), opts, rules)
}

/// Renders the self-contained HTML report (`--html`; not an `-o` format).
pub fn render_html(matrix: &Matrix, opts: &RenderOptions) -> String {
    let m = prepare::prepared(matrix);
    html::render(&m, opts)
}
