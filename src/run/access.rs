//! The tool's own access inside a run namespace: when its identity cannot already write there,
//! it binds the `capi-conformance-run` ClusterRole (see `capi-conformance rbac`) to itself with a
//! RoleBinding in that namespace, so its writes stay confined to namespaces it created.

use crate::scenarios::RUN_LABEL;
use crate::tool_rbac::RUN_ROLE;
use k8s_openapi::api::authentication::v1::SelfSubjectReview;
use k8s_openapi::api::authorization::v1::{
    ResourceAttributes, SelfSubjectAccessReview, SelfSubjectAccessReviewSpec,
};
use k8s_openapi::api::rbac::v1::RoleBinding;
use kube::api::{Api, PostParams};
use serde_json::json;

/// The RoleBinding subject for a user name (ServiceAccounts by namespace and name).
pub fn subject_for(user: &str) -> serde_json::Value {
    match user
        .strip_prefix("system:serviceaccount:")
        .and_then(|rest| rest.split_once(':'))
    {
        Some((ns, name)) => json!({"kind": "ServiceAccount", "name": name, "namespace": ns}),
        None => json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}),
    }
}

/// Binds [`RUN_ROLE`] to the tool's identity in `namespace`, unless it may already create
/// Secrets there (an admin needs no binding).
pub async fn bind_run_role(
    client: &kube::Client,
    namespace: &str,
    run_id: &str,
) -> anyhow::Result<()> {
    let review = SelfSubjectAccessReview {
        spec: SelfSubjectAccessReviewSpec {
            resource_attributes: Some(ResourceAttributes {
                namespace: Some(namespace.to_string()),
                resource: Some("secrets".into()),
                verb: Some("create".into()),
                ..ResourceAttributes::default()
            }),
            ..SelfSubjectAccessReviewSpec::default()
        },
        ..SelfSubjectAccessReview::default()
    };
    let reviews: Api<SelfSubjectAccessReview> = Api::all(client.clone());
    let answer = reviews
        .create(&PostParams::default(), &review)
        .await
        .map_err(|e| {
            anyhow::anyhow!("cannot ask whether the tool may write in {namespace}: {e}")
        })?;
    if answer.status.is_some_and(|s| s.allowed) {
        return Ok(());
    }
    let whoami: Api<SelfSubjectReview> = Api::all(client.clone());
    let me = whoami
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
        .map_err(|e| anyhow::anyhow!("cannot learn the tool's own identity: {e}"))?;
    let user = me
        .status
        .and_then(|s| s.user_info)
        .and_then(|u| u.username)
        .unwrap_or_default();
    if user.is_empty() {
        anyhow::bail!("the API server did not say who the tool is (SelfSubjectReview)");
    }
    let binding: RoleBinding = serde_json::from_value(json!({
        "metadata": {"name": RUN_ROLE, "namespace": namespace, "labels": {RUN_LABEL: run_id}},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": RUN_ROLE},
        "subjects": [subject_for(&user)]
    }))?;
    let api: Api<RoleBinding> = Api::namespaced(client.clone(), namespace);
    match api.create(&PostParams::default(), &binding).await {
        Ok(_) => Ok(()),
        Err(kube::Error::Api(s)) if s.code == 409 => Ok(()),
        Err(e) => Err(anyhow::anyhow!(
            "cannot bind {RUN_ROLE} in {namespace} to {user}: {e}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subjects_for_service_accounts_and_users() {
        assert_eq!(
            subject_for("system:serviceaccount:ci:tool"),
            json!({"kind": "ServiceAccount", "name": "tool", "namespace": "ci"})
        );
        assert_eq!(subject_for("alice")["kind"], "User");
    }
}
