//! Bad input, health, dryRun, pagination, Secret stringData, Table and metadata responses,
//! fault injection, watch cleanup.

use std::time::{Duration, Instant};

use axum::http::Method;
use serde_json::json;

use super::common::*;

const CM: &str = "/api/v1/namespaces/default/configmaps";

#[tokio::test]
async fn health_endpoints() {
    let h = H::new();
    for p in ["/healthz", "/livez", "/readyz", "/readyz/ping"] {
        let r = h.get(p).await;
        assert_eq!((r.code, r.body.as_str()), (200, Some("ok")), "{p}");
    }
}

#[tokio::test]
async fn bad_input_gets_status_errors() {
    let h = H::widgets().await;
    let r = h
        .raw(Method::POST, CM, JSON, JSON, b"{not json".to_vec())
        .await;
    assert_eq!(r.code, 400);
    assert_eq!(r.body["kind"], "Status");
    let big = vec![b' '; 3 * 1024 * 1024 + 10];
    let r = h.raw(Method::POST, CM, JSON, JSON, big).await;
    assert_eq!(r.code, 413);
    assert_eq!(r.body["kind"], "Status");
    assert_eq!(h.get("/api/v1/namespaces/default/gizmos").await.code, 404);
    assert_eq!(
        h.get("/apis/example.com/v1/namespaces/default/widgets/w1/bogus")
            .await
            .code,
        404
    );
    assert_eq!(h.get("/totally/unknown").await.code, 404);
    let r = h
        .raw(Method::POST, CM, "text/plain", JSON, b"x".to_vec())
        .await;
    assert_eq!(r.code, 415);
    let r = h.post(CM, json!([1, 2])).await;
    assert_eq!(r.code, 400);
    let r = h
        .post(
            CM,
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x"}}),
        )
        .await;
    assert_eq!(r.code, 400);
    let r = h
        .patch(&format!("{W}/nope"), "application/x-unknown", json!({}))
        .await;
    assert_eq!(r.code, 415);
    let r = h
        .raw(
            Method::PATCH,
            &format!("{CM}/nope"),
            MERGE,
            JSON,
            b"[".to_vec(),
        )
        .await;
    assert_eq!(r.code, 400);
    // The watch cache's refusal of a version that is not a number: a 500 without reason.
    let r = h.get(&format!("{W}?watch=true&resourceVersion=abc")).await;
    assert_eq!(r.code, 500);
    let r = h.get(&format!("{W}?resourceVersion=abc")).await;
    assert_eq!(r.code, 400);
    let r = h.post(W, json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "Bad_Name"}, "spec": {"size": "small"}})).await;
    assert_eq!(r.code, 422);
    assert_eq!(
        h.send(Method::PUT, W, JSON, Some(json!({}))).await.code,
        405
    );
}

#[tokio::test]
async fn dropped_watch_is_released() {
    let h = H::widgets().await;
    let before = h.server.subscribers();
    let w = h.watch(&format!("{W}?watch=true")).await;
    assert_eq!(h.server.subscribers(), before + 1);
    drop(w);
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(h.server.subscribers(), before);
}

#[tokio::test]
async fn dry_run_persists_nothing() {
    let h = H::new();
    let rv_before = h.server.resource_version();
    let r = h
        .post(
            &format!("{CM}?dryRun=All"),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
        )
        .await;
    assert_eq!(r.code, 201);
    assert_eq!(h.get(&format!("{CM}/c")).await.code, 404);
    assert_eq!(h.server.resource_version(), rv_before);
    h.post(
        CM,
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
    )
    .await;
    let r = h
        .patch(
            &format!("{CM}/c?dryRun=All"),
            MERGE,
            json!({"data": {"a": "b"}}),
        )
        .await;
    assert_eq!(r.body["data"]["a"], "b");
    assert!(h.get(&format!("{CM}/c")).await.body.get("data").is_none());
    let r = h
        .send(Method::DELETE, &format!("{CM}/c?dryRun=All"), "", None)
        .await;
    assert_eq!(r.code, 200);
    assert_eq!(h.get(&format!("{CM}/c")).await.code, 200);
}

#[tokio::test]
async fn limit_and_continue() {
    let h = H::new();
    for i in 0..5 {
        h.post(
            CM,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("c{i}")}}),
        )
        .await;
    }
    let first = h.get(&format!("{CM}?limit=2")).await.body;
    assert_eq!(first["items"].as_array().unwrap().len(), 2);
    assert_eq!(first["metadata"]["remainingItemCount"], 3);
    let mut names: Vec<String> = Vec::new();
    let mut cont = String::new();
    loop {
        let page = h.get(&format!("{CM}?limit=2&continue={cont}")).await.body;
        names.extend(
            page["items"]
                .as_array()
                .unwrap()
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap().to_string()),
        );
        match page["metadata"]["continue"].as_str() {
            Some(c) => cont = c.to_string(),
            None => break,
        }
    }
    assert_eq!(names, ["c0", "c1", "c2", "c3", "c4"]);
    assert_eq!(
        h.get(&format!("{CM}?limit=2&continue=garbage")).await.code,
        400
    );
}

#[tokio::test]
async fn secret_string_data_and_immutability() {
    let h = H::new();
    let r = h.post("/api/v1/namespaces/default/secrets", json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "stringData": {"a": "b"}, "immutable": true})).await;
    assert_eq!(r.code, 201);
    assert_eq!(r.body["data"]["a"], "Yg==");
    assert!(r.body.get("stringData").is_none());
    assert_eq!(r.body["type"], "Opaque");
    let r = h
        .patch(
            "/api/v1/namespaces/default/secrets/s",
            MERGE,
            json!({"data": {"a": "Yw=="}}),
        )
        .await;
    assert_eq!(r.code, 422);
}

#[tokio::test]
async fn table_and_partial_metadata_responses() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "large"})).await;
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    let r = h.raw(Method::GET, W, "", accept, vec![]).await;
    assert_eq!(r.body["kind"], "Table");
    let cols: Vec<&str> = r.body["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    // A CRD that defines printer columns gets no Age column (apiextensions adds it only to
    // versions without columns).
    assert_eq!(cols, ["Name", "Size"]);
    assert_eq!(r.body["rows"][0]["cells"][0], "w1");
    assert_eq!(r.body["rows"][0]["cells"][1], "large");
    assert_eq!(r.body["rows"][0]["object"]["kind"], "PartialObjectMetadata");
    let r = h
        .raw(Method::GET, &format!("{W}/w1"), "", accept, vec![])
        .await;
    assert_eq!(r.body["rows"].as_array().unwrap().len(), 1);
    let meta_accept = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
    let r = h.raw(Method::GET, W, "", meta_accept, vec![]).await;
    assert_eq!(r.body["kind"], "PartialObjectMetadataList");
    assert_eq!(r.body["items"][0]["metadata"]["name"], "w1");
    assert!(r.body["items"][0].get("spec").is_none());
}

#[tokio::test]
async fn injected_errors_and_latency() {
    let h = H::new();
    h.server.faults().set_rate_429(1.0);
    let r = h.get(CM).await;
    assert_eq!(r.code, 429);
    assert_eq!(r.header("retry-after"), "1");
    // kube-apiserver's throttling filters answer with Go's http.Error, not a Status.
    assert_eq!(r.header("content-type"), "text/plain; charset=utf-8");
    assert_eq!(r.body, "Too many requests, please try again later.\n");
    assert_eq!(h.get("/healthz").await.code, 200, "health is never faulted");
    h.server.faults().set_rate_429(0.0);
    h.server.faults().set_rate_500(1.0);
    assert_eq!(h.get(CM).await.code, 500);
    h.server.faults().apply_spec("500=0,latency=150ms").unwrap();
    let start = Instant::now();
    assert_eq!(h.get(CM).await.code, 200);
    assert!(start.elapsed() >= Duration::from_millis(150));
}

#[tokio::test]
async fn slow_crd_establishment() {
    let h = H::new();
    h.server.faults().set_crd_delay(Duration::from_millis(400));
    let r = h
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            widget_crd(),
        )
        .await;
    assert_eq!(r.code, 201);
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(h.get("/apis/example.com/v1").await.code, 404);
    h.server
        .wait_established("widgets.example.com", Duration::from_secs(3))
        .await
        .unwrap();
    assert_eq!(h.get("/apis/example.com/v1").await.code, 200);
}

#[tokio::test]
async fn forced_watch_expiry_and_drop() {
    let h = H::widgets().await;
    let w = h.widget("w1", json!({"size": "small"})).await;
    h.server.faults().expire_next_watches(1);
    let mut watch = h
        .watch(&format!("{W}?watch=true&resourceVersion={}", rv(&w)))
        .await;
    let e = watch.next().await;
    assert_eq!(e["object"]["code"], 410);
    h.server
        .faults()
        .set_drop_watch_after(Some(Duration::from_millis(100)));
    let mut watch = h
        .watch(&format!("{W}?watch=true&resourceVersion={}", rv(&w)))
        .await;
    assert!(watch.ended_within(Duration::from_secs(2)).await);
}

/// Whether GET `path` answers 404 within 2 s.
async fn gone_within_2s(h: &H, path: &str) -> bool {
    for _ in 0..200 {
        if h.get(path).await.code == 404 {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    false
}

#[tokio::test]
async fn namespace_deletion_removes_content() {
    let h = H::new();
    h.post(
        "/api/v1/namespaces",
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "tmp"}}),
    )
    .await;
    h.post(
        "/api/v1/namespaces/tmp/configmaps",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}),
    )
    .await;
    let r = h.delete("/api/v1/namespaces/tmp").await;
    assert_eq!(r.code, 200);
    assert!(gone_within_2s(&h, "/api/v1/namespaces/tmp").await);
    assert_eq!(h.get("/api/v1/namespaces/tmp/configmaps/c").await.code, 404);
}

/// A namespace held by an object whose finalizer nobody removes (its controller gone) goes once
/// the embedder releases the finalizers in it; objects outside it keep theirs.
#[tokio::test]
async fn released_finalizers_let_a_held_namespace_go() {
    let h = H::new();
    for ns in ["held", "other"] {
        h.post(
            "/api/v1/namespaces",
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
        )
        .await;
        h.post(
            &format!("/api/v1/namespaces/{ns}/configmaps"),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "c", "finalizers": ["example.com/held"]}}),
        )
        .await;
    }
    assert_eq!(h.delete("/api/v1/namespaces/held").await.code, 200);
    assert_eq!(
        h.delete("/api/v1/namespaces/other/configmaps/c").await.code,
        200
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        h.get("/api/v1/namespaces/held").await.code,
        200,
        "held by the finalizer"
    );
    assert_eq!(h.server.release_finalizers_in("held"), 1);
    assert!(gone_within_2s(&h, "/api/v1/namespaces/held").await);
    assert_eq!(
        h.get("/api/v1/namespaces/other/configmaps/c").await.code,
        200
    );
}
