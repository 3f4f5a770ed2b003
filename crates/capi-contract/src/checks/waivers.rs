//! Waivers: CRD annotation `capi-conformance.io/waive: id[,id]` (reason in
//! `capi-conformance.io/waive-reason`), `--config` file entries, and clusterctl's
//! `clusterctl.cluster.x-k8s.io/skip-crd-name-preflight-check` (waives `all/crd-name` and
//! `clusterctl/crd-name-preflight` for that CRD). A waived cell keeps its evidence and says what
//! the outcome would have been; waivers never hide a rule. Skipped cells are not waived.

use super::{CheckCtx, Finding};
use crate::contract::Role;
use crate::model::{Column, Evidence, Outcome};
use crate::rule_ids as id;
use crate::suite::Rule;
use anyhow::Context;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::path::Path;

pub const WAIVE_ANNOTATION: &str = "capi-conformance.io/waive";
pub const WAIVE_REASON_ANNOTATION: &str = "capi-conformance.io/waive-reason";
pub const CLUSTERCTL_SKIP_NAME_CHECK: &str =
    "clusterctl.cluster.x-k8s.io/skip-crd-name-preflight-check";
/// How a waived cell's first evidence message starts: `<prefix><outcome>[ (<reason>)]`, the
/// outcome the cell would have had (report writers read it, e.g. SARIF keeps only waived failures).
pub const OUTCOME_WITHOUT_WAIVER: &str = "outcome without the waiver: ";
/// How the reason of a cell waived by an annotation on the CRD (rather than by `--config`) starts.
pub const WAIVED_BY_ANNOTATION: &str = "waived by annotation";

/// One waiver of a `--config` file.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigWaiver {
    /// Rule id.
    pub rule: String,
    /// Only this kind (default: every column).
    #[serde(default)]
    pub kind: Option<String>,
    /// Only this provider (default: every provider).
    #[serde(default)]
    pub provider: Option<String>,
    pub reason: String,
}

/// The `--config` file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConfigFile {
    #[serde(default)]
    pub waivers: Vec<ConfigWaiver>,
    /// Role overrides: `Kind: role`.
    #[serde(default)]
    pub roles: BTreeMap<String, String>,
}

impl ConfigFile {
    pub fn load(path: &Path) -> anyhow::Result<ConfigFile> {
        let text = std::fs::read_to_string(path)
            .with_context(|| format!("{}: cannot read config", path.display()))?;
        serde_saphyr::from_str(&text).map_err(|e| {
            anyhow::anyhow!(
                "{}: invalid config: {}",
                path.display(),
                e.to_string().lines().next().unwrap_or("")
            )
        })
    }

    pub fn role_overrides(&self) -> anyhow::Result<BTreeMap<String, Role>> {
        self.roles
            .iter()
            .map(|(k, v)| {
                Role::parse(v)
                    .map(|r| (k.clone(), r))
                    .ok_or_else(|| anyhow::anyhow!("config: unknown role `{v}` for kind {k}"))
            })
            .collect()
    }
}

/// The waiver reason for `rule` on this column, if any.
pub fn waiver_for(rule: &Rule, ctx: &CheckCtx, column: &Column) -> Option<String> {
    if let Some(crd) = ctx.crd {
        let ann = &crd.crd.annotations;
        if let Some(ids) = ann.get(WAIVE_ANNOTATION)
            && ids
                .split(',')
                .map(str::trim)
                .any(|id| id == rule.id || id == "*")
        {
            let reason = ann
                .get(WAIVE_REASON_ANNOTATION)
                .filter(|r| !r.is_empty())
                .map(String::as_str)
                .unwrap_or("no reason given");
            return Some(format!(
                "{WAIVED_BY_ANNOTATION} {WAIVE_ANNOTATION}: {reason}"
            ));
        }
        if ann.contains_key(CLUSTERCTL_SKIP_NAME_CHECK)
            && [id::all::CRD_NAME, id::clusterctl::CRD_NAME_PREFLIGHT]
                .iter()
                .any(|r| *r == *rule.id)
        {
            return Some(format!(
                "{WAIVED_BY_ANNOTATION} {CLUSTERCTL_SKIP_NAME_CHECK} (clusterctl skips its CRD-name preflight check for this CRD; core must never look this kind up)"
            ));
        }
    }
    ctx.opts
        .waivers
        .iter()
        .find(|w| {
            w.rule == rule.id
                && w.kind.as_deref().is_none_or(|k| k == column.kind)
                && w.provider.as_deref().is_none_or(|p| p == column.provider)
        })
        .map(|w| format!("waived by config: {}", w.reason))
}

/// Turns a pass/fail finding into `waived` when a waiver applies.
pub fn apply(rule: &Rule, ctx: &CheckCtx, column: &Column, finding: &mut Finding) {
    if !matches!(finding.outcome, Outcome::Pass | Outcome::Fail) {
        return;
    }
    if let Some(reason) = waiver_for(rule, ctx, column) {
        let was = finding.outcome;
        let mut evidence = vec![Evidence::msg(format!(
            "{OUTCOME_WITHOUT_WAIVER}{was}{}",
            finding
                .reason
                .as_deref()
                .map(|r| format!(" ({r})"))
                .unwrap_or_default()
        ))];
        evidence.append(&mut finding.evidence);
        finding.outcome = Outcome::Waived;
        finding.reason = Some(reason);
        finding.evidence = evidence;
    }
}
