//! `write_outputs`: the `-o` format to stdout plus every `--junit/--json/--markdown/--html/--sarif`
//! file of one run.

use super::{Matrix, RenderOptions, SarifBase, render_html, render_to};
use anyhow::Context as _;
use capi_contract::contract::Contract;
use capi_contract::model::OutputFormat;
use std::io::Write;
use std::path::{Path, PathBuf};

/// What one run writes: the `-o` format to stdout and every report file asked for (the CLI's
/// `--junit/--json/--markdown/--html/--sarif`, `--migration`, `--color`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outputs {
    /// The format written to stdout.
    pub output: OutputFormat,
    pub junit: Option<PathBuf>,
    pub json: Option<PathBuf>,
    pub markdown: Option<PathBuf>,
    pub html: Option<PathBuf>,
    pub sarif: Option<PathBuf>,
    /// The contract a migration section is written for, as given (checked when writing).
    pub migration: Option<String>,
    /// Colour in the table: `auto` (a terminal without `NO_COLOR`), `always`, `never`.
    pub color: String,
}

/// Whether the table is coloured: `--color always|never`, or `auto` = stdout is a terminal and
/// `NO_COLOR` is unset.
pub fn color_enabled(color: &str, stdout_is_tty: bool) -> bool {
    match color {
        "always" => true,
        "never" => false,
        _ => stdout_is_tty && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
    }
}

/// Prints the `-o` format to stdout and writes every requested report file.
pub fn write_outputs(matrix: &Matrix, args: &Outputs, stdout_is_tty: bool) -> anyhow::Result<()> {
    let stdout = std::io::stdout();
    let mut lock = stdout.lock();
    write_outputs_to(matrix, args, stdout_is_tty, &mut lock)
}

/// [`write_outputs`] with the stdout stream injected (tests).
pub fn write_outputs_to(
    matrix: &Matrix,
    args: &Outputs,
    stdout_is_tty: bool,
    stdout: &mut dyn Write,
) -> anyhow::Result<()> {
    let migration = match args.migration.as_deref() {
        None => None,
        Some(s) => Some(Contract::parse(s).with_context(|| {
            format!("--migration: unknown contract `{s}` (expected v1beta1 or v1beta2)")
        })?),
    };
    // The source root and document lines are looked up only when SARIF is written.
    let sarif = if args.sarif.is_some() || args.output == OutputFormat::Sarif {
        SarifBase::discover(matrix)
    } else {
        SarifBase::default()
    };
    let opts = RenderOptions {
        migration,
        sarif: sarif.clone(),
        color: color_enabled(&args.color, stdout_is_tty),
        // On a terminal the table wraps to its width; elsewhere output does not depend on it.
        width: if stdout_is_tty {
            comfy_table::Table::new().width()
        } else {
            None
        },
        ..RenderOptions::default()
    };
    // Files carry no colour and do not depend on the terminal.
    let file_opts = RenderOptions {
        migration,
        sarif,
        ..RenderOptions::default()
    };
    let files: [(Option<&Path>, Option<OutputFormat>); 5] = [
        (args.junit.as_deref(), Some(OutputFormat::Junit)),
        (args.json.as_deref(), Some(OutputFormat::Json)),
        (args.markdown.as_deref(), Some(OutputFormat::Markdown)),
        (args.sarif.as_deref(), Some(OutputFormat::Sarif)),
        (args.html.as_deref(), None),
    ];
    for (path, format) in files {
        let Some(path) = path else { continue };
        match format {
            Some(f) => write_file(path, |out| render_to(matrix, f, &file_opts, out))?,
            None => {
                let body = render_html(matrix, &file_opts);
                write_file(path, |out| Ok(out.write_all(body.as_bytes())?))?;
            }
        }
    }
    // Buffered: the JSON report is serialised piece by piece, and stdout's own buffer flushes
    // at every newline.
    let mut out = std::io::BufWriter::with_capacity(1 << 16, stdout);
    render_to(matrix, args.output, &opts, &mut out)
        .and_then(|()| Ok(out.flush()?))
        .context("writing the report to stdout")?;
    Ok(())
}

fn write_file(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> anyhow::Result<()>,
) -> anyhow::Result<()> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("creating the directory of {}", path.display()))?;
    }
    let file =
        std::fs::File::create(path).with_context(|| format!("writing {}", path.display()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 16, file);
    write(&mut out)
        .and_then(|()| Ok(out.flush()?))
        .with_context(|| format!("writing {}", path.display()))
}
