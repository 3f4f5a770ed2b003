//! How CRDs, ClusterRoles and the other provider objects are grouped: documents (parsed from
//! the texts the source stage read: files, stdin, kustomize output, or a cluster) →
//! [`Inventory`] of providers, each CRD with its role and the contracts its labels declare.
//!
//! Grouping: a CRD belongs to the provider named by its `cluster.x-k8s.io/provider` label;
//! without the label, to its API group family (the group without the `infrastructure.` /
//! `bootstrap.` / `controlplane.` / `ipam.` prefix). ClusterRoles, Roles, Deployments and
//! Namespaces are collected for the whole input (one components YAML is one release).

pub mod classify;
pub mod crd;
mod crd_read;
pub mod document;
pub mod error;
pub(crate) mod fast_yaml;
pub mod lines;
pub mod origin;
pub mod schema_node;

pub use crd::{Crd, CrdVersion, ScaleSubresource};
pub use document::{
    Document, InputNote, Origin, RenderedFrom, SchemaForm, parse_text, parse_text_as,
};
pub use error::InputError;
pub use schema_node::{SchemaNode, SchemaType};

use crate::contract::Role;
use crate::contract::labels::{self, DeclaredContract};
use serde_json::Value;
use std::collections::BTreeMap;

/// Label naming the provider an object belongs to.
pub const PROVIDER_LABEL: &str = "cluster.x-k8s.io/provider";

/// A CRD with its role and declared contracts.
#[derive(Debug, Clone, PartialEq)]
pub struct ClassifiedCrd {
    pub crd: Crd,
    pub role: Role,
    /// Whether the role came from `--role` / config rather than classification.
    pub role_overridden: bool,
    /// The contracts its labels declare (`cluster.x-k8s.io/v1beta1`, `…/v1beta2`), with the
    /// version each maps to.
    pub declared: Vec<DeclaredContract>,
}

/// One provider: a set of CRDs sharing a provider label or group family.
#[derive(Debug, Clone, PartialEq)]
pub struct Provider {
    pub name: String,
    pub crds: Vec<ClassifiedCrd>,
}

impl Provider {
    pub fn crd_by_kind(&self, group: &str, kind: &str) -> Option<&ClassifiedCrd> {
        self.crds
            .iter()
            .find(|c| c.crd.kind == kind && c.crd.group == group)
    }
}

/// Everything the static rules look at.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Inventory {
    pub providers: Vec<Provider>,
    pub cluster_roles: Vec<Document>,
    /// Namespaced Roles.
    pub roles: Vec<Document>,
    pub deployments: Vec<Document>,
    pub namespaces: Vec<Document>,
    /// A clusterctl `metadata.yaml` among the inputs (enables the clusterctl rules).
    pub metadata: Option<Document>,
    /// Every non-CRD, non-metadata object (for the clusterctl components rules).
    pub objects: Vec<Document>,
    /// Objects of cluster-template / ClusterClass files (`cluster-template*.yaml`,
    /// `clusterclass-*.yaml`, or any file holding a CAPI `Cluster` or `ClusterClass`).
    pub templates: Vec<Document>,
    /// Input file names, in order.
    pub files: Vec<String>,
}

/// Whether a file name is a clusterctl cluster template or ClusterClass file.
pub fn is_template_file_name(file: &str) -> bool {
    let base = std::path::Path::new(file)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("");
    base.starts_with("cluster-template") || base.starts_with("clusterclass-")
}

/// Whether a document is a CAPI `Cluster` or `ClusterClass` (what cluster templates hold).
pub fn is_capi_cluster_object(v: &Value) -> bool {
    let api = v.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    let kind = v.get("kind").and_then(Value::as_str).unwrap_or("");
    api.starts_with("cluster.x-k8s.io/") && matches!(kind, "Cluster" | "ClusterClass")
}

/// Whether a document is a clusterctl `metadata.yaml`.
pub fn is_clusterctl_metadata(v: &Value) -> bool {
    let api = v.get("apiVersion").and_then(Value::as_str).unwrap_or("");
    api.starts_with("clusterctl.cluster.x-k8s.io/")
        || (v.get("releaseSeries").is_some()
            && matches!(
                v.get("kind").and_then(Value::as_str),
                None | Some("Metadata")
            ))
}

impl Inventory {
    /// Builds the inventory. CRD documents that are malformed are returned as errors
    /// (`keep_going`: collected and returned beside the inventory instead).
    pub fn build(
        docs: Vec<Document>,
        overrides: &BTreeMap<String, Role>,
        keep_going: bool,
    ) -> Result<(Inventory, Vec<InputError>), InputError> {
        let docs = document::expand_lists(docs);
        let template_files: std::collections::BTreeSet<String> = docs
            .iter()
            .filter(|d| is_template_file_name(&d.origin.file) || is_capi_cluster_object(&d.value))
            .map(|d| d.origin.file.clone())
            .collect();
        let mut inv = Inventory::default();
        let mut problems = Vec::new();
        let mut by_provider: BTreeMap<String, Vec<ClassifiedCrd>> = BTreeMap::new();
        for doc in docs {
            if !inv.files.contains(&doc.origin.file) {
                inv.files.push(doc.origin.file.clone());
            }
            if template_files.contains(&doc.origin.file) {
                inv.templates.push(doc);
                continue;
            }
            if Crd::is_crd(&doc) {
                let crd = match Crd::from_owned_document(doc) {
                    Ok(c) => c,
                    Err(e) if keep_going => {
                        problems.push(e);
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                let (role, role_overridden) = match overrides.get(&crd.kind) {
                    Some(r) => (*r, true),
                    None => (classify::classify(&crd.group, &crd.kind), false),
                };
                let provider = crd
                    .labels
                    .get(PROVIDER_LABEL)
                    .filter(|p| !p.is_empty())
                    .cloned()
                    .unwrap_or_else(|| classify::group_family(&crd.group).to_string());
                let declared = labels::declared(&crd.labels);
                by_provider
                    .entry(provider)
                    .or_default()
                    .push(ClassifiedCrd {
                        crd,
                        role,
                        role_overridden,
                        declared,
                    });
                continue;
            }
            if is_clusterctl_metadata(&doc.value) {
                if inv.metadata.is_none() {
                    inv.metadata = Some(doc);
                }
                continue;
            }
            match doc.value.get("kind").and_then(Value::as_str) {
                Some("ClusterRole") => inv.cluster_roles.push(doc.clone()),
                Some("Role") => inv.roles.push(doc.clone()),
                Some("Deployment") => inv.deployments.push(doc.clone()),
                Some("Namespace") => inv.namespaces.push(doc.clone()),
                _ => {}
            }
            inv.objects.push(doc);
        }
        inv.providers = by_provider
            .into_iter()
            .map(|(name, mut crds)| {
                crds.sort_by(|a, b| (a.role, &a.crd.kind).cmp(&(b.role, &b.crd.kind)));
                Provider { name, crds }
            })
            .collect();
        Ok((inv, problems))
    }

    pub fn crd_count(&self) -> usize {
        self.providers.iter().map(|p| p.crds.len()).sum()
    }

    /// Finds a CRD by group and kind in any provider.
    pub fn find_crd(&self, group: &str, kind: &str) -> Option<&ClassifiedCrd> {
        self.providers
            .iter()
            .find_map(|p| p.crd_by_kind(group, kind))
    }
}

/// Parses `Kind=role` overrides (`--role`).
pub fn parse_role_overrides(items: &[String]) -> anyhow::Result<BTreeMap<String, Role>> {
    let mut out = BTreeMap::new();
    for item in items {
        let (kind, role) = item
            .split_once('=')
            .ok_or_else(|| anyhow::anyhow!("--role {item}: expected KIND=ROLE"))?;
        let role = Role::parse(role.trim()).ok_or_else(|| {
            anyhow::anyhow!(
                "--role {item}: unknown role `{role}` (one of: {})",
                Role::ALL.map(|r| r.as_str()).join(", ")
            )
        })?;
        out.insert(kind.trim().to_string(), role);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_by_label_then_family_and_overrides_roles() {
        let text = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foomachines.infrastructure.foo.io
  labels: {cluster.x-k8s.io/v1beta2: v1beta2}
spec:
  group: infrastructure.foo.io
  names: {kind: FooMachine, plural: foomachines, listKind: FooMachineList}
  scope: Namespaced
  versions: [{name: v1beta2, served: true, storage: true}]
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: foohosts.infrastructure.bar.io
  labels: {cluster.x-k8s.io/provider: infrastructure-bar}
spec:
  group: infrastructure.bar.io
  names: {kind: FooHost, plural: foohosts}
  scope: Namespaced
  versions: [{name: v1, served: true, storage: true}]
---
apiVersion: clusterctl.cluster.x-k8s.io/v1alpha3
kind: Metadata
releaseSeries: []
"#;
        let docs: Vec<Document> = parse_text("c.yaml", text)
            .into_iter()
            .map(Result::unwrap)
            .collect();
        let overrides = parse_role_overrides(&["FooHost=infra-machine".into()]).unwrap();
        let (inv, problems) = Inventory::build(docs, &overrides, false).unwrap();
        assert!(problems.is_empty());
        assert!(inv.metadata.is_some());
        let names: Vec<&str> = inv.providers.iter().map(|p| p.name.as_str()).collect();
        assert_eq!(names, ["foo.io", "infrastructure-bar"]);
        assert_eq!(inv.providers[0].crds[0].role, Role::InfraMachine);
        assert_eq!(inv.providers[0].crds[0].declared[0].version, "v1beta2");
        assert_eq!(inv.providers[1].crds[0].role, Role::InfraMachine);
        assert!(inv.providers[1].crds[0].role_overridden);
        assert!(parse_role_overrides(&["X=nope".into()]).is_err());
    }
}
