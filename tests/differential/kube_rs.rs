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

#[path = "kube_rs/builtins.rs"]
mod builtins;
#[path = "kube_rs/conversion.rs"]
mod conversion;
#[path = "kube_rs/deletion.rs"]
mod deletion;
#[path = "kube_rs/objects.rs"]
mod objects;
#[path = "kube_rs/patches.rs"]
mod patches;
#[path = "kube_rs/reads.rs"]
mod reads;

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
    objects::documents(rec).await;
    objects::crud(rec).await;
    objects::schema(rec).await;
    patches::patches(rec).await;
    patches::subresources(rec).await;
    reads::lists(rec).await;
    reads::watches(rec).await;
    deletion::deletion(rec).await;
    conversion::conversion(rec).await;
    builtins::builtins(rec).await;
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
