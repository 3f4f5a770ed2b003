//! docs/embedded-apiserver.md §7 checks 42–49.

use std::time::{Duration, Instant};

use embedded_apiserver::ServerOptions;
use serde_json::json;

use super::common::*;

#[tokio::test]
async fn check_42_watch_from_list_rv() {
    let h = H::widgets().await;
    let list = h.get(W).await.body;
    let lrv = list["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let mut w = h
        .watch(&format!("{W}?watch=true&resourceVersion={lrv}"))
        .await;
    h.widget("w1", json!({"size": "small"})).await;
    h.patch(
        &format!("{W}/w1"),
        MERGE,
        json!({"spec": {"size": "large"}}),
    )
    .await;
    h.delete(&format!("{W}/w1")).await;
    let a = w.next().await;
    let m = w.next().await;
    let d = w.next().await;
    assert_eq!(
        (a["type"].as_str(), m["type"].as_str(), d["type"].as_str()),
        (Some("ADDED"), Some("MODIFIED"), Some("DELETED"))
    );
    assert!(rv(&d["object"]) > rv(&m["object"]));
    assert_eq!(a["object"]["kind"], "Widget");
}

#[tokio::test]
async fn check_43_watch_without_rv_sends_existing() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small"})).await;
    h.widget("w2", json!({"size": "small"})).await;
    for q in ["watch=true", "watch=1&resourceVersion=0"] {
        let mut w = h.watch(&format!("{W}?{q}")).await;
        let names: Vec<String> = vec![w.next().await, w.next().await]
            .into_iter()
            .map(|e| {
                assert_eq!(e["type"], "ADDED");
                e["object"]["metadata"]["name"]
                    .as_str()
                    .unwrap()
                    .to_string()
            })
            .collect();
        assert_eq!(names, ["w1", "w2"]);
    }
}

#[tokio::test]
async fn check_44_too_old_rv_is_in_stream_410() {
    let h = H::with(ServerOptions {
        history: 2,
        ..ServerOptions::default()
    });
    h.install_widgets().await;
    let first = h.widget("w0", json!({"size": "small"})).await;
    for i in 1..6 {
        h.widget(&format!("w{i}"), json!({"size": "small"})).await;
    }
    let mut w = h
        .watch(&format!("{W}?watch=true&resourceVersion={}", rv(&first)))
        .await;
    let e = w.next().await;
    assert_eq!(e["type"], "ERROR");
    assert_eq!(e["object"]["code"], 410);
    assert_eq!(e["object"]["reason"], "Expired");
    assert!(w.ended_within(Duration::from_secs(1)).await);
}

#[tokio::test]
async fn check_45_selector_transitions() {
    let h = H::widgets().await;
    let r = h.post(W, json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "labels": {"app": "demo"}}, "spec": {"size": "small"}})).await;
    let mut w = h
        .watch(&format!(
            "{W}?watch=true&labelSelector=app%3Ddemo&resourceVersion={}",
            rv(&r.body)
        ))
        .await;
    let moved = h
        .patch(
            &format!("{W}/w1"),
            MERGE,
            json!({"metadata": {"labels": {"app": "x"}}}),
        )
        .await;
    let e = w.next().await;
    assert_eq!(e["type"], "DELETED");
    assert_eq!(
        e["object"]["metadata"]["labels"]["app"], "demo",
        "old content"
    );
    assert_eq!(rv(&e["object"]), rv(&moved.body), "new RV");
    h.patch(
        &format!("{W}/w1"),
        MERGE,
        json!({"metadata": {"labels": {"app": "demo"}}}),
    )
    .await;
    assert_eq!(w.next().await["type"], "ADDED");
}

#[tokio::test]
async fn check_46_send_initial_events() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small"})).await;
    let mut w = h.watch(&format!("{W}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=0")).await;
    assert_eq!(w.next().await["type"], "ADDED");
    let b = w.next().await;
    assert_eq!(b["type"], "BOOKMARK");
    assert_eq!(b["object"]["apiVersion"], "example.com/v1");
    assert_eq!(b["object"]["kind"], "Widget");
    assert!(
        !b["object"]["metadata"]["resourceVersion"]
            .as_str()
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        b["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
        "true"
    );
}

#[tokio::test]
async fn check_47_timeout_seconds() {
    let h = H::widgets().await;
    let start = Instant::now();
    let mut w = h.watch(&format!("{W}?watch=true&timeoutSeconds=1")).await;
    assert!(w.ended_within(Duration::from_secs(3)).await);
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(3),
        "{took:?}"
    );
}

#[tokio::test]
async fn check_48_field_selectors() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small"})).await;
    h.widget("w2", json!({"size": "small"})).await;
    let l = h
        .get(&format!("{W}?fieldSelector=metadata.name%3Dw1"))
        .await;
    assert_eq!(l.body["items"].as_array().unwrap().len(), 1);
    let mut w = h
        .watch(&format!("{W}?watch=true&fieldSelector=metadata.name%3Dw1"))
        .await;
    assert_eq!(w.next().await["object"]["metadata"]["name"], "w1");
    assert!(w.next_within(Duration::from_millis(100)).await.is_none());
    let bad = h.get(&format!("{W}?fieldSelector=spec.size%3Dsmall")).await;
    assert_eq!(bad.code, 400);
    assert!(
        bad.body["message"]
            .as_str()
            .unwrap()
            .contains("field label not supported: spec.size")
    );
}

#[tokio::test]
async fn check_49_label_selector_syntax() {
    let h = H::new();
    for (n, labels) in [
        ("a", json!({"env": "a"})),
        ("b", json!({"env": "b", "legacy": "y"})),
        ("c", json!({"env": "c"})),
    ] {
        h.post("/api/v1/namespaces/default/configmaps", json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n, "labels": labels}})).await;
    }
    let r = h
        .get("/api/v1/namespaces/default/configmaps?labelSelector=env%20in%20(a%2Cb)%2C!legacy")
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    let names: Vec<&str> = r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["a"]);
    assert_eq!(
        h.get("/api/v1/namespaces/default/configmaps?labelSelector=env%20in%20a")
            .await
            .code,
        400
    );
}
