//! The embedded Kubernetes API server (design.md "Embedded API server", emulator-spec.md).
//!
//! Request flow: [`http`] routes and decodes → [`ops`] runs the one write pipeline against the
//! [`store`] (global resourceVersion, history, broadcast) → [`watch`] fans events out;
//! [`controllers`] consume the same events. Pure helpers: [`schema`], [`selector`], [`smp`],
//! [`protobuf`], [`rbac`].

pub mod admission;
pub mod controllers;
pub mod crd;
pub mod discovery;
pub mod error;
pub mod faults;
pub mod filter;
pub mod http;
pub mod list;
pub mod meta;
pub mod openapi;
pub mod ops;
pub mod patch;
pub mod registry;
pub mod reviews;
pub mod scale;
pub mod server;
pub mod ssa;
pub mod store;
pub mod table;
pub mod watch;

pub mod protobuf;
pub mod rbac;
pub mod schema;
pub mod selector;
pub mod smp;

pub use error::ApiError;
pub use faults::Faults;
pub use server::{EmbeddedServer, Listener, ServerOptions};

use serde_json::{Value, json};

/// Protobuf request bodies (kubectl ≥1.32): the seam for [`protobuf`].
fn protobuf_body(body: &[u8], kind: &str) -> Result<Value, ApiError> {
    let _ = body;
    Err(ApiError::unsupported_media_type(
        "application/vnd.kubernetes.protobuf",
        &["application/json", "application/yaml"],
    )
    .with_details(json!({"kind": kind})))
}

/// Strategic merge patch for built-ins: the seam for [`smp`].
fn smp_patch(original: &Value, patch: &Value, kind: &str) -> Result<Value, ApiError> {
    let _ = kind;
    fn strip(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter()
                    .filter(|(k, _)| !k.starts_with('$'))
                    .map(|(k, v)| (k.clone(), strip(v)))
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    patch::merge(original, &strip(patch))
}

/// SubjectAccessReview status: the seam for [`rbac`].
fn authorize_review(store: &store::Store, spec: &Value) -> Value {
    let _ = (store, spec);
    json!({"allowed": false, "reason": "RBAC authorizer not available"})
}
