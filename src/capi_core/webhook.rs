//! CAPI core's conversion webhook, served by the tool: an in-process HTTPS server answering
//! `ConversionReview` (apiextensions.k8s.io/v1) at `/convert`, the path controller-runtime
//! registers for core's hub and spokes, with [`super::conversion`]. The same server converts the
//! mock provider's kinds for the run's baseline (the mock's own conversion).
//!
//! Down-converted references need the referenced CRD's contract labels (`contract.GetAPIVersion`):
//! they are read from the API server the webhook converts for, once per group/kind (a CRD's
//! labels do not change during a run), through the client it is given.

use super::conversion::{self, ConvertError, VersionLookup};
use super::pki::Authority;
use axum::Router;
use axum::extract::State;
use axum::routing::post;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::Api;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

/// The path CAPI's manager serves conversion at.
pub const PATH: &str = "/convert";

/// The mock provider's groups end so; their CRDs convert through this server as well (the
/// mock's conversion, [`capi_mock_provider::webhook::convert`]) when the run serves the baseline.
const MOCK_GROUP_SUFFIX: &str = ".mock.capi-conformance.io";

/// Resolves reference apiVersions from CRD labels, cached per group/kind.
pub struct CrdLabels {
    client: kube::Client,
    cache: Mutex<BTreeMap<(String, String), String>>,
}

impl CrdLabels {
    pub fn new(client: kube::Client) -> Self {
        CrdLabels {
            client,
            cache: Mutex::default(),
        }
    }

    fn cached(&self, group: &str, kind: &str) -> Option<String> {
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&(group.to_string(), kind.to_string()))
            .cloned()
    }

    /// Looks up (and caches) the apiVersion of every group/kind in `wanted`.
    pub async fn resolve(&self, wanted: &[(String, String)]) -> Resolved {
        let mut out = Resolved::default();
        for (group, kind) in wanted {
            let key = (group.clone(), kind.clone());
            if out.0.contains_key(&key) {
                continue;
            }
            let result = match self.cached(group, kind) {
                Some(v) => Ok(v),
                None => self.lookup(group, kind).await,
            };
            if let Ok(v) = &result {
                self.cache
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .insert(key.clone(), v.clone());
            }
            out.0.insert(key, result);
        }
        out
    }

    async fn lookup(&self, group: &str, kind: &str) -> Result<String, ConvertError> {
        let crd = crd_name(group, kind);
        let api: Api<CustomResourceDefinition> = Api::all(self.client.clone());
        let found = api
            .get_metadata_opt(&crd)
            .await
            .map_err(|e| ConvertError::Lookup {
                group: group.into(),
                kind: kind.into(),
                message: format!("failed to get CRD {crd}: {e}"),
            })?;
        let labels: Map<String, Value> = found
            .and_then(|m| m.metadata.labels)
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        conversion::api_version_from_labels(group, kind, &crd, &labels)
    }
}

/// `contract.CalculateCRDName`: flect plural of the lower-cased kind, dot, group.
pub fn crd_name(group: &str, kind: &str) -> String {
    format!(
        "{}.{group}",
        capi_contract::contract::flect::pluralize(&kind.to_lowercase())
    )
}

/// Lookups done ahead of a (synchronous) conversion.
#[derive(Default)]
pub struct Resolved(BTreeMap<(String, String), Result<String, ConvertError>>);

impl VersionLookup for Resolved {
    fn api_version(&self, group: &str, kind: &str) -> Result<String, ConvertError> {
        self.0
            .get(&(group.to_string(), kind.to_string()))
            .cloned()
            .unwrap_or_else(|| {
                Err(ConvertError::Lookup {
                    group: group.into(),
                    kind: kind.into(),
                    message: "not resolved".into(),
                })
            })
    }
}

/// The group/kinds of every v1beta2 reference in `obj` (what a down-conversion looks up).
pub fn referenced_kinds(obj: &Value) -> Vec<(String, String)> {
    [
        "/spec/infrastructureRef",
        "/spec/controlPlaneRef",
        "/spec/bootstrap/configRef",
        "/spec/template/spec/infrastructureRef",
        "/spec/template/spec/bootstrap/configRef",
    ]
    .iter()
    .filter_map(|p| obj.pointer(p))
    .filter_map(|r| {
        let g = r.get("apiGroup")?.as_str()?;
        let k = r.get("kind")?.as_str()?;
        Some((g.to_string(), k.to_string()))
    })
    .collect()
}

struct Shared {
    labels: CrdLabels,
    reviews: AtomicU64,
    /// Namespaces whose mock objects convert with the mock's `all/conversion-lossless` fault
    /// (the in-process target mock's objects, when its faults have it).
    lossy: Mutex<Vec<String>>,
}

/// The running conversion webhook.
pub struct ConversionWebhook {
    pub addr: SocketAddr,
    /// What the HTTPS server at `addr` serves: the embedded server calls it in-process
    /// ([`embedded_apiserver::EmbeddedServer::route_service_in_process`]).
    pub router: Router,
    /// PEM of the CA that signed the serving certificate (the CRDs' `caBundle`).
    pub ca_pem: String,
    shared: Arc<Shared>,
    stop: Option<oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
}

impl ConversionWebhook {
    /// Starts serving on 127.0.0.1 (a free port); `client` reads CRD labels. The serving
    /// certificate covers `127.0.0.1` and `extra_names` (Service DNS names it is routed as).
    pub async fn start(client: kube::Client, extra_names: &[String]) -> anyhow::Result<Self> {
        let ca = Authority::new("capi-conformance core webhook CA")?;
        let mut names = vec!["127.0.0.1".to_string(), "localhost".to_string()];
        names.extend(extra_names.iter().cloned());
        let identity = ca.serving_identity("capi-webhook-service", &names)?;
        let tls = embedded_apiserver::tls::serving(&identity)?;
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared {
            labels: CrdLabels::new(client),
            reviews: AtomicU64::new(0),
            lossy: Mutex::default(),
        });
        let app = Router::new()
            .route(PATH, post(review))
            .with_state(shared.clone());
        let router = app.clone();
        let (stop, stopped) = oneshot::channel();
        let task = tokio::spawn(embedded_apiserver::serve::serve_tls(
            listener,
            tls.acceptor,
            app,
            stopped,
        ));
        Ok(ConversionWebhook {
            addr,
            router,
            ca_pem: ca.cert_pem.clone(),
            shared,
            stop: Some(stop),
            task: Some(task),
        })
    }

    /// `https://127.0.0.1:<port>/convert`.
    pub fn url(&self) -> String {
        format!("https://{}{PATH}", self.addr)
    }

    /// From now on the mock objects of `namespace` convert as a mock with the
    /// `all/conversion-lossless` fault converts them (the in-process target mock's faults: this
    /// server is its conversion webhook).
    pub fn lossy_in(&self, namespace: &str) {
        self.shared
            .lossy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(namespace.to_string());
    }

    /// ConversionReviews answered so far.
    pub fn reviews(&self) -> u64 {
        self.shared.reviews.load(Ordering::Relaxed)
    }

    pub async fn shutdown(mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        if let Some(t) = self.task.take() {
            let _ = tokio::time::timeout(std::time::Duration::from_secs(5), t).await;
        }
    }
}

impl Drop for ConversionWebhook {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }
}

async fn review(State(shared): State<Arc<Shared>>, body: axum::body::Bytes) -> axum::Json<Value> {
    shared.reviews.fetch_add(1, Ordering::Relaxed);
    let req: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let api_version = req
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or("apiextensions.k8s.io/v1")
        .to_string();
    let request = req.get("request").cloned().unwrap_or(Value::Null);
    let uid = request.get("uid").cloned().unwrap_or(json!(""));
    let desired = request
        .get("desiredAPIVersion")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let objects: Vec<Value> = request
        .get("objects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    // The mock provider's kinds (the baseline's CRDs convert through this server too).
    let converted: Result<Vec<Value>, String> = if desired
        .split('/')
        .next()
        .is_some_and(|g| g.ends_with(MOCK_GROUP_SUFFIX))
    {
        let lossy = shared
            .lossy
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        objects
            .iter()
            .map(|o| {
                let ns = o
                    .pointer("/metadata/namespace")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                let lossless = !lossy.iter().any(|l| l == ns);
                capi_mock_provider::webhook::convert::convert(o, &desired, lossless)
                    .map_err(|e| e.to_string())
            })
            .collect()
    } else {
        let wanted: Vec<(String, String)> = objects.iter().flat_map(referenced_kinds).collect();
        let resolved = shared.labels.resolve(&wanted).await;
        objects
            .iter()
            .map(|o| conversion::convert(o, &desired, &resolved))
            .collect::<Result<Vec<Value>, ConvertError>>()
            .map_err(|e| e.to_string())
    };
    let response = match converted {
        Ok(objs) => json!({"uid": uid, "convertedObjects": objs, "result": {"status": "Success"}}),
        Err(e) => json!({
            "uid": uid,
            "convertedObjects": [],
            "result": {"status": "Failure", "message": e},
        }),
    };
    axum::Json(json!({
        "apiVersion": api_version,
        "kind": "ConversionReview",
        "response": response,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn crd_names_follow_flect() {
        assert_eq!(
            crd_name("infrastructure.cluster.x-k8s.io", "DockerMachine"),
            "dockermachines.infrastructure.cluster.x-k8s.io"
        );
        assert_eq!(
            crd_name("controlplane.cluster.x-k8s.io", "KubeadmControlPlane"),
            "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io"
        );
        let refs = referenced_kinds(&json!({"spec": {
            "infrastructureRef": {"apiGroup": "a.io", "kind": "A", "name": "x"},
            "template": {"spec": {"bootstrap": {"configRef": {"apiGroup": "b.io", "kind": "B", "name": "y"}}}}
        }}));
        assert_eq!(
            refs,
            vec![("a.io".into(), "A".into()), ("b.io".into(), "B".into())]
        );
    }
}
