//! Merge, JSON, strategic and apply patches with their conflicts, and the status and scale
//! subresources.

use super::*;

pub(super) async fn patches(rec: &mut Recorder) {
    let pp = PatchParams::default();
    rec.send(
        kube(
            widgets()
                .patch(
                    "w1",
                    &pp,
                    &Patch::Merge(json!({"metadata": {"labels": {"app": "demo"}}})),
                )
                .unwrap(),
        )
        .label("merge patch: a label"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch("w1", &pp, &Patch::Merge(json!({"spec": {"replicas": 2}})))
                .unwrap(),
        )
        .label("merge patch: the spec"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch(
                    "w1",
                    &pp,
                    &Patch::Merge(
                        json!({"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 3}}),
                    ),
                )
                .unwrap(),
        )
        .label("merge patch with a stale resourceVersion"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch("nope", &pp, &Patch::Merge(json!({"spec": {"replicas": 3}})))
                .unwrap(),
        )
        .label("merge patch of a missing object"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch("w1", &pp, &Patch::Merge(json!({"spec": {"size": "huge"}})))
                .unwrap(),
        )
        .label("merge patch to an invalid object"),
    )
    .await;
    let jp = |v: Value| Patch::<()>::Json(serde_json::from_value(v).unwrap());
    rec.send(kube(widgets().patch("w1", &pp, &jp(json!([{"op": "test", "path": "/metadata/finalizers", "value": null}, {"op": "add", "path": "/metadata/finalizers", "value": ["diff.example.com/f"]}]))).unwrap()).label("JSON patch: kube-runtime's finalizer patch"))
        .await;
    rec.send(kube(widgets().patch("w1", &pp, &jp(json!([{"op": "test", "path": "/spec/size", "value": "small"}, {"op": "replace", "path": "/spec/size", "value": "small"}]))).unwrap()).label("JSON patch whose test fails"))
        .await;
    rec.send(
        kube(
            widgets()
                .patch(
                    "w1",
                    &pp,
                    &jp(json!([{"op": "remove", "path": "/spec/nothing"}])),
                )
                .unwrap(),
        )
        .label("JSON patch removing a missing path"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch(
                    "w1",
                    &pp,
                    &jp(json!([{"op": "remove", "path": "/metadata/finalizers"}])),
                )
                .unwrap(),
        )
        .label("JSON patch removing the finalizers"),
    )
    .await;
    rec.send(
        patch(
            &format!("{WIDGETS}/w1"),
            "strategic",
            json!({"spec": {"replicas": 4}}),
        )
        .label("strategic merge patch of a custom resource"),
    )
    .await;
    rec.send(
        patch(
            &format!("{WIDGETS}/w1"),
            "application/yaml",
            json!({"spec": {"replicas": 4}}),
        )
        .label("patch with an unsupported content type"),
    )
    .await;
    // Server-side apply.
    let apply = |m: &str| PatchParams::apply(m);
    let a1 = widget(
        "a1",
        json!({"size": "small", "mode": "manual", "tags": ["x"]}),
    );
    rec.send(
        patch(&format!("{WIDGETS}/a1"), "apply", a1.clone()).label("apply without fieldManager"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch("a1", &apply("alice"), &Patch::Apply(a1.clone()))
                .unwrap(),
        )
        .label("apply creates (alice)"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch(
                    "a1",
                    &apply("bob"),
                    &Patch::Apply(widget("a1", json!({"size": "large"}))),
                )
                .unwrap(),
        )
        .label("apply a field alice owns (bob): conflict"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch(
                    "a1",
                    &apply("bob").force(),
                    &Patch::Apply(widget("a1", json!({"size": "large", "tags": ["y"]}))),
                )
                .unwrap(),
        )
        .label("apply with force (bob)"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch(
                    "a1",
                    &apply("alice"),
                    &Patch::Apply(widget("a1", json!({"size": "large", "tags": ["x"]}))),
                )
                .unwrap(),
        )
        .label("re-apply without mode (alice): removed, defaulted"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch(
                    "a1",
                    &apply("alice").dry_run(),
                    &Patch::Apply(widget("a1", json!({"size": "small"}))),
                )
                .unwrap(),
        )
        .label("apply dryRun (alice)"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch(
                    "a1",
                    &apply("carol"),
                    &Patch::Apply(widget("a1", json!({"size": "large", "extra": 1}))),
                )
                .unwrap(),
        )
        .label("apply with an unknown field (kube-rs sends no fieldValidation)"),
    )
    .await;
    rec.send(
        patch(
            &format!("{WIDGETS}/a1?fieldManager=carol&fieldValidation=Strict"),
            "apply",
            widget("a1", json!({"size": "large", "extra": 1})),
        )
        .label("apply with an unknown field, Strict"),
    )
    .await;
    rec.send(
        patch(&format!("{WIDGETS}/a1?fieldManager=carol"), "apply", json!({}))
            .raw("application/apply-patch+yaml", "apiVersion: diff.example.com/v1\nkind: Widget\nmetadata:\n  name: a1\nspec:\n  size: large\n  replicas: 7\n")
            .label("apply as YAML (carol)"),
    )
    .await;
    rec.send(
        patch(
            &format!("{WIDGETS}/a1?fieldManager=carol"),
            "apply",
            json!({}),
        )
        .raw(
            "application/apply-patch+yaml",
            "apiVersion: diff.example.com/v1\nkind: Widget\nmetadata:\n  name: a1\nspec: [\n",
        )
        .label("apply with broken YAML"),
    )
    .await;
    rec.send(kube(widgets().patch("a1", &apply("dave"), &Patch::Apply(json!({"apiVersion": "diff.example.com/v1", "kind": "Widget", "metadata": {"name": "other"}, "spec": {"size": "large"}}))).unwrap()).label("apply with another name in the body"))
        .await;
}

pub(super) async fn subresources(rec: &mut Recorder) {
    let pp = PatchParams::default();
    rec.send(kube(widgets().get_subresource("status", "w1").unwrap()))
        .await;
    rec.send(kube(widgets().patch_subresource("status", "w1", &pp, &Patch::Merge(json!({"spec": {"replicas": 9}, "status": {"replicas": 2, "selector": "app=demo", "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-01-01T00:00:00Z", "reason": "Up", "message": "up"}]}}))).unwrap()).label("status patch changing spec and status"))
        .await;
    let (a, b) = rec
        .send(
            kube(widgets().get("w1", &Default::default()).unwrap())
                .capture("w1_rv", "/metadata/resourceVersion")
                .label("get after the status patch"),
        )
        .await;
    let _ = (a, b);
    let mut st = widget("w1", json!({"size": "small"}));
    st["metadata"]["resourceVersion"] = json!("${w1_rv}");
    st["status"] = json!({"replicas": 3, "selector": "app=demo"});
    rec.send(
        kube(
            widgets()
                .replace_subresource("status", "w1", &PostParams::default(), bytes(st))
                .unwrap(),
        )
        .label("status replace"),
    )
    .await;
    rec.send(kube(widgets().patch_subresource("status", "w1", &apply_pp("statusmgr"), &Patch::Apply(json!({"apiVersion": "diff.example.com/v1", "kind": "Widget", "metadata": {"name": "w1"}, "status": {"observed": 1}}))).unwrap()).label("status apply"))
        .await;
    rec.send(kube(widgets().get_subresource("scale", "w1").unwrap()))
        .await;
    rec.send(
        kube(
            widgets()
                .patch_subresource(
                    "scale",
                    "w1",
                    &pp,
                    &Patch::Merge(json!({"spec": {"replicas": 5}})),
                )
                .unwrap(),
        )
        .label("scale patch"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch_subresource(
                    "scale",
                    "w1",
                    &pp,
                    &Patch::Merge(json!({"spec": {"replicas": -1}})),
                )
                .unwrap(),
        )
        .label("scale patch below the minimum"),
    )
    .await;
    rec.send(
        kube(widgets().get_subresource("scale", "nope").unwrap())
            .label("scale of a missing object"),
    )
    .await;
    rec.send(get(&format!("{WIDGETS}/w1/bogus")).label("GET an unknown subresource"))
        .await;
    rec.send(
        kube(widgets().get("w1", &Default::default()).unwrap()).label("get after the scale patch"),
    )
    .await;
    rec.send(
        get(&format!("{WIDGETS}?limit=500"))
            .accept("application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json")
            .focus(without_ages)
            .label("list as a Table (ages left out)"),
    )
    .await;
    rec.send(
        get(&format!("{WIDGETS}/w1"))
            .accept("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1")
            .label("get as PartialObjectMetadata"),
    )
    .await;
    rec.send(
        get(WIDGETS)
            .accept("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1")
            .label("list as PartialObjectMetadataList"),
    )
    .await;
    rec.send(
        get(&format!("{WIDGETS}/w1"))
            .accept("application/yaml")
            .label("get with Accept: application/yaml"),
    )
    .await;
    rec.send(
        get(&format!("{WIDGETS}/w1"))
            .accept("text/html")
            .label("get with an unacceptable Accept"),
    )
    .await;
}

fn apply_pp(m: &str) -> PatchParams {
    PatchParams::apply(m)
}

/// A Table without its AGE cells (the time between the object's creation and the answer).
fn without_ages(body: &Value) -> Value {
    let mut b = body.clone();
    let age = b["columnDefinitions"]
        .as_array()
        .and_then(|c| c.iter().position(|d| d["name"] == "Age"));
    for r in b["rows"].as_array_mut().into_iter().flatten() {
        if let (Some(i), Some(cells)) = (age, r["cells"].as_array_mut())
            && i < cells.len()
        {
            cells[i] = json!("<age>");
        }
        // A generated name (the row's object says it was generated; the cell does not).
        if let Some(Value::String(n)) = r["cells"].get_mut(0)
            && n.starts_with("gen-")
            && n.len() == 9
        {
            *n = "gen-<suffix>".into();
        }
    }
    b
}
