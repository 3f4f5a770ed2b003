//! The live part of `all/rbac-aggregation`: whether CAPI's manager identity may really use each
//! provider CRD, asked of the API server by SubjectAccessReview, folded into the rule's static
//! cell of that column.

use crate::report::combine;
use crate::report::{Column, Evidence, Matrix, Outcome};
use crate::source::cluster::{CORE_CLUSTER_CRD, core_installed};
use capi_contract::checks::rbac::ALL_VERBS;
use capi_contract::inventory::Inventory;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SubjectAccessReview, SubjectAccessReviewSpec,
};
use kube::api::{Api, PostParams};

/// The rule this module adds a part to.
pub const RBAC_RULE: capi_contract::rule_ids::RuleId =
    capi_contract::rule_ids::all::RBAC_AGGREGATION;

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
    user: &str,
    inv: &Inventory,
) -> anyhow::Result<()> {
    use futures::StreamExt;
    let installed = core_installed(client).await?;
    let label = format!("effective RBAC (SubjectAccessReview as {user})");
    let cells: Vec<&mut crate::report::RuleResult> = matrix
        .results
        .iter_mut()
        .filter(|r| r.rule_id == RBAC_RULE && matches!(r.outcome, Outcome::Pass | Outcome::Fail))
        .collect();
    // Every column's questions at once (one review per verb and kind, independent of each
    // other), the answers folded in the matrix's order.
    let answers: Vec<_> = futures::stream::iter(cells.iter().map(|cell| {
        let target = crd_resource(inv, &cell.column);
        async move {
            match (&target, installed) {
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
            }
        }
    }))
    .buffered(8)
    .collect()
    .await;
    for (cell, (outcome, reason, evidence)) in cells.into_iter().zip(answers) {
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

/// Group and plural of the CRD of a column.
fn crd_resource(inv: &Inventory, column: &Column) -> Option<(String, String)> {
    inv.providers
        .iter()
        .filter(|p| p.name == column.provider.as_str())
        .flat_map(|p| &p.crds)
        .find(|c| c.crd.kind == column.kind.as_str())
        .map(|c| (c.crd.group.clone(), c.crd.plural.clone()))
}

/// Asks whether `user` may do each of the seven verbs on `plural.group`.
async fn effective(
    client: &kube::Client,
    user: &str,
    group: &str,
    plural: &str,
) -> (Outcome, Option<String>, Vec<Evidence>) {
    let mut denied = Vec::new();
    let answers =
        futures::future::join_all(ALL_VERBS.map(|verb| may(client, user, group, plural, verb)))
            .await;
    for (verb, answer) in ALL_VERBS.into_iter().zip(answers) {
        match answer {
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
}
