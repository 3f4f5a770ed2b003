//! Core's `reconcileNode`: a Machine's Node in the workload cluster, reached through
//! `<cluster>-kubeconfig` (CAPI's ClusterCache).

use super::{Sim, WORKLOAD_RETRY, wake_on};
use kube::api::{Api, ListParams};
use kube::runtime::watcher;
use serde_json::Value;

/// Why a Machine has no Node (yet).
pub(super) struct NoNode {
    /// Whether the workload cluster answered (the Node is known to be missing), as CAPI's
    /// ClusterCache tells a connected cluster from one it cannot reach.
    pub connected: bool,
    pub why: String,
}

impl NoNode {
    fn down(why: String) -> Self {
        NoNode {
            connected: false,
            why,
        }
    }
}

impl Sim {
    /// The Node whose `spec.providerID` is `id` in the workload cluster. A workload cluster
    /// that cannot be reached (a kubeconfig naming a host that is not there) is tried again
    /// after [`WORKLOAD_RETRY`], each attempt bounded by it too.
    pub(super) async fn node_of(&mut self, id: &str) -> Result<Value, NoNode> {
        if let Some(at) = self.workload_retry_at
            && tokio::time::Instant::now() < at
        {
            return Err(NoNode::down(
                "the workload cluster did not answer; trying again shortly".into(),
            ));
        }
        let client = self.workload_client().await.map_err(NoNode::down)?;
        let nodes: Api<k8s_openapi::api::core::v1::Node> = Api::all(client);
        let listed = tokio::time::timeout(WORKLOAD_RETRY, nodes.list(&ListParams::default()))
            .await
            .unwrap_or_else(|_| {
                Err(kube::Error::Service(
                    format!("no answer within {}s", WORKLOAD_RETRY.as_secs()).into(),
                ))
            });
        let list = match listed {
            Ok(l) => l,
            Err(e) => {
                self.workload = None;
                self.workload_retry_at = Some(tokio::time::Instant::now() + WORKLOAD_RETRY);
                return Err(NoNode::down(format!(
                    "listing the workload cluster's Nodes: {e}"
                )));
            }
        };
        self.workload_retry_at = None;
        if !self.nodes_watched {
            self.nodes_watched = true;
            self.watches.push(wake_on(
                nodes,
                watcher::Config::default(),
                self.wake.clone(),
            ));
        }
        list.items
            .into_iter()
            .find(|n| n.spec.as_ref().and_then(|s| s.provider_id.as_deref()) == Some(id))
            .and_then(|n| serde_json::to_value(n).ok())
            .ok_or_else(|| NoNode {
                connected: true,
                why: format!("no Node of providerID {id} in the workload cluster"),
            })
    }

    /// A client of the workload cluster from `<cluster>-kubeconfig` (key `value`).
    async fn workload_client(&mut self) -> Result<kube::Client, String> {
        if let Some(c) = &self.workload {
            return Ok(c.clone());
        }
        let secrets: Api<k8s_openapi::api::core::v1::Secret> =
            Api::namespaced(self.env.client.clone(), &self.env.namespace);
        let name = format!("{}-kubeconfig", self.cluster);
        let secret = secrets
            .get_opt(&name)
            .await
            .map_err(|e| format!("reading Secret {name}: {e}"))?
            .ok_or_else(|| format!("no Secret {name} yet"))?;
        let text = secret
            .data
            .as_ref()
            .and_then(|d| d.get("value"))
            .map(|b| String::from_utf8_lossy(&b.0).to_string())
            .ok_or_else(|| format!("Secret {name} has no key `value`"))?;
        let kubeconfig = kube::config::Kubeconfig::from_yaml(&text)
            .map_err(|e| format!("Secret {name} is not a kubeconfig: {e}"))?;
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &Default::default())
            .await
            .map_err(|e| format!("Secret {name}: {e}"))?;
        let client = kube::Client::try_from(config).map_err(|e| format!("Secret {name}: {e}"))?;
        self.workload = Some(client.clone());
        Ok(client)
    }
}
