//! capi-conformance: tells a Cluster API provider team, rule by rule, whether their provider
//! honours the CAPI provider contract. This crate is the command-line tool, the top of the
//! workspace: arguments ([`cli`]) → [`source`] → inventory → [`plan`] → [`run`] (static checks,
//! [`scenarios`]) → [`report::Matrix`] → report writers ([`report`]).
//!
//! The crates below it, each usable without this one (README "How it works"):
//! - [`capi_contract`] (re-exported as [`contract`], [`suite`], [`inventory`], [`checks`] and
//!   [`report::model`]): the contract, the rule catalog, the inventory, the static checks and
//!   the result model; pure.
//! - [`embedded_apiserver`] (re-exported as [`apiserver`]): the in-process Kubernetes API server.
//! - [`capi_mock_provider`] (re-exported as [`mock`]): the built-in mock provider.
//! - [`capi_report`] (re-exported as [`report`]): the report writers of the one matrix.
//! - [`capi_lifecycle`] (re-exported as [`scenarios`], with its [`client_retry`] and
//!   [`events`]): the lifecycle engine and its simulation of CAPI core.
//!
//! Only this crate parses the command line (clap): [`cli`] turns arguments into the plain
//! options of [`capi_contract::model::options`] and of the modules below it. It must never be
//! a dependency of the crates in `crates/`.

pub mod allocator;
pub mod capi_core;
pub mod catalog_text;
pub mod cli;
pub mod commands;
pub mod documents;
pub mod entry;
pub mod kubeconn;
pub mod manifests;
pub mod plan;
pub mod run;
pub mod serving;
pub mod source;
pub mod tool_rbac;

// The crates below keep their module paths in this crate (`capi_conformance::checks::…`,
// `capi_conformance::report::…`, `capi_conformance::scenarios::…`) for the tests, benches and
// fuzz targets.
pub use capi_contract::{checks, contract, inventory, rule_ids, suite};
pub use capi_lifecycle as scenarios;
pub use capi_lifecycle::{client_retry, events};
pub use capi_mock_provider as mock;
pub use capi_report as report;
pub use embedded_apiserver as apiserver;
