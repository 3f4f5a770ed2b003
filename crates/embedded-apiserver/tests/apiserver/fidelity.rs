//! Fidelity to kube-apiserver beyond the §7 checks: paginated lists bound to a snapshot,
//! `resourceVersionMatch`, Update managedFields and structured-merge-diff list semantics in
//! server-side apply.

use embedded_apiserver::ServerOptions;
use serde_json::{Value, json};

use super::common::*;

const CM: &str = "/api/v1/namespaces/default/configmaps";

async fn configmaps(h: &H, names: &[&str]) {
    for n in names {
        let r = h
            .post(
                CM,
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": n}, "data": {"v": "1"}}),
            )
            .await;
        assert_eq!(r.code, 201, "{}", r.body);
    }
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn continued_pages_show_the_first_pages_snapshot() {
    let h = H::new();
    configmaps(&h, &["a", "b", "c", "d"]).await;
    let first = h.get(&format!("{CM}?limit=2")).await.body;
    assert_eq!(names(&first), ["a", "b"]);
    let snapshot_rv = first["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let cont = first["metadata"]["continue"].as_str().unwrap().to_string();
    // Writes after the first page: a new item, a modified one, a deleted one.
    configmaps(&h, &["e"]).await;
    let r = h
        .patch(&format!("{CM}/c"), MERGE, json!({"data": {"v": "2"}}))
        .await;
    assert_eq!(r.code, 200);
    assert_eq!(h.delete(&format!("{CM}/d")).await.code, 200);
    let second = h.get(&format!("{CM}?limit=10&continue={cont}")).await;
    assert_eq!(second.code, 200, "{}", second.body);
    assert_eq!(names(&second.body), ["c", "d"]);
    assert_eq!(second.body["items"][0]["data"]["v"], "1");
    assert_eq!(second.body["metadata"]["resourceVersion"], snapshot_rv);
    assert!(second.body["metadata"].get("continue").is_none());
    // A fresh list sees the writes.
    assert_eq!(names(&h.get(CM).await.body), ["a", "b", "c", "e"]);
}

#[tokio::test]
async fn compacted_continue_token_is_410_with_an_inconsistent_token() {
    let h = H::new();
    configmaps(&h, &["a", "b", "c"]).await;
    let first = h.get(&format!("{CM}?limit=1")).await.body;
    let cont = first["metadata"]["continue"].as_str().unwrap().to_string();
    configmaps(&h, &["d"]).await;
    h.server.compact_history();
    let r = h.get(&format!("{CM}?limit=1&continue={cont}")).await;
    assert_eq!(r.code, 410, "{}", r.body);
    assert_eq!(r.body["reason"], "Expired");
    assert!(r.body["message"].as_str().unwrap().starts_with(
        "The provided continue parameter is too old to display a consistent list result."
    ));
    // The token in the Status continues from the same key at the latest state.
    let inconsistent = r.body["metadata"]["continue"].as_str().unwrap().to_string();
    let mut rest = Vec::new();
    let mut cont = inconsistent;
    loop {
        let page = h.get(&format!("{CM}?limit=1&continue={cont}")).await;
        assert_eq!(page.code, 200, "{}", page.body);
        rest.extend(names(&page.body));
        match page.body["metadata"]["continue"].as_str() {
            Some(c) => cont = c.to_string(),
            None => break,
        }
    }
    assert_eq!(rest, ["b", "c", "d"]);
}

#[tokio::test]
async fn malformed_continue_and_rv_with_continue_are_400() {
    let h = H::new();
    configmaps(&h, &["a", "b"]).await;
    let r = h.get(&format!("{CM}?limit=1&continue=%21%21")).await;
    assert_eq!(r.code, 400);
    assert_eq!(r.body["reason"], "BadRequest");
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .starts_with("invalid continue token")
    );
    let cont = h.get(&format!("{CM}?limit=1")).await.body["metadata"]["continue"]
        .as_str()
        .unwrap()
        .to_string();
    let r = h
        .get(&format!("{CM}?limit=1&continue={cont}&resourceVersion=5"))
        .await;
    assert_eq!(r.code, 400);
    assert_eq!(
        r.body["message"],
        "specifying resource version is not allowed when using continue"
    );
    // resourceVersion=0 is tolerated with continue.
    let r = h
        .get(&format!("{CM}?limit=1&continue={cont}&resourceVersion=0"))
        .await;
    assert_eq!(r.code, 200);
    assert_eq!(names(&r.body), ["b"]);
}

#[tokio::test]
async fn resource_version_match_exact_serves_history() {
    let h = H::new();
    configmaps(&h, &["a"]).await;
    let at = rv(&h.get(CM).await.body);
    configmaps(&h, &["b"]).await;
    h.patch(&format!("{CM}/a"), MERGE, json!({"data": {"v": "2"}}))
        .await;
    let exact = h
        .get(&format!(
            "{CM}?resourceVersion={at}&resourceVersionMatch=Exact"
        ))
        .await;
    assert_eq!(exact.code, 200, "{}", exact.body);
    assert_eq!(names(&exact.body), ["a"]);
    assert_eq!(exact.body["items"][0]["data"]["v"], "1");
    assert_eq!(exact.body["metadata"]["resourceVersion"], at.to_string());
    // NotOlderThan a past RV serves the latest state.
    let newer = h
        .get(&format!(
            "{CM}?resourceVersion={at}&resourceVersionMatch=NotOlderThan"
        ))
        .await;
    assert_eq!(names(&newer.body), ["a", "b"]);
    assert!(rv(&newer.body) > at);
    // Compacted → 410.
    h.server.compact_history();
    let gone = h
        .get(&format!(
            "{CM}?resourceVersion={at}&resourceVersionMatch=Exact"
        ))
        .await;
    assert_eq!(gone.code, 410);
    assert_eq!(gone.body["reason"], "Expired");
    assert_eq!(
        gone.body["message"],
        "The resourceVersion for the provided list is too old."
    );
    // A future RV → 504 ResourceVersionTooLarge.
    let future = rv(&newer.body) + 100;
    let r = h
        .get(&format!(
            "{CM}?resourceVersion={future}&resourceVersionMatch=Exact"
        ))
        .await;
    assert_eq!(r.code, 504);
    assert_eq!(
        r.body["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
}

#[tokio::test]
async fn list_options_validation_matches_kube_apiserver() {
    let h = H::new();
    for (query, expect) in [
        (
            "resourceVersionMatch=NotOlderThan",
            "resourceVersionMatch is forbidden unless resourceVersion is provided",
        ),
        (
            "resourceVersionMatch=Exact&resourceVersion=0",
            "resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        ),
        (
            "resourceVersionMatch=Sometimes&resourceVersion=3",
            "Unsupported value: \"Sometimes\"",
        ),
    ] {
        let r = h.get(&format!("{CM}?{query}")).await;
        assert_eq!(r.code, 422, "{query}: {}", r.body);
        assert_eq!(r.body["reason"], "Invalid");
        let msg = r.body["message"].as_str().unwrap();
        assert!(
            msg.starts_with("ListOptions.meta.k8s.io \"\" is invalid: "),
            "{msg}"
        );
        assert!(msg.contains(expect), "{msg}");
        assert_eq!(
            r.body["details"]["causes"][0]["field"],
            "resourceVersionMatch"
        );
    }
    assert_eq!(h.get(&format!("{CM}?resourceVersion=abc")).await.code, 400);
    let r = h.get(&format!("{CM}?sendInitialEvents=true")).await;
    assert_eq!(r.code, 422);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("sendInitialEvents is forbidden for list")
    );
    // Watches: resourceVersionMatch only with sendInitialEvents, and only NotOlderThan.
    let r = h
        .get(&format!(
            "{CM}?watch=true&resourceVersion=1&resourceVersionMatch=NotOlderThan"
        ))
        .await;
    assert_eq!(r.code, 422, "{}", r.body);
    assert!(r.body["message"].as_str().unwrap().contains(
        "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided"
    ));
    let r = h
        .get(&format!(
            "{CM}?watch=true&sendInitialEvents=true&resourceVersionMatch=Exact&resourceVersion=1"
        ))
        .await;
    assert_eq!(r.code, 422);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .contains("supported values: \"NotOlderThan\"")
    );
}

#[tokio::test]
async fn remaining_item_count_only_without_selectors() {
    let h = H::with(ServerOptions::default());
    configmaps(&h, &["a", "b", "c"]).await;
    let plain = h.get(&format!("{CM}?limit=1")).await.body;
    assert_eq!(plain["metadata"]["remainingItemCount"], 2);
    let filtered = h
        .get(&format!(
            "{CM}?limit=1&fieldSelector=metadata.namespace%3Ddefault"
        ))
        .await
        .body;
    assert!(filtered["metadata"]["continue"].is_string());
    assert!(filtered["metadata"].get("remainingItemCount").is_none());
}

// ---- managedFields for Update operations ----

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

fn entry<'a>(obj: &'a Value, manager: &str, operation: &str) -> Option<&'a Value> {
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

// ---- server-side apply list semantics ----

fn listy_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object", "properties": {
                    "ports": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                        "items": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "port": {"type": "integer"}}}},
                    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "selector": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}},
                    "env": {"type": "object", "additionalProperties": {"type": "string"}}
                }}}}}
            }]
        }
    })
}

const G: &str = "/apis/example.com/v1/namespaces/default/gadgets";

async fn gadgets() -> H {
    let h = H::new();
    let r = h
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            listy_crd(),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    h.server
        .wait_established("gadgets.example.com", std::time::Duration::from_secs(5))
        .await
        .unwrap();
    h
}

async fn apply_gadget(h: &H, manager: &str, spec: Value) -> Resp {
    h.patch(
        &format!("{G}/g?fieldManager={manager}"),
        APPLY,
        json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": spec}),
    )
    .await
}

#[tokio::test]
async fn map_lists_merge_by_key_with_per_item_ownership() {
    let h = gadgets().await;
    let r = apply_gadget(&h, "a", json!({"ports": [{"name": "http", "port": 80}]})).await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(
        entry(&r.body, "a", "Apply").unwrap()["fieldsV1"],
        json!({"f:spec": {"f:ports": {"k:{\"name\":\"http\"}": {".": {}, "f:name": {}, "f:port": {}}}}})
    );
    let r = apply_gadget(
        &h,
        "b",
        json!({"ports": [{"name": "metrics", "port": 9090}]}),
    )
    .await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(
        r.body["spec"]["ports"],
        json!([{"name": "http", "port": 80}, {"name": "metrics", "port": 9090}])
    );
    // b changing a's item is a per-item conflict.
    let r = apply_gadget(
        &h,
        "b",
        json!({"ports": [{"name": "metrics", "port": 9090}, {"name": "http", "port": 8080}]}),
    )
    .await;
    assert_eq!(r.code, 409);
    assert_eq!(
        r.body["details"]["causes"][0]["field"],
        ".spec.ports[name=\"http\"].port"
    );
    // a stops applying its item: the item goes, b's stays.
    let r = apply_gadget(&h, "a", json!({})).await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(
        r.body["spec"]["ports"],
        json!([{"name": "metrics", "port": 9090}])
    );
}

#[tokio::test]
async fn set_lists_merge_by_value_and_atomic_lists_replace() {
    let h = gadgets().await;
    apply_gadget(
        &h,
        "a",
        json!({"tags": ["x"], "args": ["--one"], "selector": {"k": "v"}}),
    )
    .await;
    let r = apply_gadget(&h, "b", json!({"tags": ["y"]})).await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.body["spec"]["tags"], json!(["x", "y"]));
    assert_eq!(
        entry(&r.body, "b", "Apply").unwrap()["fieldsV1"],
        json!({"f:spec": {"f:tags": {"v:\"y\"": {}}}})
    );
    // Atomic list and atomic map: owned whole, so another applier's different value conflicts.
    let r = apply_gadget(&h, "b", json!({"tags": ["y"], "args": ["--two"]})).await;
    assert_eq!(r.code, 409);
    assert_eq!(r.body["details"]["causes"][0]["field"], ".spec.args");
    let r = h
        .patch(
            &format!("{G}/g?fieldManager=b&force=true"),
            APPLY,
            json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {"tags": ["y"], "args": ["--two"], "selector": {"other": "1"}}}),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.body["spec"]["args"], json!(["--two"]));
    assert_eq!(r.body["spec"]["selector"], json!({"other": "1"}));
    assert_eq!(
        entry(&r.body, "a", "Apply").unwrap()["fieldsV1"],
        json!({"f:spec": {"f:tags": {"v:\"x\"": {}}}})
    );
    // a drops its tag: only its value leaves the set.
    let r = apply_gadget(&h, "a", json!({})).await;
    assert_eq!(r.body["spec"]["tags"], json!(["y"]));
}

#[tokio::test]
async fn granular_maps_and_metadata_lists_are_per_key() {
    let h = gadgets().await;
    let r = h
        .patch(
            &format!("{G}/g?fieldManager=a"),
            APPLY,
            json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g", "finalizers": ["a.io/f"], "labels": {"a": "1"}}, "spec": {"env": {"A": "1"}}}),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let r = h
        .patch(
            &format!("{G}/g?fieldManager=b"),
            APPLY,
            json!({"apiVersion": "example.com/v1", "kind": "Gadget", "metadata": {"name": "g", "finalizers": ["b.io/f"], "labels": {"b": "2"},
                "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "u-1"}]}, "spec": {"env": {"B": "2"}}}),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(
        r.body["metadata"]["finalizers"],
        json!(["a.io/f", "b.io/f"])
    );
    assert_eq!(r.body["metadata"]["labels"], json!({"a": "1", "b": "2"}));
    assert_eq!(r.body["spec"]["env"], json!({"A": "1", "B": "2"}));
    let b = &entry(&r.body, "b", "Apply").unwrap()["fieldsV1"]["f:metadata"];
    assert!(b["f:finalizers"].get("v:\"b.io/f\"").is_some());
    assert!(b["f:ownerReferences"].get("k:{\"uid\":\"u-1\"}").is_some());
    // b withdraws: its finalizer, label, owner reference and env key go; a's stay.
    let r = apply_gadget(&h, "b", json!({})).await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.body["metadata"]["finalizers"], json!(["a.io/f"]));
    assert_eq!(r.body["metadata"]["labels"], json!({"a": "1"}));
    assert!(
        r.body["metadata"]
            .get("ownerReferences")
            .is_none_or(|o| o == &json!([]))
    );
    assert_eq!(r.body["spec"]["env"], json!({"A": "1"}));
}

#[tokio::test]
async fn builtin_rbac_rules_are_atomic_and_owner_references_keyed_by_uid() {
    let h = H::new();
    let path = "/apis/rbac.authorization.k8s.io/v1/clusterroles/r";
    let role = |verbs: Value| {
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "r"},
               "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": verbs}]})
    };
    let r = h
        .patch(
            &format!("{path}?fieldManager=a"),
            APPLY,
            role(json!(["get"])),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(
        entry(&r.body, "a", "Apply").unwrap()["fieldsV1"],
        json!({"f:rules": {}})
    );
    let r = h
        .patch(
            &format!("{path}?fieldManager=b"),
            APPLY,
            role(json!(["list"])),
        )
        .await;
    assert_eq!(r.code, 409);
    assert_eq!(r.body["details"]["causes"][0]["field"], ".rules");
}
