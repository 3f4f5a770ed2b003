//! docs/embedded-apiserver.md §7 checks 50–53.

use std::time::Duration;

use serde_json::json;

use super::common::*;

#[tokio::test]
async fn check_50_delete_without_finalizers() {
    let h = H::widgets().await;
    let w = h.widget("w1", json!({"size": "small"})).await;
    let r = h.delete(&format!("{W}/w1")).await;
    assert_eq!(r.code, 200);
    assert_eq!(r.body["kind"], "Status");
    assert_eq!(r.body["status"], "Success");
    assert_eq!(
        r.body["details"],
        json!({"name": "w1", "group": "example.com", "kind": "widgets", "uid": w["metadata"]["uid"]})
    );
}

#[tokio::test]
async fn check_51_delete_with_finalizer() {
    let h = H::widgets().await;
    let w = h.post(W, json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "finalizers": ["example.com/f"]}, "spec": {"size": "small"}})).await.body;
    let mut watch = h
        .watch(&format!("{W}?watch=true&resourceVersion={}", rv(&w)))
        .await;
    let r = h.delete(&format!("{W}/w1")).await;
    assert_eq!(r.code, 200);
    assert_eq!(r.body["kind"], "Widget");
    assert!(r.body["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(r.body["metadata"]["deletionGracePeriodSeconds"], 0);
    assert_eq!(r.body["metadata"]["generation"], 2);
    assert_eq!(watch.next().await["type"], "MODIFIED");
    let again = h.delete(&format!("{W}/w1")).await;
    assert_eq!(again.code, 200);
    assert_eq!(rv(&again.body), rv(&r.body));
}

#[tokio::test]
async fn check_52_finalizers_while_deleting() {
    let h = H::widgets().await;
    let w = h.post(W, json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "finalizers": ["example.com/f"]}, "spec": {"size": "small"}})).await.body;
    h.delete(&format!("{W}/w1")).await;
    let r = h
        .patch(
            &format!("{W}/w1"),
            MERGE,
            json!({"metadata": {"finalizers": ["example.com/f", "example.com/g"]}}),
        )
        .await;
    assert_eq!(r.code, 422);
    let mut watch = h
        .watch(&format!("{W}?watch=true&resourceVersion={}", rv(&w)))
        .await;
    assert_eq!(watch.next().await["type"], "MODIFIED");
    let r = h
        .patch(
            &format!("{W}/w1"),
            MERGE,
            json!({"metadata": {"finalizers": null}}),
        )
        .await;
    assert_eq!(r.code, 200);
    assert_eq!(watch.next().await["type"], "DELETED");
    assert_eq!(h.get(&format!("{W}/w1")).await.code, 404);
}

async fn eventually(h: &H, path: &str, code: u16) -> bool {
    for _ in 0..200 {
        if h.get(path).await.code == code {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

fn owned(name: &str, owners: &[&serde_json::Value], block: bool) -> serde_json::Value {
    let refs: Vec<serde_json::Value> = owners
        .iter()
        .map(|o| json!({"apiVersion": "example.com/v1", "kind": "Widget", "name": o["metadata"]["name"], "uid": o["metadata"]["uid"], "blockOwnerDeletion": block}))
        .collect();
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "ownerReferences": refs}})
}

const CM: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn check_53_foreground_deletion() {
    let h = H::widgets().await;
    let owner = h.widget("owner", json!({"size": "small"})).await;
    h.post(CM, json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dep", "finalizers": ["x.io/hold"], "ownerReferences": [{"apiVersion": "example.com/v1", "kind": "Widget", "name": "owner", "uid": owner["metadata"]["uid"], "blockOwnerDeletion": true}]}})).await;
    let r = h
        .delete(&format!("{W}/owner?propagationPolicy=Foreground"))
        .await;
    assert_eq!(r.code, 200);
    assert!(
        r.body["metadata"]["finalizers"]
            .as_array()
            .unwrap()
            .contains(&json!("foregroundDeletion"))
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        h.get(&format!("{W}/owner")).await.code,
        200,
        "owner waits for its dependent"
    );
    h.patch(
        &format!("{CM}/dep"),
        MERGE,
        json!({"metadata": {"finalizers": null}}),
    )
    .await;
    assert!(eventually(&h, &format!("{CM}/dep"), 404).await);
    assert!(eventually(&h, &format!("{W}/owner"), 404).await);
}

#[tokio::test]
async fn check_53_background_deletion_and_second_owner() {
    let h = H::widgets().await;
    let a = h.widget("a", json!({"size": "small"})).await;
    let b = h.widget("b", json!({"size": "small"})).await;
    h.post(CM, owned("only-a", &[&a], false)).await;
    h.post(CM, owned("a-and-b", &[&a, &b], false)).await;
    let r = h.delete(&format!("{W}/a")).await;
    assert_eq!(r.body["kind"], "Status");
    assert_eq!(h.get(&format!("{W}/a")).await.code, 404);
    assert!(eventually(&h, &format!("{CM}/only-a"), 404).await);
    assert_eq!(h.get(&format!("{CM}/a-and-b")).await.code, 200);
}

#[tokio::test]
async fn check_53_orphan_deletion() {
    let h = H::widgets().await;
    let a = h.widget("a", json!({"size": "small"})).await;
    h.post(CM, owned("dep", &[&a], false)).await;
    let r = h
        .delete_with(&format!("{W}/a"), json!({"propagationPolicy": "Orphan"}))
        .await;
    assert!(
        r.body["metadata"]["finalizers"]
            .as_array()
            .unwrap()
            .contains(&json!("orphan"))
    );
    assert!(eventually(&h, &format!("{W}/a"), 404).await);
    let dep = h.get(&format!("{CM}/dep")).await;
    assert_eq!(dep.code, 200);
    assert!(dep.body["metadata"].get("ownerReferences").is_none());
}
