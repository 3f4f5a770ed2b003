//! docs/embedded-apiserver.md §7 checks 35–41.

use serde_json::json;

use super::common::*;

#[tokio::test]
async fn check_35_smp_on_cr_is_415() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small"})).await;
    let r = h
        .patch(&format!("{W}/w1"), SMP, json!({"spec": {"size": "large"}}))
        .await;
    assert_eq!(r.code, 415);
    assert_eq!(r.body["reason"], "UnsupportedMediaType");
    let m = r.body["message"].as_str().unwrap();
    for t in [
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/apply-patch+yaml",
    ] {
        assert!(m.contains(t), "{m}");
    }
    assert!(!m.contains("strategic"));
}

#[tokio::test]
async fn check_36_kube_runtime_finalizer_json_patch() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small"})).await;
    let r = h
        .patch(
            &format!("{W}/w1"),
            JSONPATCH,
            json!([
                {"op": "test", "path": "/metadata/finalizers", "value": null},
                {"op": "add", "path": "/metadata/finalizers", "value": ["example.com/cleanup"]}
            ]),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(
        r.body["metadata"]["finalizers"],
        json!(["example.com/cleanup"])
    );
}

#[tokio::test]
async fn check_37_failed_test_is_422() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small"})).await;
    let r = h
        .patch(
            &format!("{W}/w1"),
            JSONPATCH,
            json!([{"op": "test", "path": "/spec/size", "value": "large"}]),
        )
        .await;
    assert_eq!(r.code, 422);
    // kube-apiserver: `NewGenericServerResponse(422, …)`, the generic text only (clients such
    // as kopf tell a lost resourceVersion race by the 422; the patch library's error is not
    // in the Status).
    assert_eq!(
        r.body["message"],
        "the server rejected our request due to an error in our request"
    );
    assert_eq!(r.body["reason"], "Invalid");
    assert_eq!(r.body["details"], json!({}));
}

#[tokio::test]
async fn check_38_merge_patch_with_stale_rv() {
    let h = H::widgets().await;
    let w = h.widget("w1", json!({"size": "small"})).await;
    h.patch(
        &format!("{W}/w1"),
        MERGE,
        json!({"metadata": {"labels": {"a": "b"}}}),
    )
    .await;
    let r = h.patch(&format!("{W}/w1"), MERGE, json!({"metadata": {"resourceVersion": w["metadata"]["resourceVersion"]}, "spec": {"size": "large"}})).await;
    assert_eq!(r.code, 409);
}

#[tokio::test]
async fn check_39_smp_on_configmap_with_directives() {
    let h = H::new();
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {"a": "1", "b": "2"}, "finalizers": ["x.io/one", "x.io/two"]}, "data": {"k1": "v1", "k2": "v2"}});
    assert_eq!(
        h.post("/api/v1/namespaces/default/configmaps", cm)
            .await
            .code,
        201
    );
    let patch = json!({"data": {"k1": "v1b", "k2": null}, "metadata": {
        "$deleteFromPrimitiveList/finalizers": ["x.io/one"],
        "$setElementOrder/finalizers": ["x.io/two"],
        "finalizers": ["x.io/two"],
        "labels": {"b": null}}});
    let r = h
        .patch("/api/v1/namespaces/default/configmaps/c", SMP, patch)
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.body["data"], json!({"k1": "v1b"}));
    assert_eq!(r.body["metadata"]["finalizers"], json!(["x.io/two"]));
    assert_eq!(r.body["metadata"]["labels"], json!({"a": "1"}));
    assert!(!r.body.to_string().contains('$'));
}

#[tokio::test]
async fn check_40_server_side_apply_baseline() {
    let h = H::widgets().await;
    let doc = json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": "small", "mode": "manual"}});
    let r = h.patch(&format!("{W}/w1"), APPLY, doc.clone()).await;
    assert_eq!(r.code, 422);
    let r = h.patch(&format!("{W}/w1?fieldManager=m"), APPLY, doc).await;
    assert_eq!(r.code, 201, "{}", r.body);
    let mf = &r.body["metadata"]["managedFields"][0];
    assert_eq!(
        (mf["manager"].as_str(), mf["operation"].as_str()),
        (Some("m"), Some("Apply"))
    );
    assert_eq!(mf["fieldsType"], "FieldsV1");
    let r = h
        .patch(&format!("{W}/w1?fieldManager=m"), APPLY, json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": "small"}}))
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(
        r.body["spec"]["mode"], "auto",
        "field removed then defaulted"
    );
}

#[tokio::test]
async fn check_41_apply_conflicts_and_force() {
    let h = H::widgets().await;
    let doc = |size: &str| json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": size}});
    assert_eq!(
        h.patch(&format!("{W}/w1?fieldManager=a"), APPLY, doc("small"))
            .await
            .code,
        201
    );
    let r = h
        .patch(&format!("{W}/w1?fieldManager=b"), APPLY, doc("large"))
        .await;
    assert_eq!(r.code, 409);
    assert_eq!(r.body["reason"], "Conflict");
    assert!(
        causes(&r.body)
            .iter()
            .any(|(f, reason)| f == ".spec.size" && reason == "FieldManagerConflict")
    );
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .starts_with("Apply failed with 1 conflict: conflict with \"a\"")
    );
    let r = h
        .patch(
            &format!("{W}/w1?fieldManager=b&force=true"),
            APPLY,
            doc("large"),
        )
        .await;
    assert_eq!(r.code, 200);
    assert_eq!(r.body["spec"]["size"], "large");
    let owners: Vec<&str> = r.body["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["fieldsV1"]["f:spec"].get("f:size").is_some())
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(owners, ["b"]);
    // force on a non-apply patch → 422.
    assert_eq!(
        h.patch(&format!("{W}/w1?force=true"), MERGE, json!({}))
            .await
            .code,
        422
    );
}

/// Merge patches of one object from many tasks at once (each computed outside the store lock and
/// committed only if the object is unchanged, else recomputed) lose no update: every key lands,
/// and every response carries its own key and a resourceVersion no other write got.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_merge_patches_lose_no_update() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small"})).await;
    let (tasks_n, per_task) = (8, 25);
    let mut tasks = Vec::new();
    for i in 0..tasks_n {
        let h = H {
            server: h.server.clone(),
        };
        tasks.push(tokio::spawn(async move {
            let mut rvs = Vec::new();
            for j in 0..per_task {
                let key = format!("k{i}-{j}");
                let r = h
                    .patch(
                        &format!("{W}/w1"),
                        MERGE,
                        json!({"metadata": {"labels": {key.clone(): "v"}}}),
                    )
                    .await;
                assert_eq!(r.code, 200, "{}", r.body);
                assert_eq!(r.body["metadata"]["labels"][&key], "v", "{}", r.body);
                rvs.push(r.body["metadata"]["resourceVersion"].to_string());
            }
            rvs
        }));
    }
    let mut rvs = std::collections::BTreeSet::new();
    for t in tasks {
        for rv in t.await.unwrap() {
            assert!(rvs.insert(rv.clone()), "resourceVersion {rv} given twice");
        }
    }
    assert_eq!(rvs.len(), tasks_n * per_task);
    let obj = h.get(&format!("{W}/w1")).await.body;
    let labels = obj["metadata"]["labels"].as_object().unwrap();
    for i in 0..tasks_n {
        for j in 0..per_task {
            assert!(labels.contains_key(&format!("k{i}-{j}")), "k{i}-{j} lost");
        }
    }
}
