//! docs/embedded-apiserver.md §7 checks 21–27.

use serde_json::json;

use super::common::*;

async fn create(h: &H, spec: serde_json::Value, query: &str) -> Resp {
    h.post(&format!("{W}{query}"), json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": spec})).await
}

#[tokio::test]
async fn check_21_type_invalid() {
    let h = H::widgets().await;
    let r = create(&h, json!({"size": "small", "replicas": "three"}), "").await;
    assert_eq!(r.code, 422, "{}", r.body);
    assert!(
        causes(&r.body).contains(&("spec.replicas".into(), "FieldValueTypeInvalid".into())),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn check_22_required() {
    let h = H::widgets().await;
    let r = create(&h, json!({}), "").await;
    assert_eq!(r.code, 422);
    assert!(
        causes(&r.body).contains(&("spec.size".into(), "FieldValueRequired".into())),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn check_23_enum() {
    let h = H::widgets().await;
    let r = create(&h, json!({"size": "huge"}), "").await;
    assert_eq!(r.code, 422);
    assert!(
        causes(&r.body)
            .iter()
            .any(|(_, reason)| reason == "FieldValueNotSupported"),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn check_24_minimum() {
    let h = H::widgets().await;
    let r = create(&h, json!({"size": "small", "replicas": -1}), "").await;
    assert_eq!(r.code, 422);
    assert!(
        causes(&r.body)
            .iter()
            .any(|(f, reason)| f == "spec.replicas" && reason == "FieldValueInvalid"),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn check_25_strict_unknown_field() {
    let h = H::widgets().await;
    let r = create(
        &h,
        json!({"size": "small", "bogus": 1}),
        "?fieldValidation=Strict",
    )
    .await;
    assert_eq!(r.code, 400);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("unknown field \"spec.bogus\""),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn check_26_warn_and_ignore_unknown_field() {
    let h = H::widgets().await;
    let r = create(&h, json!({"size": "small", "bogus": 1}), "").await;
    assert_eq!(r.code, 201);
    assert_eq!(
        r.header("warning"),
        "299 - \"unknown field \\\"spec.bogus\\\"\""
    );
    assert!(r.body["spec"].get("bogus").is_none());
    assert!(
        h.get(&format!("{W}/w1")).await.body["spec"]
            .get("bogus")
            .is_none()
    );
    let r = h.post(&format!("{W}?fieldValidation=Ignore"), json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2"}, "spec": {"size": "small", "bogus": 1}})).await;
    assert_eq!(r.code, 201);
    assert!(r.header("warning").is_empty());
}

#[tokio::test]
async fn check_27_preserve_unknown_kept() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small"})).await;
    let r = h
        .patch(
            &format!("{W}/w1/status"),
            MERGE,
            json!({"status": {"anything": {"deep": [1, 2]}, "x": "y"}}),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(
        r.body["status"],
        json!({"anything": {"deep": [1, 2]}, "x": "y"})
    );
}
