//! The result model: rule × column → outcome with evidence. Produced by `lint` and `check`,
//! consumed by every report writer. Writers never compute verdicts; they only format this.
//! Beside it, what every layer shares: the plain run [`options`], the run [`labels`], and how
//! the parts of one rule fold into one cell ([`combine`]).

pub mod combine;
pub mod coverage;
pub mod labels;
pub mod options;
pub(crate) mod shared_str;
mod timeline;

use crate::contract::{Contract, FailOn, Level, Role};
use crate::suite::Rule;
pub use coverage::{
    LifecycleCoverage, NO_SAMPLE_REASON, ReasonCount, is_unjudged_for_lack_of_sample,
};
pub use options::{Choice, ContractSelection, OutputFormat};
use serde::{Deserialize, Serialize};
pub use shared_str::SharedStr;
use std::cmp::Ordering;
use std::fmt;
pub use timeline::{TOOL_PREFIX, TimelineEntry, comparable_timeline};

/// What happened to one rule on one subject.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Outcome {
    Pass,
    Fail,
    /// The rule does not apply (its condition does not hold, or it needs a live provider); reason says why.
    Skip,
    /// The environment prevented a verdict; reason says why. Never blamed on the provider.
    Inconclusive,
    /// A waiver (annotation or config) suppressed the verdict; reason says whose and why.
    Waived,
}

impl Outcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::Fail => "fail",
            Outcome::Skip => "skip",
            Outcome::Inconclusive => "inconclusive",
            Outcome::Waived => "waived",
        }
    }
}

impl fmt::Display for Outcome {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a result came from the static engine or from a lifecycle scenario.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Phase {
    Static,
    Lifecycle,
}

impl Phase {
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Static => "static",
            Phase::Lifecycle => "lifecycle",
        }
    }
}

/// What was seen, where. Secret payloads never go in here (writers may assume evidence is safe to print).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Evidence {
    pub message: String,
    /// The object, e.g. `CustomResourceDefinition/foomachines.infrastructure.foo.io` or
    /// `FooMachine capi-conformance-r1/m-1`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub object: Option<SharedStr>,
    /// Field path (e.g. `spec.versions[v1beta2].schema…status.initialization.provisioned`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_version: Option<String>,
    /// Input location: `file.yaml#3` (document index) or `file.yaml:120` (line).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<SharedStr>,
    /// The line a user edits to fix the finding: the source file (for rendered kustomize input,
    /// the file the object came from, not the rendered stream) and the 1-based line of the named
    /// field. SARIF results and the file:line shown by every writer come from here.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<SourceLocation>,
}

/// A file and line in the user's own tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceLocation {
    /// Path as the user would open it: relative to the current directory when the input was
    /// given relatively, else absolute (writers may re-base it, e.g. SARIF to the repository root).
    pub file: SharedStr,
    /// 1-based line.
    pub line: u32,
}

impl Evidence {
    pub fn msg(message: impl Into<String>) -> Self {
        Evidence {
            message: message.into(),
            ..Evidence::default()
        }
    }
}

/// A matrix column: one provider kind under one contract (the mock baseline has its own columns).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Column {
    pub provider: SharedStr,
    /// CRD kind, or `*` for provider-wide rules (RBAC aggregation, clusterctl metadata).
    pub kind: SharedStr,
    pub role: Role,
    /// `None` for contract-independent rules (e.g. clusterctl metadata).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contract: Option<Contract>,
    /// True for the built-in mock provider run as the baseline.
    #[serde(default)]
    pub baseline: bool,
}

impl Column {
    /// Stable, human-readable id: `aws/AWSMachine@v1beta2`, `mock/MockMachine@v1beta2 (baseline)`.
    pub fn id(&self) -> String {
        let mut s = format!("{}/{}", self.provider, self.kind);
        if let Some(c) = self.contract {
            s.push('@');
            s.push_str(c.as_str());
        }
        if self.baseline {
            s.push_str(" (baseline)");
        }
        s
    }

    fn sort_key(&self) -> (bool, &str, Role, &str, Option<Contract>) {
        (
            !self.baseline,
            &self.provider,
            self.role,
            &self.kind,
            self.contract,
        )
    }
}

impl Ord for Column {
    fn cmp(&self, other: &Self) -> Ordering {
        self.sort_key().cmp(&other.sort_key())
    }
}

impl PartialOrd for Column {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// One cell of the matrix.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RuleResult {
    pub rule_id: SharedStr,
    pub column: Column,
    /// Effective level of the rule under the column's contract.
    pub level: Level,
    pub phase: Phase,
    pub outcome: Outcome,
    /// Why (mandatory for skip / inconclusive / waived; a one-line summary for fail).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub evidence: Vec<Evidence>,
    /// Wall time spent deciding this cell, in milliseconds (scenario rules); excluded from
    /// determinism comparisons.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// An input that could not be used (only present with `--keep-going`; otherwise it is a hard error).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Problem {
    /// File and document (`dir/a.yaml#2`) or object.
    pub source: String,
    pub message: String,
}

/// Something the reader of a report should know about the inputs that is not a verdict and not
/// a problem: which kustomize root a provider was rendered from, a lone kustomize patch that
/// was skipped, files beside the kustomize roots that were not read. Shown by every writer;
/// never gates the run.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Note {
    /// The input the note is about (a file, a directory, a kustomize root).
    pub source: String,
    pub message: String,
}

/// Where and how the run happened. Printed in report headers and JUnit system-out.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RunContext {
    pub tool_version: String,
    /// `lint` or `check`.
    pub command: String,
    /// What was examined: files, a cluster URL, or `embedded`.
    pub source: String,
    /// Run start (injected in tests so output is byte-identical).
    pub started_at: jiff::Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    pub fail_on: FailOn,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
}

/// One step of a scenario and how long the provider took.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StepRecord {
    pub name: String,
    pub outcome: Outcome,
    /// When the step started, in milliseconds since the scenario started (the clock of the
    /// record's [`TimelineEntry::at_ms`]). Steps of script parts run concurrently may overlap.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// What one scenario did against one column (the baseline has its own records).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ScenarioRecord {
    /// Script id, e.g. `SC-inframachine`.
    pub scenario: String,
    pub column: Column,
    pub steps: Vec<StepRecord>,
    /// Every tool write and every watch event on the scenario's objects, in time order; kept
    /// for passing scenarios too (the provider's latency profile). Empty when the scenario
    /// did not run (no sample object).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub timeline: Vec<TimelineEntry>,
}

/// The whole result of a run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    pub context: RunContext,
    /// The catalog rules that have at least one cell, in catalog order.
    pub rules: Vec<Rule>,
    pub columns: Vec<Column>,
    pub results: Vec<RuleResult>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub problems: Vec<Problem>,
    /// Notes on the inputs ([`Note`]); never gating.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<Note>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub scenarios: Vec<ScenarioRecord>,
}

/// How [`Matrix::results`] stand against the order [`Matrix::sort`] gives them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ResultOrder {
    Unsorted,
    /// In order, but some adjacent results are equal on (rule, column, phase).
    WithTies,
    /// In order, and no two results are equal on (rule, column, phase).
    Strict,
}

/// Counts per outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Summary {
    pub pass: usize,
    pub fail: usize,
    pub skip: usize,
    pub inconclusive: usize,
    pub waived: usize,
    /// Failures at or above `--fail-on`.
    pub gating_failures: usize,
    /// Inconclusive results at or above `--fail-on`.
    pub gating_inconclusive: usize,
    /// Lifecycle `skip` results at or above `--fail-on` that no scenario judged because their
    /// kind had no sample object ([`coverage::is_unjudged_for_lack_of_sample`]); absent when 0.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub gating_unjudged: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The run's verdict, mapped 1:1 to the process exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Exit 0: every rule at or above `--fail-on` passed (or was skipped/waived).
    Pass,
    /// Exit 1: a rule at or above `--fail-on` failed.
    Fail,
    /// Exit 2: input problems (only reachable with `--keep-going`).
    InputError,
    /// Exit 3: no failure, but inconclusive results blocked a verdict, or lifecycle rules
    /// were not judged because a target kind had no sample object.
    Inconclusive,
}

impl Verdict {
    pub fn exit_code(self) -> i32 {
        match self {
            Verdict::Pass => 0,
            Verdict::Fail => 1,
            Verdict::InputError => 2,
            Verdict::Inconclusive => 3,
        }
    }
}

impl Matrix {
    /// Sorts columns and results deterministically: rules in catalog order, columns by
    /// (target before baseline, provider, role, kind, contract).
    pub fn sort(&mut self) {
        self.columns.sort();
        self.columns.dedup();
        let order = Self::rule_ranks(&self.rules);
        if self.result_order() != ResultOrder::Unsorted {
            // Already in order (what the static engine produces): a stable sort would keep
            // every result where it is, so nothing moves.
            self.problems.sort();
            self.notes.sort();
            self.sort_scenarios();
            return;
        }
        // Each result's rule rank is looked up once (not once per comparison).
        let mut keyed: Vec<(usize, RuleResult)> = std::mem::take(&mut self.results)
            .into_iter()
            .map(|r| {
                let rank = order.get(r.rule_id.as_str()).copied().unwrap_or(usize::MAX);
                (rank, r)
            })
            .collect();
        keyed.sort_by(|(ra, a), (rb, b)| {
            ra.cmp(rb)
                .then_with(|| a.rule_id.cmp(&b.rule_id))
                .then_with(|| a.column.cmp(&b.column))
                .then_with(|| a.phase.cmp(&b.phase))
        });
        self.results = keyed.into_iter().map(|(_, r)| r).collect();
        self.problems.sort();
        self.notes.sort();
        self.sort_scenarios();
    }

    /// Each catalog rule id's position in `rules` (the primary sort key of results).
    fn rule_ranks(rules: &[Rule]) -> std::collections::HashMap<&str, usize> {
        rules
            .iter()
            .enumerate()
            .map(|(i, r)| (r.id.as_str(), i))
            .collect()
    }

    fn sort_scenarios(&mut self) {
        self.scenarios.sort_by(|a, b| {
            a.column
                .cmp(&b.column)
                .then_with(|| a.scenario.cmp(&b.scenario))
        });
    }

    /// Whether `results` are already in [`Matrix::sort`]'s order: rules in `rules` order
    /// (results of rules not listed last, by id), then column, then phase. `Strict` when no
    /// two adjacent results are equal on that key. Conservative: `Unsorted` whenever in doubt.
    pub fn result_order(&self) -> ResultOrder {
        let order = Self::rule_ranks(&self.rules);
        let rank = |id: &str| order.get(id).copied().unwrap_or(usize::MAX);
        let mut strict = true;
        let mut prev: Option<(usize, &RuleResult)> = None;
        for r in &self.results {
            // Results come in runs of one rule: look the rank up only when the rule changes.
            let r_rank = match prev {
                Some((p_rank, p)) if p.rule_id == r.rule_id => p_rank,
                _ => rank(&r.rule_id),
            };
            if let Some((p_rank, p)) = prev {
                let ord = p_rank
                    .cmp(&r_rank)
                    .then_with(|| p.rule_id.cmp(&r.rule_id))
                    .then_with(|| p.column.cmp(&r.column))
                    .then_with(|| p.phase.cmp(&r.phase));
                match ord {
                    Ordering::Greater => return ResultOrder::Unsorted,
                    Ordering::Equal => strict = false,
                    Ordering::Less => {}
                }
            }
            prev = Some((r_rank, r));
        }
        if strict {
            ResultOrder::Strict
        } else {
            ResultOrder::WithTies
        }
    }

    pub fn rule(&self, id: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.id == id)
    }

    /// Results for target columns only (baseline results never gate a run).
    pub fn target_results(&self) -> impl Iterator<Item = &RuleResult> {
        self.results.iter().filter(|r| !r.column.baseline)
    }

    pub fn summary(&self) -> Summary {
        let fail_on = self.context.fail_on;
        let mut s = Summary::default();
        for r in self.target_results() {
            match r.outcome {
                Outcome::Pass => s.pass += 1,
                Outcome::Fail => {
                    s.fail += 1;
                    if r.level.gates(fail_on) {
                        s.gating_failures += 1;
                    }
                }
                Outcome::Skip => {
                    s.skip += 1;
                    if r.level.gates(fail_on) && coverage::is_unjudged_for_lack_of_sample(r) {
                        s.gating_unjudged += 1;
                    }
                }
                Outcome::Inconclusive => {
                    s.inconclusive += 1;
                    if r.level.gates(fail_on) {
                        s.gating_inconclusive += 1;
                    }
                }
                Outcome::Waived => s.waived += 1,
            }
        }
        s
    }

    /// The run's verdict from its [`Summary`]: a gating failure fails the run; else input
    /// problems are an input error; else a gating inconclusive result, or a gating lifecycle
    /// rule left unjudged for lack of a sample object, makes it inconclusive; else it passes.
    pub fn verdict(&self) -> Verdict {
        Self::verdict_of(&self.summary(), !self.problems.is_empty())
    }

    /// [`Matrix::verdict`] from the counts alone.
    pub fn verdict_of(s: &Summary, input_problems: bool) -> Verdict {
        if s.gating_failures > 0 {
            Verdict::Fail
        } else if input_problems {
            Verdict::InputError
        } else if s.gating_inconclusive > 0 || s.gating_unjudged > 0 {
            Verdict::Inconclusive
        } else {
            Verdict::Pass
        }
    }

    /// Per target provider, how many lifecycle cells a scenario judged and why the others
    /// were skipped ([`coverage::lifecycle_coverage`]).
    pub fn lifecycle_coverage(&self) -> Vec<LifecycleCoverage> {
        coverage::lifecycle_coverage(self)
    }

    /// (provider, kind) of every target kind whose gating lifecycle rules were not judged for
    /// lack of a sample object ([`coverage::gating_kinds_without_sample`]).
    pub fn gating_kinds_without_sample(&self) -> Vec<(SharedStr, SharedStr)> {
        coverage::gating_kinds_without_sample(self)
    }

    /// A copy with every time-dependent value cleared (durations, start time, step start
    /// times) and each scenario timeline in its [`comparable_timeline`] form (times and
    /// scheduling left out, content kept): what determinism tests compare.
    pub fn without_timings(&self) -> Matrix {
        let mut m = self.clone();
        m.context.started_at = jiff::Timestamp::UNIX_EPOCH;
        for r in &mut m.results {
            r.duration_ms = None;
        }
        for s in &mut m.scenarios {
            for st in &mut s.steps {
                st.at_ms = None;
                st.duration_ms = None;
            }
            s.timeline = comparable_timeline(&s.timeline);
        }
        m
    }
}
