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
    obj["metadata"]["creationTimestamp"] = Value::Null;
    match t.rt.resource.as_str() {
        "selfsubjectaccessreviews" if access::is_privileged(user) => {
            obj["status"] =
                json!({"allowed": true, "reason": "emulator: every request is allowed"});
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
        "selfsubjectrulesreviews" if access::is_privileged(user) => {
            obj["status"] = json!({
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                "incomplete": false
            });
        }
        "selfsubjectrulesreviews" => {
            let namespace = obj
                .pointer("/spec/namespace")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            let (resource_rules, non_resource_rules, errors) =
                rbac::rules_for(&access::snapshot(store), user, &namespace);
            let mut status = json!({
                "resourceRules": resource_rules,
                "nonResourceRules": non_resource_rules,
                "incomplete": !errors.is_empty()
            });
            if !errors.is_empty() {
                status["evaluationError"] = json!(errors.join(", "));
            }
            obj["status"] = status;
        }
        "selfsubjectreviews" => {
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
