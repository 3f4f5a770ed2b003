//! The stable machine-readable report (`-o json`, `-o yaml`, `--json FILE`): one struct, so the
//! two formats never drift. Field names and order are part of the interface; bump
//! [`REPORT_SCHEMA_VERSION`] on incompatible change.

use super::RenderOptions;
use super::json_writer;
use super::migration::Migration;
use super::model::{
    Column, Evidence, LifecycleCoverage, Matrix, Note, Outcome, Phase, Problem, RuleResult,
    RunContext, ScenarioRecord, StepRecord, Summary, TimelineEntry, Verdict,
};
use anyhow::Context as _;
use capi_contract::contract::{Contract, FailOn, Level, Role};
use capi_contract::suite::{Rule, RuleKind};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashMap};
use std::io::Write as _;

/// Version of the JSON/YAML report layout.
pub const REPORT_SCHEMA_VERSION: &str = "capi-conformance.io/report/v1";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReportDocument {
    pub schema_version: String,
    pub context: ReportContext,
    pub summary: Summary,
    pub verdict: Verdict,
    pub exit_code: i32,
    /// Per target provider, the lifecycle cells a scenario judged and why the others were
    /// skipped (naming the kinds without a sample object); absent when no scenario ran.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lifecycle: Vec<LifecycleCoverage>,
    pub rules: Vec<ReportRule>,
    pub columns: Vec<ReportColumn>,
    pub results: Vec<ReportResult>,
    pub problems: Vec<Problem>,
    /// Notes on the inputs (never gating); absent when there are none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
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
    /// True when this result keeps the run from PASS: a failure or inconclusive at or above
    /// `--fail-on` on a target column, or such a lifecycle rule skipped because its kind had
    /// no sample object.
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
            lifecycle: m.lifecycle_coverage(),
            rules: m.rules.iter().map(report_rule).collect(),
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
                    rule_id: r.rule_id.to_string(),
                    column: r.column.id(),
                    level: r.level,
                    level_label: super::layout::result_level_label(m, r),
                    phase: r.phase,
                    outcome: r.outcome,
                    reason: r.reason.clone(),
                    evidence: r.evidence.clone(),
                    duration_ms: r.duration_ms,
                    gating: is_gating(r, fail_on),
                })
                .collect(),
            problems: m.problems.clone(),
            notes: m.notes.clone(),
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

/// Writes the JSON report of an already prepared matrix to `out` (the bytes of
/// `serde_json::to_string_pretty(&ReportDocument::from_prepared(m, …))` plus a newline),
/// serialising straight from the matrix: each top-level field through serde, the results
/// by hand ([`ResultsRef::write`]).
pub(crate) fn write_json(
    m: &Matrix,
    opts: &RenderOptions,
    out: &mut dyn std::io::Write,
) -> anyhow::Result<()> {
    // Tokens are buffered here, where the writer's type is known (a write through `dyn Write`
    // per token costs more than the token).
    let mut buffered = std::io::BufWriter::with_capacity(1 << 16, out);
    write_document(m, opts.migration, &mut buffered)
        .and_then(|()| buffered.write_all(b"\n"))
        .and_then(|()| buffered.flush())
        .context("writing the JSON report")?;
    Ok(())
}

/// The fields of [`ReportDocument`], in its order and with its skip rules.
fn write_document<W: std::io::Write>(
    m: &Matrix,
    migration_to: Option<Contract>,
    w: &mut W,
) -> std::io::Result<()> {
    let results = ResultsRef::new(m);
    let verdict = m.verdict();
    let field = |w: &mut W, name: &str, first: bool| -> std::io::Result<()> {
        w.write_all(if first { b"\n  " } else { b",\n  " })?;
        json_writer::write_str(w, name)?;
        w.write_all(b": ")
    };
    w.write_all(b"{")?;
    field(w, "schema_version", true)?;
    json_writer::write_nested(w, 1, REPORT_SCHEMA_VERSION)?;
    field(w, "context", false)?;
    json_writer::write_nested(w, 1, &ReportContext::new(&m.context))?;
    field(w, "summary", false)?;
    json_writer::write_nested(w, 1, &m.summary())?;
    field(w, "verdict", false)?;
    json_writer::write_nested(w, 1, &verdict)?;
    field(w, "exit_code", false)?;
    json_writer::write_nested(w, 1, &verdict.exit_code())?;
    let lifecycle = m.lifecycle_coverage();
    if !lifecycle.is_empty() {
        field(w, "lifecycle", false)?;
        json_writer::write_nested(w, 1, &lifecycle)?;
    }
    field(w, "rules", false)?;
    let rules: Vec<ReportRule> = m.rules.iter().map(report_rule).collect();
    json_writer::write_nested(w, 1, &rules)?;
    field(w, "columns", false)?;
    let columns: Vec<ReportColumnRef> = m
        .columns
        .iter()
        .zip(&results.column_ids)
        .map(|(column, id)| ReportColumnRef { id, column })
        .collect();
    json_writer::write_nested(w, 1, &columns)?;
    field(w, "results", false)?;
    results.write(w)?;
    field(w, "problems", false)?;
    json_writer::write_nested(w, 1, &m.problems)?;
    if !m.notes.is_empty() {
        field(w, "notes", false)?;
        json_writer::write_nested(w, 1, &m.notes)?;
    }
    field(w, "scenarios", false)?;
    let scenarios: Vec<ReportScenarioRef> = m
        .scenarios
        .iter()
        .map(|s| ReportScenarioRef {
            scenario: &s.scenario,
            column: s.column.id(),
            steps: &s.steps,
            timeline: &s.timeline,
        })
        .collect();
    json_writer::write_nested(w, 1, &scenarios)?;
    if let Some(to) = migration_to {
        field(w, "migration", false)?;
        json_writer::write_nested(w, 1, &super::migration::migration(m, to))?;
    }
    w.write_all(b"\n}")
}

#[derive(Serialize)]
struct ReportColumnRef<'a> {
    id: &'a str,
    #[serde(flatten)]
    column: &'a Column,
}

#[derive(Serialize)]
struct ReportScenarioRef<'a> {
    scenario: &'a str,
    column: String,
    steps: &'a [StepRecord],
    #[serde(skip_serializing_if = "<[TimelineEntry]>::is_empty")]
    timeline: &'a [TimelineEntry],
}

/// The results of a matrix, written as the elements of `ReportDocument::results` would be.
struct ResultsRef<'a> {
    m: &'a Matrix,
    /// Column ids, parallel to `m.columns` (sorted, so a result's column is found by binary
    /// search).
    column_ids: Vec<String>,
    /// The column ids as JSON string literals.
    quoted_column_ids: Vec<Vec<u8>>,
    /// Rule id → (level label without contract, label per [`Contract::ALL`]).
    labels: HashMap<&'a str, (String, [String; 2])>,
}

impl<'a> ResultsRef<'a> {
    fn new(m: &'a Matrix) -> Self {
        let mut labels = HashMap::new();
        for r in &m.rules {
            // `Matrix::rule` (what `result_level_label` uses) finds the first rule with an id.
            labels.entry(r.id.as_str()).or_insert_with(|| {
                (
                    r.level_label(None),
                    Contract::ALL.map(|c| r.level_label(Some(c))),
                )
            });
        }
        let column_ids: Vec<String> = m.columns.iter().map(Column::id).collect();
        ResultsRef {
            m,
            quoted_column_ids: column_ids
                .iter()
                .map(|id| json_writer::quoted(id))
                .collect(),
            column_ids,
            labels,
        }
    }

    /// `result_level_label` from the precomputed labels.
    fn level_label<'s>(&'s self, r: &'s RuleResult) -> &'s str {
        let Some((none, per_contract)) = self.labels.get(r.rule_id.as_str()) else {
            return r.level.as_str();
        };
        match r.column.contract {
            None => none,
            Some(c) => Contract::ALL
                .iter()
                .position(|x| *x == c)
                .map_or(none.as_str(), |i| per_contract[i].as_str()),
        }
    }

    /// The `results` array at depth 1: each result's fields in [`ReportResult`]'s order, with
    /// its skip rules.
    fn write<W: std::io::Write>(&self, w: &mut W) -> std::io::Result<()> {
        let fail_on = self.m.context.fail_on;
        if self.m.results.is_empty() {
            return w.write_all(b"[]");
        }
        w.write_all(b"[")?;
        // Results of one rule come in column order: the next result's column is usually the
        // one after the previous result's, so that one is tried before a binary search.
        let mut next_column = 0;
        // The rule id and level label are quoted once per run of results of one rule and
        // contract.
        let mut quoted_rule: Option<QuotedRule> = None;
        for (i, r) in self.m.results.iter().enumerate() {
            let computed_id;
            let found = match self.m.columns.get(next_column) {
                Some(c) if *c == r.column => Ok(next_column),
                _ => self.m.columns.binary_search(&r.column),
            };
            let column: &[u8] = match found {
                Ok(i) => {
                    next_column = i + 1;
                    &self.quoted_column_ids[i]
                }
                Err(_) => {
                    computed_id = json_writer::quoted(&r.column.id());
                    &computed_id
                }
            };
            let quoted = match quoted_rule {
                Some(ref q) if q.id == r.rule_id && q.contract == r.column.contract => q,
                _ => quoted_rule.insert(QuotedRule {
                    id: &r.rule_id,
                    contract: r.column.contract,
                    rule: json_writer::quoted(&r.rule_id),
                    label: json_writer::quoted(self.level_label(r)),
                }),
            };
            let (rule, label) = (&quoted.rule, &quoted.label);
            w.write_all(if i == 0 { b"\n    {" } else { b",\n    {" })?;
            w.write_all(b"\n      \"rule_id\": ")?;
            w.write_all(rule)?;
            w.write_all(b",\n      \"column\": ")?;
            w.write_all(column)?;
            w.write_all(b",\n      \"level\": \"")?;
            w.write_all(r.level.as_str().as_bytes())?;
            w.write_all(b"\",\n      \"level_label\": ")?;
            w.write_all(label)?;
            w.write_all(b",\n      \"phase\": \"")?;
            w.write_all(r.phase.as_str().as_bytes())?;
            w.write_all(b"\",\n      \"outcome\": \"")?;
            w.write_all(r.outcome.as_str().as_bytes())?;
            w.write_all(b"\"")?;
            if let Some(reason) = &r.reason {
                w.write_all(b",\n      \"reason\": ")?;
                json_writer::write_str(w, reason)?;
            }
            if !r.evidence.is_empty() {
                w.write_all(b",\n      \"evidence\": [")?;
                for (j, e) in r.evidence.iter().enumerate() {
                    w.write_all(if j == 0 {
                        b"\n        "
                    } else {
                        b",\n        "
                    })?;
                    json_writer::write_evidence(w, e)?;
                }
                w.write_all(b"\n      ]")?;
            }
            if let Some(ms) = r.duration_ms {
                w.write_all(b",\n      \"duration_ms\": ")?;
                w.write_all(ms.to_string().as_bytes())?;
            }
            w.write_all(if is_gating(r, fail_on) {
                &b",\n      \"gating\": true\n    }"[..]
            } else {
                &b",\n      \"gating\": false\n    }"[..]
            })?;
        }
        w.write_all(b"\n  ]")
    }
}

/// A rule id and its level label under one contract, as JSON string literals.
struct QuotedRule<'a> {
    id: &'a str,
    contract: Option<Contract>,
    rule: Vec<u8>,
    label: Vec<u8>,
}

/// A failure or inconclusive at or above `--fail-on` on a target column.
fn is_gating(r: &RuleResult, fail_on: FailOn) -> bool {
    !r.column.baseline
        && (matches!(r.outcome, Outcome::Fail | Outcome::Inconclusive)
            || super::model::is_unjudged_for_lack_of_sample(r))
        && r.level.gates(fail_on)
}

fn report_rule(r: &Rule) -> ReportRule {
    ReportRule {
        id: r.id.to_string(),
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
    }
}

pub(crate) fn to_yaml(m: &Matrix, opts: &RenderOptions) -> anyhow::Result<String> {
    let doc = ReportDocument::from_prepared(m, opts.migration);
    serde_saphyr::to_string(&doc).context("serialising the YAML report")
}
