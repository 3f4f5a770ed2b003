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
