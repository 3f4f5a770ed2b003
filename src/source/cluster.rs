//! A cluster as a source for the static engine: CRDs, ClusterRoles, Roles and Deployments read
//! with kube-rs and turned into [`Document`]s (origin `cluster:<Kind>/<name>`).

use capi_contract::inventory::{Document, Origin};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::rbac::v1::{ClusterRole, Role};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams};
use serde::Serialize;
use serde_json::Value;

/// The CRD whose presence means CAPI core is installed.
pub const CORE_CLUSTER_CRD: &str = "clusters.cluster.x-k8s.io";

/// Reads the objects the static rules look at. CRDs and ClusterRoles are required (an error
/// names what could not be listed); Roles and Deployments are skipped when the kind is not
/// served (`check` still ends with `forbidden: …` when a list was refused by RBAC).
pub async fn read_documents(client: &kube::Client) -> anyhow::Result<Vec<Document>> {
    let mut docs = Vec::new();
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let list = crds
        .list(&ListParams::default())
        .await
        .map_err(|e| anyhow::anyhow!("cannot list CustomResourceDefinitions: {e}"))?;
    push_all(&mut docs, "CustomResourceDefinition", list.items)?;
    let roles: Api<ClusterRole> = Api::all(client.clone());
    let list = roles
        .list(&ListParams::default())
        .await
        .map_err(|e| anyhow::anyhow!("cannot list ClusterRoles: {e}"))?;
    push_all(&mut docs, "ClusterRole", list.items)?;
    let ns_roles: Api<Role> = Api::all(client.clone());
    if let Ok(list) = ns_roles.list(&ListParams::default()).await {
        push_all(&mut docs, "Role", list.items)?;
    }
    let deployments: Api<Deployment> = Api::all(client.clone());
    if let Ok(list) = deployments.list(&ListParams::default()).await {
        push_all(&mut docs, "Deployment", list.items)?;
    }
    Ok(docs)
}

fn push_all<T: Serialize>(
    docs: &mut Vec<Document>,
    kind: &str,
    items: Vec<T>,
) -> anyhow::Result<()> {
    let mut values: Vec<Value> = items
        .into_iter()
        .map(|i| serde_json::to_value(i).map(clean))
        .collect::<Result<_, _>>()?;
    values.sort_by(|a, b| name_of(a).cmp(name_of(b)));
    for value in values {
        let origin = Origin::new(
            format!("{}{kind}/{}", Origin::CLUSTER_PREFIX, name_of(&value)),
            0,
            1,
        );
        docs.push(Document::new(value, origin));
    }
    Ok(())
}

fn name_of(v: &Value) -> &str {
    v.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// Drops server-populated noise (managedFields, status) the static rules never read.
fn clean(mut v: Value) -> Value {
    if let Some(m) = v.get_mut("metadata").and_then(Value::as_object_mut) {
        m.remove("managedFields");
    }
    if let Some(o) = v.as_object_mut() {
        o.remove("status");
    }
    v
}

/// Whether CAPI core's Cluster CRD is present.
pub async fn core_installed(client: &kube::Client) -> anyhow::Result<bool> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    Ok(crds.get_opt(CORE_CLUSTER_CRD).await?.is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_get_cluster_origins_and_lose_noise() {
        let mut docs = Vec::new();
        let items = vec![
            serde_json::json!({"kind": "ClusterRole", "metadata": {"name": "b", "managedFields": []}, "status": {}}),
            serde_json::json!({"kind": "ClusterRole", "metadata": {"name": "a"}}),
        ];
        push_all(&mut docs, "ClusterRole", items).unwrap();
        assert_eq!(docs[0].origin.file, "cluster:ClusterRole/a");
        assert!(docs[1].value.pointer("/metadata/managedFields").is_none());
        assert!(docs[1].value.get("status").is_none());
    }
}
