//! The OpenAPI and discovery documents, CRUD with kube's errors, and the schema pipeline with
//! fieldValidation, as kube-rs requests them.

use super::*;

/// The CRD's discovery and OpenAPI documents.
pub(super) async fn documents(rec: &mut Recorder) {
    rec.send(get("/apis/diff.example.com").accept("application/json"))
        .await;
    let group = |body: &Value| {
        let list = body["groups"]
            .as_array()
            .or(body["items"].as_array())
            .cloned()
            .unwrap_or_default();
        list.into_iter()
            .find(|g| g["name"] == GROUP || g["metadata"]["name"] == GROUP)
            .unwrap_or(Value::Null)
    };
    rec.send(
        get("/apis")
            .accept("application/json")
            .focus(group)
            .label("GET /apis: the CRD's group"),
    )
    .await;
    rec.send(
        get("/apis")
            .accept(crate::differential::discovery::ACCEPT_AGGREGATED)
            .focus(group)
            .label("GET /apis (aggregated): the CRD's group"),
    )
    .await;
    let (a, b) = rec
        .send(
            get("/openapi/v3")
                .accept("application/json")
                .until(WAIT, |r| {
                    r.body["paths"]["apis/diff.example.com/v1"].is_object()
                })
                .focus(|b| b["paths"]["apis/diff.example.com/v1"].clone())
                .label("GET /openapi/v3: the CRD's group version"),
        )
        .await;
    let _ = (a, b);
    rec.send(
        get("/openapi/v3/apis/diff.example.com/v1")
            .accept("application/json")
            .focus(|b| {
                // Everything but the shared kube definitions (ObjectMeta, …), compared below.
                let mut b = b.clone();
                if let Some(s) = b["components"]["schemas"].as_object_mut() {
                    s.retain(|k, _| k.starts_with("com.example.diff"));
                }
                b
            })
            .label("GET /openapi/v3/apis/diff.example.com/v1: paths and the CRD's schemas"),
    )
    .await;
    rec.send(
        get("/openapi/v3/apis/diff.example.com/v1")
            .accept("application/json")
            .focus(|b| {
                let mut b = b["components"]["schemas"].clone();
                if let Some(s) = b.as_object_mut() {
                    s.retain(|k, _| !k.starts_with("com.example.diff"));
                }
                b
            })
            .label("GET /openapi/v3/apis/diff.example.com/v1: kube's shared schemas"),
    )
    .await;
    rec.send(
        get("/openapi/v2")
            .accept("application/json")
            .until(WAIT, |r| {
                r.body["definitions"]["com.example.diff.v1.Widget"].is_object()
            })
            .focus(|b| {
                let defs = b["definitions"].as_object().cloned().unwrap_or_default();
                let paths = b["paths"].as_object().cloned().unwrap_or_default();
                json!({
                    "definitions": defs.into_iter().filter(|(k, _)| k.starts_with("com.example.diff")).collect::<serde_json::Map<_, _>>(),
                    "paths": paths.into_iter().filter(|(k, _)| k.starts_with("/apis/diff.example.com")).collect::<serde_json::Map<_, _>>(),
                })
            })
            .label("GET /openapi/v2: the CRD's definitions and paths"),
    )
    .await;
}

pub(super) async fn crud(rec: &mut Recorder) {
    let pp = PostParams::default();
    let w1 = widget("w1", json!({"size": "small", "replicas": 1}));
    let mut with_status = w1.clone();
    with_status["status"] = json!({"ready": true});
    rec.send(
        kube(widgets().create(&pp, bytes(with_status)).unwrap()).label("create w1 with a status"),
    )
    .await;
    rec.send(kube(widgets().create(&pp, bytes(w1.clone())).unwrap()).label("create w1 again"))
        .await;
    rec.send(
        kube(widgets().get("w1", &Default::default()).unwrap())
            .capture("w1_rv", "/metadata/resourceVersion"),
    )
    .await;
    rec.send(kube(widgets().get("nope", &Default::default()).unwrap()))
        .await;
    rec.send(
        kube(
            Request::new("/apis/diff.example.com/v1/namespaces/ghost/widgets")
                .create(&pp, bytes(widget("w1", json!({"size": "small"}))))
                .unwrap(),
        )
        .label("create in a missing namespace"),
    )
    .await;
    let mut other_ns = widget("w9", json!({"size": "small"}));
    other_ns["metadata"]["namespace"] = json!("default");
    rec.send(
        kube(widgets().create(&pp, bytes(other_ns)).unwrap())
            .label("create with another namespace in the body"),
    )
    .await;
    let generated = json!({"apiVersion": "diff.example.com/v1", "kind": "Widget",
        "metadata": {"generateName": "gen-"}, "spec": {"size": "large"}});
    rec.send(
        kube(widgets().create(&pp, bytes(generated)).unwrap()).label("create with generateName"),
    )
    .await;
    let dry = PostParams {
        dry_run: true,
        ..Default::default()
    };
    rec.send(
        kube(
            widgets()
                .create(&dry, bytes(widget("dry", json!({"size": "small"}))))
                .unwrap(),
        )
        .label("create dryRun=All"),
    )
    .await;
    rec.send(
        kube(widgets().get("dry", &Default::default()).unwrap()).label("get the dry-run object"),
    )
    .await;
    // Replace: stale, without a version, identical, changed.
    let mut stale = widget("w1", json!({"size": "large"}));
    stale["metadata"]["resourceVersion"] = json!("1");
    rec.send(
        kube(widgets().replace("w1", &pp, bytes(stale)).unwrap())
            .label("replace with a stale resourceVersion"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .replace("w1", &pp, bytes(widget("w1", json!({"size": "large"}))))
                .unwrap(),
        )
        .label("replace without a resourceVersion"),
    )
    .await;
    let mut same = widget("w1", json!({"size": "small", "replicas": 1}));
    same["metadata"]["resourceVersion"] = json!("${w1_rv}");
    rec.send(
        kube(widgets().replace("w1", &pp, bytes(same)).unwrap())
            .label("replace, identical")
            .capture("w1_rv2", "/metadata/resourceVersion"),
    )
    .await;
    let mut changed = widget("w1", json!({"size": "large", "replicas": 1}));
    changed["metadata"]["resourceVersion"] = json!("${w1_rv}");
    changed["status"] = json!({"ready": true});
    rec.send(
        kube(widgets().replace("w1", &pp, bytes(changed)).unwrap())
            .label("replace, spec changed, status ignored"),
    )
    .await;
    // Bad input.
    rec.send(post(WIDGETS, json!("not an object")).label("create with a JSON string body"))
        .await;
    rec.send(
        post(WIDGETS, json!({}))
            .raw("application/json", "{\"apiVersion\":")
            .label("create with truncated JSON"),
    )
    .await;
    rec.send(post(WIDGETS, json!({"apiVersion": "diff.example.com/v1", "kind": "Widget", "metadata": {"name": "Bad_Name"}, "spec": {"size": "small"}})).label("create with an invalid name"))
        .await;
    rec.send(post(WIDGETS, json!({"apiVersion": "diff.example.com/v1", "kind": "Gadget", "metadata": {"name": "k"}, "spec": {"size": "small"}})).label("create with the wrong kind"))
        .await;
    rec.send(post(WIDGETS, json!({"apiVersion": "diff.example.com/v1", "kind": "Widget", "metadata": {"name": "lbl", "labels": {"bad label": "x"}}, "spec": {"size": "small"}})).label("create with an invalid label"))
        .await;
}

pub(super) async fn schema(rec: &mut Recorder) {
    let pp = PostParams::default();
    for (label, spec) in [
        ("wrong type", json!({"size": "small", "replicas": "three"})),
        ("missing required", json!({"replicas": 1})),
        ("not in the enum", json!({"size": "huge"})),
        (
            "below the minimum",
            json!({"size": "small", "replicas": -1}),
        ),
        (
            "duplicate in a set",
            json!({"size": "small", "tags": ["a", "a"]}),
        ),
    ] {
        rec.send(
            kube(widgets().create(&pp, bytes(widget("bad", spec))).unwrap())
                .label(&format!("create: {label}")),
        )
        .await;
    }
    let unknown = widget(
        "u1",
        json!({"size": "small", "bogus": 1, "free": {"kept": true}}),
    );
    for (q, name) in [
        ("Strict", "u1"),
        ("Warn", "u2"),
        ("Ignore", "u3"),
        ("", "u4"),
    ] {
        let mut body = unknown.clone();
        body["metadata"]["name"] = json!(name);
        body["metadata"]["bogusMeta"] = json!(1);
        let uri = if q.is_empty() {
            WIDGETS.to_string()
        } else {
            format!("{WIDGETS}?fieldValidation={q}")
        };
        rec.send(
            post(&uri, body).label(&format!("create with unknown fields, fieldValidation={q}")),
        )
        .await;
    }
    rec.send(
        post(
            &format!("{WIDGETS}?fieldValidation=Bogus"),
            widget("u5", json!({"size": "small"})),
        )
        .label("create with fieldValidation=Bogus"),
    )
    .await;
    // A duplicate field in the JSON.
    rec.send(
        post(WIDGETS, json!({}))
            .raw(
                "application/json",
                r#"{"apiVersion":"diff.example.com/v1","kind":"Widget","metadata":{"name":"dup"},"spec":{"size":"small","size":"large"}}"#,
            )
            .label("create with a duplicate field (Strict)"),
    )
    .await;
}
