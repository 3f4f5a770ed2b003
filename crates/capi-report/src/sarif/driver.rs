//! `tool.driver`: the rule descriptors of the SARIF log (every catalog rule, its level, help
//! text and tags) and the message helpers they share with the results.

use super::super::model::Matrix;
use capi_contract::contract::Level;
use capi_contract::suite::{Rule, RuleKind};
use serde_json::json;
use serde_sarif::sarif::{
    Message, MultiformatMessageString, PropertyBag, ReportingConfiguration, ReportingDescriptor,
    ResultLevel,
};
use std::collections::BTreeMap;

/// Every catalog rule, then the rules of `m` the catalog does not have (in `m`'s order).
pub(super) fn driver_rules<'a>(m: &'a Matrix, catalog: &'a [Rule]) -> Vec<&'a Rule> {
    let mut rules: Vec<&Rule> = catalog.iter().collect();
    let known: std::collections::HashSet<&str> = catalog.iter().map(|r| r.id.as_str()).collect();
    rules.extend(m.rules.iter().filter(|r| !known.contains(r.id.as_str())));
    rules
}

pub(crate) fn level_of(level: Level) -> ResultLevel {
    match level {
        Level::Must => ResultLevel::Error,
        Level::Should => ResultLevel::Warning,
        Level::May => ResultLevel::Note,
    }
}

pub(super) fn level_name(level: Level) -> &'static str {
    match level {
        Level::Must => "error",
        Level::Should => "warning",
        Level::May => "note",
    }
}

pub(super) fn plain(text: impl Into<String>) -> Message {
    Message::builder().text(text.into()).build()
}

pub(super) fn multiformat(text: impl Into<String>) -> MultiformatMessageString {
    MultiformatMessageString::builder()
        .text(text.into())
        .build()
}

/// `infra-machine/provider-id` → `InfraMachineProviderId` (SARIF's `name` is an identifier).
pub(super) fn pascal_name(id: &str) -> String {
    id.split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(|w| {
            let mut cs = w.chars();
            cs.next()
                .map(|c| c.to_ascii_uppercase().to_string() + cs.as_str())
                .unwrap_or_default()
        })
        .collect()
}

pub(super) fn is_semver(v: &str) -> bool {
    let core = v.split(['-', '+']).next().unwrap_or("");
    let parts: Vec<&str> = core.split('.').collect();
    parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// A catalog rule as a SARIF reporting descriptor.
pub(super) fn descriptor(rule: &Rule) -> ReportingDescriptor {
    let mut full = rule.description.trim().to_string();
    if let Some(cond) = &rule.condition {
        full.push_str(&format!(
            " Applies when: {}.",
            cond.trim().trim_end_matches('.')
        ));
    }
    let remediation = rule.remediation.trim();
    let help = MultiformatMessageString::builder()
        .text(format!("{remediation}\nContract: {}", rule.doc))
        .markdown(format!(
            "**How to fix:** {remediation}\n\n**Contract:** [{}]({})",
            rule.doc, rule.doc
        ))
        .build();
    let area = rule.id.split('/').next().unwrap_or_default().to_string();
    let mut props = BTreeMap::new();
    props.insert("capiLevel".to_string(), json!(rule.level_label(None)));
    if !rule.levels.is_empty() {
        let per: BTreeMap<&str, String> = rule
            .levels
            .keys()
            .map(|c| (c.as_str(), rule.level_label(Some(*c))))
            .collect();
        props.insert("capiLevels".to_string(), json!(per));
    }
    props.insert(
        "contracts".to_string(),
        json!(
            rule.contracts
                .iter()
                .map(|c| c.as_str())
                .collect::<Vec<_>>()
        ),
    );
    props.insert(
        "roles".to_string(),
        json!(rule.roles.iter().map(|r| r.as_str()).collect::<Vec<_>>()),
    );
    props.insert("checkKind".to_string(), json!(rule.kind.as_str()));
    // GitHub code scanning reads `precision`: static checks are exact schema/manifest facts;
    // scenarios observe a live reconciler; review rules are never decided by the tool.
    let precision = match rule.kind {
        RuleKind::Static => "very-high",
        RuleKind::Scenario => "high",
        RuleKind::Review => "low",
    };
    props.insert("precision".to_string(), json!(precision));
    let tags = vec![
        "cluster-api".to_string(),
        "provider-contract".to_string(),
        area,
        rule.kind.as_str().to_string(),
        rule.level.as_str().to_ascii_lowercase(),
    ];
    ReportingDescriptor::builder()
        .id(rule.id.to_string())
        .name(pascal_name(&rule.id))
        .short_description(multiformat(rule.title.trim()))
        .full_description(multiformat(full))
        .help(help)
        .help_uri(rule.doc.clone())
        .default_configuration(
            ReportingConfiguration::builder()
                .level(json!(level_name(rule.level)))
                .build(),
        )
        .properties(
            PropertyBag::builder()
                .tags(tags)
                .additional_properties(props)
                .build(),
        )
        .build()
}
