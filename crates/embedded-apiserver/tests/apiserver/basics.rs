//! docs/embedded-apiserver.md §7 checks 12–20.

use serde_json::json;

use super::common::*;

#[tokio::test]
async fn check_12_create_sets_metadata_drops_status_defaults() {
    let h = H::widgets().await;
    let r = h.post(W, json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": "small"}, "status": {"ready": true}})).await;
    assert_eq!(r.code, 201, "{}", r.body);
    let m = &r.body["metadata"];
    assert!(m["uid"].as_str().is_some_and(|u| u.len() == 36));
    assert!(m["creationTimestamp"].as_str().unwrap().ends_with('Z'));
    assert_eq!(m["generation"], 1);
    assert!(
        m["resourceVersion"]
            .as_str()
            .unwrap()
            .parse::<u64>()
            .is_ok()
    );
    assert!(r.body.get("status").is_none());
    assert_eq!(r.body["spec"]["mode"], "auto");
}

#[tokio::test]
async fn check_13_already_exists() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small"})).await;
    let r = h.post(W, json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": "small"}})).await;
    assert_eq!(r.code, 409);
    assert_eq!(r.body["reason"], "AlreadyExists");
    assert_eq!(
        r.body["details"],
        json!({"name": "w1", "group": "example.com", "kind": "widgets"})
    );
}

#[tokio::test]
async fn check_14_not_found() {
    let h = H::widgets().await;
    let r = h.get(&format!("{W}/nope")).await;
    assert_eq!(r.code, 404);
    assert_eq!(r.body["reason"], "NotFound");
    assert_eq!(r.body["message"], "widgets.example.com \"nope\" not found");
}

#[tokio::test]
async fn check_15_missing_namespace() {
    let h = H::widgets().await;
    let r = h.post("/apis/example.com/v1/namespaces/ghost/widgets", json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": "small"}})).await;
    assert_eq!(r.code, 404);
    assert_eq!(r.body["message"], "namespaces \"ghost\" not found");
}

#[tokio::test]
async fn check_15_terminating_namespace_is_forbidden() {
    let h = H::widgets().await;
    h.post(
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "doomed"}}),
    )
    .await;
    h.post("/api/v1/namespaces/doomed/configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "finalizers": ["x.io/hold"]}})).await;
    let r = h.delete("/api/v1/namespaces/doomed").await;
    assert_eq!(r.code, 200);
    assert_eq!(r.body["status"]["phase"], "Terminating");
    let r = h
        .post(
            "/api/v1/namespaces/doomed/configmaps",
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "d"}}),
        )
        .await;
    assert_eq!(r.code, 403);
    assert_eq!(causes(&r.body)[0].1, "NamespaceTerminating");
}

#[tokio::test]
async fn check_16_stale_rv_conflict() {
    let h = H::widgets().await;
    let mut w = h.widget("w1", json!({"size": "small"})).await;
    h.patch(
        &format!("{W}/w1"),
        MERGE,
        json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .await;
    w["spec"]["size"] = json!("large");
    let r = h.put(&format!("{W}/w1"), w).await;
    assert_eq!(r.code, 409);
    assert_eq!(r.body["reason"], "Conflict");
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("the object has been modified")
    );
}

#[tokio::test]
async fn check_17_put_without_rv() {
    let h = H::widgets().await;
    let mut w = h.widget("w1", json!({"size": "small"})).await;
    w["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    let r = h.put(&format!("{W}/w1"), w).await;
    assert_eq!(r.code, 422);
    assert_eq!(causes(&r.body)[0].0, "metadata.resourceVersion");
    // Built-ins allow an unconditional update.
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "1"}});
    h.post("/api/v1/namespaces/default/configmaps", cm.clone())
        .await;
    let mut cm2 = cm;
    cm2["data"]["a"] = json!("2");
    assert_eq!(
        h.put("/api/v1/namespaces/default/configmaps/c", cm2)
            .await
            .code,
        200
    );
}

#[tokio::test]
async fn check_18_namespace_mismatch() {
    let h = H::widgets().await;
    h.post(
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "b"}}),
    )
    .await;
    let r = h.post("/apis/example.com/v1/namespaces/b/widgets", json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "namespace": "a"}, "spec": {"size": "small"}})).await;
    assert_eq!(r.code, 400);
    assert_eq!(r.body["reason"], "BadRequest");
}

#[tokio::test]
async fn check_19_generate_name() {
    let h = H::widgets().await;
    let r = h.post(W, json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"generateName": "w-"}, "spec": {"size": "small"}})).await;
    assert_eq!(r.code, 201);
    let name = r.body["metadata"]["name"].as_str().unwrap();
    assert!(name.starts_with("w-") && name.len() == 7, "{name}");
}

#[tokio::test]
async fn check_20_empty_list() {
    let h = H::widgets().await;
    let r = h.get(W).await;
    assert_eq!(r.code, 200);
    assert_eq!(r.body["kind"], "WidgetList");
    assert_eq!(r.body["items"], json!([]));
    assert!(
        !r.body["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .is_empty()
    );
}
