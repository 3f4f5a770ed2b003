//! Review kinds that are answered, not stored (docs/embedded-apiserver.md M17, issue item 3):
//! SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview, SubjectAccessReview.

use serde_json::{Value, json};

use super::access;
use super::error::ApiError;
use super::rbac::{self, UserInfo};
use super::store::Store;
use super::target::Target;

pub use super::access::ADMIN_USER;

/// Answers a review as `user` (the self-reviews are about the requester).
pub fn review(
    store: &Store,
    user: &UserInfo,
    t: &Target,
    mut obj: Value,
) -> Result<Value, ApiError> {
    if !obj.is_object() {
        return Err(ApiError::bad_request(
            "the request body must be a JSON object",
        ));
    }
    obj["apiVersion"] = json!(t.rt.api_version(&t.version));
    obj["kind"] = json!(t.rt.kind);
    if obj.get("metadata").is_none_or(|m| !m.is_object()) {
        obj["metadata"] = json!({});
    }
    if let Some(m) = obj.get_mut("metadata").and_then(Value::as_object_mut) {
        // kube ≥ 1.35 writes no creationTimestamp it did not set (omitzero).
        m.remove("creationTimestamp");
    }
    match t.rt.resource.as_str() {
        // kube's authorizer for system:masters allows without a reason.
        "selfsubjectaccessreviews" if access::is_privileged(user) => {
            obj["status"] = json!({"allowed": true});
        }
        "selfsubjectaccessreviews" => {
            let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
            let decision = rbac::authorize(
                &access::snapshot(store),
                user,
                &rbac::Attributes::from_review_spec(&spec),
            );
            let mut status = json!({"allowed": decision.allowed});
            if !decision.reason.is_empty() {
                status["reason"] = json!(decision.reason);
            }
            obj["status"] = status;
        }
        "selfsubjectrulesreviews" => {
            let namespace = obj
                .pointer("/spec/namespace")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let (stored_rules, stored_urls, errors) =
                rbac::rules_for(&access::snapshot(store), user, &namespace);
            // What kube's bootstrap bindings give every authenticated user (system:basic-user,
            // system:discovery, system:public-info-viewer), around cluster-admin's rules for
            // system:masters, in the order kube-apiserver was seen to list them.
            let (mut resource_rules, mut non_resource_rules) = bootstrap_rules();
            if access::is_privileged(user) {
                resource_rules
                    .push(json!({"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}));
                non_resource_rules.insert(1, json!({"verbs": ["*"], "nonResourceURLs": ["*"]}));
            }
            for r in stored_rules {
                if !resource_rules.contains(&r) {
                    resource_rules.push(r);
                }
            }
            for r in stored_urls {
                if !non_resource_rules.contains(&r) {
                    non_resource_rules.push(r);
                }
            }
            let mut status = json!({
                "resourceRules": resource_rules,
                "nonResourceRules": non_resource_rules,
                "incomplete": !errors.is_empty()
            });
            if !errors.is_empty() {
                status["evaluationError"] = json!(errors.join(", "));
            }
            // Its REST storage answers a new object: no metadata of the request.
            obj["metadata"] = json!({});
            obj["status"] = status;
        }
        "selfsubjectreviews" => {
            // Its REST storage stamps the answer with the time it was made.
            obj["metadata"]["creationTimestamp"] = json!(super::meta::now_rfc3339());
            obj["status"] = json!({"userInfo": {"username": user.name, "groups": user.groups}});
        }
        "subjectaccessreviews" => {
            let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
            if spec.get("user").is_none() && spec.get("groups").is_none() {
                return Err(ApiError::invalid(
                    "authorization.k8s.io",
                    "SubjectAccessReview",
                    "",
                    vec![super::error::StatusCause::new(
                        "FieldValueRequired",
                        "spec.user",
                        "Required value: at least one of user or group must be specified",
                    )],
                ));
            }
            obj["status"] = authorize_review(store, &spec);
        }
        _ => return Err(ApiError::method_not_allowed()),
    }
    Ok(obj)
}

/// The rules of kube's bootstrap ClusterRoles bound to `system:authenticated`: resource rules
/// (system:basic-user) and non-resource rules (system:discovery, system:public-info-viewer).
fn bootstrap_rules() -> (Vec<Value>, Vec<Value>) {
    (
        vec![
            json!({"verbs": ["create"], "apiGroups": ["authorization.k8s.io"],
                "resources": ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]}),
            json!({"verbs": ["create"], "apiGroups": ["authentication.k8s.io"],
                "resources": ["selfsubjectreviews"]}),
        ],
        vec![
            json!({"verbs": ["get"], "nonResourceURLs": ["/api", "/api/*", "/apis", "/apis/*",
                "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz", "/version", "/version/"]}),
            json!({"verbs": ["get"], "nonResourceURLs": ["/healthz", "/livez", "/readyz",
                "/version", "/version/"]}),
        ],
    )
}

/// SubjectAccessReview status: the seam for [`rbac`].
fn authorize_review(store: &Store, spec: &Value) -> Value {
    let snapshot = access::snapshot(store);
    let user = spec.get("user").and_then(Value::as_str).unwrap_or_default();
    let groups: Vec<&str> = spec
        .get("groups")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let decision = rbac::authorize(
        &snapshot,
        &rbac::UserInfo::from_name(user, &groups),
        &rbac::Attributes::from_review_spec(spec),
    );
    let mut status = json!({"allowed": decision.allowed});
    if !decision.reason.is_empty() {
        status["reason"] = json!(decision.reason);
    }
    status
}
