//! The type registry: built-in kinds plus the kinds established CRDs define.

use std::collections::BTreeMap;
use std::sync::Arc;

use serde_json::Value;

use kube_version_order as version;

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

#[allow(clippy::too_many_arguments)]
fn builtin(
    group: &str,
    version: &str,
    resource: &str,
    kind: &str,
    namespaced: bool,
    short_names: &[&str],
    status: bool,
    verbs: &[&'static str],
) -> ResourceType {
    ResourceType {
        group: group.to_string(),
        resource: resource.to_string(),
        singular: kind.to_lowercase(),
        kind: kind.to_string(),
        list_kind: format!("{kind}List"),
        namespaced,
        short_names: short_names.iter().map(|s| s.to_string()).collect(),
        categories: Vec::new(),
        verbs: verbs.to_vec(),
        versions: vec![VersionDef::builtin(version, status)],
        custom: false,
        conversion: None,
    }
}

/// The `scale` subresource of a built-in workload: `spec.replicas`, `status.replicas` and its
/// `spec.selector` (`kubectl scale deployment`, the horizontal pod autoscaler).
fn with_scale(mut t: ResourceType) -> ResourceType {
    for v in &mut t.versions {
        v.scale = Some(ScaleDef {
            spec_replicas_path: ".spec.replicas".into(),
            status_replicas_path: ".status.replicas".into(),
            label_selector_path: None,
        });
    }
    t
}

fn with_categories(mut t: ResourceType, categories: &[&str]) -> ResourceType {
    t.categories = categories.iter().map(|s| s.to_string()).collect();
    t
}

/// The built-in kinds the emulator serves (docs/embedded-apiserver.md M3, M17).
pub fn builtins() -> Vec<ResourceType> {
    let c = CRUD_VERBS;
    let create = &["create"][..];
    vec![
        builtin(
            "",
            "v1",
            "namespaces",
            "Namespace",
            false,
            &["ns"],
            true,
            NAMESPACE_VERBS,
        ),
        builtin("", "v1", "secrets", "Secret", true, &[], false, c),
        builtin("", "v1", "configmaps", "ConfigMap", true, &["cm"], false, c),
        builtin(
            "",
            "v1",
            "serviceaccounts",
            "ServiceAccount",
            true,
            &["sa"],
            false,
            c,
        ),
        builtin("", "v1", "events", "Event", true, &["ev"], false, c),
        // Workload clusters: CAPI's ClusterCache maps and caches Nodes there before it hands a
        // provider a client ("no matches for kind \"Node\" in version \"v1\"" otherwise);
        // stored objects, no kubelet.
        builtin("", "v1", "nodes", "Node", false, &["no"], true, c),
        // ClusterCache asks the workload cluster for the manager's own Pod (POD_NAMESPACE /
        // POD_NAME, set from its Deployment) to tell whether it runs there ("error checking if
        // we're running on workload cluster: no matches for kind \"Pod\"" otherwise); stored
        // objects, nothing schedules or runs them.
        with_categories(
            builtin("", "v1", "pods", "Pod", true, &["po"], true, c),
            &["all"],
        ),
        // Webhook clientConfig.service references resolve through stored Services (webhook/).
        with_categories(
            builtin("", "v1", "services", "Service", true, &["svc"], true, c),
            &["all"],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "roles",
            "Role",
            true,
            &[],
            false,
            c,
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterroles",
            "ClusterRole",
            false,
            &[],
            false,
            c,
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "rolebindings",
            "RoleBinding",
            true,
            &[],
            false,
            c,
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "clusterrolebindings",
            "ClusterRoleBinding",
            false,
            &[],
            false,
            c,
        ),
        builtin(
            "events.k8s.io",
            "v1",
            "events",
            "Event",
            true,
            &["ev"],
            false,
            c,
        ),
        // Provider components ship their controllers as Deployments (clusterctl's
        // manager-container rule reads them); served as stored objects, no controller runs them.
        with_scale(with_categories(
            builtin(
                "apps",
                "v1",
                "deployments",
                "Deployment",
                true,
                &["deploy"],
                true,
                c,
            ),
            &["all"],
        )),
        // kube-proxy runs as a DaemonSet on every kubeadm cluster; KCP reads and updates it in
        // the workload cluster ("no matches for kind \"DaemonSet\"" otherwise). Stored objects,
        // no controller runs them.
        with_categories(
            builtin(
                "apps",
                "v1",
                "daemonsets",
                "DaemonSet",
                true,
                &["ds"],
                true,
                c,
            ),
            &["all"],
        ),
        // Admission webhook configurations, enforced by webhook/ (exempt from webhooks).
        with_categories(
            builtin(
                "admissionregistration.k8s.io",
                "v1",
                "mutatingwebhookconfigurations",
                "MutatingWebhookConfiguration",
                false,
                &[],
                false,
                c,
            ),
            &["api-extensions"],
        ),
        with_categories(
            builtin(
                "admissionregistration.k8s.io",
                "v1",
                "validatingwebhookconfigurations",
                "ValidatingWebhookConfiguration",
                false,
                &[],
                false,
                c,
            ),
            &["api-extensions"],
        ),
        // `kubectl apply` of the in-cluster Job (`manifests job`); stored with kube's defaults,
        // generated selector and validation (schema::job), no controller runs it.
        ResourceType {
            categories: vec!["all".to_string()],
            ..builtin("batch", "v1", "jobs", "Job", true, &[], true, c)
        },
        builtin(
            "coordination.k8s.io",
            "v1",
            "leases",
            "Lease",
            true,
            &[],
            false,
            c,
        ),
        with_categories(
            builtin(
                "apiextensions.k8s.io",
                "v1",
                "customresourcedefinitions",
                "CustomResourceDefinition",
                false,
                &["crd", "crds"],
                true,
                c,
            ),
            &["api-extensions"],
        ),
        builtin(
            "authorization.k8s.io",
            "v1",
            "selfsubjectaccessreviews",
            "SelfSubjectAccessReview",
            false,
            &[],
            false,
            create,
        ),
        builtin(
            "authorization.k8s.io",
            "v1",
            "selfsubjectrulesreviews",
            "SelfSubjectRulesReview",
            false,
            &[],
            false,
            create,
        ),
        builtin(
            "authorization.k8s.io",
            "v1",
            "subjectaccessreviews",
            "SubjectAccessReview",
            false,
            &[],
            false,
            create,
        ),
        builtin(
            "authentication.k8s.io",
            "v1",
            "selfsubjectreviews",
            "SelfSubjectReview",
            false,
            &[],
            false,
            create,
        ),
    ]
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

/// Builds the resource type a CRD object defines (served versions only).
pub fn from_crd(crd: &Value) -> Option<ResourceType> {
    let group = str_at(crd, "/spec/group").to_string();
    let plural = str_at(crd, "/spec/names/plural").to_string();
    let kind = str_at(crd, "/spec/names/kind").to_string();
    if group.is_empty() || plural.is_empty() || kind.is_empty() {
        return None;
    }
    let mut singular = str_at(crd, "/spec/names/singular").to_string();
    if singular.is_empty() {
        singular = kind.to_lowercase();
    }
    let mut list_kind = str_at(crd, "/spec/names/listKind").to_string();
    if list_kind.is_empty() {
        list_kind = format!("{kind}List");
    }
    let mut versions: Vec<VersionDef> = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .map(|vs| {
            vs.iter()
                .filter(|v| v.get("served").and_then(Value::as_bool).unwrap_or(false))
                .map(version_from_crd)
                .collect()
        })
        .unwrap_or_default();
    versions.sort_by(|a, b| version::compare(&b.name, &a.name));
    Some(ResourceType {
        group,
        resource: plural,
        singular,
        kind,
        list_kind,
        namespaced: str_at(crd, "/spec/scope") != "Cluster",
        short_names: super::meta::strings_at(crd, "/spec/names/shortNames"),
        categories: super::meta::strings_at(crd, "/spec/names/categories"),
        verbs: CUSTOM_RESOURCE_VERBS.to_vec(),
        versions,
        custom: true,
        conversion: super::webhook::crd_conversion::ConversionWebhook::from_crd(crd).map(Arc::new),
    })
}

fn version_from_crd(v: &Value) -> VersionDef {
    let scale = v.pointer("/subresources/scale").map(|s| ScaleDef {
        spec_replicas_path: str_at(s, "/specReplicasPath").to_string(),
        status_replicas_path: str_at(s, "/statusReplicasPath").to_string(),
        label_selector_path: s
            .get("labelSelectorPath")
            .and_then(Value::as_str)
            .map(str::to_string),
    });
    let printer_columns = v
        .get("additionalPrinterColumns")
        .and_then(Value::as_array)
        .map(|cols| {
            cols.iter()
                .map(|c| PrinterColumn {
                    name: str_at(c, "/name").to_string(),
                    type_: str_at(c, "/type").to_string(),
                    json_path: str_at(c, "/jsonPath").to_string(),
                    format: str_at(c, "/format").to_string(),
                    description: str_at(c, "/description").to_string(),
                    priority: c.get("priority").and_then(Value::as_i64).unwrap_or(0),
                })
                .collect()
        })
        .unwrap_or_default();
    let selectable_fields = v
        .get("selectableFields")
        .and_then(Value::as_array)
        .map(|fs| {
            fs.iter()
                .filter_map(|f| f.get("jsonPath").and_then(Value::as_str))
                .map(|p| p.trim_start_matches('.').to_string())
                .collect()
        })
        .unwrap_or_default();
    VersionDef {
        name: str_at(v, "/name").to_string(),
        storage: v.get("storage").and_then(Value::as_bool).unwrap_or(false),
        schema: v.pointer("/schema/openAPIV3Schema").cloned(),
        status: v.pointer("/subresources/status").is_some(),
        scale,
        printer_columns,
        selectable_fields,
        deprecation_warning: if v
            .get("deprecated")
            .and_then(Value::as_bool)
            .unwrap_or(false)
        {
            Some(
                v.get("deprecationWarning")
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .unwrap_or_default(),
            )
        } else {
            None
        },
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
