//! The embedded Kubernetes API server (docs/architecture.md "Embedded API server", docs/embedded-apiserver.md): an
//! in-process API server faithful to kube-apiserver, for programs and the real `kubectl` when
//! there is no cluster. **Never depends on** Cluster API or on any crate of capi-conformance but
//! `kube-version-order` (checked by the workspace's `tests/dependencies.rs`); its clients send
//! each request once.
#![doc = include_str!("../README.md")]
//!
//! Request flow: [`http`] routes and decodes → [`ops`] runs the one write pipeline against the
//! [`store`] (global resourceVersion, history, broadcast) → [`watch`] fans events out;
//! [`controllers`] consume the same events. Pure helpers: [`schema`], [`selector`], [`smp`],
//! [`protobuf`], [`rbac`].
//!
//! Layers (imports point down only; `tests/layers.rs` checks there is no import circle): pure
//! helpers and [`registry`] → [`store`], [`target`], [`access`], the webhook registry
//! ([`webhook`]) → [`state`] (the shared state behind [`EmbeddedServer`]) → webhook calls,
//! [`field_manager`], [`ops`] → [`ssa`], [`scale_write`], [`list`], [`watch`], [`controllers`] →
//! [`http`] → [`server`] (construction, router, listener) at the top.

pub mod access;
pub mod admission;
pub mod client_cert;
pub mod controllers;
pub mod crd;
pub mod discovery;
pub mod error;
pub mod faults;
pub mod field_manager;
pub mod fieldpath;
pub mod filter;
pub mod gojson;
pub mod http;
pub mod impersonation;
pub mod ledger;
pub mod list;
mod managed_fields;
pub mod meta;
pub mod metrics;
pub mod openapi;
pub mod ops;
pub mod patch;
pub mod printers;
pub mod query;
pub mod registry;
pub mod response;
pub mod reviews;
pub mod scale;
pub mod scale_write;
pub mod serve;
pub mod server;
pub mod ssa;
pub mod state;
pub mod store;
pub mod table;
pub mod target;
pub mod tls;
pub mod typed;
pub mod watch;
pub mod webhook;

pub mod protobuf;
pub mod rbac;
pub mod schema;
pub mod selector;
pub mod smp;

pub use error::ApiError;
pub use faults::{Faults, Refusal, RefusedWrites};
pub use ledger::{Ledger, StoredState, StoredStates};
pub use server::Listener;
pub use state::{EmbeddedServer, ServerOptions};

/// The real-provider data beside the project (`../shared`), for the unit tests that read it.
#[cfg(test)]
#[path = "../../../tests/shared/shared_data.rs"]
pub(crate) mod shared_data;
