//! What admission is asked about: the operation, the object's version and namespace, the user (`admission.Attributes`).

use serde_json::Value;

use crate::registry::ResourceType;
use crate::webhook::matching::RequestInfo;

/// The admission attributes of one write, as the write pipeline states them.
#[derive(Debug, Clone, PartialEq)]
pub struct Attributes {
    /// `CREATE`, `UPDATE` or `DELETE`.
    pub operation: &'static str,
    /// The version the client addressed.
    pub version: String,
    /// `""`, `status` or `scale`.
    pub subresource: String,
    pub name: String,
    pub namespace: String,
    pub dry_run: bool,
    /// `CreateOptions`, `UpdateOptions` or `DeleteOptions` (meta.k8s.io/v1).
    pub options: Value,
}

impl Attributes {
    pub(crate) fn is_scale(&self) -> bool {
        self.subresource == "scale"
    }

    /// The request namespace as admission sees it (a Namespace object's own name).
    /// What webhook rules and selectors match this request against.
    pub fn request_info<'b>(
        &'b self,
        rt: &'b ResourceType,
        versions: &'b [String],
    ) -> RequestInfo<'b> {
        RequestInfo {
            group: &rt.group,
            version: &self.version,
            resource: &rt.resource,
            subresource: &self.subresource,
            operation: self.operation,
            namespace: self.admission_namespace(rt),
            versions,
        }
    }

    pub fn admission_namespace<'a>(&'a self, rt: &ResourceType) -> &'a str {
        if rt.group.is_empty() && rt.resource == "namespaces" {
            &self.name
        } else {
            &self.namespace
        }
    }
}
