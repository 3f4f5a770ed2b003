//! Remaining surface: other built-ins, periodic bookmarks, PUT /scale, delete preconditions,
//! deletecollection, multi-version CRDs.

use std::time::Duration;

use axum::http::Method;
use embedded_apiserver::ServerOptions;
use serde_json::json;

use super::common::*;

#[tokio::test]
async fn events_leases_and_rbac_kinds_crud() {
    let h = H::new();
    for (path, body) in [
        (
            "/apis/events.k8s.io/v1/namespaces/default/events",
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e1"}, "eventTime": "2026-01-01T00:00:00.000000Z", "reason": "R", "action": "A", "reportingController": "c", "reportingInstance": "i", "type": "Normal"}),
        ),
        (
            "/api/v1/namespaces/default/events",
            json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e2"}, "involvedObject": {"kind": "Pod", "name": "p"}, "reason": "R"}),
        ),
        (
            "/apis/coordination.k8s.io/v1/namespaces/default/leases",
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}, "spec": {"holderIdentity": "me"}}),
        ),
        (
            "/api/v1/namespaces/default/serviceaccounts",
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}}),
        ),
        (
            "/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "r"}, "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get"]}]}),
        ),
    ] {
        let r = h.post(path, body).await;
        assert_eq!(r.code, 201, "{path}: {}", r.body);
        let name = r.body["metadata"]["name"].as_str().unwrap().to_string();
        assert_eq!(h.get(&format!("{path}/{name}")).await.code, 200);
        let p = h
            .patch(
                &format!("{path}/{name}"),
                MERGE,
                json!({"metadata": {"labels": {"x": "y"}}}),
            )
            .await;
        assert_eq!(p.code, 200, "{path}: {}", p.body);
        assert_eq!(h.delete(&format!("{path}/{name}")).await.code, 200);
    }
    let r = h
        .get("/api/v1/events?fieldSelector=involvedObject.name%3Dp")
        .await;
    assert_eq!(r.code, 200);
}

#[tokio::test]
async fn periodic_bookmarks_when_allowed() {
    let h = H::with(ServerOptions {
        bookmark_interval: Duration::from_millis(100),
        ..ServerOptions::default()
    });
    h.install_widgets().await;
    let list = h.get(W).await.body;
    let lrv = list["metadata"]["resourceVersion"].as_str().unwrap();
    let mut w = h
        .watch(&format!(
            "{W}?watch=true&allowWatchBookmarks=true&resourceVersion={lrv}"
        ))
        .await;
    let b = w.next().await;
    assert_eq!(b["type"], "BOOKMARK");
    assert_eq!(b["object"]["kind"], "Widget");
    let mut quiet = h
        .watch(&format!("{W}?watch=true&resourceVersion={lrv}"))
        .await;
    assert!(
        quiet
            .next_within(Duration::from_millis(300))
            .await
            .is_none(),
        "no bookmarks unless allowed"
    );
}

#[tokio::test]
async fn put_scale_with_rv_precondition() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small", "replicas": 1}))
        .await;
    let mut scale = h.get(&format!("{W}/w1/scale")).await.body;
    scale["spec"]["replicas"] = json!(4);
    let r = h.put(&format!("{W}/w1/scale"), scale.clone()).await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(r.body["spec"]["replicas"], 4);
    let r = h.put(&format!("{W}/w1/scale"), scale).await;
    assert_eq!(r.code, 409, "stale Scale RV");
}

#[tokio::test]
async fn delete_preconditions() {
    let h = H::widgets().await;
    let w = h.widget("w1", json!({"size": "small"})).await;
    let r = h
        .delete_with(
            &format!("{W}/w1"),
            json!({"preconditions": {"uid": "other"}}),
        )
        .await;
    assert_eq!(r.code, 409);
    let r = h
        .delete_with(
            &format!("{W}/w1"),
            json!({"preconditions": {"resourceVersion": "1"}}),
        )
        .await;
    assert_eq!(r.code, 409);
    let r = h
        .delete_with(
            &format!("{W}/w1"),
            json!({"preconditions": {"uid": w["metadata"]["uid"]}}),
        )
        .await;
    assert_eq!(r.code, 200);
    let r = h
        .delete_with(&format!("{W}/w2"), json!({"propagationPolicy": "Sideways"}))
        .await;
    assert_eq!(r.code, 422);
}

#[tokio::test]
async fn delete_collection_by_label() {
    let h = H::widgets().await;
    for (n, app) in [("a", "x"), ("b", "x"), ("c", "y")] {
        h.post(W, json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": n, "labels": {"app": app}}, "spec": {"size": "small"}})).await;
    }
    let r = h
        .send(
            Method::DELETE,
            &format!("{W}?labelSelector=app%3Dx"),
            "",
            None,
        )
        .await;
    assert_eq!(r.code, 200);
    let names: Vec<String> = h.get(W).await.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(names, ["c"]);
}

#[tokio::test]
async fn multi_version_crd() {
    let h = H::new();
    let mut crd = widget_crd();
    let v1 = crd["spec"]["versions"][0].clone();
    let mut beta = v1.clone();
    beta["name"] = json!("v1beta1");
    beta["storage"] = json!(false);
    beta["deprecated"] = json!(true);
    beta["deprecationWarning"] =
        json!("example.com/v1beta1 Widget is deprecated; use example.com/v1");
    let mut hidden = v1.clone();
    hidden["name"] = json!("v1alpha1");
    hidden["storage"] = json!(false);
    hidden["served"] = json!(false);
    crd["spec"]["versions"] = json!([v1, beta, hidden]);
    assert_eq!(
        h.post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            crd
        )
        .await
        .code,
        201
    );
    h.server
        .wait_established("widgets.example.com", Duration::from_secs(5))
        .await
        .unwrap();
    let g = h.get("/apis/example.com").await.body;
    assert_eq!(g["preferredVersion"]["version"], "v1");
    assert_eq!(g["versions"].as_array().unwrap().len(), 2);
    assert_eq!(h.get("/apis/example.com/v1alpha1").await.code, 404);
    let r = h.post("/apis/example.com/v1beta1/namespaces/default/widgets", json!({"apiVersion": "example.com/v1beta1", "kind": "Widget", "metadata": {"name": "w1"}, "spec": {"size": "small"}})).await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert!(r.header("warning").contains("deprecated"));
    let via_v1 = h.get(&format!("{W}/w1")).await.body;
    assert_eq!(via_v1["apiVersion"], "example.com/v1");
    let crd = h
        .get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
        .await
        .body;
    assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
}

#[tokio::test]
async fn many_watchers_each_see_every_event() {
    let h = H::widgets().await;
    h.widget("target", json!({"size": "small", "replicas": 0}))
        .await;
    let mut watches = Vec::new();
    for _ in 0..100 {
        let mut w = h
            .watch(&format!(
                "{W}?watch=true&fieldSelector=metadata.name%3Dtarget&allowWatchBookmarks=true"
            ))
            .await;
        assert_eq!(w.next().await["type"], "ADDED");
        // A watch from no version with bookmarks is a watch list (kube ≥ 1.34's defaulting):
        // its initial events end with the initial-events-end bookmark.
        let end = w.next().await;
        assert_eq!(end["type"], "BOOKMARK");
        assert_eq!(
            end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
            "true"
        );
        watches.push(w);
    }
    for i in 1..=50 {
        h.patch(
            &format!("{W}/target"),
            MERGE,
            json!({"spec": {"replicas": i}}),
        )
        .await;
        for w in watches.iter_mut() {
            let e = w.next().await;
            assert_eq!(e["type"], "MODIFIED");
            assert_eq!(e["object"]["spec"]["replicas"], i);
        }
    }
}
