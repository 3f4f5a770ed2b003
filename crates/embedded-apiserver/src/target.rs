//! What a request addresses (resource type, version, namespace, name, subresource), and an
//! object presented at the version a client asked for.

use std::sync::Arc;

use serde_json::{Value, json};

use super::error::ApiError;
use super::registry::ResourceType;
use super::store::Key;

/// What a request addresses.
#[derive(Debug, Clone)]
pub struct Target {
    pub rt: Arc<ResourceType>,
    pub version: String,
    pub namespace: String,
    pub name: String,
    pub subresource: Option<String>,
}

impl Target {
    pub fn key(&self) -> Key {
        (
            self.rt.group.clone(),
            self.rt.resource.clone(),
            if self.rt.namespaced {
                self.namespace.clone()
            } else {
                String::new()
            },
            self.name.clone(),
        )
    }

    pub(crate) fn not_found(&self) -> ApiError {
        ApiError::not_found(&self.rt.group, &self.rt.resource, &self.name)
    }

    pub(crate) fn status_sub(&self) -> bool {
        self.subresource.as_deref() == Some("status")
    }
}

impl Target {
    pub fn key_for(&self, name: &str) -> Key {
        let mut k = self.key();
        k.3 = name.to_string();
        k
    }
}

/// Rewrites `apiVersion` to the version the client asked for (conversion strategy None). A
/// custom resource that changes version on the way is pruned by that version's schema, as
/// kube's `schemaCoercingConverter` prunes the output of every conversion, strategy None
/// included: a field only the other version declares is dropped on the way into storage and
/// on the way out (docs/embedded-apiserver.md M10).
pub fn present(rt: &ResourceType, version: &str, mut obj: Value) -> Value {
    let api_version = rt.api_version(version);
    let mut changed = false;
    if let Value::Object(m) = &mut obj {
        changed = m.get("apiVersion").and_then(Value::as_str) != Some(api_version.as_str());
        m.insert("apiVersion".into(), json!(api_version));
        m.insert("kind".into(), json!(rt.kind));
    }
    if changed
        && rt.custom
        && let Some(schema) = rt.version(version).and_then(|v| v.schema.as_ref())
    {
        crate::schema::prune_resource(&mut obj, schema);
    }
    obj
}

/// [`present`] of a borrowed object: the object itself when it already carries the asked
/// `apiVersion` and `kind` (the common case: the storage version was asked), else a copy.
pub fn presented<'a>(
    rt: &ResourceType,
    version: &str,
    obj: &'a Value,
) -> std::borrow::Cow<'a, Value> {
    let same = match obj {
        Value::Object(m) => {
            m.get("kind").and_then(Value::as_str) == Some(rt.kind.as_str())
                && m.get("apiVersion").and_then(Value::as_str)
                    == Some(rt.api_version(version).as_str())
        }
        _ => true,
    };
    if same {
        std::borrow::Cow::Borrowed(obj)
    } else {
        std::borrow::Cow::Owned(present(rt, version, obj.clone()))
    }
}
