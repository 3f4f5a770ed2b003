//! CRD conversion webhooks against a real HTTPS webhook server: on read, list, watch and write,
//! failures in kube's words, pruning and restored metadata, the CRD's conversion validated.

use std::time::Duration;

use axum::http::Method;
use serde_json::json;

use super::common::H;
use super::webhook_support::{WebhookServer, gadget_crd};
use super::webhooks::{G1, GA, gadget_v1, gadget_v1alpha1, install_gadgets, setup};

#[tokio::test]
async fn conversion_on_read_list_and_watch() {
    let (h, hooks) = setup().await;
    assert_eq!(h.post(G1, gadget_v1("one", Some("red"))).await.code, 201);
    assert_eq!(h.post(G1, gadget_v1("two", None)).await.code, 201);
    assert!(
        hooks.on("/convert").is_empty(),
        "v1 is the storage version: no conversion"
    );
    let got = h.get(&format!("{GA}/one")).await;
    assert_eq!(got.code, 200, "{}", got.body);
    assert_eq!(got.body["apiVersion"], "conv.example.com/v1alpha1");
    assert_eq!(got.body["spec"], json!({"size": "small", "color": "red"}));
    assert_eq!(
        got.body["metadata"]["annotations"]["conv.example.com/finish"],
        "matte"
    );
    assert_eq!(hooks.on("/convert").len(), 1);
    hooks.clear();
    let list = h.get(GA).await;
    assert_eq!(list.body["items"].as_array().unwrap().len(), 2);
    assert_eq!(list.body["items"][1]["spec"]["size"], "small");
    let reviews = hooks.on("/convert");
    assert_eq!(reviews.len(), 1, "one review per list");
    assert_eq!(
        reviews[0].body["request"]["objects"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        reviews[0].body["request"]["desiredAPIVersion"],
        "conv.example.com/v1alpha1"
    );
    // Table rendering uses the v1alpha1 printer columns on converted objects.
    let table = h
        .raw(
            Method::GET,
            GA,
            "",
            "application/json;as=Table;v=v1;g=meta.k8s.io",
            Vec::new(),
        )
        .await;
    assert_eq!(table.body["rows"][0]["cells"][1], "small");
    hooks.clear();
    let mut w = h.watch(&format!("{GA}?watch=true")).await;
    let e1 = w.next().await;
    let e2 = w.next().await;
    assert_eq!(e1["object"]["apiVersion"], "conv.example.com/v1alpha1");
    assert_eq!(e2["object"]["spec"]["size"], "small");
    assert_eq!(hooks.on("/convert").len(), 2, "one review per watch event");
    assert_eq!(h.post(G1, gadget_v1("three", None)).await.code, 201);
    let e3 = w.next().await;
    assert_eq!(e3["type"], "ADDED");
    assert_eq!(e3["object"]["metadata"]["name"], "three");
    assert_eq!(e3["object"]["apiVersion"], "conv.example.com/v1alpha1");
}

#[tokio::test]
async fn conversion_on_write_stores_the_storage_version() {
    let (h, hooks) = setup().await;
    let r = h.post(GA, gadget_v1alpha1("a", "green")).await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(r.body["apiVersion"], "conv.example.com/v1alpha1");
    assert_eq!(r.body["spec"], json!({"size": "large", "color": "green"}));
    let stored = h.get(&format!("{G1}/a")).await.body;
    assert_eq!(stored["spec"]["dimensions"]["size"], "large");
    assert_eq!(stored["spec"]["paint"]["color"], "green");
    // resourceVersion is the stored object's, whatever the version read.
    let alpha = h.get(&format!("{GA}/a")).await.body;
    assert_eq!(
        alpha["metadata"]["resourceVersion"],
        stored["metadata"]["resourceVersion"]
    );
    // An update at v1alpha1 reads the old object through conversion and keeps the finish.
    let mut upd = alpha.clone();
    upd["spec"]["color"] = json!("black");
    let r = h.put(&format!("{GA}/a"), upd).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let stored = h.get(&format!("{G1}/a")).await.body;
    assert_eq!(stored["spec"]["paint"]["color"], "black");
    assert_eq!(stored["spec"]["paint"]["finish"], "matte");
    assert!(hooks.on("/convert").len() >= 4);
    // A no-op update keeps the resourceVersion.
    let alpha = h.get(&format!("{GA}/a")).await.body;
    let again = h.put(&format!("{GA}/a"), alpha.clone()).await;
    assert_eq!(
        again.body["metadata"]["resourceVersion"],
        alpha["metadata"]["resourceVersion"]
    );
}

#[tokio::test]
async fn conversion_failures_read_like_kube() {
    let hooks = WebhookServer::start().await;
    let h = H::new();
    install_gadgets(
        &h,
        Some(json!({"url": hooks.url("/convert-fail"), "caBundle": hooks.ca_bundle})),
    )
    .await;
    let r = h.post(GA, gadget_v1alpha1("a", "x")).await;
    assert_eq!(r.code, 500);
    assert_eq!(r.body["reason"], "InternalError");
    assert_eq!(
        r.body["message"],
        "Internal error occurred: conversion webhook for conv.example.com/v1alpha1, Kind=Gadget failed: conversion refused by test"
    );
    assert_eq!(h.post(G1, gadget_v1("b", None)).await.code, 201);
    let r = h.get(&format!("{GA}/b")).await;
    assert_eq!(r.code, 500);
    assert!(
        r.body.get("reason").is_none(),
        "reads fail without a reason: {}",
        r.body
    );
    assert_eq!(
        r.body["message"],
        "conversion webhook for conv.example.com/v1, Kind=Gadget failed: conversion refused by test"
    );
    let list = h.get(GA).await;
    assert_eq!(list.code, 500);
    assert_eq!(
        list.body["message"],
        "conversion webhook for conv.example.com/v1, Kind=GadgetList failed: conversion refused by test"
    );
    // A watch at the other version ends when its event cannot be converted.
    let mut w = h.watch(&format!("{GA}?watch=true")).await;
    assert!(w.ended_within(Duration::from_secs(5)).await);
    // A webhook that renames objects is refused.
    let renaming = WebhookServer::start().await;
    let h2 = H::new();
    install_gadgets(
        &h2,
        Some(json!({"url": renaming.url("/convert-rename"), "caBundle": renaming.ca_bundle})),
    )
    .await;
    assert_eq!(h2.post(G1, gadget_v1("b", None)).await.code, 201);
    let r = h2.get(&format!("{GA}/b")).await;
    assert_eq!(
        r.body["message"],
        "conversion webhook for conv.example.com/v1, Kind=Gadget returned invalid object: must have the same name: b != renamed"
    );
    // Dead conversion webhook: Go's transport error with the 30 s timeout in the URL.
    let dead = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let h3 = H::new();
    install_gadgets(
        &h3,
        Some(json!({"url": format!("https://127.0.0.1:{port}/convert")})),
    )
    .await;
    assert_eq!(
        h3.post(G1, gadget_v1("c", None)).await.code,
        201,
        "storage-version writes need no conversion"
    );
    let r = h3.get(&format!("{GA}/c")).await;
    assert_eq!(
        r.body["message"],
        format!(
            "conversion webhook for conv.example.com/v1, Kind=Gadget failed: Post \"https://127.0.0.1:{port}/convert?timeout=30s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    );
}

#[tokio::test]
async fn lossy_conversion_output_is_pruned_and_metadata_restored() {
    let hooks = WebhookServer::start().await;
    let h = H::new();
    install_gadgets(
        &h,
        Some(json!({"url": hooks.url("/convert-lossy"), "caBundle": hooks.ca_bundle})),
    )
    .await;
    let mut g = gadget_v1("l", Some("green"));
    g["spec"]["paint"]["finish"] = json!("gloss");
    assert_eq!(h.post(G1, g).await.code, 201);
    let alpha = h.get(&format!("{GA}/l")).await.body;
    assert!(
        alpha["metadata"]["annotations"].is_null(),
        "the lossy webhook kept nothing"
    );
    let r = h.put(&format!("{GA}/l"), alpha).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let stored = h.get(&format!("{G1}/l")).await.body;
    assert_eq!(
        stored["spec"]["paint"]["finish"], "matte",
        "the finish was lost (and defaulted again)"
    );
}

#[tokio::test]
async fn crd_conversion_config_is_validated_and_stored_versions_kept() {
    let h = H::new();
    let mut crd = gadget_crd(None);
    crd["spec"]["conversion"] = json!({"strategy": "Webhook"});
    let r = h
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            crd,
        )
        .await;
    assert_eq!(r.code, 422);
    assert!(
        r.body["message"].as_str().unwrap().contains("spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook"),
        "{}",
        r.body
    );
    install_gadgets(&h, None).await;
    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.conv.example.com";
    let mut crd = h.get(path).await.body;
    assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
    crd["spec"]["versions"][0]["storage"] = json!(true);
    crd["spec"]["versions"][1]["storage"] = json!(false);
    let r = h.put(path, crd).await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(
        r.body["status"]["storedVersions"],
        json!(["v1", "v1alpha1"]),
        "appended synchronously"
    );
    let mut crd = r.body;
    crd["spec"]["versions"].as_array_mut().unwrap().remove(1);
    let r = h.put(path, crd).await;
    assert_eq!(
        r.code, 422,
        "a stored version cannot leave spec.versions: {}",
        r.body
    );
    assert!(
        r.body["message"].as_str().unwrap().contains(
            "status.storedVersions[0]: Invalid value: \"v1\": must appear in spec.versions"
        ),
        "{}",
        r.body
    );
}

/// A webhook server of this process (`route_service_in_process`: the run's own conversion
/// webhooks) converts each stored object version once per target version: a second read of
/// the same version is answered from memory, a new version is converted again. A webhook
/// reached over a socket is called on every read, as kube-apiserver calls it.
#[tokio::test]
async fn an_in_process_webhook_converts_each_stored_version_once() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};
    let reviews = Arc::new(AtomicUsize::new(0));
    let counted = reviews.clone();
    let router = axum::Router::new().route(
        "/convert",
        axum::routing::post(move |axum::Json(review): axum::Json<serde_json::Value>| {
            let counted = counted.clone();
            async move {
                counted.fetch_add(1, Ordering::SeqCst);
                axum::Json(super::webhook_support::convert("/convert", &review))
            }
        }),
    );
    let h = H::new();
    assert_eq!(
        h.post("/api/v1/namespaces", json!({"metadata": {"name": "hooks"}}))
            .await
            .code,
        201
    );
    let svc = json!({"metadata": {"name": "gadget-conv"}, "spec": {"ports": [{"port": 443}]}});
    let r = h.post("/api/v1/namespaces/hooks/services", svc).await;
    assert_eq!(r.code, 201, "{}", r.body);
    h.server
        .route_service_in_process("hooks", "gadget-conv", 443, router);
    install_gadgets(
        &h,
        Some(json!({"service": {"namespace": "hooks", "name": "gadget-conv", "path": "/convert", "port": 443}})),
    )
    .await;
    assert_eq!(h.post(G1, gadget_v1("one", Some("red"))).await.code, 201);
    for _ in 0..3 {
        let got = h.get(&format!("{GA}/one")).await;
        assert_eq!(got.code, 200, "{}", got.body);
        assert_eq!(got.body["spec"], json!({"size": "small", "color": "red"}));
    }
    assert_eq!(
        reviews.load(Ordering::SeqCst),
        1,
        "one review per stored version"
    );
    let list = h.get(GA).await;
    assert_eq!(list.body["items"][0]["spec"]["color"], "red");
    assert_eq!(
        reviews.load(Ordering::SeqCst),
        1,
        "the list's only item is remembered"
    );
    let mut changed = h.get(&format!("{G1}/one")).await.body;
    changed["spec"]["paint"]["color"] = json!("blue");
    assert_eq!(h.put(&format!("{G1}/one"), changed).await.code, 200);
    let got = h.get(&format!("{GA}/one")).await;
    assert_eq!(
        got.body["spec"]["color"], "blue",
        "a new version converts again"
    );
    assert_eq!(reviews.load(Ordering::SeqCst), 2);

    let (h, hooks) = setup().await;
    assert_eq!(h.post(G1, gadget_v1("one", Some("red"))).await.code, 201);
    for _ in 0..3 {
        assert_eq!(h.get(&format!("{GA}/one")).await.code, 200);
    }
    assert_eq!(
        hooks.on("/convert").len(),
        3,
        "a socket webhook on every read"
    );
}
