//! Authorization: SubjectAccessReview through the RBAC authorizer, ClusterRole aggregation,
//! self-subject reviews.

use std::time::Duration;

use axum::body::Body;
use axum::http::{Method, Request};
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tower::ServiceExt;

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

/// A request impersonating `user` (`Impersonate-User`), as `kubectl --as` sends it.
async fn as_user(h: &H, user: &str, method: Method, path: &str, ct: &str, body: Value) -> Resp {
    let req = Request::builder()
        .method(method)
        .uri(path)
        .header("content-type", ct)
        .header("impersonate-user", user)
        .body(Body::from(serde_json::to_vec(&body).unwrap()))
        .unwrap();
    let resp = h.server.router().oneshot(req).await.unwrap();
    let code = resp.status().as_u16();
    let headers = resp.headers().clone();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    Resp {
        code,
        headers,
        body: serde_json::from_slice(&bytes)
            .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned())),
    }
}

const ROLES: &str = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles";
const SSAR: &str = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews";

/// `bob` patches `path` with a `ct` patch.
async fn bob_patches(h: &H, path: &str, ct: &str, body: Value) -> Resp {
    as_user(h, "bob", Method::PATCH, path, ct, body).await
}

/// `bob` creates Role `name` in `default`.
async fn bob_posts_role(h: &H, name: &str, rules: Value) -> Resp {
    as_user(h, "bob", Method::POST, ROLES, JSON, role(name, rules)).await
}

fn role(name: &str, rules: Value) -> Value {
    json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
           "metadata": {"name": name, "namespace": "default"}, "rules": rules})
}

/// Creates ClusterRole `name` with `rules` and binds it to `user` (as admin).
async fn grant(h: &H, user: &str, name: &str, rules: Value) {
    let r = h
        .post(
            CR,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": name}, "rules": rules}),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let r = h
        .post(
            CRB,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": format!("{user}-{name}")},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": name},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": user}]}),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
}

/// Grants `bob` the right to write roles and bindings (and read configmaps), nothing else.
async fn bob_may_write_rbac(h: &H) {
    grant(
        h,
        "bob",
        "rbac-writer",
        json!([{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles", "rolebindings", "clusterroles"],
                "verbs": ["create", "update", "patch", "get"]},
               {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]),
    )
    .await;
}

#[tokio::test]
async fn impersonation_switches_the_user_rbac_authorizes() {
    let h = H::new();
    let review = json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
        "spec": {"resourceAttributes": {"verb": "get", "resource": "configmaps", "namespace": "default"}}});
    let r = as_user(&h, "bob", Method::POST, SSAR, JSON, review.clone()).await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(r.body["status"]["allowed"], json!(false));
    bob_may_write_rbac(&h).await;
    let r = as_user(&h, "bob", Method::POST, SSAR, JSON, review).await;
    assert_eq!(r.body["status"]["allowed"], json!(true));
    let r = as_user(
        &h,
        "bob",
        Method::GET,
        "/api/v1/namespaces/default/secrets",
        JSON,
        Value::Null,
    )
    .await;
    assert_eq!(r.code, 403);
    assert_eq!(
        r.body["message"],
        "secrets is forbidden: User \"bob\" cannot list resource \"secrets\" in API group \"\" in the namespace \"default\""
    );
}

#[tokio::test]
async fn role_writes_cannot_grant_permissions_the_writer_lacks() {
    let h = H::new();
    bob_may_write_rbac(&h).await;
    // Held permissions may be granted. Missing ones are listed as kube lists them: merged per
    // resource, sorted by the rule's Go `String()`, which starts with the verbs.
    let r = bob_posts_role(
        &h,
        "ok",
        json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]),
    )
    .await;
    assert_eq!(r.code, 201, "{}", r.body);
    // Others not, on create …
    let r = bob_posts_role(&h, "wide", json!([{"apiGroups": [""], "resources": ["configmaps", "secrets"], "verbs": ["get", "list"]}])).await;
    assert_eq!(r.code, 403, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "roles.rbac.authorization.k8s.io \"wide\" is forbidden: user \"bob\" (groups=[\"system:authenticated\"]) is attempting to grant RBAC permissions not currently held:\n\
         {APIGroups:[\"\"], Resources:[\"secrets\"], Verbs:[\"get\" \"list\"]}\n\
         {APIGroups:[\"\"], Resources:[\"configmaps\"], Verbs:[\"list\"]}"
    );
    assert_eq!(
        r.body["details"],
        json!({"name": "wide", "group": "rbac.authorization.k8s.io", "kind": "roles"})
    );
    // … on merge-patch, JSON patch and server-side apply …
    let widen = json!({"rules": [{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]});
    let r = bob_patches(&h, &format!("{ROLES}/ok"), MERGE, widen).await;
    assert_eq!(r.code, 403, "{}", r.body);
    let r = bob_patches(
        &h,
        &format!("{ROLES}/ok"),
        JSONPATCH,
        json!([{"op": "add", "path": "/rules/0/verbs/-", "value": "delete"}]),
    )
    .await;
    assert_eq!(r.code, 403, "{}", r.body);
    let r = bob_patches(
        &h,
        &format!("{ROLES}/ok?fieldManager=bob&force=true"),
        APPLY,
        role(
            "ok",
            json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]),
        ),
    )
    .await;
    assert_eq!(r.code, 403, "{}", r.body);
    // … and the refused writes left nothing behind.
    let stored = h.get(&format!("{ROLES}/ok")).await.body;
    assert_eq!(
        stored["rules"],
        json!([{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}])
    );
    assert_eq!(h.get(&format!("{ROLES}/wide")).await.code, 404);
    // Changing only finalizers (what the garbage collector writes) is never refused, even on
    // a role granting more than the writer holds.
    let r = h
        .post(
            ROLES,
            role(
                "admin-made",
                json!([{"apiGroups": ["*"], "resources": ["*"], "verbs": ["*"]}]),
            ),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let r = bob_patches(
        &h,
        &format!("{ROLES}/admin-made"),
        MERGE,
        json!({"metadata": {"finalizers": ["example.com/keep"]}}),
    )
    .await;
    assert_eq!(r.code, 200, "{}", r.body);
    let r = bob_patches(
        &h,
        &format!("{ROLES}/admin-made"),
        MERGE,
        json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .await;
    assert_eq!(r.code, 403, "{}", r.body);
    // The `escalate` verb lifts the check; an aggregationRule needs cluster-admin.
    let agg = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
        "metadata": {"name": "agg"}, "aggregationRule": {"clusterRoleSelectors": [{"matchLabels": {"a": "b"}}]}});
    let r = as_user(&h, "bob", Method::POST, CR, JSON, agg).await;
    assert_eq!(r.code, 403, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "clusterroles.rbac.authorization.k8s.io \"agg\" is forbidden: must have cluster-admin privileges to use the aggregationRule"
    );
    grant(
        &h,
        "bob",
        "escalator",
        json!([{"apiGroups": ["rbac.authorization.k8s.io"], "resources": ["roles"], "verbs": ["escalate"]}]),
    )
    .await;
    let r = bob_posts_role(
        &h,
        "wide",
        json!([{"apiGroups": [""], "resources": ["secrets"], "verbs": ["get"]}]),
    )
    .await;
    assert_eq!(r.code, 201, "{}", r.body);
}

#[tokio::test]
async fn binding_patches_cannot_bind_roles_the_writer_could_not_grant() {
    let h = H::new();
    bob_may_write_rbac(&h).await;
    for (name, resource) in [("secrets", "secrets"), ("cms", "configmaps")] {
        let rules = json!([{"apiGroups": [""], "resources": [resource], "verbs": ["get"]}]);
        assert_eq!(h.post(ROLES, role(name, rules)).await.code, 201);
    }
    let rb = json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "rb", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cms"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "carol"}]});
    let path = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings";
    let r = as_user(&h, "bob", Method::POST, path, JSON, rb).await;
    assert_eq!(r.code, 201, "{}", r.body);
    // Adding a subject to a binding of a role bob does not hold is an escalation on PATCH too.
    let r = h
        .post(
            path,
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "rs", "namespace": "default"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "secrets"},
        "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "carol"}]}),
        )
        .await;
    assert_eq!(r.code, 201);
    let r = as_user(&h, "bob", Method::PATCH, &format!("{path}/rs"), JSONPATCH,
        json!([{"op": "add", "path": "/subjects/-", "value": {"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}}])).await;
    assert_eq!(r.code, 403, "{}", r.body);
    assert!(
        r.body["message"].as_str().unwrap().starts_with(
            "rolebindings.rbac.authorization.k8s.io \"rs\" is forbidden: user \"bob\""
        ),
        "{}",
        r.body
    );
    assert_eq!(
        h.get(&format!("{path}/rs")).await.body["subjects"]
            .as_array()
            .unwrap()
            .len(),
        1
    );
}
