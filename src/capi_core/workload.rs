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
use std::sync::{Arc, Mutex};

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
}

impl WorkloadClusters {
    fn lock(&self) -> std::sync::MutexGuard<'_, BTreeMap<String, Arc<WorkloadCluster>>> {
        self.clusters.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The workload cluster of `namespace/cluster`, started on first use.
    pub async fn get_or_start(
        &self,
        namespace: &str,
        cluster: &str,
    ) -> Result<Arc<WorkloadCluster>, WorkloadError> {
        let key = format!("{namespace}/{cluster}");
        if let Some(w) = self.lock().get(&key) {
            return Ok(w.clone());
        }
        let started = Arc::new(start(cluster).await?);
        let mut map = self.lock();
        // Two starts racing for one cluster: the first one stored wins.
        Ok(map.entry(key).or_insert(started).clone())
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

    /// Stops every listener (the servers go with their last reference).
    pub async fn shutdown(&self) {
        let all: Vec<Arc<WorkloadCluster>> =
            std::mem::take(&mut *self.lock()).into_values().collect();
        for w in all {
            if let Ok(w) = Arc::try_unwrap(w) {
                w.listener.shutdown().await;
            }
        }
    }
}

async fn start(cluster: &str) -> Result<WorkloadCluster, WorkloadError> {
    let fail = |message: String| WorkloadError::Start {
        cluster: cluster.to_string(),
        message,
    };
    let ca = Authority::new("kubernetes")?;
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
    let addr = "127.0.0.1:0"
        .parse()
        .map_err(|e: std::net::AddrParseError| fail(e.to_string()))?;
    let listener = server
        .listen_with_identity(addr, identity)
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
}
