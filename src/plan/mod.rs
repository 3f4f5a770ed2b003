//! The plan stage: what a run will do, chosen once from the inventory and the options.

pub mod rule_filter;
pub mod subjects;
