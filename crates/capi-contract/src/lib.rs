//! The Cluster API provider contract as data and pure code: what capi-conformance knows about
//! CAPI, with nothing of how it talks to a cluster or a user.
//!
//! - [`contract`]: roles, contract versions and levels, CAPI's contract-label resolution, the
//!   flect port CAPI names CRDs with.
//! - [`suite`]: the rule catalog, `suites/*.yaml` embedded at build time.
//! - [`inventory`]: documents (parsed from the text they are given) → providers, their CRDs'
//!   roles and contracts.
//! - [`checks`]: the static rules, documents → [`model::Matrix`].
//! - [`model`]: the result model every layer shares (matrix, columns, results, evidence,
//!   notes), the plain run options (`--contract`, `-o`) and the labels a run puts on objects.
//!
//! **Never depends on** an async runtime (tokio), the network or a Kubernetes client, a
//! command-line parser (clap), process spawning (kustomize is the CLI's source stage), or any
//! other crate of capi-conformance but `kube-version-order`. It reads files only to quote the
//! source lines of documents it was given (evidence locations). Check with
//! `cargo tree -p capi-contract -e normal`.

pub mod checks;
pub mod contract;
pub mod inventory;
pub mod model;
pub mod rule_ids;
pub mod suite;

/// The real-provider data beside the project (`../shared`), for the unit tests that read it.
#[cfg(test)]
#[path = "../../../tests/shared/shared_data.rs"]
pub(crate) mod shared_data;
