//! The type registry: built-in kinds plus the kinds established CRDs define.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use kube_version_order as version;

mod builtins;
mod crd;
pub use builtins::builtins;
pub use crd::from_crd;

/// Verbs of an ordinary CRUD resource.
pub const CRUD_VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// Verbs of a Namespace: no `deletecollection` (kube's namespace storage does not offer it).
pub const NAMESPACE_VERBS: &[&str] = &[
    "create", "delete", "get", "list", "patch", "update", "watch",
];

/// Verbs of a custom resource, in the order apiextensions-apiserver lists them.
pub const CUSTOM_RESOURCE_VERBS: &[&str] = &[
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "create",
    "update",
    "watch",
];

/// The built-in API groups in the order kube-apiserver lists them (kube-aggregator sorts by
/// `groupPriorityMinimum`, highest first); groups of CRDs follow, by name.
const GROUP_ORDER: &[&str] = &[
    "apiregistration.k8s.io",
    "apps",
    "events.k8s.io",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "networking.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "storage.k8s.io",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "scheduling.k8s.io",
    "coordination.k8s.io",
    "node.k8s.io",
    "discovery.k8s.io",
    "resource.k8s.io",
    "flowcontrol.apiserver.k8s.io",
];

/// `.spec.replicas`-style paths of a scale subresource.
#[derive(Debug, Clone, PartialEq)]
pub struct ScaleDef {
    pub spec_replicas_path: String,
    pub status_replicas_path: String,
    pub label_selector_path: Option<String>,
}

/// One CRD `additionalPrinterColumns` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct PrinterColumn {
    pub name: String,
    pub type_: String,
    pub json_path: String,
    pub format: String,
    pub description: String,
    pub priority: i64,
}

/// A served version of a resource.
#[derive(Debug, Clone, PartialEq)]
pub struct VersionDef {
    pub name: String,
    pub storage: bool,
    pub schema: Option<Value>,
    pub status: bool,
    pub scale: Option<ScaleDef>,
    pub printer_columns: Vec<PrinterColumn>,
    pub selectable_fields: Vec<String>,
    pub deprecation_warning: Option<String>,
}

impl VersionDef {
    fn builtin(name: &str, status: bool) -> Self {
        Self {
            name: name.to_string(),
            storage: true,
            schema: None,
            status,
            scale: None,
            printer_columns: Vec::new(),
            selectable_fields: Vec::new(),
            deprecation_warning: None,
        }
    }
}

/// What the server knows about one resource (group + plural).
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceType {
    pub group: String,
    pub resource: String,
    pub singular: String,
    pub kind: String,
    pub list_kind: String,
    pub namespaced: bool,
    pub short_names: Vec<String>,
    pub categories: Vec<String>,
    pub verbs: Vec<&'static str>,
    /// Served versions, most preferred first.
    pub versions: Vec<VersionDef>,
    /// Defined by a CRD (schema pipeline, RV required on update, SMP refused).
    pub custom: bool,
    /// `spec.conversion` with `strategy: Webhook` (None: strategy None, apiVersion rewrite).
    pub conversion: Option<Arc<super::webhook::crd_conversion::ConversionWebhook>>,
}

impl ResourceType {
    pub fn version(&self, name: &str) -> Option<&VersionDef> {
        self.versions.iter().find(|v| v.name == name)
    }

    pub fn storage_version(&self) -> Option<&VersionDef> {
        self.versions
            .iter()
            .find(|v| v.storage)
            .or_else(|| self.versions.first())
    }

    /// `apiVersion` value for a version of this resource.
    pub fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_string()
        } else {
            format!("{}/{version}", self.group)
        }
    }

    pub fn is_crud(&self) -> bool {
        self.verbs.contains(&"get")
    }

    /// Whether writes to the main resource keep `.status` (status subresource present).
    pub fn has_status(&self, version: &str) -> bool {
        self.version(version).is_some_and(|v| v.status)
    }
}

/// All resource types, keyed by (group, plural).
#[derive(Debug, Clone, Default)]
pub struct Registry {
    types: BTreeMap<(String, String), Arc<ResourceType>>,
}

impl Registry {
    pub fn with_builtins() -> Self {
        let mut r = Self::default();
        for t in builtins() {
            r.insert(t);
        }
        r
    }

    pub fn insert(&mut self, t: ResourceType) {
        self.types
            .insert((t.group.clone(), t.resource.clone()), Arc::new(t));
    }

    pub fn remove(&mut self, group: &str, resource: &str) -> Option<Arc<ResourceType>> {
        self.types
            .remove(&(group.to_string(), resource.to_string()))
    }

    pub fn get(&self, group: &str, resource: &str) -> Option<Arc<ResourceType>> {
        self.types
            .get(&(group.to_string(), resource.to_string()))
            .cloned()
    }

    /// The type serving `resource` in `group/version`.
    pub fn lookup(&self, group: &str, version: &str, resource: &str) -> Option<Arc<ResourceType>> {
        self.get(group, resource)
            .filter(|t| t.version(version).is_some())
    }

    /// The type serving `kind` in `group/version`.
    pub fn by_kind(&self, group: &str, version: &str, kind: &str) -> Option<Arc<ResourceType>> {
        self.types
            .values()
            .find(|t| t.group == group && t.kind == kind && t.version(version).is_some())
            .cloned()
    }

    pub fn all(&self) -> impl Iterator<Item = &Arc<ResourceType>> {
        self.types.values()
    }

    /// Served versions of a group, most preferred first (kube-aware order).
    pub fn group_versions(&self, group: &str) -> Vec<String> {
        let mut vs: Vec<String> = self
            .types
            .values()
            .filter(|t| t.group == group)
            .flat_map(|t| t.versions.iter().map(|v| v.name.clone()))
            .collect();
        vs.sort_by(|a, b| version::compare(b, a));
        vs.dedup();
        vs
    }

    /// Named groups (not core) in kube-apiserver's order: the built-in groups by their priority
    /// ([`GROUP_ORDER`]), then CRDs' groups by name.
    pub fn groups(&self) -> Vec<String> {
        let mut gs: Vec<(usize, String)> = self
            .types
            .values()
            .filter(|t| !t.group.is_empty())
            .map(|t| {
                let rank = GROUP_ORDER
                    .iter()
                    .position(|g| *g == t.group && !t.custom)
                    .unwrap_or(GROUP_ORDER.len());
                (rank, t.group.clone())
            })
            .collect();
        gs.sort();
        let mut out: Vec<String> = Vec::new();
        for (_, g) in gs {
            if !out.contains(&g) {
                out.push(g);
            }
        }
        out
    }

    /// Types served in `group/version`.
    pub fn in_group_version(&self, group: &str, version: &str) -> Vec<&Arc<ResourceType>> {
        self.types
            .values()
            .filter(|t| t.group == group && t.version(version).is_some())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn crd_defines_served_versions_in_priority_order() {
        let crd = json!({"spec": {"group": "example.com", "scope": "Namespaced",
        "names": {"plural": "widgets", "kind": "Widget", "shortNames": ["wd"]},
        "versions": [
            {"name": "v1alpha1", "served": true, "storage": false},
            {"name": "v1", "served": true, "storage": true, "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}}},
            {"name": "v2", "served": false, "storage": false}
        ]}});
        let t = from_crd(&crd).unwrap();
        assert_eq!(t.list_kind, "WidgetList");
        assert_eq!(t.singular, "widget");
        let names: Vec<_> = t.versions.iter().map(|v| v.name.as_str()).collect();
        assert_eq!(names, ["v1", "v1alpha1"]);
        assert!(t.has_status("v1"));
        assert!(!t.has_status("v1alpha1"));
        assert!(t.version("v1").unwrap().scale.is_some());
    }

    #[test]
    fn builtins_are_found_by_kind_and_resource() {
        let r = Registry::with_builtins();
        assert!(r.lookup("", "v1", "secrets").is_some());
        assert!(r.lookup("", "v2", "secrets").is_none());
        assert_eq!(
            r.by_kind("rbac.authorization.k8s.io", "v1", "ClusterRole")
                .unwrap()
                .resource,
            "clusterroles"
        );
        assert_eq!(r.group_versions("apiextensions.k8s.io"), ["v1"]);
    }
}
