//! The stable machine-readable report (`-o json`, `-o yaml`, `--json FILE`): one struct, so the
//! two formats never drift. Field names and order are part of the interface; bump
//! [`REPORT_SCHEMA_VERSION`] on incompatible change.

use super::RenderOptions;
use super::migration::Migration;
use super::model::{
    Column, Evidence, Matrix, Outcome, Phase, Problem, RunContext, ScenarioRecord, StepRecord,
    Summary, TimelineEntry, Verdict,
};
use crate::contract::{Contract, Level, Role};
use crate::suite::RuleKind;
use anyhow::Context as _;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Version of the JSON/YAML report layout.
pub const REPORT_SCHEMA_VERSION: &str = "capi-conformance.io/report/v1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportDocument {
    pub schema_version: String,
    pub context: ReportContext,
    pub summary: Summary,
    pub verdict: Verdict,
    pub exit_code: i32,
    pub rules: Vec<ReportRule>,
    pub columns: Vec<ReportColumn>,
    pub results: Vec<ReportResult>,
    pub problems: Vec<Problem>,
    pub scenarios: Vec<ReportScenario>,
    /// Present with `--migration`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub migration: Option<Migration>,
}

/// Where and how the run happened (`fail_on` as the CLI spells it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportContext {
    pub tool_version: String,
    pub command: String,
    pub source: String,
    pub started_at: jiff::Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    pub fail_on: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

impl ReportContext {
    fn new(c: &RunContext) -> ReportContext {
        ReportContext {
            tool_version: c.tool_version.clone(),
            command: c.command.clone(),
            source: c.source.clone(),
            started_at: c.started_at,
            server_version: c.server_version.clone(),
            fail_on: c.fail_on.as_str().to_string(),
            run_id: c.run_id.clone(),
        }
    }
}

/// A catalog rule as the report shows it (the check parameters stay internal).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportRule {
    pub id: String,
    pub title: String,
    pub level: Level,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub levels: BTreeMap<Contract, Level>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub condition: Option<String>,
    pub contracts: Vec<Contract>,
    pub roles: Vec<Role>,
    pub kind: RuleKind,
    pub doc: String,
    pub description: String,
    pub remediation: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scenario: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportColumn {
    /// `aws/AWSMachine@v1beta2`; results and scenarios refer to columns by this id.
    pub id: String,
    #[serde(flatten)]
    pub column: Column,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportResult {
    pub rule_id: String,
    pub column: String,
    pub level: Level,
    /// `MUST`, `COND-SHOULD`, … under the column's contract.
    pub level_label: String,
    pub phase: Phase,
    pub outcome: Outcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    /// True when this result fails the run (a failure or inconclusive at or above `--fail-on`
    /// on a target column).
    pub gating: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportScenario {
    pub scenario: String,
    pub column: String,
    pub steps: Vec<StepRecord>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<TimelineEntry>,
}

impl ReportDocument {
    /// Builds the document from an already prepared (sorted, redacted) matrix.
    pub(crate) fn from_prepared(m: &Matrix, migration_to: Option<Contract>) -> ReportDocument {
        let fail_on = m.context.fail_on;
        ReportDocument {
            schema_version: REPORT_SCHEMA_VERSION.to_string(),
            context: ReportContext::new(&m.context),
            summary: m.summary(),
            verdict: m.verdict(),
            exit_code: m.verdict().exit_code(),
            rules: m
                .rules
                .iter()
                .map(|r| ReportRule {
                    id: r.id.clone(),
                    title: r.title.clone(),
                    level: r.level,
                    levels: r.levels.clone(),
                    condition: r.condition.clone(),
                    contracts: r.contracts.clone(),
                    roles: r.roles.clone(),
                    kind: r.kind,
                    doc: r.doc.clone(),
                    description: r.description.trim().to_string(),
                    remediation: r.remediation.trim().to_string(),
                    scenario: r.scenario.clone(),
                })
                .collect(),
            columns: m
                .columns
                .iter()
                .map(|c| ReportColumn {
                    id: c.id(),
                    column: c.clone(),
                })
                .collect(),
            results: m
                .results
                .iter()
                .map(|r| ReportResult {
                    rule_id: r.rule_id.clone(),
                    column: r.column.id(),
                    level: r.level,
                    level_label: super::layout::result_level_label(m, r),
                    phase: r.phase,
                    outcome: r.outcome,
                    reason: r.reason.clone(),
                    evidence: r.evidence.clone(),
                    duration_ms: r.duration_ms,
                    gating: !r.column.baseline
                        && matches!(r.outcome, Outcome::Fail | Outcome::Inconclusive)
                        && r.level.gates(fail_on),
                })
                .collect(),
            problems: m.problems.clone(),
            scenarios: m.scenarios.iter().map(scenario).collect(),
            migration: migration_to.map(|to| super::migration::migration(m, to)),
        }
    }
}

fn scenario(s: &ScenarioRecord) -> ReportScenario {
    ReportScenario {
        scenario: s.scenario.clone(),
        column: s.column.id(),
        steps: s.steps.clone(),
        timeline: s.timeline.clone(),
    }
}

pub(crate) fn to_json(m: &Matrix, opts: &RenderOptions) -> anyhow::Result<String> {
    let doc = ReportDocument::from_prepared(m, opts.migration);
    let mut s = serde_json::to_string_pretty(&doc).context("serialising the JSON report")?;
    s.push('\n');
    Ok(s)
}

pub(crate) fn to_yaml(m: &Matrix, opts: &RenderOptions) -> anyhow::Result<String> {
    let doc = ReportDocument::from_prepared(m, opts.migration);
    serde_saphyr::to_string(&doc).context("serialising the YAML report")
}
