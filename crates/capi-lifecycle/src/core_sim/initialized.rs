//! What an initialized control plane leaves (CAPI `util/secret`, `util/kubeconfig`) and where
//! the Cluster's endpoint leads: the certificate Secrets, `<cluster>-kubeconfig`, the workload
//! cluster on the endpoint reserved for it (docs/core-simulation.md).

use super::{
    CONTROL_PLANE_ENDPOINT_PORT, UNREACHABLE_ENDPOINT_HOST, cluster_owner_ref, cluster_resource,
    secret_resource,
};
use crate::env::{Env, EnvError};
use serde_json::{Value, json};

impl Env {
    /// What an initialized control plane leaves (CAPI `util/secret`, `util/kubeconfig`): the
    /// certificate Secrets `<cluster>-ca`, `-etcd`, `-proxy`, `-sa` (`tls.crt`/`tls.key`, type
    /// `cluster.x-k8s.io/secret`, cluster-name label) and, on an embedded run,
    /// `<cluster>-kubeconfig` (key `value`) for the workload cluster started for it, whose
    /// serving certificate `<cluster>-ca` signed. Owned by the Cluster (a plain reference, as
    /// the Cluster controller owns the kubeconfig it makes), so they go with it. Not recorded
    /// in the timeline: their contents never reach a report.
    pub async fn create_cluster_secrets(&self, cluster: &str) -> Result<(), EnvError> {
        use crate::capi_core::pki;
        let owner = self.cluster(cluster).await?;
        let mut owner_ref = cluster_owner_ref(&owner);
        if let Some(o) = owner_ref.as_object_mut() {
            o.remove("controller");
            o.remove("blockOwnerDeletion");
        }
        let pki_err =
            |e: pki::PkiError| EnvError::Invalid(format!("cluster certificates of {cluster}: {e}"));
        let mut secrets = Vec::new();
        match &self.workloads {
            Some(w) => {
                let ca = match self.existing_cluster_ca(cluster).await? {
                    Some(ca) => ca,
                    None => pki::Authority::new("kubernetes").map_err(pki_err)?,
                };
                let wc = w
                    .start(&self.namespace, cluster, ca)
                    .await
                    .map_err(|e| EnvError::Invalid(e.to_string()))?;
                secrets.extend(pki::certificate_secrets(cluster, &wc.ca).map_err(pki_err)?);
                let text = pki::kubeconfig(cluster, wc.url(), &wc.ca, Some(wc.token()))
                    .map_err(pki_err)?;
                secrets.push(pki::kubeconfig_secret(cluster, &text));
            }
            None => {
                let ca = pki::Authority::new("kubernetes").map_err(pki_err)?;
                secrets.extend(pki::certificate_secrets(cluster, &ca).map_err(pki_err)?);
            }
        }
        for mut secret in secrets {
            let name = secret
                .pointer("/metadata/name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            secret["metadata"]["namespace"] = json!(self.namespace);
            secret["metadata"]["ownerReferences"] = json!([owner_ref.clone()]);
            if let Some(labels) = secret["metadata"]["labels"].as_object_mut() {
                labels.extend(self.run_labels());
            }
            let typed: k8s_openapi::api::core::v1::Secret = serde_json::from_value(secret)
                .map_err(|e| EnvError::Invalid(format!("Secret {name}: {e}")))?;
            let api: kube::Api<k8s_openapi::api::core::v1::Secret> =
                kube::Api::namespaced(self.client.clone(), &self.namespace);
            match api.create(&kube::api::PostParams::default(), &typed).await {
                Ok(_) => self
                    .guard
                    .track(&secret_resource(), Some(&self.namespace), &name),
                // A second gate opening on the same Cluster keeps the first Secrets.
                Err(kube::Error::Api(s)) if s.code == 409 => {}
                Err(source) => {
                    return Err(EnvError::Api {
                        action: "create",
                        object: format!("Secret/{name}"),
                        source,
                    });
                }
            }
        }
        Ok(())
    }

    /// The CA of `<cluster>-ca` when that Secret exists with a certificate and key the tool can
    /// sign with (a provider's own: KCP and CABPK generate it when absent,
    /// `LookupOrGenerateCached`); `None` otherwise.
    async fn existing_cluster_ca(
        &self,
        cluster: &str,
    ) -> Result<Option<crate::capi_core::pki::Authority>, EnvError> {
        let api: kube::Api<k8s_openapi::api::core::v1::Secret> =
            kube::Api::namespaced(self.client.clone(), &self.namespace);
        let name = format!("{cluster}-ca");
        let secret = api.get_opt(&name).await.map_err(|source| EnvError::Api {
            action: "get",
            object: format!("Secret/{name}"),
            source,
        })?;
        let data = |key: &str| {
            secret
                .as_ref()
                .and_then(|s| s.data.as_ref())
                .and_then(|d| d.get(key))
                .map(|b| String::from_utf8_lossy(&b.0).to_string())
        };
        Ok(match (data("tls.crt"), data("tls.key")) {
            (Some(crt), Some(key)) => crate::capi_core::pki::Authority::from_pem(&crt, &key).ok(),
            _ => None,
        })
    }

    /// The Cluster's `spec.controlPlaneEndpoint`: on an embedded run the address its workload
    /// cluster will serve on (reserved now, served once the control plane is initialized, so
    /// a kubeconfig a provider builds from endpoint and `<cluster>-ca` reaches it); on a real
    /// cluster a name that resolves nowhere (nothing of the tool's is reachable from there).
    pub fn control_plane_endpoint(&self, cluster: &str) -> Result<(String, i64), EnvError> {
        match &self.workloads {
            Some(w) => {
                let addr = w
                    .reserve(&self.namespace, cluster)
                    .map_err(|e| EnvError::Invalid(e.to_string()))?;
                Ok((addr.ip().to_string(), i64::from(addr.port())))
            }
            None => Ok((
                UNREACHABLE_ENDPOINT_HOST.to_string(),
                CONTROL_PLANE_ENDPOINT_PORT,
            )),
        }
    }

    /// Creates the Cluster `name` of `subject` (with `control_plane` as its controlPlaneRef)
    /// whose `controlPlaneEndpoint` is [`Self::control_plane_endpoint`]: where its workload
    /// cluster serves once the control plane is initialized.
    pub async fn create_cluster_with_endpoint(
        &self,
        subject: &crate::Subject,
        name: &str,
        control_plane: Option<(&kube::discovery::ApiResource, &str)>,
    ) -> Result<Value, EnvError> {
        let (host, port) = self.control_plane_endpoint(name)?;
        self.create_cluster_of(
            subject,
            name,
            super::ClusterSpec {
                control_plane,
                endpoint: Some((&host, port)),
                ..super::ClusterSpec::default()
            },
        )
        .await
    }

    /// Starts the workload cluster of `cluster` on its reserved endpoint once the provider's
    /// `<cluster>-ca` exists (a control plane provider generates it, then writes
    /// `<cluster>-kubeconfig` from the endpoint and that CA and connects to find
    /// `kube-system/kubeadm-config`, as KCP does); `Ok(false)` when there is no such CA the
    /// tool can sign with, or no workload clusters (a real cluster).
    pub async fn start_workload_on_provider_ca(&self, cluster: &str) -> Result<bool, EnvError> {
        let Some(w) = &self.workloads else {
            return Ok(false);
        };
        let Some(ca) = self.existing_cluster_ca(cluster).await? else {
            return Ok(false);
        };
        w.start(&self.namespace, cluster, ca)
            .await
            .map_err(|e| EnvError::Invalid(e.to_string()))?;
        Ok(true)
    }

    /// Marks the control plane initialized on the Cluster (status flag + conditions), after
    /// creating what an initialized control plane leaves ([`Self::create_cluster_secrets`]).
    ///
    /// When that includes `<cluster>-kubeconfig` (an embedded run), the provider first gets the propagation
    /// allowance to see the Secret: CAPI's ClusterCache connects as soon as the Cluster reports
    /// its infrastructure provisioned, reads the kubeconfig from the manager's informer cache,
    /// and retries a failed connection only after 30 s (`ConnectionCreationRetryInterval`).
    /// A worker's config meets a cluster whose connection was made long before (the control
    /// plane's initialization takes minutes); without the allowance CABPK's cache missed the
    /// Secret created 1 ms before the flag in 3 of 4 debug-build runs, and its join data came
    /// 30 s late.
    pub async fn set_control_plane_initialized(&self, cluster: &str) -> Result<Value, EnvError> {
        self.create_cluster_secrets(cluster).await?;
        if self.workloads.is_some() {
            self.allow_propagation().await;
        }
        self.mark_control_plane_initialized(cluster, "open gate: control plane initialized")
            .await
    }

    /// The Cluster's control-plane-initialized gate and conditions (what core's Cluster
    /// controller writes once the control plane reports it initialized).
    pub(crate) async fn mark_control_plane_initialized(
        &self,
        cluster: &str,
        action: &str,
    ) -> Result<Value, EnvError> {
        let now = jiff::Timestamp::now()
            .strftime("%Y-%m-%dT%H:%M:%SZ")
            .to_string();
        // v1beta2: `initialization.controlPlaneInitialized` and the metav1 condition in
        // `status.conditions`; the v1beta1 condition (no reason needed) where core v1.11 keeps
        // it, `status.deprecated.v1beta1.conditions`, which a v1beta1 reader sees as its
        // `status.conditions` through conversion.
        self.patch_status(
            &cluster_resource(),
            cluster,
            json!({"status": {
                "initialization": {"infrastructureProvisioned": true, "controlPlaneInitialized": true},
                "conditions": [{"type": "ControlPlaneInitialized", "status": "True", "reason": "Initialized",
                                "message": "", "lastTransitionTime": now}],
                "deprecated": {"v1beta1": {"conditions": [
                    {"type": "ControlPlaneInitialized", "status": "True", "lastTransitionTime": now}]}}}}),
            action,
        )
        .await
    }
}
