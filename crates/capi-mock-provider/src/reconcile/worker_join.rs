//! The CAPI-like worker join of the bootstrap reconciler ([`crate::core::CoreReads::worker_join`]),
//! as CABPK joins a worker (`joinWorker`): the Cluster's `ControlPlaneInitialized` condition
//! True, its CA Secret `<cluster>-ca` with `tls.crt` (a PEM certificate) and `tls.key`
//! ("missing certificate" otherwise), and a bootstrap token Secret created in `kube-system` of
//! the workload cluster `<cluster>-kubeconfig` (data key `value`) points at.

use super::{ReconcileError, Result, Subject};
use crate::core;
use crate::object::CONTROL_PLANE_LABEL;
use k8s_openapi::api::core::v1::Secret;
use kube::api::{Api, PostParams};
use kube::core::DynamicObject;
use kube::{Client, ResourceExt};
use serde_json::json;

/// Why a worker cannot join yet (the reconcile is retried).
fn not_yet(message: String) -> ReconcileError {
    ReconcileError::Invalid(message)
}

/// The DER of the first PEM block of `pem`.
fn pem_body(pem: &[u8]) -> Option<Vec<u8>> {
    use base64::Engine;
    let text = String::from_utf8_lossy(pem);
    let body: String = text
        .lines()
        .skip_while(|l| !l.starts_with("-----BEGIN"))
        .skip(1)
        .take_while(|l| !l.starts_with("-----END"))
        .collect();
    base64::engine::general_purpose::STANDARD.decode(body).ok()
}

fn data<'a>(secret: &'a Secret, key: &str) -> Option<&'a [u8]> {
    secret
        .data
        .as_ref()?
        .get(key)
        .map(|b| b.0.as_slice())
        .filter(|b| !b.is_empty())
}

/// Whether the owner is a worker (a Machine without the control-plane label, or a MachinePool).
pub fn is_worker(owner: Option<&DynamicObject>) -> bool {
    owner.is_none_or(|o| !o.labels().contains_key(CONTROL_PLANE_LABEL))
}

/// CABPK's branch for the config's owner: init, control-plane join or worker join (the module
/// doc); `Err` while the owner's path cannot produce data yet (the reconcile is retried).
pub async fn init_or_join(
    client: &Client,
    s: &Subject,
    cluster: &DynamicObject,
    owner: Option<&DynamicObject>,
) -> Result<()> {
    let name = cluster.name_any();
    if !core::cluster_infrastructure_provisioned(cluster) {
        return Err(not_yet(format!(
            "Cluster {name}: waiting for the infrastructure to be provisioned"
        )));
    }
    if is_worker(owner) {
        return join(client, s, cluster).await;
    }
    if !core::cluster_control_plane_initialized(cluster) {
        // The init config of the first control-plane Machine.
        return Ok(());
    }
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &s.namespace);
    for purpose in ["ca", "sa", "proxy", "etcd"] {
        let secret = secrets
            .get_opt(&format!("{name}-{purpose}"))
            .await?
            .ok_or_else(|| not_yet(format!("{name}-{purpose}: missing certificate")))?;
        if data(&secret, "tls.crt").is_none() || data(&secret, "tls.key").is_none() {
            return Err(not_yet(format!(
                "{name}-{purpose}: missing crt or key data"
            )));
        }
    }
    Ok(())
}

/// Checks the join prerequisites and creates the join token on the workload cluster.
async fn join(client: &Client, s: &Subject, cluster: &DynamicObject) -> Result<()> {
    let name = cluster.name_any();
    if !core::cluster_control_plane_initialized(cluster) {
        return Err(not_yet(format!(
            "Cluster {name}: control plane not initialized (condition ControlPlaneInitialized)"
        )));
    }
    let secrets: Api<Secret> = Api::namespaced(client.clone(), &s.namespace);
    let ca = secrets
        .get_opt(&format!("{name}-ca"))
        .await?
        .ok_or_else(|| not_yet(format!("{name}-ca: missing certificate")))?;
    let crt =
        data(&ca, "tls.crt").ok_or_else(|| not_yet(format!("{name}-ca: missing crt data")))?;
    if data(&ca, "tls.key").is_none() {
        return Err(not_yet(format!("{name}-ca: missing key data")));
    }
    if !String::from_utf8_lossy(crt).contains("-----BEGIN CERTIFICATE-----") {
        return Err(not_yet(format!(
            "{name}-ca: unable to parse ca certificate"
        )));
    }
    let kubeconfig = secrets
        .get_opt(&format!("{name}-kubeconfig"))
        .await?
        .ok_or_else(|| not_yet(format!("{name}-kubeconfig: kubeconfig secret not found")))?;
    let value = data(&kubeconfig, "value")
        .ok_or_else(|| not_yet(format!("{name}-kubeconfig: no data key value")))?;
    let text = String::from_utf8_lossy(value).to_string();
    let parsed = kube::config::Kubeconfig::from_yaml(&text)
        .map_err(|e| not_yet(format!("{name}-kubeconfig: {e}")))?;
    let config = kube::Config::from_custom_kubeconfig(parsed, &Default::default())
        .await
        .map_err(|e| not_yet(format!("{name}-kubeconfig: {e}")))?;
    let workload = Client::try_from(config.clone())
        .map_err(|e| not_yet(format!("workload cluster of {name}: {e}")))?;
    // kubeadm join dials the Cluster's controlPlaneEndpoint (CABPK's discovery
    // `apiServerEndpoint`) and trusts it by the `<cluster>-ca` certificate hash: the endpoint
    // must be the workload cluster, served with a certificate of that CA.
    let (host, port) = core::cluster_endpoint(cluster).ok_or_else(|| {
        not_yet(format!(
            "Cluster {name}: waiting for Cluster.spec.controlPlaneEndpoint"
        ))
    })?;
    let mut at_endpoint = config;
    at_endpoint.cluster_url = format!("https://{host}:{port}")
        .parse()
        .map_err(|e| not_yet(format!("Cluster {name}: endpoint {host}:{port}: {e}")))?;
    at_endpoint.root_cert =
        Some(vec![pem_body(crt).ok_or_else(|| {
            not_yet(format!("{name}-ca: unable to parse ca certificate"))
        })?]);
    at_endpoint.accept_invalid_certs = false;
    Client::try_from(at_endpoint)
        .map_err(|e| not_yet(format!("Cluster {name} endpoint: {e}")))?
        .apiserver_version()
        .await
        .map_err(|e| {
            not_yet(format!(
                "Cluster {name}: the control plane endpoint {host}:{port} is not served with a certificate of {name}-ca: {e}"
            ))
        })?;
    let token_id: String = uuid::Uuid::new_v4().simple().to_string()[..6].to_string();
    let token_secret: String = uuid::Uuid::new_v4().simple().to_string()[..16].to_string();
    let token: Secret = serde_json::from_value(json!({
        "metadata": {"name": format!("bootstrap-token-{token_id}"), "namespace": "kube-system"},
        "type": "bootstrap.kubernetes.io/token",
        "stringData": {
            "token-id": token_id,
            "token-secret": token_secret,
            "usage-bootstrap-signing": "true",
            "usage-bootstrap-authentication": "true",
            "auth-extra-groups": "system:bootstrappers:kubeadm:default-node-token",
            "description": format!("token generated by the capi-conformance mock for {}/{}", s.namespace, s.name),
        },
    }))
    .map_err(|e| ReconcileError::Invalid(e.to_string()))?;
    Api::<Secret>::namespaced(workload, "kube-system")
        .create(&PostParams::default(), &token)
        .await
        .map_err(|e| {
            not_yet(format!(
                "creating a join token on the workload cluster of {name}: {e}"
            ))
        })?;
    Ok(())
}
