//! `metadata.managedFields` of Update operations as kube-apiserver records them: the field
//! manager (or User-Agent prefix), ownership moving between managers, subresources, and apply
//! conflicts with fields an Update manager owns.

use serde_json::{Value, json};

use super::common::*;
use super::fidelity::CM;

/// A POST with a User-Agent and no fieldManager.
async fn post_as(h: &H, path: &str, user_agent: &str, body: Value) -> Value {
    use axum::body::Body;
    use axum::http::Request;
    use http_body_util::BodyExt;
    use tower::ServiceExt;
    let req = Request::builder()
        .method("POST")
        .uri(path)
        .header("content-type", "application/json")
        .header("user-agent", user_agent)
        .body(Body::from(serde_json::to_vec(&body).unwrap()))
        .unwrap();
    let resp = h.server.router().oneshot(req).await.unwrap();
    assert_eq!(resp.status().as_u16(), 201);
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap()
}

pub(crate) fn entry<'a>(obj: &'a Value, manager: &str, operation: &str) -> Option<&'a Value> {
    obj["metadata"]["managedFields"]
        .as_array()?
        .iter()
        .find(|e| e["manager"] == manager && e["operation"] == operation)
}

fn managers(obj: &Value) -> Vec<(String, String, String)> {
    obj["metadata"]["managedFields"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|e| {
                    (
                        e["manager"].as_str().unwrap_or_default().to_string(),
                        e["operation"].as_str().unwrap_or_default().to_string(),
                        e["subresource"].as_str().unwrap_or_default().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn create_records_an_update_entry_for_the_field_manager() {
    let h = H::widgets().await;
    let r = h
        .post(
            &format!("{W}?fieldManager=creator"),
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1", "labels": {"app": "x"}}, "spec": {"size": "small"}}),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let e = entry(&r.body, "creator", "Update").expect("creator entry");
    assert_eq!(e["apiVersion"], "example.com/v1");
    assert_eq!(e["fieldsType"], "FieldsV1");
    assert!(e["time"].as_str().unwrap().ends_with('Z'));
    assert!(e.get("subresource").is_none());
    // Added parents are members ("."); stripped metadata and reset status are not tracked.
    assert_eq!(
        e["fieldsV1"],
        json!({
            "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
            "f:spec": {".": {}, "f:mode": {}, "f:size": {}}
        })
    );
}

#[tokio::test]
async fn manager_defaults_to_the_user_agent_prefix() {
    let h = H::new();
    let obj = post_as(
        &h,
        CM,
        "mytool/v1.2.3 (linux/amd64) kubernetes/abc",
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "v"}}),
    )
    .await;
    assert_eq!(
        managers(&obj),
        [("mytool".into(), "Update".into(), String::new())]
    );
    assert_eq!(
        obj["metadata"]["managedFields"][0]["fieldsV1"],
        json!({"f:data": {".": {}, "f:k": {}}})
    );
}

#[tokio::test]
async fn updates_move_ownership_and_merge_the_same_manager() {
    let h = H::widgets().await;
    h.post(
        &format!("{W}?fieldManager=creator"),
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": "small", "replicas": 1}}),
    )
    .await;
    let r = h
        .patch(
            &format!("{W}/w1?fieldManager=scaler"),
            MERGE,
            json!({"spec": {"replicas": 2}}),
        )
        .await;
    assert_eq!(r.code, 200);
    let scaler = entry(&r.body, "scaler", "Update").unwrap();
    assert_eq!(scaler["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    let creator = entry(&r.body, "creator", "Update").unwrap();
    assert!(creator["fieldsV1"]["f:spec"].get("f:replicas").is_none());
    assert!(creator["fieldsV1"]["f:spec"].get("f:size").is_some());
    // The same manager again: one entry, union of its fields.
    let r = h
        .patch(
            &format!("{W}/w1?fieldManager=scaler"),
            MERGE,
            json!({"metadata": {"labels": {"l": "1"}}}),
        )
        .await;
    let scaler_entries: Vec<_> = managers(&r.body)
        .into_iter()
        .filter(|(m, _, _)| m == "scaler")
        .collect();
    assert_eq!(scaler_entries.len(), 1);
    let scaler = entry(&r.body, "scaler", "Update").unwrap();
    assert_eq!(
        scaler["fieldsV1"],
        json!({"f:metadata": {"f:labels": {".": {}, "f:l": {}}}, "f:spec": {"f:replicas": {}}})
    );
    // A no-op write changes nothing, not even the entry's time.
    let rv_before = rv(&r.body);
    let again = h
        .patch(
            &format!("{W}/w1?fieldManager=other"),
            MERGE,
            json!({"spec": {"replicas": 2}}),
        )
        .await;
    assert_eq!(rv(&again.body), rv_before);
    assert!(entry(&again.body, "other", "Update").is_none());
    // Removing a field removes it from its owner.
    let r = h
        .patch(
            &format!("{W}/w1?fieldManager=cleaner"),
            MERGE,
            json!({"metadata": {"labels": null}}),
        )
        .await;
    let scaler = entry(&r.body, "scaler", "Update").unwrap();
    assert_eq!(scaler["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    assert!(entry(&r.body, "cleaner", "Update").is_none());
}

#[tokio::test]
async fn status_and_scale_writes_record_their_subresource() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small"})).await;
    let r = h
        .patch(
            &format!("{W}/w1/status?fieldManager=ctrl"),
            MERGE,
            json!({"status": {"ready": true}}),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    let e = entry(&r.body, "ctrl", "Update").unwrap();
    assert_eq!(e["subresource"], "status");
    assert_eq!(e["fieldsV1"], json!({"f:status": {".": {}, "f:ready": {}}}));
    let r = h
        .patch(
            &format!("{W}/w1/scale?fieldManager=hpa"),
            MERGE,
            json!({"spec": {"replicas": 3}}),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    let obj = h.get(&format!("{W}/w1")).await.body;
    let e = entry(&obj, "hpa", "Update").unwrap();
    assert_eq!(e["subresource"], "scale");
    assert_eq!(e["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
}

#[tokio::test]
async fn apply_conflicts_with_fields_an_update_manager_owns() {
    let h = H::widgets().await;
    h.post(
        &format!("{W}?fieldManager=kubectl-edit"),
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": "small"}}),
    )
    .await;
    let doc = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": "large"}});
    let r = h
        .patch(&format!("{W}/w1?fieldManager=ssa"), APPLY, doc.clone())
        .await;
    assert_eq!(r.code, 409, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Apply failed with 1 conflict: conflict with \"kubectl-edit\" using example.com/v1: .spec.size"
    );
    // Applying the same value shares ownership without a conflict.
    let same = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": "small"}});
    let r = h
        .patch(&format!("{W}/w1?fieldManager=ssa"), APPLY, same)
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert!(
        entry(&r.body, "kubectl-edit", "Update").unwrap()["fieldsV1"]["f:spec"]
            .get("f:size")
            .is_some()
    );
    assert!(
        entry(&r.body, "ssa", "Apply").unwrap()["fieldsV1"]["f:spec"]
            .get("f:size")
            .is_some()
    );
    let r = h
        .patch(&format!("{W}/w1?fieldManager=ssa&force=true"), APPLY, doc)
        .await;
    assert_eq!(r.code, 200);
    assert!(
        entry(&r.body, "kubectl-edit", "Update").unwrap()["fieldsV1"]["f:spec"]
            .get("f:size")
            .is_none()
    );
    // Apply entries sort before Update entries.
    assert_eq!(managers(&r.body)[0].1, "Apply");
}
