//! Review kinds that are answered, not stored (emulator-spec M17, issue item 3):
//! SelfSubjectAccessReview, SelfSubjectRulesReview, SelfSubjectReview, SubjectAccessReview.

use serde_json::{Value, json};

use super::error::ApiError;
use super::ops::Target;
use super::store::Store;

/// The identity every request runs as (unauthenticated-admin).
pub const ADMIN_USER: &str = "kubernetes-admin";

pub fn review(store: &Store, t: &Target, mut obj: Value) -> Result<Value, ApiError> {
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
        "selfsubjectaccessreviews" => {
            obj["status"] =
                json!({"allowed": true, "reason": "emulator: every request is allowed"});
        }
        "selfsubjectrulesreviews" => {
            obj["status"] = json!({
                "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}],
                "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}],
                "incomplete": false
            });
        }
        "selfsubjectreviews" => {
            obj["status"] = json!({"userInfo": {"username": ADMIN_USER, "groups": ["system:masters", "system:authenticated"]}});
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
            obj["status"] = super::authorize_review(store, &spec);
        }
        _ => return Err(ApiError::method_not_allowed()),
    }
    Ok(obj)
}
