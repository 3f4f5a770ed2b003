//! A kube-rs sequence, as the requests `kube::core::Request` builds (the query strings, content
//! types and bodies of `Api::create`, `get`, `list`, `watch`, `patch`, `replace`, `delete`, …),
//! plus raw requests where a check needs a body kube-rs would not send: a CRD and its
//! establishment, CRUD and kube's errors, the schema pipeline and fieldValidation, merge, JSON,
//! strategic and apply patches with conflicts, the status and scale subresources, lists with
//! limit/continue, watches (from a version, with bookmarks, initial events, selectors, a too
//! old version), deletion with finalizers and propagation, namespace and CRD deletion, and a
//! CRD with two versions converted with strategy None.

use std::time::Duration;

use kube::api::{DeleteParams, ListParams, Patch, PatchParams, PostParams, WatchParams};
use kube::core::Request;
use serde_json::{Value, json};

use super::harness::{Recorder, Resp, delete, get, kube, patch, post};

const NS: &str = "diff-kube";
const GROUP: &str = "diff.example.com";
const WIDGETS: &str = "/apis/diff.example.com/v1/namespaces/diff-kube/widgets";

fn widgets() -> Request {
    Request::new(WIDGETS)
}

fn bytes(v: Value) -> Vec<u8> {
    serde_json::to_vec(&v).unwrap()
}

fn widget(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "diff.example.com/v1", "kind": "Widget",
        "metadata": {"name": name, "namespace": NS}, "spec": spec})
}

fn crd() -> Value {
    json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.diff.example.com"},
        "spec": {
            "group": GROUP,
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget",
                "shortNames": ["dwd"], "categories": ["all"]},
            "versions": [{
                "name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas",
                    "statusReplicasPath": ".status.replicas", "labelSelectorPath": ".status.selector"}},
                "additionalPrinterColumns": [{"name": "Size", "type": "string", "jsonPath": ".spec.size"}],
                "selectableFields": [{"jsonPath": ".spec.size"}],
                "schema": {"openAPIV3Schema": {
                    "type": "object",
                    "properties": {
                        "spec": {"type": "object", "required": ["size"], "properties": {
                            "replicas": {"type": "integer", "minimum": 0},
                            "size": {"type": "string", "enum": ["small", "large"]},
                            "mode": {"type": "string", "default": "auto"},
                            "tags": {"type": "array", "items": {"type": "string"},
                                "x-kubernetes-list-type": "set"},
                            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                        }},
                        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}
                    }
                }}
            }]
        }
    })
}

/// True once the CRD answers with Established=True.
fn established(r: &Resp) -> bool {
    r.body["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Established" && c["status"] == "True")
}

fn code(n: u16) -> impl Fn(&Resp) -> bool + Send + Sync + 'static {
    move |r: &Resp| r.status == n
}

const WAIT: Duration = Duration::from_secs(20);

pub async fn run(rec: &mut Recorder) {
    rec.trace("kube-rs");
    setup(rec).await;
    documents(rec).await;
    crud(rec).await;
    schema(rec).await;
    patches(rec).await;
    subresources(rec).await;
    lists(rec).await;
    watches(rec).await;
    deletion(rec).await;
    conversion(rec).await;
    builtins(rec).await;
    teardown(rec).await;
}

async fn setup(rec: &mut Recorder) {
    let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NS}});
    rec.send(kube(
        Request::new("/api/v1/namespaces")
            .create(&PostParams::default(), bytes(ns))
            .unwrap(),
    ))
    .await;
    let crds = Request::new("/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
    rec.send(kube(
        crds.create(&PostParams::default(), bytes(crd())).unwrap(),
    ))
    .await;
    rec.send(
        kube(
            crds.get("widgets.diff.example.com", &Default::default())
                .unwrap(),
        )
        .until(WAIT, established)
        .label("GET the CRD until Established"),
    )
    .await;
    rec.send(
        get("/apis/diff.example.com/v1")
            .accept("application/json")
            .until(WAIT, code(200)),
    )
    .await;
}

/// The CRD's discovery and OpenAPI documents.
async fn documents(rec: &mut Recorder) {
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
            .accept(super::discovery::ACCEPT_AGGREGATED)
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

async fn crud(rec: &mut Recorder) {
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

async fn schema(rec: &mut Recorder) {
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

async fn patches(rec: &mut Recorder) {
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

async fn subresources(rec: &mut Recorder) {
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

async fn lists(rec: &mut Recorder) {
    for name in ["l1", "l2", "l3"] {
        let mut w = widget(
            name,
            json!({"size": if name == "l2" {"large"} else {"small"}}),
        );
        w["metadata"]["labels"] = json!({"env": name, "tier": "list"});
        rec.send(
            kube(widgets().create(&PostParams::default(), bytes(w)).unwrap())
                .label(&format!("create {name}")),
        )
        .await;
    }
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().labels("tier=list").limit(2))
                .unwrap(),
        )
        .capture("cont", "/metadata/continue")
        .label("list limit=2"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(
                    &ListParams::default()
                        .labels("tier=list")
                        .limit(2)
                        .continue_token("${cont}"),
                )
                .unwrap(),
        )
        .label("list limit=2, continued"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().continue_token("garbage"))
                .unwrap(),
        )
        .label("list with a bad continue token"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().labels("env in (l1,l3),!missing"))
                .unwrap(),
        )
        .label("list: set-based selector"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().labels("env in l1"))
                .unwrap(),
        )
        .label("list: malformed selector"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().fields("metadata.name=l2"))
                .unwrap(),
        )
        .label("list: field selector on the name"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().fields("spec.size=large"))
                .unwrap(),
        )
        .label("list: field selector on a selectable field"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().fields("spec.mode=auto"))
                .unwrap(),
        )
        .label("list: field selector on another field"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().match_any().labels("tier=list"))
                .unwrap(),
        )
        .label("list resourceVersion=0 NotOlderThan"),
    )
    .await;
    rec.send(
        get(&format!(
            "{WIDGETS}?resourceVersion=1&resourceVersionMatch=Exact&labelSelector=tier%3Dlist"
        ))
        .label("list at an exact old resourceVersion"),
    )
    .await;
    rec.send(
        get(&format!("{WIDGETS}?resourceVersionMatch=NotOlderThan"))
            .label("list with resourceVersionMatch and no resourceVersion"),
    )
    .await;
    rec.send(
        get("/apis/diff.example.com/v1/widgets?labelSelector=tier%3Dlist")
            .label("list across namespaces"),
    )
    .await;
    rec.send(
        get("/apis/diff.example.com/v1/namespaces/empty-ns/widgets")
            .label("list in a namespace that does not exist"),
    )
    .await;
}

async fn watches(rec: &mut Recorder) {
    let (a, b) = rec
        .send(
            kube(
                widgets()
                    .list(&ListParams::default().labels("watch=yes"))
                    .unwrap(),
            )
            .capture("wrv", "/metadata/resourceVersion")
            .label("list before the watched changes"),
        )
        .await;
    let _ = (a, b);
    let pp = PostParams::default();
    let mut w = widget("wa", json!({"size": "small"}));
    w["metadata"]["labels"] = json!({"watch": "yes"});
    rec.send(kube(widgets().create(&pp, bytes(w)).unwrap()).label("create wa"))
        .await;
    let mp = PatchParams::default();
    rec.send(
        kube(
            widgets()
                .patch("wa", &mp, &Patch::Merge(json!({"spec": {"replicas": 1}})))
                .unwrap(),
        )
        .label("patch wa"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch(
                    "wa",
                    &mp,
                    &Patch::Merge(json!({"metadata": {"labels": {"watch": "no"}}})),
                )
                .unwrap(),
        )
        .label("relabel wa out"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch(
                    "wa",
                    &mp,
                    &Patch::Merge(json!({"metadata": {"labels": {"watch": "yes"}}})),
                )
                .unwrap(),
        )
        .label("relabel wa back"),
    )
    .await;
    rec.send(kube(widgets().delete("wa", &DeleteParams::default()).unwrap()).label("delete wa"))
        .await;
    let within = Duration::from_secs(6);
    // kube-runtime's watcher: from the list's version, with bookmarks.
    let wp = WatchParams::default().timeout(1).labels("watch=yes");
    rec.send(
        kube(widgets().watch(&wp, "${wrv}").unwrap())
            .watch(20, within)
            .label("watch from a list's version, labelSelector, bookmarks"),
    )
    .await;
    let all = WatchParams::default()
        .timeout(1)
        .disable_bookmarks()
        .fields("metadata.name=wa");
    rec.send(
        kube(widgets().watch(&all, "${wrv}").unwrap())
            .watch(20, within)
            .label("watch from a list's version, fieldSelector, no bookmarks"),
    )
    .await;
    let any = WatchParams::default().timeout(1).labels("tier=list");
    rec.send(
        kube(widgets().watch(&any, "0").unwrap())
            .watch(20, within)
            .label("watch from 0"),
    )
    .await;
    rec.send(
        get(&format!(
            "{WIDGETS}?watch=true&timeoutSeconds=1&labelSelector=tier%3Dlist"
        ))
        .watch(20, within)
        .label("watch without a version"),
    )
    .await;
    rec.send(get(&format!("{WIDGETS}?watch=true&timeoutSeconds=1&allowWatchBookmarks=true&labelSelector=tier%3Dlist")).watch(20, within).label("watch without a version, bookmarks"))
        .await;
    let streaming = WatchParams::streaming_lists()
        .timeout(1)
        .labels("tier=list");
    rec.send(
        kube(widgets().watch(&streaming, "0").unwrap())
            .watch(20, within)
            .label("watch with sendInitialEvents (streaming list)"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .watch(&WatchParams::default().timeout(1), "1")
                .unwrap(),
        )
        .watch(5, within)
        .label("watch from a too old version"),
    )
    .await;
    rec.send(
        get(&format!(
            "{WIDGETS}?watch=true&timeoutSeconds=1&fieldSelector=spec.mode%3Dauto"
        ))
        .watch(5, within)
        .label("watch with an unsupported field selector"),
    )
    .await;
    rec.send(
        get(&format!(
            "{WIDGETS}?watch=true&timeoutSeconds=1&resourceVersion=notanumber"
        ))
        .watch(5, within)
        .label("watch from a malformed version"),
    )
    .await;
    rec.send(
        get(&format!(
            "{WIDGETS}?watch=true&timeoutSeconds=1&sendInitialEvents=true&resourceVersion=0"
        ))
        .watch(5, within)
        .label("watch with sendInitialEvents and no resourceVersionMatch"),
    )
    .await;
}

async fn deletion(rec: &mut Recorder) {
    let pp = PostParams::default();
    rec.send(
        kube(widgets().delete("l3", &DeleteParams::default()).unwrap())
            .label("delete without finalizers"),
    )
    .await;
    rec.send(
        kube(widgets().delete("l3", &DeleteParams::default()).unwrap())
            .label("delete a missing object"),
    )
    .await;
    let mut f = widget("fin", json!({"size": "small"}));
    f["metadata"]["finalizers"] = json!(["diff.example.com/hold"]);
    rec.send(kube(widgets().create(&pp, bytes(f)).unwrap()).label("create fin with a finalizer"))
        .await;
    rec.send(
        kube(widgets().delete("fin", &DeleteParams::default()).unwrap()).label("delete fin: held"),
    )
    .await;
    rec.send(
        kube(widgets().delete("fin", &DeleteParams::default()).unwrap()).label("delete fin again"),
    )
    .await;
    let mp = PatchParams::default();
    rec.send(kube(widgets().patch("fin", &mp, &Patch::Merge(json!({"metadata": {"finalizers": ["diff.example.com/hold", "diff.example.com/more"]}}))).unwrap()).label("add a finalizer while deleting"))
        .await;
    rec.send(
        kube(
            widgets()
                .patch("fin", &mp, &Patch::Merge(json!({"spec": {"replicas": 3}})))
                .unwrap(),
        )
        .label("change the spec while deleting"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .patch(
                    "fin",
                    &mp,
                    &Patch::Merge(json!({"metadata": {"finalizers": null}})),
                )
                .unwrap(),
        )
        .label("remove the last finalizer"),
    )
    .await;
    rec.send(
        kube(widgets().get("fin", &Default::default()).unwrap())
            .until(WAIT, code(404))
            .label("get fin until gone"),
    )
    .await;
    // Preconditions.
    let (a, b) = rec
        .send(
            kube(widgets().get("l1", &Default::default()).unwrap())
                .capture("l1_uid", "/metadata/uid")
                .label("get l1"),
        )
        .await;
    let _ = (a, b);
    rec.send(
        delete(&format!("{WIDGETS}/l1"))
            .json(json!({"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}))
            .label("delete with a wrong uid precondition"),
    )
    .await;
    rec.send(
        delete(&format!("{WIDGETS}/l1"))
            .json(json!({"preconditions": {"resourceVersion": "1"}}))
            .label("delete with a stale resourceVersion precondition"),
    )
    .await;
    rec.send(delete(&format!("{WIDGETS}/l1?dryRun=All")).label("delete dryRun"))
        .await;
    // Propagation: an owner and a dependent ConfigMap.
    for policy in ["Foreground", "Background", "Orphan"] {
        let owner = format!("owner-{}", policy.to_lowercase());
        rec.send(
            kube(
                widgets()
                    .create(&pp, bytes(widget(&owner, json!({"size": "small"}))))
                    .unwrap(),
            )
            .capture("owner_uid", "/metadata/uid")
            .label(&format!("create {owner}")),
        )
        .await;
        let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": format!("dep-{owner}"), "namespace": NS,
            "ownerReferences": [{"apiVersion": "diff.example.com/v1", "kind": "Widget", "name": owner, "uid": "${owner_uid}", "blockOwnerDeletion": true}]},
            "data": {"k": "v"}});
        rec.send(
            post(&format!("/api/v1/namespaces/{NS}/configmaps"), cm)
                .label(&format!("create the dependent of {owner}")),
        )
        .await;
        let dp = match policy {
            "Foreground" => DeleteParams::foreground(),
            "Background" => DeleteParams::background(),
            _ => DeleteParams::orphan(),
        };
        rec.send(
            kube(widgets().delete(&owner, &dp).unwrap())
                .label(&format!("delete {owner} ({policy})")),
        )
        .await;
        rec.send(
            kube(widgets().get(&owner, &Default::default()).unwrap())
                .until(WAIT, code(404))
                .label(&format!("get {owner} until gone")),
        )
        .await;
        let cm_path = format!("/api/v1/namespaces/{NS}/configmaps/dep-{owner}");
        if policy == "Orphan" {
            rec.send(
                get(&cm_path)
                    .until(WAIT, |r| r.body["metadata"]["ownerReferences"].is_null())
                    .label("get the orphan until its owner reference is gone"),
            )
            .await;
        } else {
            rec.send(
                get(&cm_path)
                    .until(WAIT, code(404))
                    .label(&format!("get the dependent of {owner} until gone")),
            )
            .await;
        }
    }
    rec.send(
        kube(
            widgets()
                .delete_collection(
                    &DeleteParams::default(),
                    &ListParams::default().labels("tier=list"),
                )
                .unwrap(),
        )
        .label("delete collection by label"),
    )
    .await;
    rec.send(
        kube(
            widgets()
                .list(&ListParams::default().labels("tier=list"))
                .unwrap(),
        )
        .label("list after the collection delete"),
    )
    .await;
}

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
async fn conversion(rec: &mut Recorder) {
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

async fn builtins(rec: &mut Recorder) {
    let cms = format!("/api/v1/namespaces/{NS}/configmaps");
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm1", "finalizers": ["x.io/one", "x.io/two"], "labels": {"a": "1", "b": "2"}}, "data": {"k1": "v1", "k2": "v2"}});
    rec.send(post(&cms, cm).label("create a ConfigMap")).await;
    rec.send(patch(&format!("{cms}/cm1"), "strategic", json!({"data": {"k1": "v1b", "k2": null}, "metadata": {"$deleteFromPrimitiveList/finalizers": ["x.io/one"], "$setElementOrder/finalizers": ["x.io/two"], "finalizers": ["x.io/two"], "labels": {"b": null}}})).label("strategic merge patch with kubectl's directives"))
        .await;
    rec.send(
        patch(
            &format!("{cms}/cm1"),
            "json",
            json!([{"op": "remove", "path": "/metadata/finalizers"}]),
        )
        .label("remove the ConfigMap's finalizers"),
    )
    .await;
    rec.send(post(&format!("{cms}?fieldValidation=Strict"), json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm2"}, "data": {"k": "v"}, "bogus": 1})).label("create a ConfigMap with an unknown field, Strict"))
        .await;
    rec.send(post(&format!("{cms}?fieldValidation=Warn"), json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm3"}, "data": {"k": "v"}, "bogus": 1})).label("create a ConfigMap with an unknown field, Warn"))
        .await;
    rec.send(post(&cms, json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm4"}, "data": {"k": 1}})).label("create a ConfigMap with a number in data"))
        .await;
    rec.send(post(&cms, json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm5"}, "data": {"k": "v"}, "immutable": true})).label("create an immutable ConfigMap"))
        .await;
    rec.send(
        patch(&format!("{cms}/cm5"), "merge", json!({"data": {"k": "w"}}))
            .label("change an immutable ConfigMap"),
    )
    .await;
    let secrets = format!("/api/v1/namespaces/{NS}/secrets");
    rec.send(post(&secrets, json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s1"}, "stringData": {"a": "b"}, "type": "Opaque"})).label("create a Secret with stringData"))
        .await;
    rec.send(post(&secrets, json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s2"}, "data": {"a": "not base64!"}})).label("create a Secret with data that is not base64"))
        .await;
    let deps = format!("/apis/apps/v1/namespaces/{NS}/deployments");
    let dep = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"},
        "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {"metadata": {"labels": {"app": "d"}},
            "spec": {"containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 80}]}]}}}});
    rec.send(post(&deps, dep).label("create a Deployment (defaults)"))
        .await;
    rec.send(
        patch(
            &format!("{deps}/d1?fieldManager=sidecar"),
            "apply",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"},
        "spec": {"template": {"spec": {"containers": [{"name": "side", "image": "busybox"}]}}}}),
        )
        .label("apply a second container to the Deployment"),
    )
    .await;
    rec.send(
        patch(
            &format!("{deps}/d1?fieldManager=typo"),
            "apply",
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d1"},
        "spec": {"replicass": 2}}),
        )
        .label("apply an unknown field to the Deployment"),
    )
    .await;
    rec.send(get(&format!("{deps}/d1/scale")).label("GET the Deployment's scale"))
        .await;
    rec.send(post(&deps, json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d2"}, "spec": {"replicas": "two"}})).label("create a Deployment with a string for replicas"))
        .await;
    rec.send(post(&deps, json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d3"}, "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": {"metadata": {"labels": {"app": "y"}}, "spec": {"containers": []}}}})).label("create an invalid Deployment"))
        .await;
    rec.send(post("/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "spec": {"resourceAttributes": {"verb": "create", "group": GROUP, "resource": "widgets", "namespace": NS}}})).label("self subject access review"))
        .await;
    rec.send(
        post(
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
        )
        .focus(|b| {
            // The users differ (a client certificate in system:masters, a bearer token).
            let mut b = b.clone();
            b["status"] = json!("<user>");
            b
        })
        .label("self subject review (user left out)"),
    )
    .await;
    let leases = format!("/apis/coordination.k8s.io/v1/namespaces/{NS}/leases");
    rec.send(post(&leases, json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}, "spec": {"holderIdentity": "me", "leaseDurationSeconds": 15}})).label("create a Lease"))
        .await;
    rec.send(post(&format!("/apis/events.k8s.io/v1/namespaces/{NS}/events"), json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e1"},
        "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "diff/c", "reportingInstance": "i", "action": "Test", "reason": "Tested", "type": "Normal",
        "regarding": {"kind": "Widget", "name": "w1", "namespace": NS, "apiVersion": "diff.example.com/v1"}, "note": "hello"})).label("create an events.k8s.io Event"))
        .await;
    rec.send(get(&format!("/api/v1/namespaces/{NS}/events/e1")).label("read that Event as v1"))
        .await;
    rec.send(
        get(&format!("/api/v1/namespaces/{NS}/serviceaccounts/default"))
            .until(WAIT, code(200))
            .focus(|b| {
                let mut b = b.clone();
                b["secrets"] = json!("<secrets>");
                b
            })
            .label("the namespace's default ServiceAccount"),
    )
    .await;
}

async fn teardown(rec: &mut Recorder) {
    let crds = Request::new("/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
    rec.send(
        kube(
            crds.delete("widgets.diff.example.com", &DeleteParams::default())
                .unwrap(),
        )
        .label("delete the CRD with instances"),
    )
    .await;
    rec.send(
        kube(
            crds.get("widgets.diff.example.com", &Default::default())
                .unwrap(),
        )
        .until(WAIT, code(404))
        .label("get the CRD until gone"),
    )
    .await;
    rec.send(get(WIDGETS).label("list widgets after the CRD is gone"))
        .await;
    let ns = Request::new("/api/v1/namespaces");
    let cms = format!("/api/v1/namespaces/{NS}/configmaps");
    rec.send(post(&cms, json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "holder", "finalizers": ["diff.example.com/hold"]}})).label("create a ConfigMap holding the namespace"))
        .await;
    rec.send(kube(ns.delete(NS, &DeleteParams::default()).unwrap()).label("delete the namespace"))
        .await;
    rec.send(
        post(
            &cms,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "late"}}),
        )
        .label("create in the terminating namespace"),
    )
    .await;
    rec.send(
        get(&format!("/api/v1/namespaces/{NS}"))
            .until(Duration::from_secs(10), |r| {
                r.body["status"]["conditions"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|c| c["type"] == "NamespaceFinalizersRemaining" && c["status"] == "True")
            })
            .label("get the namespace until only finalizers remain"),
    )
    .await;
    rec.send(
        patch(
            &format!("{cms}/holder"),
            "merge",
            json!({"metadata": {"finalizers": null}}),
        )
        .label("release the namespace"),
    )
    .await;
    rec.send(
        kube(ns.get(NS, &Default::default()).unwrap())
            .until(WAIT, code(404))
            .label("get the namespace until gone"),
    )
    .await;
}

/// Deleting the namespaces kube protects; last, as a server that allowed it would lose them.
pub async fn protected_namespaces(rec: &mut Recorder) {
    rec.trace("kube-rs");
    let ns = Request::new("/api/v1/namespaces");
    for name in ["default", "kube-system", "kube-public"] {
        rec.send(
            kube(ns.delete(name, &DeleteParams::default()).unwrap())
                .label(&format!("delete the {name} namespace")),
        )
        .await;
    }
}
