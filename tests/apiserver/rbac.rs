//! Authorization: SubjectAccessReview through the RBAC authorizer, ClusterRole aggregation,
//! self-subject reviews.

use std::time::Duration;

use serde_json::{Value, json};

use super::common::*;

const CR: &str = "/apis/rbac.authorization.k8s.io/v1/clusterroles";
const CRB: &str = "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings";
const SAR: &str = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
const MANAGER: &str = "system:serviceaccount:capi-system:capi-manager";

fn sar(verb: &str, group: &str, resource: &str) -> Value {
    json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
           "spec": {"user": MANAGER, "resourceAttributes": {"verb": verb, "group": group, "resource": resource, "namespace": "default"}}})
}

async fn allowed(h: &H, verb: &str) -> bool {
    let r = h
        .post(
            SAR,
            sar(verb, "infrastructure.example.com", "widgetmachines"),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    r.body["status"]["allowed"].as_bool().unwrap()
}

async fn rules_of(h: &H, name: &str) -> Value {
    h.get(&format!("{CR}/{name}")).await.body["rules"].clone()
}

#[tokio::test]
async fn aggregation_controller_and_subject_access_review() {
    let h = H::new();
    let agg = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "capi-aggregated-manager-role"},
        "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"cluster.x-k8s.io/aggregate-to-manager": "true"}}]}, "rules": []});
    assert_eq!(h.post(CR, agg).await.code, 201);
    let binding = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "capi-manager"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "capi-aggregated-manager-role"},
        "subjects": [{"kind": "ServiceAccount", "name": "capi-manager", "namespace": "capi-system"}]});
    assert_eq!(h.post(CRB, binding).await.code, 201);
    assert!(!allowed(&h, "get").await);
    let provider = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "provider-aggregate", "labels": {"cluster.x-k8s.io/aggregate-to-manager": "true"}},
        "rules": [{"apiGroups": ["infrastructure.example.com"], "resources": ["widgetmachines"], "verbs": ["get", "list", "watch"]}]});
    assert_eq!(h.post(CR, provider).await.code, 201);
    let mut aggregated = Value::Null;
    for _ in 0..200 {
        aggregated = rules_of(&h, "capi-aggregated-manager-role").await;
        if aggregated.as_array().is_some_and(|a| !a.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(aggregated[0]["resources"], json!(["widgetmachines"]));
    assert!(allowed(&h, "get").await);
    assert!(!allowed(&h, "delete").await);
    // Removing the aggregated role flips the answer.
    h.delete(&format!("{CR}/provider-aggregate")).await;
    let mut flipped = false;
    for _ in 0..200 {
        if !allowed(&h, "get").await {
            flipped = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(flipped);
}

#[tokio::test]
async fn subject_access_review_needs_a_subject() {
    let h = H::new();
    let r = h.post(SAR, json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": {"resourceAttributes": {"verb": "get"}}})).await;
    assert_eq!(r.code, 422);
}

#[tokio::test]
async fn self_reviews_answer_admin() {
    let h = H::new();
    let r = h.post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {"resourceAttributes": {"verb": "create", "resource": "widgets"}}})).await;
    assert_eq!(r.code, 201);
    assert_eq!(r.body["status"]["allowed"], true);
    let r = h
        .post(
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
        )
        .await;
    assert!(r.body["status"]["userInfo"]["username"].is_string());
    assert_eq!(
        h.get("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews")
            .await
            .code,
        405
    );
}

#[tokio::test]
async fn invalid_binding_is_rejected() {
    let h = H::new();
    let r = h.post(CRB, json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "b"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "x"},
        "subjects": [{"kind": "Robot", "name": "r"}]})).await;
    assert_eq!(r.code, 422, "{}", r.body);
}
