//! Server-side apply with structured-merge-diff list semantics: map lists merged by key, set
//! lists by value, atomic lists replaced, granular maps, built-in list types.

use serde_json::{Value, json};

use super::common::*;
use super::managed_fields::entry;

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

/// Built-in kinds' lists merge as kube-apiserver merges them (built-in schemas used
/// by server-side apply): two managers applying different containers to one Deployment each
/// own theirs (`containers` keyed by `name`), a port is keyed by `containerPort` and its
/// defaulted `protocol`, `env` by `name`, and `tolerations` stay atomic. With every built-in
/// list atomic, the second apply was a conflict on `.spec.template.spec.containers`.
#[tokio::test]
async fn builtin_deployment_lists_merge_by_their_kube_keys() {
    let h = H::new();
    let path = "/apis/apps/v1/namespaces/default/deployments/web";
    let apply = |manager: &'static str, containers: Value, tolerations: Value| {
        let body = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
               "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
                   "metadata": {"labels": {"app": "web"}},
                   "spec": {"containers": containers, "tolerations": tolerations}}}});
        let (h, path) = (&h, format!("{path}?fieldManager={manager}"));
        async move { h.patch(&path, APPLY, body).await }
    };
    let r = apply(
        "a",
        json!([{"name": "app", "image": "nginx:1.25", "ports": [{"containerPort": 80}],
                    "env": [{"name": "A", "value": "1"}]}]),
        json!([{"key": "a", "operator": "Exists"}]),
    )
    .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let pod = &entry(&r.body, "a", "Apply").unwrap()["fieldsV1"]["f:spec"]["f:template"]["f:spec"];
    let app = &pod["f:containers"]["k:{\"name\":\"app\"}"];
    assert!(app.get("f:image").is_some(), "{pod}");
    assert!(
        app["f:ports"]
            .get("k:{\"containerPort\":80,\"protocol\":\"TCP\"}")
            .is_some(),
        "{pod}"
    );
    assert!(app["f:env"].get("k:{\"name\":\"A\"}").is_some(), "{pod}");
    assert_eq!(pod["f:tolerations"], json!({}), "{pod}");
    // A second manager adds a sidecar: merged by name, no conflict.
    let r = apply(
        "b",
        json!([{"name": "sidecar", "image": "busybox:1.36"}]),
        json!([{"key": "a", "operator": "Exists"}]),
    )
    .await;
    assert_eq!(r.code, 200, "{}", r.body);
    let names: Vec<&str> = r.body["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(names, ["app", "sidecar"]);
    // The same port applied again with its protocol spelled out is the same item.
    let r = apply(
        "a",
        json!([{"name": "app", "image": "nginx:1.25",
                    "ports": [{"containerPort": 80, "protocol": "TCP"}],
                    "env": [{"name": "A", "value": "1"}]}]),
        json!([{"key": "a", "operator": "Exists"}]),
    )
    .await;
    assert_eq!(r.code, 200, "{}", r.body);
    let ports = &r.body["spec"]["template"]["spec"]["containers"][0]["ports"];
    assert_eq!(ports.as_array().map(Vec::len), Some(1), "{ports}");
    // Tolerations are atomic: a different list from another manager conflicts.
    let r = apply(
        "b",
        json!([{"name": "sidecar", "image": "busybox:1.36"}]),
        json!([{"key": "b", "operator": "Exists"}]),
    )
    .await;
    assert_eq!(r.code, 409, "{}", r.body);
    assert_eq!(
        r.body["details"]["causes"][0]["field"],
        ".spec.template.spec.tolerations"
    );
}
