//! A CRD with two versions converted with strategy None.

use super::*;

fn gadget_crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.diff.example.com"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "conversion": {"strategy": "None"},
            "versions": [
                {"name": "v1alpha1", "served": true, "storage": false, "deprecated": true,
                 "deprecationWarning": "diff.example.com/v1alpha1 Gadget is going away",
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "color": {"type": "string", "default": "blue"},
                        "size": {"type": "string", "default": "m"},
                        "legacy": {"type": "string"}
                    }}}}}},
                {"name": "v1", "served": true, "storage": true,
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "string", "default": "large"},
                        "replicas": {"type": "integer", "default": 1},
                        "paint": {"type": "object", "properties": {"color": {"type": "string"}}}
                    }}}}}}
            ]
        }
    })
}

/// A CRD with two versions of different schemas, converted with strategy None: each version
/// reads what is stored pruned by its own schema and defaulted by it.
pub(super) async fn conversion(rec: &mut Recorder) {
    let crds = Request::new("/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
    rec.send(
        kube(
            crds.create(&PostParams::default(), bytes(gadget_crd()))
                .unwrap(),
        )
        .label("create the two-version CRD"),
    )
    .await;
    rec.send(
        kube(
            crds.get("gadgets.diff.example.com", &Default::default())
                .unwrap(),
        )
        .until(WAIT, established)
        .label("get the two-version CRD until Established"),
    )
    .await;
    let v1a = "/apis/diff.example.com/v1alpha1/namespaces/diff-kube/gadgets";
    let v1 = "/apis/diff.example.com/v1/namespaces/diff-kube/gadgets";
    rec.send(
        get(v1a)
            .until(WAIT, code(200))
            .label("list v1alpha1 until served"),
    )
    .await;
    let g = |version: &str, spec: Value| {
        json!({"apiVersion": format!("diff.example.com/{version}"), "kind": "Gadget",
            "metadata": {"name": "g1"}, "spec": spec})
    };
    rec.send(
        post(
            v1a,
            g(
                "v1alpha1",
                json!({"legacy": "x", "paint": {"color": "red"}, "replicas": 3}),
            ),
        )
        .label("create at v1alpha1 with fields of both versions"),
    )
    .await;
    rec.send(get(&format!("{v1}/g1")).label("get at v1 (storage)"))
        .await;
    rec.send(get(&format!("{v1a}/g1")).label("get at v1alpha1"))
        .await;
    rec.send(get(v1a).label("list at v1alpha1")).await;
    rec.send(get(v1).label("list at v1")).await;
    rec.send(
        patch(
            &format!("{v1}/g1"),
            "merge",
            json!({"spec": {"paint": {"color": "green"}, "legacy": "y"}}),
        )
        .label("merge patch at v1 with a v1alpha1 field"),
    )
    .await;
    rec.send(
        patch(
            &format!("{v1a}/g1"),
            "merge",
            json!({"spec": {"color": "yellow"}}),
        )
        .label("merge patch at v1alpha1"),
    )
    .await;
    rec.send(get(&format!("{v1}/g1")).label("get at v1 after the patches"))
        .await;
    rec.send(post(v1, g("v1", json!({"size": "small"}))).label("create at v1 with the name taken"))
        .await;
    let mut g2 = g("v1", json!({}));
    g2["metadata"]["name"] = json!("g2");
    rec.send(post(v1, g2).label("create at v1 with defaults only"))
        .await;
    rec.send(get(&format!("{v1a}/g2")).label("get g2 at v1alpha1"))
        .await;
    rec.send(
        get(&format!("{v1a}?watch=true&timeoutSeconds=1"))
            .watch(10, Duration::from_secs(6))
            .label("watch at v1alpha1"),
    )
    .await;
}
