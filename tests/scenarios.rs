//! `check` and the lifecycle scenarios against the embedded API server.

#[path = "scenarios/static_only.rs"]
mod static_only;
