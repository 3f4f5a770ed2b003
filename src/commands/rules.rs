//! `rules`: the rule catalog as a table, JSON, YAML or Markdown ([`crate::catalog_text`]).

use crate::catalog_text::{Scope, render_json, render_markdown, render_table, render_yaml};
use crate::cli::{RulesArgs, RulesFormat};
use anyhow::Context;
use capi_contract::contract::{Contract, Role};
use capi_contract::suite::Catalog;
use std::io::{IsTerminal, Write};

pub fn run(args: &RulesArgs) -> anyhow::Result<i32> {
    let mut catalog = Catalog::embedded().context("loading the embedded rule catalog")?;
    catalog.annotate_faults(capi_mock_provider::faults::fault_for);
    let mut scope = Scope::default();
    if let Some(name) = &args.contract {
        let contract = Contract::parse(name)
            .with_context(|| format!("--contract {name}: expected v1beta1 or v1beta2"))?;
        catalog.under_contract(contract);
        scope.contract = Some(contract);
    }
    if let Some(name) = &args.role {
        let role = Role::parse(name).with_context(|| {
            let known: Vec<&str> = Role::ALL.iter().map(|r| r.as_str()).collect();
            format!("--role {name}: unknown role (one of {})", known.join(", "))
        })?;
        catalog.retain(|r| r.applies_to_role(role));
        scope.role = Some(role);
    }
    let out = match args.output {
        RulesFormat::Table => render_table(&catalog, std::io::stdout().is_terminal()),
        RulesFormat::Json => render_json(&catalog)?,
        RulesFormat::Yaml => render_yaml(&catalog)?,
        RulesFormat::Markdown => render_markdown(&catalog, &scope),
    };
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(out.as_bytes())
        .context("writing to stdout")?;
    stdout.flush().context("writing to stdout")?;
    Ok(0)
}
