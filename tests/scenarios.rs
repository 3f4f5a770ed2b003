//! `check` and the lifecycle scenarios against the embedded API server.

#[path = "scenarios/common.rs"]
mod common;
#[path = "scenarios/embedded.rs"]
mod embedded;
#[path = "scenarios/static_only.rs"]
mod static_only;
