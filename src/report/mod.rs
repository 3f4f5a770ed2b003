//! The one result model every writer formats ([`Matrix`]), and the writers themselves
//! (table, JSON, YAML, JUnit, Markdown, HTML).

pub mod model;

pub use model::{
    Column, Evidence, Matrix, Outcome, Phase, Problem, RuleResult, RunContext, ScenarioRecord,
    StepRecord, Summary, TimelineEntry, Verdict,
};
