//! A cluster as a source for the static engine: CRDs, ClusterRoles, Roles and Deployments read
//! with kube-rs and turned into [`Document`]s (origin `cluster:<Kind>/<name>`), plus the live
//! effective-RBAC check (SubjectAccessReview as CAPI's manager identity).

use crate::report::combine;
use crate::report::{Evidence, Matrix, Outcome};
use capi_contract::checks::rbac::ALL_VERBS;
use capi_contract::inventory::{Document, Origin};
use capi_contract::suite::Rule;
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::rbac::v1::{ClusterRole, Role};
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ListParams, PostParams};
use serde::Serialize;
use serde_json::Value;

/// The CRD whose presence means CAPI core is installed.
pub const CORE_CLUSTER_CRD: &str = "clusters.cluster.x-k8s.io";
pub const RBAC_RULE: &str = "all/rbac-aggregation";

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

/// The groups of a user name: ServiceAccounts get the groups the API server would give them.
fn groups_of(user: &str) -> Vec<String> {
    let mut groups = vec!["system:authenticated".to_string()];
    if let Some(rest) = user.strip_prefix("system:serviceaccount:")
        && let Some((ns, _)) = rest.split_once(':')
    {
        groups.push("system:serviceaccounts".into());
        groups.push(format!("system:serviceaccounts:{ns}"));
    }
    groups
}

/// Asks the API server whether `user` may `verb` `group/resource`.
pub async fn may(
    client: &kube::Client,
    user: &str,
    group: &str,
    resource: &str,
    verb: &str,
) -> anyhow::Result<bool> {
    let review = SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some(user.to_string()),
            groups: Some(groups_of(user)),
            resource_attributes: Some(ResourceAttributes {
                group: Some(group.to_string()),
                resource: Some(resource.to_string()),
                verb: Some(verb.to_string()),
                ..ResourceAttributes::default()
            }),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    let api: Api<SubjectAccessReview> = Api::all(client.clone());
    let out = api.create(&PostParams::default(), &review).await?;
    Ok(out.status.is_some_and(|s| s.allowed))
}

/// The effective part of `all/rbac-aggregation`: what a SubjectAccessReview as CAPI's manager
/// says about one CRD, folded into the rule's static cell of that column (one verdict per rule
/// and column, [`crate::report::combine`]). Columns where the static part skipped (the rule does
/// not apply: a SIG group, a provider-wide column) or was waived are not asked about.
pub async fn add_effective_rbac(
    client: &kube::Client,
    matrix: &mut Matrix,
    _rule: &Rule,
    user: &str,
    docs: &[Document],
) -> anyhow::Result<()> {
    let installed = core_installed(client).await?;
    let label = format!("effective RBAC (SubjectAccessReview as {user})");
    for cell in matrix
        .results
        .iter_mut()
        .filter(|r| r.rule_id == RBAC_RULE && matches!(r.outcome, Outcome::Pass | Outcome::Fail))
    {
        let target = crd_resource(docs, &cell.column.kind);
        let (outcome, reason, evidence) = match (&target, installed) {
            (_, false) => (
                Outcome::Skip,
                Some(format!(
                    "CAPI core is not installed ({CORE_CLUSTER_CRD} CRD absent): no manager identity to ask about"
                )),
                Vec::new(),
            ),
            (None, true) => (
                Outcome::Skip,
                Some("CRD not found on the cluster".into()),
                Vec::new(),
            ),
            (Some((group, plural)), true) => effective(client, user, group, plural).await,
        };
        combine::fold(
            cell,
            combine::Part {
                label: label.clone(),
                outcome,
                reason,
                evidence,
            },
        );
    }
    Ok(())
}

/// Group and plural of the CRD of `kind` among the cluster's documents.
fn crd_resource(docs: &[Document], kind: &str) -> Option<(String, String)> {
    docs.iter().find_map(|d| {
        let v = &d.value;
        (v.get("kind").and_then(Value::as_str) == Some("CustomResourceDefinition")
            && v.pointer("/spec/names/kind").and_then(Value::as_str) == Some(kind))
        .then(|| {
            let at = |p: &str| {
                v.pointer(p)
                    .and_then(Value::as_str)
                    .unwrap_or_default()
                    .to_string()
            };
            (at("/spec/group"), at("/spec/names/plural"))
        })
    })
}

/// Asks whether `user` may do each of the seven verbs on `plural.group`.
async fn effective(
    client: &kube::Client,
    user: &str,
    group: &str,
    plural: &str,
) -> (Outcome, Option<String>, Vec<Evidence>) {
    let mut denied = Vec::new();
    for verb in ALL_VERBS {
        match may(client, user, group, plural, verb).await {
            Ok(true) => {}
            Ok(false) => denied.push(verb),
            Err(e) => {
                return (
                    Outcome::Inconclusive,
                    Some(format!("environment: SubjectAccessReview failed: {e}")),
                    Vec::new(),
                );
            }
        }
    }
    if denied.is_empty() {
        return (
            Outcome::Pass,
            None,
            vec![Evidence {
                object: Some(format!("{plural}.{group}").into()),
                ..Evidence::msg(format!("allowed: {}", ALL_VERBS.join(", ")))
            }],
        );
    }
    let msg = format!("{user} may not {} {plural}.{group}", denied.join(", "));
    (
        Outcome::Fail,
        Some(msg.clone()),
        vec![Evidence {
            object: Some(format!("{plural}.{group}").into()),
            ..Evidence::msg(format!("SubjectAccessReview denied: {msg}"))
        }],
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_account_groups() {
        let g = groups_of("system:serviceaccount:capi-system:capi-manager");
        assert!(g.contains(&"system:serviceaccounts:capi-system".to_string()));
        assert_eq!(groups_of("alice"), vec!["system:authenticated".to_string()]);
    }

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
