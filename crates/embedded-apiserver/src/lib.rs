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

pub mod access;
pub mod admission;
pub mod client_cert;
pub mod controllers;
pub mod crd;
pub mod discovery;
pub mod error;
pub mod faults;
pub mod fieldpath;
pub mod filter;
pub mod http;
pub mod impersonation;
pub mod list;
mod managed_fields;
pub mod meta;
pub mod openapi;
pub mod ops;
pub mod patch;
pub mod printers;
pub mod registry;
pub mod reviews;
pub mod scale;
pub mod server;
pub mod ssa;
pub mod store;
pub mod table;
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
pub use faults::Faults;
pub use server::{EmbeddedServer, Listener, ServerOptions};

use serde_json::{Value, json};

/// Protobuf request bodies (kubectl ≥1.32), decoded by [`protobuf`].
fn protobuf_body(body: &[u8], api_version: &str, kind: &str) -> Result<Value, ApiError> {
    protobuf::decode_with_default(body, Some((api_version, kind))).map_err(|e| match e {
        protobuf::ProtoError::UnsupportedKind { .. } => ApiError::unsupported_media_type(
            "application/vnd.kubernetes.protobuf",
            &["application/json", "application/yaml"],
        ),
        other => ApiError::bad_request(format!("couldn't decode protobuf body: {other}")),
    })
}

/// Strategic merge patch for built-ins, by [`smp`].
fn smp_patch(original: &Value, patch: &Value, kind: &str) -> Result<Value, ApiError> {
    smp::apply(original, patch, kind).map_err(|e| ApiError::bad_request(e.to_string()))
}

/// SubjectAccessReview status: the seam for [`rbac`].
fn authorize_review(store: &store::Store, spec: &Value) -> Value {
    let snapshot = access::snapshot(store);
    let user = spec.get("user").and_then(Value::as_str).unwrap_or_default();
    let groups: Vec<&str> = spec
        .get("groups")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let decision = rbac::authorize(
        &snapshot,
        &rbac::UserInfo::from_name(user, &groups),
        &rbac::Attributes::from_review_spec(spec),
    );
    let mut status = json!({"allowed": decision.allowed});
    if !decision.reason.is_empty() {
        status["reason"] = json!(decision.reason);
    }
    status
}

/// The real-provider data beside the project (`../shared`), for the unit tests that read it.
#[cfg(test)]
#[path = "../../../tests/shared/shared_data.rs"]
pub(crate) mod shared_data;
