//! Workload clusters: what `<cluster>-kubeconfig` points at once the tool has played an
//! initialized control plane.
//!
//! Each Cluster that gets one has its own embedded API server, listening on 127.0.0.1 over
//! HTTPS with a serving certificate signed by that cluster's CA (`<cluster>-ca`, as a real
//! control plane's is), authenticating client certificates signed by that CA as kube-apiserver's
//! `--client-ca-file` does (KCP's `<cluster>-kubeconfig`: CN `kubernetes-admin`, O
//! `system:masters`) as well as its own bearer token, seeded with what `kubeadm init` leaves that providers look for
//! (`kube-system/kubeadm-config`). A separate server per Cluster, not the management server:
//! what a provider writes there (CABPK's `kube-system/bootstrap-token-*` Secrets, KCP's reads of
//! `kubeadm-config`, Nodes) stays out of the management cluster, as on a real cluster, and two
//! Clusters of a run never see each other's tokens (docs/core-simulation.md).

use super::pki::{Authority, PkiError};
use embedded_apiserver::{EmbeddedServer, Listener, ServerOptions};
use serde_json::json;
use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

/// The Secret type of a bootstrap token (kubeadm's join token).
pub const JOIN_TOKEN_TYPE: &str = "bootstrap.kubernetes.io/token";

/// Kubernetes version the workload clusters claim in `kubeadm-config`.
pub const WORKLOAD_KUBERNETES_VERSION: &str = "v1.33.0";

#[derive(Debug, thiserror::Error)]
pub enum WorkloadError {
    #[error(transparent)]
    Pki(#[from] PkiError),
    #[error("starting the workload API server of {cluster}: {message}")]
    Start { cluster: String, message: String },
}

/// One workload cluster: its server, where it listens, and the cluster CA that signed it.
pub struct WorkloadCluster {
    pub server: EmbeddedServer,
    listener: Listener,
    pub ca: Authority,
}

impl WorkloadCluster {
    /// `https://127.0.0.1:<port>`.
    pub fn url(&self) -> &str {
        &self.listener.url
    }

    pub fn host(&self) -> String {
        self.listener.addr.ip().to_string()
    }

    pub fn port(&self) -> u16 {
        self.listener.addr.port()
    }

    /// The bearer token the server accepts as cluster admin (besides client certificates
    /// signed by [`Self::ca`]).
    pub fn token(&self) -> &str {
        &self.listener.token
    }
}

/// The workload clusters of one run, by `namespace/cluster`; stopped with [`Self::shutdown`].
#[derive(Clone, Default)]
pub struct WorkloadClusters {
    clusters: Arc<Mutex<BTreeMap<String, Arc<WorkloadCluster>>>>,
    /// Addresses given to Clusters (`spec.controlPlaneEndpoint`) before their server starts,
    /// held bound until then.
    reserved: Arc<Mutex<BTreeMap<String, std::net::TcpListener>>>,
}

impl WorkloadClusters {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<WorkloadCluster>>> {
        self.clusters.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn reservations(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, std::net::TcpListener>> {
        self.reserved.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The address the workload cluster of `namespace/cluster` will listen on, for the
    /// Cluster's `spec.controlPlaneEndpoint` (set before the control plane exists, as an
    /// InfraCluster's load balancer is): a loopback port held bound until [`Self::start`]
    /// serves on it.
    pub fn reserve(&self, namespace: &str, cluster: &str) -> Result<SocketAddr, WorkloadError> {
        let key = format!("{namespace}/{cluster}");
        if let Some(w) = self.lock().get(&key) {
            return Ok(w.listener.addr);
        }
        let mut reserved = self.reservations();
        if let Some(l) = reserved.get(&key) {
            return l.local_addr().map_err(|e| reserve_failed(cluster, &e));
        }
        let l =
            std::net::TcpListener::bind("127.0.0.1:0").map_err(|e| reserve_failed(cluster, &e))?;
        let addr = l.local_addr().map_err(|e| reserve_failed(cluster, &e))?;
        reserved.insert(key, l);
        Ok(addr)
    }

    /// The workload cluster of `namespace/cluster`, started on first use with its serving
    /// certificate signed by `ca` (the CA of `<cluster>-ca` when the control plane is
    /// initialized), on the address [`Self::reserve`] gave the Cluster if it gave one.
    pub async fn start(
        &self,
        namespace: &str,
        cluster: &str,
        ca: Authority,
    ) -> Result<Arc<WorkloadCluster>, WorkloadError> {
        let key = format!("{namespace}/{cluster}");
        if let Some(w) = self.lock().get(&key) {
            return Ok(w.clone());
        }
        // The reserved socket itself is served on: releasing the port and binding it again
        // would let another process (a parallel run) take it in between.
        let bound = match self.reservations().remove(&key) {
            Some(l) => l,
            None => std::net::TcpListener::bind("127.0.0.1:0")
                .map_err(|e| reserve_failed(cluster, &e))?,
        };
        let started = Arc::new(start(cluster, ca, bound).await?);
        let mut map = self.lock();
        // Two starts racing for one cluster: the first one stored wins.
        Ok(map.entry(key).or_insert(started).clone())
    }

    /// [`Self::start`] with a CA of its own (tests, and callers with no `<cluster>-ca`).
    pub async fn get_or_start(
        &self,
        namespace: &str,
        cluster: &str,
    ) -> Result<Arc<WorkloadCluster>, WorkloadError> {
        if let Some(w) = self.get(namespace, cluster) {
            return Ok(w);
        }
        self.start(namespace, cluster, Authority::new("kubernetes")?)
            .await
    }

    /// The workload cluster of `namespace/cluster` if it was started.
    pub fn get(&self, namespace: &str, cluster: &str) -> Option<Arc<WorkloadCluster>> {
        self.lock().get(&format!("{namespace}/{cluster}")).cloned()
    }

    /// Number of workload clusters started so far.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The clusters (by name) whose `kube-system` holds bootstrap token Secrets (type
    /// `bootstrap.kubernetes.io/token`, as CABPK creates for a joining node): evidence that a
    /// bootstrap provider reached its workload cluster. Names only, never the Secrets' data.
    pub async fn clusters_with_join_tokens(&self) -> std::collections::BTreeSet<String> {
        let all: Vec<(String, Arc<WorkloadCluster>)> = self
            .lock()
            .iter()
            .map(|(k, w)| (k.clone(), w.clone()))
            .collect();
        let mut out = std::collections::BTreeSet::new();
        for (key, w) in all {
            let api: kube::Api<k8s_openapi::api::core::v1::Secret> =
                kube::Api::namespaced(w.server.client(), "kube-system");
            let Ok(list) = api.list(&kube::api::ListParams::default()).await else {
                continue;
            };
            if list
                .items
                .iter()
                .any(|s| s.type_.as_deref() == Some(JOIN_TOKEN_TYPE))
            {
                let cluster = key.rsplit('/').next().unwrap_or(&key).to_string();
                out.insert(cluster);
            }
        }
        out
    }

    /// Stops every listener (the servers go with their last reference).
    pub async fn shutdown(&self) {
        self.reservations().clear();
        let all: Vec<Arc<WorkloadCluster>> =
            std::mem::take(&mut *self.lock()).into_values().collect();
        for w in all {
            if let Ok(w) = Arc::try_unwrap(w) {
                w.listener.shutdown().await;
            }
        }
    }
}

fn reserve_failed(cluster: &str, e: &std::io::Error) -> WorkloadError {
    WorkloadError::Start {
        cluster: cluster.to_string(),
        message: format!("reserving a loopback port: {e}"),
    }
}

async fn start(
    cluster: &str,
    ca: Authority,
    bound: std::net::TcpListener,
) -> Result<WorkloadCluster, WorkloadError> {
    let fail = |message: String| WorkloadError::Start {
        cluster: cluster.to_string(),
        message,
    };
    // Client certificates the cluster CA signed authenticate (kube-apiserver's
    // `--client-ca-file`): KCP's own `<cluster>-kubeconfig` carries one and no token.
    let server = EmbeddedServer::new(ServerOptions {
        client_ca_pem: Some(ca.cert_pem.clone()),
        ..ServerOptions::default()
    });
    server
        .apply_documents(vec![kubeadm_config(cluster)])
        .await
        .map_err(|e| fail(format!("{e:#}")))?;
    let identity = ca.serving_identity(
        "kube-apiserver",
        &["127.0.0.1".to_string(), "localhost".to_string()],
    )?;
    let listener = server
        .listen_on_with_identity(bound, identity)
        .await
        .map_err(|e| fail(format!("{e:#}")))?;
    Ok(WorkloadCluster {
        server,
        listener,
        ca,
    })
}

/// `kube-system/kubeadm-config` as `kubeadm init` leaves it (KCP reads it to decide the
/// control plane is initialized).
fn kubeadm_config(cluster: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "kubeadm-config", "namespace": "kube-system"},
        "data": {
            "ClusterConfiguration": format!(
                "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nclusterName: {cluster}\nkubernetesVersion: {WORKLOAD_KUBERNETES_VERSION}\n"
            ),
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{ConfigMap, Secret};
    use kube::api::{Api, PostParams};

    #[tokio::test]
    async fn a_workload_cluster_is_reachable_with_its_kubeconfig_and_takes_join_tokens() {
        let clusters = WorkloadClusters::default();
        let w = clusters.get_or_start("ns", "c1").await.unwrap();
        assert!(Arc::ptr_eq(
            &w,
            &clusters.get_or_start("ns", "c1").await.unwrap()
        ));
        let text = super::super::pki::kubeconfig("c1", w.url(), &w.ca, Some(w.token())).unwrap();
        let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        let cms: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-system");
        assert!(cms.get("kubeadm-config").await.is_ok());
        let secrets: Api<Secret> = Api::namespaced(client, "kube-system");
        let token: Secret = serde_json::from_value(json!({
            "metadata": {"name": "bootstrap-token-abcdef"},
            "type": "bootstrap.kubernetes.io/token",
            "stringData": {"token-id": "abcdef", "token-secret": "0123456789abcdef"},
        }))
        .unwrap();
        secrets
            .create(&PostParams::default(), &token)
            .await
            .unwrap();
        drop(w);
        clusters.shutdown().await;
        assert!(clusters.is_empty());
    }

    /// CAPI's ClusterCache probes a workload cluster's health with `GET /` (client-go's
    /// `restClient.Get().AbsPath("/")`) under the client certificate of the Cluster's kubeconfig
    /// (no token, as KCP's kubeconfig has none): the index of root paths answers.
    #[tokio::test]
    async fn the_cluster_cache_health_probe_gets_the_root_index_with_the_client_certificate() {
        let clusters = WorkloadClusters::default();
        let w = clusters.get_or_start("ns", "c1").await.unwrap();
        let text = super::super::pki::kubeconfig("c1", w.url(), &w.ca, None).unwrap();
        let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
        let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        let client = kube::Client::try_from(config).unwrap();
        let root: serde_json::Value = client
            .request(http::Request::get("/").body(Vec::new()).unwrap())
            .await
            .unwrap();
        let paths = root["paths"].as_array().unwrap();
        for p in [
            "/api",
            "/api/v1",
            "/apis",
            "/healthz",
            "/openapi/v2",
            "/version",
        ] {
            assert!(paths.iter().any(|x| x == p), "{p} not in {root}");
        }
        drop(w);
        clusters.shutdown().await;
    }

    /// The Cluster's endpoint is reserved before the control plane exists; the server started
    /// later listens there with a serving certificate of the CA it is given.
    #[tokio::test]
    async fn a_reserved_endpoint_is_where_the_workload_cluster_listens() {
        let clusters = WorkloadClusters::default();
        let addr = clusters.reserve("ns", "c1").unwrap();
        assert_eq!(clusters.reserve("ns", "c1").unwrap(), addr);
        assert!(
            std::net::TcpListener::bind(addr).is_err(),
            "the port is held"
        );
        let ca = Authority::new("kubernetes").unwrap();
        let ca_pem = ca.cert_pem.clone();
        let w = clusters.start("ns", "c1", ca).await.unwrap();
        assert_eq!(w.port(), addr.port());
        assert_eq!(w.url(), format!("https://127.0.0.1:{}", addr.port()));
        assert_eq!(w.ca.cert_pem, ca_pem);
        assert_eq!(clusters.reserve("ns", "c1").unwrap(), addr);
        drop(w);
        clusters.shutdown().await;
    }
}
