//! docs/embedded-apiserver.md §7 checks 8–11.

use std::time::Duration;

use serde_json::json;

use super::common::*;

const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

#[tokio::test]
async fn check_08_crd_create_and_establish() {
    let h = H::new();
    let mut w = h.watch(&format!("{CRDS}?watch=true")).await;
    let r = h.post(CRDS, widget_crd()).await;
    assert_eq!(r.code, 201);
    assert_eq!(r.body["status"]["storedVersions"], json!(["v1"]));
    assert_eq!(r.body["metadata"]["generation"], 1);
    let mut established = None;
    for _ in 0..100 {
        let g = h.get(&format!("{CRDS}/widgets.example.com")).await.body;
        let conds = g["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if conds
            .iter()
            .any(|c| c["type"] == "Established" && c["status"] == "True")
        {
            established = Some(g);
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let g = established.expect("established within 1 s");
    let conds = g["status"]["conditions"].as_array().unwrap();
    let na = conds.iter().find(|c| c["type"] == "NamesAccepted").unwrap();
    assert_eq!(
        (na["status"].as_str(), na["reason"].as_str()),
        (Some("True"), Some("NoConflicts"))
    );
    let es = conds.iter().find(|c| c["type"] == "Established").unwrap();
    assert_eq!(es["reason"], "InitialNamesAccepted");
    assert_eq!(g["status"]["acceptedNames"]["listKind"], "WidgetList");
    assert_eq!(w.next().await["type"], "ADDED");
    assert_eq!(w.next().await["type"], "MODIFIED");
}

#[tokio::test]
async fn check_09_crd_name_must_match() {
    let h = H::new();
    let mut crd = widget_crd();
    crd["metadata"]["name"] = json!("foo.example.com");
    let r = h.post(CRDS, crd).await;
    assert_eq!(r.code, 422);
    assert!(
        causes(&r.body).iter().any(|(f, _)| f == "metadata.name"),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn check_10_structural_schema_type_required() {
    let h = H::new();
    let mut crd = widget_crd();
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"] =
        json!({"properties": {"a": {"type": "string"}}});
    let r = h.post(CRDS, crd).await;
    assert_eq!(r.code, 422);
    assert!(
        causes(&r.body)
            .iter()
            .any(|(f, reason)| f.contains("properties[spec]")
                && f.ends_with("type")
                && reason == "FieldValueRequired"),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn check_11_crd_delete_cleans_up() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small"})).await;
    h.widget("w2", json!({"size": "large"})).await;
    let r = h.delete(&format!("{CRDS}/widgets.example.com")).await;
    assert_eq!(r.code, 200);
    assert!(
        r.body["metadata"]["finalizers"]
            .as_array()
            .unwrap()
            .contains(&json!("customresourcecleanup.apiextensions.k8s.io"))
    );
    let mut gone = false;
    for _ in 0..200 {
        if h.get(&format!("{CRDS}/widgets.example.com")).await.code == 404 {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(gone, "CRD removed after its instances");
    assert_eq!(h.get("/apis/example.com/v1").await.code, 404);
    assert_eq!(h.get(&format!("{W}/w1")).await.code, 404);
}

#[tokio::test]
async fn check_11_terminating_condition_while_instances_block() {
    let h = H::widgets().await;
    let r = h.post(W, json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "held", "finalizers": ["example.com/hold"]}, "spec": {"size": "small"}})).await;
    assert_eq!(r.code, 201);
    h.delete(&format!("{CRDS}/widgets.example.com")).await;
    let mut terminating = false;
    for _ in 0..100 {
        let c = h.get(&format!("{CRDS}/widgets.example.com")).await.body;
        if c["status"]["conditions"]
            .as_array()
            .unwrap()
            .iter()
            .any(|x| {
                x["type"] == "Terminating"
                    && x["status"] == "True"
                    && x["reason"] == "InstanceDeletionPending"
            })
        {
            terminating = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(terminating);
    // Creating instances of a terminating CRD is refused.
    let r = h.post(W, json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "late"}, "spec": {"size": "small"}})).await;
    assert_eq!(r.code, 405);
    // Releasing the instance lets the CRD go.
    let r = h
        .patch(
            &format!("{W}/held"),
            MERGE,
            json!({"metadata": {"finalizers": null}}),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    let mut gone = false;
    for _ in 0..200 {
        if h.get(&format!("{CRDS}/widgets.example.com")).await.code == 404 {
            gone = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(gone);
}
