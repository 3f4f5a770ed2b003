//! ControlPlane (MockControlPlane): owner gate (Cluster) → cluster lookup → pause → finalizer →
//! endpoint → `<cluster>-kubeconfig` Secret → one simulated instance per step until
//! `status.replicas` matches `spec.replicas` (driven through the scale subresource) → initialized,
//! counters, version(s), conditions; deletion releases every instance. Instances are Machines
//! when the machine template names an InfraMachineTemplate ([`super::cp_machines`]).

use super::infra_cluster::ENDPOINT_PORT;
use super::secrets::{self, CAPI_SECRET_TYPE, SecretSpec};
use super::{Ctx, Gates, Result, Subject, common_gates};
use crate::conditions::Wanted;
use crate::core::CoreKind;
use crate::kinds::MOCK_CONTROL_PLANE;
use crate::object::{self, CLUSTER_NAME_LABEL, is_deleting};
use capi_contract::contract::Contract;
use kube::ResourceExt;
use kube::core::DynamicObject;
use kube::runtime::controller::Action;
use serde_json::{Value, json};
use std::sync::Arc;

/// Reconciles one MockControlPlane.
pub async fn reconcile(obj: Arc<DynamicObject>, ctx: Arc<Ctx>) -> Result<Action> {
    let s = Subject::new(obj, MOCK_CONTROL_PLANE, &ctx)?;
    let deleting = is_deleting(&s.obj);
    let mut cluster = None;
    if !deleting {
        match common_gates(&s, &ctx, &[CoreKind::Cluster], false).await? {
            Gates::Stop(action) => return Ok(action),
            Gates::Go(c) => cluster = c.map(|c| *c),
        }
    }
    if s.fault("finalizer") {
        return if deleting {
            Ok(Action::await_change())
        } else {
            apply(&s, &ctx, cluster.as_ref()).await
        };
    }
    s.with_finalizer(apply(&s, &ctx, cluster.as_ref()), cleanup(&s, &ctx))
        .await
}

async fn apply(s: &Subject, ctx: &Ctx, cluster: Option<&DynamicObject>) -> Result<Action> {
    let cluster_name = object::label(&s.obj, CLUSTER_NAME_LABEL)
        .map(str::to_string)
        .or_else(|| cluster.map(|c| c.name_any()))
        .unwrap_or_else(|| s.name.clone());
    let latest = s.latest();
    let host = object::string_field(&latest, "spec.controlPlaneEndpoint.host")
        .map(str::to_string)
        .unwrap_or_else(|| format!("{cluster_name}-cp.{}.mock.capi-conformance.io", s.namespace));
    // The `control-plane/endpoint-wait` fault: the endpoint is the Cluster's (copied when it
    // has one, never made), and nothing waits for it.
    let cluster_endpoint = cluster
        .and_then(|c| object::string_field(c, "spec.controlPlaneEndpoint.host"))
        .filter(|h| !h.is_empty());
    let own_endpoint = !s.fault("endpoint") && !s.fault("endpoint-wait");
    if object::string_field(&latest, "spec.controlPlaneEndpoint.host").is_none()
        && (own_endpoint || (s.fault("endpoint-wait") && cluster_endpoint.is_some()))
    {
        let host = if own_endpoint {
            host.clone()
        } else {
            cluster_endpoint.unwrap_or_default().to_string()
        };
        s.patch(
            json!({ "spec": { "controlPlaneEndpoint": { "host": host, "port": ENDPOINT_PORT } } }),
        )
        .await?;
    }
    let desired = object::int_field(&latest, "spec.replicas")
        .unwrap_or(1)
        .max(0);
    let current = object::int_field(&latest, "status.replicas")
        .unwrap_or(0)
        .max(0);
    let target = if s.fault("scale-subresource") && current > 0 {
        current
    } else {
        desired
    };
    let next = match current.cmp(&target) {
        std::cmp::Ordering::Less => {
            ctx.infra
                .provision(&format!("{}{current}/", s.infra_id()))
                .await;
            current + 1
        }
        std::cmp::Ordering::Greater => {
            ctx.infra
                .release(&format!("{}{}/", s.infra_id(), current - 1));
            current - 1
        }
        std::cmp::Ordering::Equal => current,
    };
    if next > 0 {
        ensure_kubeconfig(s, ctx, &cluster_name, &host).await?;
        for purpose in CERTIFICATE_PURPOSES {
            let name = format!("{cluster_name}-{purpose}");
            let spec = SecretSpec {
                name: &name,
                cluster: Some(cluster_name.as_str()).filter(|_| !s.fault("certificates")),
                data: vec![
                    ("tls.crt", fake_pem("CERTIFICATE", purpose)),
                    ("tls.key", fake_pem("PRIVATE KEY", purpose)),
                ],
                secret_type: CAPI_SECRET_TYPE,
                owned: true,
            };
            secrets::ensure(&ctx.client, s, spec).await?;
        }
    }
    // Instances that are Machines (a machine template names an InfraMachineTemplate).
    let domains = super::cp_machines::control_plane_domains(cluster);
    super::cp_machines::sync(&ctx.client, s, &cluster_name, next, &domains).await?;
    let status = status(s, &cluster_name, desired, next);
    s.patch_status_if_changed(status).await?;
    Ok(Action::await_change())
}

fn status(s: &Subject, cluster_name: &str, desired: i64, replicas: i64) -> Value {
    let version = object::string_field(&s.obj, "spec.version")
        .unwrap_or("v0.0.0")
        .to_string();
    let initialized = replicas > 0 && !s.fault("initialized");
    let ready = if s.fault("status-replicas") {
        0
    } else {
        replicas
    };
    let converged = replicas == desired && ready == replicas && replicas > 0;
    let selector = format!("{CLUSTER_NAME_LABEL}={cluster_name},cluster.x-k8s.io/control-plane");
    let mut status = match s.contract {
        Contract::V1Beta1 => json!({
            "initialized": initialized,
            "ready": converged && !s.fault("ready"),
            "replicas": replicas,
            "updatedReplicas": ready,
            "readyReplicas": ready,
            "unavailableReplicas": (replicas - ready).max(0),
            "selector": selector,
        }),
        Contract::V1Beta2 => json!({
            "initialization": { "controlPlaneInitialized": initialized },
            "replicas": replicas,
            "readyReplicas": ready,
            "availableReplicas": ready,
            "upToDateReplicas": ready,
            "selector": selector,
        }),
    };
    if !s.fault("status-version") && replicas > 0 {
        match s.contract {
            Contract::V1Beta1 => status["version"] = json!(version),
            Contract::V1Beta2 => {
                status["versions"] = json!([{ "version": version, "replicas": replicas }])
            }
        }
    }
    if !s.fault("conditions") {
        let (reason, message) = if converged {
            ("Ready", "")
        } else {
            ("ScalingUp", "instances are being provisioned")
        };
        let wanted = match s.contract {
            Contract::V1Beta1 => vec![Wanted::new("Ready", converged, reason, message)],
            Contract::V1Beta2 => vec![
                Wanted::new(
                    "Available",
                    initialized,
                    if initialized {
                        "Available"
                    } else {
                        "NotAvailable"
                    },
                    "",
                ),
                Wanted::new("Ready", converged, reason, message),
            ],
        };
        status["conditions"] = Value::Array(s.conditions(&wanted, &[]));
    }
    status
}

/// Certificate Secrets `<cluster>-<purpose>` the mock keeps (contract: control-plane/certificates).
pub const CERTIFICATE_PURPOSES: [&str; 4] = ["ca", "etcd", "proxy", "sa"];

/// A PEM-framed placeholder (not a real key or certificate: the workload cluster is simulated).
fn fake_pem(label: &str, purpose: &str) -> String {
    use base64::Engine;
    let body = base64::engine::general_purpose::STANDARD
        .encode(format!("capi-conformance mock {purpose} {label}"));
    format!("-----BEGIN {label}-----\n{body}\n-----END {label}-----\n")
}

/// A kubeconfig for the simulated workload cluster, authenticating with a client certificate
/// (self-signed: no API server checks it) valid for a year, as KCP's.
fn kubeconfig(cluster: &str, host: &str) -> Result<String> {
    use base64::Engine;
    let (cert, key) = crate::kubeconfig::self_signed_client(crate::kubeconfig::VALIDITY_DAYS)
        .map_err(|e| super::ReconcileError::Invalid(e.to_string()))?;
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    Ok(format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {cluster}\n  cluster:\n    server: https://{host}:{ENDPOINT_PORT}\n    insecure-skip-tls-verify: true\ncontexts:\n- name: {cluster}-admin@{cluster}\n  context:\n    cluster: {cluster}\n    user: {cluster}-admin\ncurrent-context: {cluster}-admin@{cluster}\nusers:\n- name: {cluster}-admin\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n",
        b64(&cert),
        b64(&key)
    ))
}

/// The `<cluster>-kubeconfig` Secret: created once; afterwards its client certificate is
/// renewed when it expires within [`crate::kubeconfig::RENEW_WITHIN_DAYS`] (KCP's
/// `reconcileKubeconfig`), unless the `control-plane/kubeconfig-rotation` fault is on.
async fn ensure_kubeconfig(s: &Subject, ctx: &Ctx, cluster: &str, host: &str) -> Result<()> {
    use base64::Engine;
    let name = format!("{cluster}-kubeconfig");
    let key = if s.fault("kubeconfig-secret") {
        "kubeconfig"
    } else {
        "value"
    };
    let api: kube::Api<k8s_openapi::api::core::v1::Secret> =
        kube::Api::namespaced(ctx.client.clone(), &s.namespace);
    let Some(existing) = api.get_opt(&name).await? else {
        let spec = SecretSpec {
            name: &name,
            cluster: Some(cluster),
            data: vec![(key, kubeconfig(cluster, host)?)],
            secret_type: CAPI_SECRET_TYPE,
            owned: true,
        };
        secrets::ensure(&ctx.client, s, spec).await?;
        return Ok(());
    };
    if s.fault("kubeconfig-rotation") {
        return Ok(());
    }
    let Some(text) = existing
        .data
        .as_ref()
        .and_then(|d| d.get(key))
        .and_then(|v| String::from_utf8(v.0.clone()).ok())
    else {
        return Ok(());
    };
    let Ok(certs) = crate::kubeconfig::client_certificates(&text) else {
        return Ok(());
    };
    let renew_before =
        jiff::Timestamp::now().as_second() + crate::kubeconfig::RENEW_WITHIN_DAYS * 86_400;
    if !certs.iter().any(|c| c.not_after < renew_before) {
        return Ok(());
    }
    let (cert, key_pem) = crate::kubeconfig::self_signed_client(crate::kubeconfig::VALIDITY_DAYS)
        .map_err(|e| super::ReconcileError::Invalid(e.to_string()))?;
    let renewed = crate::kubeconfig::with_client_certificate(&text, &cert, &key_pem)
        .map_err(|e| super::ReconcileError::Invalid(e.to_string()))?;
    let patch = serde_json::json!({
        "metadata": {"resourceVersion": existing.metadata.resource_version},
        "data": {key: base64::engine::general_purpose::STANDARD.encode(renewed)},
    });
    api.patch(
        &name,
        &kube::api::PatchParams {
            field_manager: Some(crate::object::FIELD_MANAGER.into()),
            ..Default::default()
        },
        &kube::api::Patch::Merge(&patch),
    )
    .await?;
    Ok(())
}

async fn cleanup(s: &Subject, ctx: &Ctx) -> Result<Action> {
    super::drop_ready_on_delete(s, ctx).await?;
    // Its Machines go first (KCP's `reconcileDelete` waits for them too).
    if super::cp_machines::template_ref(s).is_some()
        && !super::cp_machines::delete_all(&ctx.client, s).await?
    {
        // An error, not a requeue: kube-runtime's finalizer helper removes the finalizer after
        // any cleanup that returns Ok.
        return Err(super::ReconcileError::Waiting(
            "waiting for the control plane's Machines to be deleted",
        ));
    }
    ctx.infra.release(&s.infra_id());
    Ok(Action::await_change())
}
