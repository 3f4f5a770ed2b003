//! A CustomResourceDefinition as the checks see it: names, scope, versions with their schema
//! and subresources, labels and annotations. Built from a JSON document; malformed CRDs
//! (no `spec.names`, no `spec.versions`, non-structural schema) are input errors.

use super::origin::Origin;
use super::schema_node::SchemaNode;
use serde_json::Value;
use std::collections::BTreeMap;

/// `spec.versions[].subresources.scale`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScaleSubresource {
    pub spec_replicas_path: Option<String>,
    pub status_replicas_path: Option<String>,
    pub label_selector_path: Option<String>,
}

/// One entry of `spec.versions`.
#[derive(Debug, Clone, PartialEq)]
pub struct CrdVersion {
    pub name: String,
    pub served: bool,
    pub storage: bool,
    /// `schema.openAPIV3Schema`, in the compact form the checks walk.
    pub schema: Option<SchemaNode>,
    pub status_subresource: bool,
    pub scale: Option<ScaleSubresource>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Crd {
    /// `metadata.name`.
    pub name: String,
    /// `apiVersion` of the CRD object itself.
    pub api_version: String,
    pub group: String,
    pub kind: String,
    pub plural: String,
    pub list_kind: Option<String>,
    pub scope: String,
    pub categories: Vec<String>,
    pub versions: Vec<CrdVersion>,
    pub labels: BTreeMap<String, String>,
    pub annotations: BTreeMap<String, String>,
    pub origin: Origin,
    /// The name CAPI computes for it (flect plural of the lowercased kind + group), worked out
    /// once: several rules compare against it.
    pub(super) calculated_name: Derived<String>,
}

/// A value worked out from the rest of its struct on first use. It is not part of the
/// struct's identity: two CRDs are equal whether or not either has worked it out yet.
#[derive(Debug, Clone, Default)]
pub(super) struct Derived<T>(pub(super) std::sync::OnceLock<T>);

impl<T> PartialEq for Derived<T> {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl Crd {
    /// `CalculateCRDName(group, kind)`: what CAPI expects this CRD to be named.
    pub fn calculated_name(&self) -> &str {
        self.calculated_name
            .0
            .get_or_init(|| crate::contract::flect::crd_name(&self.group, &self.kind))
    }

    pub fn version(&self, name: &str) -> Option<&CrdVersion> {
        self.versions.iter().find(|v| v.name == name)
    }

    pub fn storage_version(&self) -> Option<&CrdVersion> {
        self.versions
            .iter()
            .find(|v| v.storage)
            .or_else(|| self.versions.first())
    }

    /// `CustomResourceDefinition/<name>` for evidence.
    pub fn object_ref(&self) -> String {
        format!("CustomResourceDefinition/{}", self.name)
    }
}

/// `metadata.labels`/`annotations` as a string map (non-string values are rendered as JSON).
pub fn string_map(v: Option<&Value>) -> BTreeMap<String, String> {
    v.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .map(|(k, v)| {
                    let s = match v {
                        Value::String(s) => s.clone(),
                        Value::Null => String::new(),
                        other => other.to_string(),
                    };
                    (k.clone(), s)
                })
                .collect()
        })
        .unwrap_or_default()
}
