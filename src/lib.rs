//! capi-conformance: tells a Cluster API provider team, rule by rule, whether their provider
//! honours the CAPI provider contract.
//!
//! Data flow: source → [`inventory`] → plan → execute ([`checks`], [`scenarios`]) →
//! [`report::Matrix`] → report writers.

pub mod apiserver;
pub mod checks;
pub mod cli;
pub mod client_retry;
pub mod commands;
pub mod contract;
pub mod entry;
pub mod inventory;
pub mod kubeconn;
pub mod manifests;
pub mod mock;
pub mod report;
pub mod scenarios;
pub mod suite;

/// The test helper for the real-provider data beside the project (`../shared`), shared with the
/// integration tests: one skip line without it, a failure under `CAPI_CONFORMANCE_REQUIRE_SHARED=1`.
#[cfg(test)]
#[path = "../tests/shared/shared_data.rs"]
pub(crate) mod shared_data;
