//! docs/embedded-apiserver.md §7 checks 28–34.

use serde_json::json;

use super::common::*;

#[tokio::test]
async fn check_28_put_main_ignores_status() {
    let h = H::widgets().await;
    let mut w = h.widget("w1", json!({"size": "small"})).await;
    w["status"] = json!({"ready": true});
    let r = h.put(&format!("{W}/w1"), w.clone()).await;
    assert_eq!(r.code, 200);
    assert!(r.body.get("status").is_none());
    assert_eq!(r.body["metadata"]["generation"], 1);
}

#[tokio::test]
async fn check_29_generation_rules() {
    let h = H::widgets().await;
    let w = h.widget("w1", json!({"size": "small"})).await;
    let r = h
        .patch(
            &format!("{W}/w1"),
            MERGE,
            json!({"metadata": {"labels": {"a": "b"}}}),
        )
        .await;
    assert!(rv(&r.body) > rv(&w));
    assert_eq!(r.body["metadata"]["generation"], 1);
    let r = h
        .patch(
            &format!("{W}/w1"),
            MERGE,
            json!({"spec": {"size": "large"}}),
        )
        .await;
    assert_eq!(r.body["metadata"]["generation"], 2);
}

#[tokio::test]
async fn check_30_noop_put_keeps_rv_and_is_silent() {
    let h = H::widgets().await;
    let w = h.widget("w1", json!({"size": "small"})).await;
    let mut watch = h
        .watch(&format!("{W}?watch=true&resourceVersion={}", rv(&w)))
        .await;
    let r = h.put(&format!("{W}/w1"), w.clone()).await;
    assert_eq!(r.code, 200);
    assert_eq!(rv(&r.body), rv(&w));
    assert!(
        watch
            .next_within(std::time::Duration::from_millis(200))
            .await
            .is_none()
    );
}

#[tokio::test]
async fn check_31_status_patch_only_status() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small"})).await;
    let r = h.patch(&format!("{W}/w1/status"), MERGE, json!({"spec": {"size": "large"}, "status": {"ready": true}, "metadata": {"labels": {"x": "y"}}})).await;
    assert_eq!(r.code, 200);
    assert_eq!(r.body["spec"]["size"], "small");
    assert_eq!(r.body["status"]["ready"], true);
    assert!(r.body["metadata"].get("labels").is_none());
    assert_eq!(r.body["metadata"]["generation"], 1);
}

#[tokio::test]
async fn check_32_get_scale() {
    let h = H::widgets().await;
    let w = h
        .widget("w1", json!({"size": "small", "replicas": 2}))
        .await;
    h.patch(
        &format!("{W}/w1/status"),
        MERGE,
        json!({"status": {"replicas": 1, "selector": "app=w1"}}),
    )
    .await;
    let r = h.get(&format!("{W}/w1/scale")).await;
    assert_eq!(r.code, 200);
    assert_eq!(r.body["apiVersion"], "autoscaling/v1");
    assert_eq!(r.body["kind"], "Scale");
    assert_eq!(r.body["spec"]["replicas"], 2);
    assert_eq!(r.body["status"]["replicas"], 1);
    assert_eq!(r.body["status"]["selector"], "app=w1");
    let current = h.get(&format!("{W}/w1")).await.body;
    assert_eq!(
        r.body["metadata"]["resourceVersion"],
        current["metadata"]["resourceVersion"]
    );
    assert!(rv(&current) > rv(&w));
    h.widget("w0", json!({"size": "small"})).await;
    assert_eq!(
        h.get(&format!("{W}/w0/scale")).await.body["spec"]["replicas"],
        0
    );
}

#[tokio::test]
async fn check_33_patch_scale() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small", "replicas": 1}))
        .await;
    let r = h
        .patch(
            &format!("{W}/w1/scale"),
            MERGE,
            json!({"spec": {"replicas": 3}}),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.body["kind"], "Scale");
    assert_eq!(r.body["spec"]["replicas"], 3);
    let w = h.get(&format!("{W}/w1")).await.body;
    assert_eq!(w["spec"]["replicas"], 3);
    assert_eq!(w["metadata"]["generation"], 2);
}

#[tokio::test]
async fn check_34_no_scale_subresource() {
    let h = H::widgets().await;
    h.post(
        "/api/v1/namespaces/default/configmaps",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
    )
    .await;
    assert_eq!(
        h.get("/api/v1/namespaces/default/configmaps/c/scale")
            .await
            .code,
        404
    );
}
