//! `rules`: the rule catalog as a table, JSON, YAML or Markdown ([`crate::catalog_text`]).

use crate::catalog_text::{render_json, render_markdown, render_table, render_yaml};
use crate::cli::{RulesArgs, RulesFormat};
use anyhow::Context;
use capi_contract::suite::Catalog;
use std::io::{IsTerminal, Write};

pub fn run(args: &RulesArgs) -> anyhow::Result<i32> {
    let mut catalog = Catalog::embedded().context("loading the embedded rule catalog")?;
    catalog.annotate_faults(capi_mock_provider::faults::fault_for);
    let out = match args.output {
        RulesFormat::Table => render_table(&catalog, std::io::stdout().is_terminal()),
        RulesFormat::Json => render_json(&catalog)?,
        RulesFormat::Yaml => render_yaml(&catalog)?,
        RulesFormat::Markdown => render_markdown(&catalog),
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out.as_bytes())
        .context("writing to stdout")?;
    stdout.flush().context("writing to stdout")?;
    Ok(0)
}
