//! The rule catalog: `suites/*.yaml` loaded into [`Rule`] values, embedded in the binary.
//! Backs `rules`, `explain`, and tells every check and scenario which rules exist.

mod catalog;
mod check_spec;
mod rule;

pub use catalog::{Catalog, CatalogError, SCENARIOS};
pub use check_spec::{FieldCheck, FieldSpec, JsonType, Presence};
pub use rule::{ParsedCheck, Rule, RuleKind};
