//! `explain RULE_ID`: one rule in full — level per contract, where it applies, what is checked,
//! the field paths per contract, how to fix it, and the contract documentation link.

use crate::catalog_text::{contracts_text, field_lines, kind_text, roles_text};
use crate::cli::ExplainArgs;
use anyhow::Context;
use capi_contract::suite::{Catalog, Rule};
use std::fmt::Write as _;
use std::io::Write;

/// How many "did you mean" ids an unknown rule id gets.
const SUGGESTIONS: usize = 3;

/// An unknown rule id (mapped to exit code 2 by `main`).
#[derive(Debug, thiserror::Error)]
#[error("unknown rule `{id}`; closest rule ids: {}", suggestions.join(", "))]
pub struct UnknownRule {
    pub id: String,
    pub suggestions: Vec<String>,
}

pub fn run(args: &ExplainArgs) -> anyhow::Result<i32> {
    let catalog = Catalog::embedded().context("loading the embedded rule catalog")?;
    let text = explain(&catalog, &args.rule_id)?;
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .context("writing to stdout")?;
    stdout.flush().context("writing to stdout")?;
    Ok(0)
}

/// The explanation of `id`, or [`UnknownRule`] with the closest ids.
pub fn explain(catalog: &Catalog, id: &str) -> Result<String, UnknownRule> {
    let id = id.trim();
    match catalog.get(id) {
        Some(rule) => Ok(render(rule, catalog.file_of(id))),
        None => Err(UnknownRule {
            id: id.to_string(),
            suggestions: catalog
                .closest_ids(id, SUGGESTIONS)
                .into_iter()
                .map(str::to_string)
                .collect(),
        }),
    }
}

fn level_lines(rule: &Rule) -> String {
    rule.contracts
        .iter()
        .map(|c| format!("{c} {}", rule.level_label(Some(*c))))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// Plain-text rendering of one rule.
pub fn render(rule: &Rule, file: Option<&str>) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "{} — {}\n", rule.id, rule.title);
    let _ = writeln!(s, "  Level:      {}", level_lines(rule));
    if let Some(cond) = &rule.condition {
        let _ = writeln!(s, "  Condition:  {cond}");
    }
    let _ = writeln!(s, "  Contracts:  {}", contracts_text(rule));
    let _ = writeln!(s, "  Roles:      {}", roles_text(rule));
    let _ = writeln!(s, "  Kind:       {}", kind_text(rule));
    if let Some(sc) = &rule.scenario {
        let _ = writeln!(s, "  Scenario:   {sc}");
    }
    if !rule.faults.is_empty() {
        let _ = writeln!(s, "  Faults:     {}", rule.faults.join(", "));
    }
    if let Some(file) = file {
        let _ = writeln!(s, "  Defined in: suites/{file}");
    }
    let _ = writeln!(s, "\nWhat is checked:\n  {}", rule.description);
    let fields = field_lines(rule);
    if !fields.is_empty() {
        s.push_str("\nFields:\n");
        for line in fields {
            let _ = writeln!(s, "  {line}");
        }
    }
    let _ = writeln!(s, "\nHow to fix:\n  {}", rule.remediation);
    let _ = writeln!(s, "\nDocs: {}", rule.doc);
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_rule_lists_levels_fields_fix_and_doc() {
        let c = Catalog::embedded().unwrap();
        let text = explain(&c, "control-plane/status-replicas").unwrap();
        assert!(text.starts_with("control-plane/status-replicas — "));
        assert!(text.contains("Level:      v1beta1 COND-MUST · v1beta2 COND-MUST"));
        assert!(text.contains("Condition:  the replica count is controllable"));
        assert!(text.contains("v1beta1: `status.selector` (string)"));
        assert!(text.contains("`status.upToDateReplicas` (integer)"));
        assert!(text.contains("Scenario:   SC-controlplane"));
        assert!(text.contains("Defined in: suites/control-plane.yaml"));
        assert!(text.contains(
            "Docs: https://cluster-api.sigs.k8s.io/developer/providers/contracts/control-plane.html#controlplane-replicas"
        ));
    }

    #[test]
    fn versioned_level_is_shown_per_contract() {
        let c = Catalog::embedded().unwrap();
        let text = explain(&c, "all/terminal-failures").unwrap();
        assert!(text.contains("Level:      v1beta1 SHOULD · v1beta2 MAY"));
    }

    #[test]
    fn unknown_rule_suggests_three_close_ids() {
        let c = Catalog::embedded().unwrap();
        let err = explain(&c, "infra-machine/provider-idd").unwrap_err();
        assert_eq!(err.suggestions.len(), 3);
        assert_eq!(err.suggestions[0], "infra-machine/provider-id");
        assert!(err.to_string().contains("infra-machine/provider-id"));
    }
}
