//! What a control-plane node's own agent writes into its workload cluster, played for
//! machines that run no bootstrap data.
//!
//! In-memory machines (CAPD's in-memory backend, the mock's) play what `kubeadm init` leaves
//! in a workload cluster: the Node, the static pods, `kubeadm-config`. A control plane of
//! another distribution may wait for what its own server writes on the node instead: RKE2's
//! RKE2ControlPlane counts itself initialized only once `kube-system/rke2-serving` exists
//! (cluster-api-provider-rke2 v0.21.0, `pkg/rke2/workload_cluster.go` 255-267). The objects
//! given with `--workload-object` are that agent's writes: once a Machine of the control plane
//! under test has its Node in the workload cluster, core's Machine controller of the simulation
//! creates each of them there if it is not there yet (docs/core-simulation.md "What a node's
//! agent writes").

use kube::api::{Api, DynamicObject, PostParams};
use kube::core::GroupVersionKind;
use serde_json::Value;
use std::sync::Arc;

/// The objects a control-plane node's agent writes into its workload cluster.
#[derive(Clone, Debug, Default)]
pub struct NodeWrites(Arc<[Value]>);

#[derive(Debug, thiserror::Error)]
pub enum NodeWriteError {
    #[error("--workload-object: object {index} has no {what}")]
    Incomplete { index: usize, what: &'static str },
    #[error("--workload-object: {object}: {message}")]
    Write { object: String, message: String },
}

impl NodeWrites {
    /// The objects, each checked to name its apiVersion, kind and name.
    pub fn new(objects: Vec<Value>) -> Result<NodeWrites, NodeWriteError> {
        for (i, o) in objects.iter().enumerate() {
            for (pointer, what) in [
                ("/apiVersion", "apiVersion"),
                ("/kind", "kind"),
                ("/metadata/name", "metadata.name"),
            ] {
                if o.pointer(pointer)
                    .and_then(Value::as_str)
                    .is_none_or(str::is_empty)
                {
                    return Err(NodeWriteError::Incomplete { index: i + 1, what });
                }
            }
        }
        Ok(NodeWrites(objects.into()))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Creates every object in the workload cluster `client` reaches, leaving one that is
    /// there already as it is (an agent writes its own object once). The resource of each
    /// kind comes from the workload cluster's discovery.
    pub async fn write(&self, client: &kube::Client) -> Result<usize, NodeWriteError> {
        let mut created = 0;
        for o in self.0.iter() {
            let name = describe(o);
            let fail = |message: String| NodeWriteError::Write {
                object: name.clone(),
                message,
            };
            let api_version = o
                .pointer("/apiVersion")
                .and_then(Value::as_str)
                .unwrap_or("");
            let kind = o.pointer("/kind").and_then(Value::as_str).unwrap_or("");
            let (group, version) = api_version.split_once('/').unwrap_or(("", api_version));
            let gvk = GroupVersionKind::gvk(group, version, kind);
            let (resource, caps) = kube::discovery::pinned_kind(client, &gvk)
                .await
                .map_err(|e| fail(format!("the workload cluster does not serve it: {e}")))?;
            let api: Api<DynamicObject> = match (
                caps.scope,
                o.pointer("/metadata/namespace").and_then(Value::as_str),
            ) {
                (kube::discovery::Scope::Namespaced, Some(ns)) => {
                    Api::namespaced_with(client.clone(), ns, &resource)
                }
                (kube::discovery::Scope::Namespaced, None) => {
                    Api::default_namespaced_with(client.clone(), &resource)
                }
                (kube::discovery::Scope::Cluster, _) => Api::all_with(client.clone(), &resource),
            };
            let obj: DynamicObject =
                serde_json::from_value(o.clone()).map_err(|e| fail(e.to_string()))?;
            let result = match api.create(&PostParams::default(), &obj).await {
                Err(kube::Error::Api(s)) if s.code == 415 => {
                    create_as_protobuf(client, api.resource_url(), o).await
                }
                other => other.map(drop),
            };
            match result {
                Ok(()) => created += 1,
                Err(kube::Error::Api(s)) if s.code == 409 => {}
                Err(e) => return Err(fail(e.to_string())),
            }
        }
        Ok(created)
    }
}

/// The content type CAPD's in-memory workload API server requires of a create.
pub const PROTOBUF: &str = "application/vnd.kubernetes.protobuf";

/// Creates `o` at `url_path` with the same JSON body declared as protobuf. CAPD's in-memory
/// workload API server (cluster-api `test/infrastructure/inmemory/pkg/server/api/handler.go`)
/// registers its POST and PUT routes as consuming `application/vnd.kubernetes.protobuf` only
/// and answers a JSON create with 415; its handler decodes the body with the universal
/// decoder, which recognises JSON whatever the header says. A real kube-apiserver accepts
/// the JSON create, so this second try is only ever made after a 415.
async fn create_as_protobuf(
    client: &kube::Client,
    url_path: &str,
    o: &Value,
) -> Result<(), kube::Error> {
    let body = serde_json::to_vec(o).map_err(kube::Error::SerdeError)?;
    let mut req = kube::core::Request::new(url_path)
        .create(&PostParams::default(), body)
        .map_err(kube::Error::BuildRequest)?;
    req.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static(PROTOBUF),
    );
    client.request::<DynamicObject>(req).await.map(drop)
}

/// `Kind namespace/name` (never the object's data: a Secret's contents stay out of messages).
fn describe(o: &Value) -> String {
    let kind = o.pointer("/kind").and_then(Value::as_str).unwrap_or("?");
    let name = o
        .pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("?");
    match o.pointer("/metadata/namespace").and_then(Value::as_str) {
        Some(ns) => format!("{kind} {ns}/{name}"),
        None => format!("{kind} {name}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn an_object_without_a_kind_or_name_is_refused_by_its_place() {
        let ok = json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "a"}});
        assert!(NodeWrites::new(vec![ok.clone()]).is_ok());
        let err = NodeWrites::new(vec![
            ok,
            json!({"apiVersion": "v1", "metadata": {"name": "b"}}),
        ])
        .unwrap_err()
        .to_string();
        assert_eq!(err, "--workload-object: object 2 has no kind");
    }

    #[test]
    fn a_secret_is_described_without_its_data() {
        let s = json!({"kind": "Secret", "metadata": {"name": "rke2-serving", "namespace": "kube-system"},
                       "data": {"tls.key": "c2VjcmV0"}});
        assert_eq!(describe(&s), "Secret kube-system/rke2-serving");
    }

    /// Against a workload cluster of the run (the embedded API server, reached with its
    /// kubeconfig as core reaches it): the Secret is created once, a second write leaves it
    /// as it is, and a kind the cluster does not serve is refused by name.
    #[tokio::test]
    async fn the_objects_are_created_once_in_the_workload_cluster() {
        use crate::capi_core::workload::WorkloadClusters;
        use k8s_openapi::api::core::v1::Secret;
        let clusters = WorkloadClusters::default();
        let w = clusters.get_or_start("ns", "c1").await.unwrap();
        let text =
            crate::capi_core::pki::kubeconfig("c1", w.url(), &w.ca, Some(w.token())).unwrap();
        let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        let serving = json!({
            "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/tls",
            "metadata": {"name": "rke2-serving", "namespace": "kube-system"},
            "data": {"tls.crt": "", "tls.key": ""},
        });
        let writes = NodeWrites::new(vec![serving]).unwrap();
        assert_eq!(writes.write(&client).await.unwrap(), 1);
        let secrets: Api<Secret> = Api::namespaced(client.clone(), "kube-system");
        let first = secrets.get("rke2-serving").await.unwrap();
        assert_eq!(writes.write(&client).await.unwrap(), 0);
        let second = secrets.get("rke2-serving").await.unwrap();
        assert_eq!(
            first.metadata.resource_version,
            second.metadata.resource_version
        );
        let unserved = NodeWrites::new(vec![json!({
            "apiVersion": "example.com/v1", "kind": "Agent", "metadata": {"name": "a"},
        })])
        .unwrap();
        let err = unserved.write(&client).await.unwrap_err().to_string();
        assert!(
            err.starts_with("--workload-object: Agent a: the workload cluster does not serve it"),
            "{err}"
        );
        drop(w);
        clusters.shutdown().await;
    }

    /// A workload API server as CAPD's in-memory one answers: its create route consumes
    /// protobuf only and answers a JSON create with 415, and its handler reads the JSON body
    /// whatever the header says. The Secret is created by the second try; a server that
    /// refuses that too has its 415 named in the error.
    #[tokio::test]
    async fn a_create_refused_as_json_is_made_again_declared_as_protobuf() {
        use axum::Router;
        use axum::http::{HeaderMap, StatusCode};
        use axum::routing::{get, post};
        use std::sync::Mutex;
        async fn serve(protobuf_too: bool) -> (String, Arc<Mutex<Vec<String>>>) {
            let seen: Arc<Mutex<Vec<String>>> = Arc::default();
            let log = seen.clone();
            let app = Router::new()
                .route(
                    "/api/v1",
                    get(|| async {
                        axum::Json(json!({
                            "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "v1",
                            "resources": [{"name": "secrets", "singularName": "secret",
                                "namespaced": true, "kind": "Secret", "verbs": ["create", "get"]}],
                        }))
                    }),
                )
                .route(
                    "/api/v1/namespaces/{ns}/secrets",
                    post(move |headers: HeaderMap, body: String| async move {
                        let ct = headers
                            .get("content-type")
                            .and_then(|v| v.to_str().ok())
                            .unwrap_or_default()
                            .to_string();
                        log.lock().unwrap().push(ct.clone());
                        if ct == PROTOBUF && !protobuf_too {
                            let obj: Value = serde_json::from_str(&body).unwrap();
                            (StatusCode::CREATED, axum::Json(obj))
                        } else {
                            let status = json!({"kind": "Status", "apiVersion": "v1",
                                "status": "Failure", "reason": "UnsupportedMediaType",
                                "message": format!("unsupported media type {ct}"), "code": 415});
                            (StatusCode::UNSUPPORTED_MEDIA_TYPE, axum::Json(status))
                        }
                    }),
                );
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}", listener.local_addr().unwrap());
            tokio::spawn(async move { axum::serve(listener, app).await });
            (url, seen)
        }
        let client =
            |url: String| kube::Client::try_from(kube::Config::new(url.parse().unwrap())).unwrap();
        let writes = NodeWrites::new(vec![json!({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {"name": "rke2-serving", "namespace": "kube-system"},
        })])
        .unwrap();
        let (url, seen) = serve(false).await;
        assert_eq!(writes.write(&client(url)).await.unwrap(), 1);
        assert_eq!(
            *seen.lock().unwrap(),
            ["application/json".to_string(), PROTOBUF.to_string()]
        );
        let (url, seen) = serve(true).await;
        let err = writes.write(&client(url)).await.unwrap_err().to_string();
        assert!(
            err.starts_with("--workload-object: Secret kube-system/rke2-serving: ")
                && err.contains("415"),
            "{err}"
        );
        assert_eq!(seen.lock().unwrap().len(), 2);
    }
}
