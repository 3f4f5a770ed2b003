//! Waiting for a cluster's ClusterRole aggregation after an install: kube-controller-manager's
//! `clusterrole-aggregation` controller fills every ClusterRole with an `aggregationRule` with
//! the rules of the ClusterRoles its selectors match, a moment after they are created. A run that
//! installed RBAC and asks a SubjectAccessReview at once would judge the moment before; it waits
//! (watching) until each aggregated role holds what its selectors match, as it will on any
//! cluster a moment after `clusterctl init`.

use k8s_openapi::api::rbac::v1::{ClusterRole, PolicyRule};
use kube::api::{Api, ListParams};
use kube::runtime::wait::await_condition;
use std::time::Duration;

/// Why the aggregation was not seen.
#[derive(Debug, thiserror::Error)]
pub enum AggregationError {
    #[error("reading ClusterRoles: {0}")]
    Read(#[from] kube::Error),
    #[error("watching ClusterRole {role}: {message}")]
    Watch { role: String, message: String },
    #[error(
        "ClusterRole {role} does not hold the rules of the ClusterRoles its aggregationRule selects after {timeout:?} (is kube-controller-manager's clusterrole-aggregation controller running?)"
    )]
    Timeout { role: String, timeout: Duration },
}

/// The label selector of one `clusterRoleSelectors` entry, as a list selector string.
fn selector(s: &k8s_openapi::apimachinery::pkg::apis::meta::v1::LabelSelector) -> String {
    let mut parts: Vec<String> = s
        .match_labels
        .iter()
        .flatten()
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    for e in s.match_expressions.iter().flatten() {
        let values = e.values.clone().unwrap_or_default().join(",");
        parts.push(match e.operator.as_str() {
            "In" => format!("{} in ({values})", e.key),
            "NotIn" => format!("{} notin ({values})", e.key),
            "Exists" => e.key.clone(),
            _ => format!("!{}", e.key),
        });
    }
    parts.join(",")
}

/// Whether `have` holds every rule of `want` (the controller copies rules as they are).
fn holds(have: &[PolicyRule], want: &[PolicyRule]) -> bool {
    want.iter().all(|w| have.contains(w))
}

/// Waits until each ClusterRole of `names` that has an `aggregationRule` holds the rules of the
/// ClusterRoles its selectors match now.
pub async fn wait_aggregated(
    client: &kube::Client,
    names: &[String],
    timeout: Duration,
) -> Result<(), AggregationError> {
    let api: Api<ClusterRole> = Api::all(client.clone());
    for name in names {
        let Some(role) = api.get_opt(name).await? else {
            continue;
        };
        let Some(rule) = &role.aggregation_rule else {
            continue;
        };
        let mut want: Vec<PolicyRule> = Vec::new();
        for s in rule.cluster_role_selectors.iter().flatten() {
            for r in api
                .list(&ListParams::default().labels(&selector(s)))
                .await?
                .items
            {
                if r.metadata.name.as_deref() == Some(name.as_str()) {
                    continue;
                }
                for p in r.rules.unwrap_or_default() {
                    if !want.contains(&p) {
                        want.push(p);
                    }
                }
            }
        }
        let done = move |r: Option<&ClusterRole>| {
            r.is_some_and(|r| holds(r.rules.as_deref().unwrap_or_default(), &want))
        };
        match tokio::time::timeout(timeout, await_condition(api.clone(), name, done)).await {
            Ok(Ok(_)) => {}
            Ok(Err(e)) => {
                return Err(AggregationError::Watch {
                    role: name.clone(),
                    message: e.to_string(),
                });
            }
            Err(_) => {
                return Err(AggregationError::Timeout {
                    role: name.clone(),
                    timeout,
                });
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, LabelSelectorRequirement};

    #[test]
    fn selectors_become_list_selectors() {
        let s = LabelSelector {
            match_labels: Some([("a".to_string(), "b".to_string())].into()),
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "c".into(),
                operator: "In".into(),
                values: Some(vec!["d".into(), "e".into()]),
            }]),
        };
        assert_eq!(selector(&s), "a=b,c in (d,e)");
        let rule = |verb: &str| PolicyRule {
            verbs: vec![verb.into()],
            ..Default::default()
        };
        assert!(holds(&[rule("get"), rule("list")], &[rule("list")]));
        assert!(!holds(&[rule("get")], &[rule("list")]));
    }
}
