//! Python's `kubernetes` client against both servers: the calls of the crate's python_client
//! tests (raw bodies decoded as Go structs, the dynamic client's server-side apply by two
//! managers) and the typed and custom-object APIs a Python provider uses (create, get, list,
//! patch, replace, status, delete, a watch, errors). Each call's answer (status and body, or the
//! object the client returns) is one comparison.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::harness::Recorder;

/// A Python that can `import kubernetes`: `CAPI_CONFORMANCE_PYTHON`, the CI venv, `python3`.
fn python() -> Result<PathBuf, String> {
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(p) = std::env::var_os("CAPI_CONFORMANCE_PYTHON") {
        candidates.push(PathBuf::from(p));
    }
    candidates.push(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/ci-venv/bin/python"));
    candidates.push(PathBuf::from("python3"));
    for p in &candidates {
        let ok = Command::new(p)
            .args(["-c", "import kubernetes"])
            .output()
            .is_ok_and(|o| o.status.success());
        if ok {
            return Ok(p.clone());
        }
    }
    let why = format!(
        "no Python with the `kubernetes` package (tried {})",
        candidates
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if std::env::var("CAPI_CONFORMANCE_REQUIRE_PYTHON_TOOLS").as_deref() == Ok("1") {
        panic!("{why}, and CAPI_CONFORMANCE_REQUIRE_PYTHON_TOOLS=1 requires it");
    }
    Err(why)
}

const SCRIPT: &str = r#"
import json, sys
from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException

config.load_kube_config(config_file=sys.argv[1])
api = client.ApiClient()
core = client.CoreV1Api(api)
apps = client.AppsV1Api(api)
ext = client.ApiextensionsV1Api(api)
custom = client.CustomObjectsApi(api)
NS = "diff-python"
G, V, P = "python.diff.example.com", "v1", "gizmos"
out = {}

def call(name, f):
    try:
        r = f()
        out[name] = {"ok": api.sanitize_for_serialization(r)}
    except ApiException as e:
        try:
            body = json.loads(e.body)
        except Exception:
            body = e.body
        out[name] = {"status": e.status, "reason": e.reason, "body": body}

def raw(method, path, body=None, query=None, content_type="application/json"):
    headers = {"Content-Type": content_type, "Accept": "application/json"}
    try:
        m, url, h, b, _ = api.param_serialize(method, path, query_params=query or [],
            header_params=headers, body=body, auth_settings=["BearerToken"])
        r = api.call_api(m, url, header_params=h, body=b)
        r.read()
        status, data = r.status, r.data
    except ApiException as e:
        status, data = e.status, e.body
    try:
        data = json.loads(data)
    except Exception:
        data = data.decode() if isinstance(data, bytes) else data
    return {"status": status, "body": data}

call("create namespace", lambda: core.create_namespace({"metadata": {"name": NS}}))
crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": P + "." + G},
       "spec": {"group": G, "scope": "Namespaced",
                "names": {"plural": P, "singular": "gizmo", "kind": "Gizmo"},
                "versions": [{"name": V, "served": True, "storage": True,
                              "subresources": {"status": {}},
                              "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                                  "spec": {"type": "object", "properties": {
                                      "size": {"type": "string", "enum": ["s", "l"]},
                                      "count": {"type": "integer", "default": 1}}},
                                  "status": {"type": "object", "properties": {
                                      "phase": {"type": "string"}}}}}}}]}}
call("create CRD", lambda: ext.create_custom_resource_definition(crd))
import time
for _ in range(200):
    try:
        c = ext.read_custom_resource_definition(P + "." + G)
        if any(x.type == "Established" and x.status == "True" for x in (c.status.conditions or [])):
            custom.list_namespaced_custom_object(G, V, NS, P)
            break
    except ApiException:
        pass
    time.sleep(0.1)
call("read CRD (Established)", lambda: ext.read_custom_resource_definition(P + "." + G))
gz = lambda name, spec: {"apiVersion": G + "/" + V, "kind": "Gizmo", "metadata": {"name": name}, "spec": spec}
call("create gizmo", lambda: custom.create_namespaced_custom_object(G, V, NS, P, gz("a", {"size": "s"})))
call("create gizmo again", lambda: custom.create_namespaced_custom_object(G, V, NS, P, gz("a", {"size": "s"})))
call("create invalid gizmo", lambda: custom.create_namespaced_custom_object(G, V, NS, P, gz("b", {"size": "m"})))
call("get gizmo", lambda: custom.get_namespaced_custom_object(G, V, NS, P, "a"))
call("get missing gizmo", lambda: custom.get_namespaced_custom_object(G, V, NS, P, "zzz"))
call("list gizmos", lambda: custom.list_namespaced_custom_object(G, V, NS, P))
call("list gizmos across namespaces", lambda: custom.list_cluster_custom_object(G, V, P))
call("patch gizmo (merge)", lambda: custom.patch_namespaced_custom_object(G, V, NS, P, "a", {"spec": {"count": 3}}))
call("patch gizmo status", lambda: custom.patch_namespaced_custom_object_status(G, V, NS, P, "a", {"status": {"phase": "Ready"}}))
call("get gizmo status", lambda: custom.get_namespaced_custom_object_status(G, V, NS, P, "a"))
def replace():
    cur = custom.get_namespaced_custom_object(G, V, NS, P, "a")
    cur["spec"]["size"] = "l"
    return custom.replace_namespaced_custom_object(G, V, NS, P, "a", cur)
call("replace gizmo", replace)
def stale():
    cur = custom.get_namespaced_custom_object(G, V, NS, P, "a")
    cur["metadata"]["resourceVersion"] = "1"
    return custom.replace_namespaced_custom_object(G, V, NS, P, "a", cur)
call("replace gizmo with a stale version", stale)
lst = custom.list_namespaced_custom_object(G, V, NS, P)
rv = lst["metadata"]["resourceVersion"]
call("create gizmo c", lambda: custom.create_namespaced_custom_object(G, V, NS, P, gz("c", {"size": "l"})))
call("delete gizmo c", lambda: custom.delete_namespaced_custom_object(G, V, NS, P, "c"))
events = []
w = watch.Watch()
for e in w.stream(custom.list_namespaced_custom_object, G, V, NS, P, resource_version=rv, timeout_seconds=1):
    events.append({"type": e["type"], "name": e["object"]["metadata"]["name"]})
out["watch from the list's version"] = {"ok": events}
call("delete gizmo a", lambda: custom.delete_namespaced_custom_object(G, V, NS, P, "a"))
call("delete missing gizmo", lambda: custom.delete_namespaced_custom_object(G, V, NS, P, "a"))

# The crate's python_client tests: raw bodies decoded as Go structs.
cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": 1}}
dep = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
       "spec": {"selector": {"matchLabels": {"a": "b"}},
                "template": {"metadata": {"labels": {"a": "b"}},
                             "spec": {"containers": [{"name": "c", "image": "i", "bogus": 1}]}}}}
out["configmap with a number"] = raw("POST", "/api/v1/namespaces/" + NS + "/configmaps", cm)
out["deployment with an unknown field, Strict"] = raw("POST", "/apis/apps/v1/namespaces/" + NS + "/deployments", dep, [("fieldValidation", "Strict")])
out["deployment with an unknown field"] = raw("POST", "/apis/apps/v1/namespaces/" + NS + "/deployments", dep)
deployments = dynamic.DynamicClient(api).resources.get(api_version="apps/v1", kind="Deployment")
def ssa(container, manager):
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "s"},
            "spec": {"selector": {"matchLabels": {"a": "b"}},
                     "template": {"metadata": {"labels": {"a": "b"}},
                                  "spec": {"containers": [{"name": container, "image": "i"}]}}}}
    return lambda: deployments.server_side_apply(body=body, namespace=NS, field_manager=manager).to_dict()
call("apply a deployment (manager a)", ssa("app", "a"))
call("apply a deployment (manager b)", ssa("sidecar", "b"))
call("read the applied deployment", lambda: apps.read_namespaced_deployment("s", NS))
call("patch the deployment's replicas", lambda: apps.patch_namespaced_deployment("s", NS, {"spec": {"replicas": 4}}))
call("read the deployment's scale", lambda: apps.read_namespaced_deployment_scale("s", NS))
call("create a secret", lambda: core.create_namespaced_secret(NS, {"metadata": {"name": "sec"}, "stringData": {"k": "v"}}))
call("read the secret", lambda: core.read_namespaced_secret("sec", NS))
call("list configmaps with a label selector", lambda: core.list_namespaced_config_map(NS, label_selector="x in (a,b)"))
call("list configmaps with a bad label selector", lambda: core.list_namespaced_config_map(NS, label_selector="x in a"))
call("create a service account", lambda: core.create_namespaced_service_account(NS, {"metadata": {"name": "robot"}}))
call("delete the CRD", lambda: ext.delete_custom_resource_definition(P + "." + G))
print(json.dumps(out))
"#;

pub async fn run(rec: &mut Recorder, dir: &Path) {
    rec.trace("python");
    let py = match python() {
        Ok(p) => p,
        Err(why) => {
            rec.skipped.push(("python".into(), why));
            return;
        }
    };
    let script = dir.join("differential.py");
    std::fs::write(&script, SCRIPT).unwrap();
    let one = |kubeconfig: PathBuf| {
        let py = py.clone();
        let script = script.clone();
        async move {
            let out = tokio::process::Command::new(&py)
                .arg(&script)
                .arg(&kubeconfig)
                .output()
                .await
                .unwrap();
            assert!(
                out.status.success(),
                "the Python script failed against {}: {}{}",
                kubeconfig.display(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            serde_json::from_slice::<Value>(&out.stdout).unwrap()
        }
    };
    let (a, b) = tokio::join!(
        one(rec.real.kubeconfig.clone()),
        one(rec.emb.kubeconfig.clone())
    );
    let names: Vec<String> = a
        .as_object()
        .map(|o| o.keys().cloned().collect())
        .unwrap_or_default();
    assert!(names.len() > 20, "the Python script answered {a}");
    for name in names {
        rec.compare(&name, &a[&name], &b[&name]);
    }
}
