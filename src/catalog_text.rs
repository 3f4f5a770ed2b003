//! How the rule catalog reads: as a table, JSON, YAML, or the Markdown rule reference
//! (`docs/rules.md` is `rules -o markdown`), and the texts `explain` shows of one rule.

use anyhow::Context;
use capi_contract::contract::{Contract, Level, Role};
use capi_contract::suite::{Catalog, FieldCheck, Presence, Rule, RuleKind};
use comfy_table::{Cell, Color, ContentArrangement, Table, presets};
use std::collections::BTreeMap;
use std::fmt::Write as _;

/// Suite files in reference order, with the section title used in the Markdown reference.
const AREAS: [(&str, &str); 9] = [
    ("all.yaml", "All resources"),
    ("templates.yaml", "Templates (common)"),
    (
        "infra-cluster.yaml",
        "InfraCluster and InfraClusterTemplate",
    ),
    (
        "infra-machine.yaml",
        "InfraMachine and InfraMachineTemplate",
    ),
    (
        "infra-machinepool.yaml",
        "InfraMachinePool and InfraMachinePoolTemplate",
    ),
    (
        "bootstrap.yaml",
        "BootstrapConfig and BootstrapConfigTemplate",
    ),
    (
        "control-plane.yaml",
        "ControlPlane and ControlPlaneTemplate",
    ),
    ("ipam.yaml", "IPAM"),
    ("clusterctl.yaml", "clusterctl"),
];

/// `MUST`, `COND-MUST`, or per contract when the levels differ (`v1beta1 SHOULD · v1beta2 MAY`).
pub fn level_text(rule: &Rule) -> String {
    let per_contract: Vec<(Contract, String)> = rule
        .contracts
        .iter()
        .map(|c| (*c, rule.level_label(Some(*c))))
        .collect();
    let first = per_contract.first().map(|(_, l)| l.clone());
    if per_contract.iter().all(|(_, l)| Some(l) == first.as_ref()) {
        return first.unwrap_or_else(|| rule.level_label(None));
    }
    per_contract
        .iter()
        .map(|(c, l)| format!("{c} {l}"))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// `v1beta1, v1beta2`.
pub fn contracts_text(rule: &Rule) -> String {
    rule.contracts
        .iter()
        .map(|c| c.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `infra-cluster, infra-machine, …` (kebab names).
pub fn roles_text(rule: &Rule) -> String {
    rule.roles
        .iter()
        .map(|r| r.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// `static`, `static + scenario`, `scenario`, `review`.
pub fn kind_text(rule: &Rule) -> String {
    match (rule.kind, &rule.scenario) {
        (RuleKind::Static, Some(_)) => "static + scenario".to_string(),
        (kind, _) => kind.as_str().to_string(),
    }
}

/// One line per contract (`v1beta1: status.ready (boolean)`), then the presence line.
pub fn field_lines(rule: &Rule) -> Vec<String> {
    let Some(check) = rule
        .check
        .as_ref()
        .and_then(|v| serde_json::from_value::<FieldCheck>(v.clone()).ok())
    else {
        return Vec::new();
    };
    let mut lines: Vec<String> = rule
        .contracts
        .iter()
        .map(|c| {
            let fields = check
                .fields_for(*c)
                .iter()
                .map(|f| format!("`{}` ({})", f.path, f.json_type.as_str()))
                .collect::<Vec<_>>()
                .join(", ");
            format!("{c}: {fields}")
        })
        .filter(|l| !l.ends_with(": "))
        .collect();
    let mut presence = match check.presence {
        Presence::Required => "required".to_string(),
        Presence::IfPresent => "if present (absent → skip)".to_string(),
    };
    if let Some(path) = &check.condition_path {
        let _ = write!(presence, "; only when `{path}` exists");
    }
    lines.push(format!("presence: {presence}"));
    lines
}

fn level_colour(rule: &Rule) -> Option<Color> {
    let strongest = rule
        .contracts
        .iter()
        .map(|c| rule.level_for(Some(*c)))
        .min()
        .unwrap_or(rule.level);
    match strongest {
        Level::Must => Some(Color::Red),
        Level::Should => Some(Color::Yellow),
        Level::May => None,
    }
}

/// The catalog as a terminal table; `colour` only when stdout is a TTY.
pub fn render_table(catalog: &Catalog, colour: bool) -> String {
    let mut table = Table::new();
    if colour {
        table
            .load_style(presets::UTF8_FULL_CONDENSED)
            .set_content_arrangement(ContentArrangement::Dynamic);
    } else {
        table
            .load_style(presets::ASCII_FULL_CONDENSED)
            .force_no_tty();
    }
    table.set_header(vec![
        "RULE",
        "LEVEL",
        "CONTRACTS",
        "KIND",
        "SCENARIO",
        "TITLE",
    ]);
    for rule in catalog.rules() {
        let mut level = Cell::new(level_text(rule));
        if colour && let Some(c) = level_colour(rule) {
            level = level.fg(c);
        }
        table.add_row(vec![
            Cell::new(&rule.id),
            level,
            Cell::new(
                rule.contracts
                    .iter()
                    .map(|c| c.short())
                    .collect::<Vec<_>>()
                    .join(","),
            ),
            Cell::new(rule.kind.as_str()),
            Cell::new(rule.scenario.as_deref().unwrap_or("")),
            Cell::new(&rule.title),
        ]);
    }
    format!(
        "{table}\n{} rules ({})\n",
        catalog.len(),
        kind_counts(catalog)
    )
}

fn kind_counts(catalog: &Catalog) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for r in catalog.rules() {
        *counts.entry(r.kind.as_str()).or_default() += 1;
    }
    counts
        .iter()
        .map(|(k, n)| format!("{n} {k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The rules as a pretty JSON array (sorted by id).
pub fn render_json(catalog: &Catalog) -> anyhow::Result<String> {
    let mut s =
        serde_json::to_string_pretty(catalog.rules()).context("serialising rules as JSON")?;
    s.push('\n');
    Ok(s)
}

/// The rules as a YAML list (sorted by id), in the shape of `suites/*.yaml`.
pub fn render_yaml(catalog: &Catalog) -> anyhow::Result<String> {
    serde_saphyr::to_string(&catalog.rules()).context("serialising rules as YAML")
}

/// Escapes `|` and newlines for a Markdown table cell.
fn md_cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// GitHub's heading anchor for a rule id heading (`all/crd` → `allcrd`).
fn md_anchor(id: &str) -> String {
    id.chars()
        .filter(|c| c.is_ascii_alphanumeric() || *c == '-' || *c == '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Groups rule ids by suite file, in [`AREAS`] order; unknown files go last, as "Other".
fn rules_by_area(catalog: &Catalog) -> Vec<(&'static str, Vec<&Rule>)> {
    let mut groups: Vec<(&'static str, Vec<&Rule>)> = AREAS
        .iter()
        .map(|(_, title)| (*title, Vec::new()))
        .collect();
    let mut other: Vec<&Rule> = Vec::new();
    for rule in catalog.rules() {
        let file = catalog.file_of(&rule.id).unwrap_or("");
        let base = file.rsplit(['/', '\\']).next().unwrap_or(file);
        match AREAS.iter().position(|(f, _)| *f == base) {
            Some(i) => groups[i].1.push(rule),
            None => other.push(rule),
        }
    }
    if !other.is_empty() {
        groups.push(("Other", other));
    }
    groups.retain(|(_, rules)| !rules.is_empty());
    groups
}

/// Which part of the catalog a Markdown reference documents (`rules --contract`, `--role`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Scope {
    pub contract: Option<Contract>,
    pub role: Option<Role>,
}

impl Scope {
    /// The `rules` command line that prints this reference.
    fn command(&self) -> String {
        let mut cmd = String::from("rules -o markdown");
        if let Some(c) = self.contract {
            let _ = write!(cmd, " --contract {c}");
        }
        if let Some(r) = self.role {
            let _ = write!(cmd, " --role {}", r.as_str());
        }
        cmd
    }

    /// `Rule reference`, or `… of contract v1beta2 · InfraMachine`.
    fn title(&self) -> String {
        let mut parts = Vec::new();
        if let Some(c) = self.contract {
            parts.push(format!("contract {c}"));
        }
        if let Some(r) = self.role {
            parts.push(r.display_name().to_string());
        }
        if parts.is_empty() {
            "Rule reference".to_string()
        } else {
            format!("Rule reference: {}", parts.join(" · "))
        }
    }
}

/// The generated rule reference: the whole catalog (`docs/rules.md`), or one contract's or
/// role's part of it (`scope`).
pub fn render_markdown(catalog: &Catalog, scope: &Scope) -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# {}\n", scope.title());
    let command = scope.command();
    let target = if scope.contract.is_none() && scope.role.is_none() {
        " > docs/rules.md"
    } else {
        ""
    };
    let _ = writeln!(
        md,
        "<!-- Generated from suites/*.yaml by `capi-conformance {command}`; do not edit.\n     \
         Regenerate with: cargo run -- {command}{target} -->\n"
    );
    let _ = writeln!(
        md,
        "{} rules ({}). Levels follow RFC 2119; `COND-` levels apply only when the stated \
         condition holds. Kinds: `static` rules are checked from CRDs, RBAC and release files \
         (`lint`); `scenario` rules need a running provider (`check`); `review` rules are listed \
         for completeness and never checked.\n",
        catalog.len(),
        kind_counts(catalog)
    );
    md.push_str("| Level | static | scenario | review | total |\n|---|---|---|---|---|\n");
    let mut counts: BTreeMap<String, [usize; 3]> = BTreeMap::new();
    for r in catalog.rules() {
        let idx = match r.kind {
            RuleKind::Static => 0,
            RuleKind::Scenario => 1,
            RuleKind::Review => 2,
        };
        counts.entry(level_text(r)).or_default()[idx] += 1;
    }
    for (level, [s, sc, rv]) in &counts {
        let _ = writeln!(
            md,
            "| {} | {s} | {sc} | {rv} | {} |",
            md_cell(level),
            s + sc + rv
        );
    }
    md.push('\n');

    let groups = rules_by_area(catalog);
    md.push_str("## Contents\n\n");
    for (title, rules) in &groups {
        let _ = writeln!(md, "- {title} ({})", rules.len());
    }
    md.push('\n');

    for (title, rules) in &groups {
        let _ = writeln!(md, "## {title}\n");
        md.push_str("| Rule | Level | Contracts | Kind | Title |\n|---|---|---|---|---|\n");
        for r in rules {
            let _ = writeln!(
                md,
                "| [{}](#{}) | {} | {} | {} | {} |",
                r.id,
                md_anchor(&r.id),
                md_cell(&level_text(r)),
                md_cell(&contracts_text(r)),
                kind_text(r),
                md_cell(&r.title)
            );
        }
        md.push('\n');
        for r in rules {
            render_rule_markdown(&mut md, r);
        }
    }
    md
}

fn render_rule_markdown(md: &mut String, r: &Rule) {
    let _ = writeln!(md, "### {}\n", r.id);
    let _ = writeln!(
        md,
        "**{}** · {} · {} · {}\n",
        r.title,
        level_text(r),
        contracts_text(r),
        kind_text(r)
    );
    if let Some(cond) = &r.condition {
        let _ = writeln!(md, "- Condition: {cond}");
    }
    let _ = writeln!(md, "- Roles: {}", roles_text(r));
    if let Some(sc) = &r.scenario {
        let _ = writeln!(md, "- Scenario: {sc}");
    }
    let _ = writeln!(md, "- Checks: {}", r.description);
    let fields = field_lines(r);
    if !fields.is_empty() {
        md.push_str("- Fields:\n");
        for line in fields {
            let _ = writeln!(md, "  - {line}");
        }
    }
    let _ = writeln!(md, "- Fix: {}", r.remediation);
    let _ = writeln!(md, "- Docs: <{}>\n", r.doc);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn catalog() -> Catalog {
        Catalog::embedded().unwrap()
    }

    #[test]
    fn level_text_shows_per_contract_levels_only_when_they_differ() {
        let c = catalog();
        assert_eq!(
            level_text(c.get("all/terminal-failures").unwrap()),
            "v1beta1 SHOULD · v1beta2 MAY"
        );
        assert_eq!(level_text(c.get("all/crd").unwrap()), "MUST");
        assert_eq!(
            level_text(c.get("control-plane/status-replicas").unwrap()),
            "COND-MUST"
        );
        assert_eq!(level_text(c.get("control-plane/ready").unwrap()), "MUST");
    }

    #[test]
    fn field_lines_show_paths_per_contract() {
        let c = catalog();
        let lines = field_lines(c.get("infra-cluster/provisioned").unwrap());
        assert_eq!(
            lines,
            vec![
                "v1beta1: `status.ready` (boolean)",
                "v1beta2: `status.initialization.provisioned` (boolean)",
                "presence: required",
            ]
        );
        let cp = field_lines(c.get("control-plane/status-replicas").unwrap());
        assert!(
            cp.last()
                .unwrap()
                .contains("only when `spec.replicas` exists")
        );
        assert!(field_lines(c.get("all/crd-name").unwrap()).is_empty());
    }

    #[test]
    fn plain_table_has_every_rule_and_no_escape_codes() {
        let c = catalog();
        let t = render_table(&c, false);
        for r in c.rules() {
            assert!(t.contains(r.id.as_str()), "{}", r.id);
        }
        assert!(!t.contains('\u{1b}'));
        assert!(t.ends_with("171 rules (8 review, 70 scenario, 93 static)\n"));
    }

    #[test]
    fn json_round_trips_to_the_same_rules() {
        let c = catalog();
        let back: Vec<Rule> = serde_json::from_str(&render_json(&c).unwrap()).unwrap();
        assert_eq!(back.as_slice(), c.rules());
    }

    #[test]
    fn yaml_round_trips_to_the_same_rules() {
        let c = catalog();
        let back: Vec<Rule> = serde_saphyr::from_str(&render_yaml(&c).unwrap()).unwrap();
        assert_eq!(back.as_slice(), c.rules());
    }

    #[test]
    fn a_contracts_documentation_has_its_rules_at_its_levels() {
        let full = catalog();
        for contract in Contract::ALL {
            let mut c = catalog();
            c.under_contract(contract);
            let md = render_markdown(
                &c,
                &Scope {
                    contract: Some(contract),
                    role: None,
                },
            );
            assert!(md.starts_with(&format!("# Rule reference: contract {contract}\n")));
            assert!(md.contains(&format!(
                "`capi-conformance rules -o markdown --contract {contract}`"
            )));
            for r in full.rules() {
                let heading = format!("\n### {}\n", r.id);
                assert_eq!(
                    md.contains(&heading),
                    r.applies_to_contract(contract),
                    "{}",
                    r.id
                );
                if r.applies_to_contract(contract) {
                    let kept = c.get(&r.id).unwrap();
                    assert_eq!(level_text(kept), r.level_label(Some(contract)), "{}", r.id);
                }
            }
            assert!(c.len() < full.len(), "{contract}: every rule kept");
        }
        let mut c = catalog();
        c.retain(|r| r.applies_to_role(Role::IpamPool));
        let md = render_markdown(
            &c,
            &Scope {
                contract: None,
                role: Some(Role::IpamPool),
            },
        );
        assert!(md.contains("--role ipam-pool"));
        assert!(md.contains("\n### ipam/claim-filter\n"));
        assert!(!md.contains("\n### infra-machine/provider-id\n"));
    }

    #[test]
    fn markdown_has_a_section_and_anchor_per_rule() {
        let c = catalog();
        let md = render_markdown(&c, &Scope::default());
        for r in c.rules() {
            assert!(md.contains(&format!("\n### {}\n", r.id)), "{}", r.id);
            assert!(md.contains(&format!("(#{})", md_anchor(&r.id))), "{}", r.id);
        }
        for (_, title) in AREAS {
            assert!(md.contains(&format!("\n## {title}\n")), "{title}");
        }
        assert!(!md.contains("## Other"));
        assert_eq!(
            md_anchor("infra-machine/provider-id"),
            "infra-machineprovider-id"
        );
    }

    #[test]
    fn markdown_cells_escape_pipes() {
        assert_eq!(md_cell("a|b\nc"), "a\\|b c");
    }
}
