//! The mock's webhook mode (`mock-provider run --webhook-cert-dir DIR --webhook-port PORT`): a
//! webhook server over HTTPS with the serving certificate in `DIR` (`tls.crt`, `tls.key`, as
//! controller-runtime reads them), as a Cluster API provider's manager serves one:
//!
//! - `/convert`: ConversionReview v1, [`convert`] between genuinely different shapes;
//! - `/mutate-<group>-v1beta2-<kind>`: defaulting, `/validate-<group>-v1beta2-<kind>`: validation
//!   ([`admit`]), AdmissionReview v1, one path per kind as controller-runtime registers them;
//! - [`components`]: the mock's components for this mode (CRDs with `conversion: Webhook`,
//!   webhook configurations, Service, Certificate, Deployment), with cert-manager's
//!   `inject-ca-from` annotations as a provider's release manifest has them.
//!
//! Faults (named by the rule each breaks): `all/conversion-lossless` (conversion),
//! `all/defaulting-admitted` (a default the validation rejects) and
//! `all/defaulting-admitted:timeout` (a defaulter that answers after its timeout),
//! `template/ssa-dry-run` (and its role-specific twins).

pub mod admit;
pub mod components;
pub mod convert;

use super::FaultSet;
use axum::Json;
use axum::extract::State;
use axum::routing::post;
use base64::Engine as _;
use capi_contract::rule_ids::{self as id, RuleId};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

/// The faults of the admission webhooks, which only webhook mode has (none of them does
/// anything without it). `all/conversion-lossless` is the conversion's, which every mode has:
/// the mock's CRDs always convert through a webhook ([`crate::crds`]), served by `mock-provider
/// run --webhook-cert-dir` or, for an in-process mock, by the run.
pub const WEBHOOK_FAULTS: &[&str] = &[id::all::DEFAULTING_ADMITTED.as_str(), TIMEOUT_FAULT];

/// The fault of a defaulting webhook that answers too late.
pub const TIMEOUT_FAULT: &str = "all/defaulting-admitted:timeout";

/// How long the timing-out defaulter takes: past the mutating configuration's
/// `timeoutSeconds` ([`components::MUTATING_TIMEOUT_SECONDS`]).
pub const TIMEOUT_DELAY: std::time::Duration =
    std::time::Duration::from_secs(components::MUTATING_TIMEOUT_SECONDS as u64 + 1);

/// Faults the validating webhook implements instead of the CRDs in webhook mode.
const TEMPLATE_FAULTS: &[RuleId] = &[
    id::template::SSA_DRY_RUN,
    id::infra_machine_template::SSA_DRY_RUN,
    id::infra_machinepool_template::SSA_DRY_RUN,
    id::bootstrap_template::SSA_DRY_RUN,
];

/// `faults` without those the webhooks implement (what the CRDs still implement).
pub fn without_webhook_faults(faults: &FaultSet) -> FaultSet {
    FaultSet::parse(
        faults
            .names()
            .filter(|f| !TEMPLATE_FAULTS.iter().any(|t| t == f))
            .collect::<Vec<_>>()
            .join(","),
    )
}

/// The conversion webhook's path (controller-runtime's).
pub const CONVERT_PATH: &str = crate::crds::CONVERSION_PATH;

/// Kinds with a defaulting webhook.
pub const DEFAULTED_KINDS: &[&str] = &["MockControlPlane"];

fn path_suffix(group: &str, version: &str, kind: &str) -> String {
    format!(
        "{}-{version}-{}",
        group.replace('.', "-"),
        kind.to_lowercase()
    )
}

/// controller-runtime's defaulting webhook path for a kind: `/mutate-<group with dashes>-<version>-<kind>`.
pub fn mutate_path(group: &str, version: &str, kind: &str) -> String {
    format!("/mutate-{}", path_suffix(group, version, kind))
}

/// controller-runtime's validating webhook path for a kind.
pub fn validate_path(group: &str, version: &str, kind: &str) -> String {
    format!("/validate-{}", path_suffix(group, version, kind))
}

/// Why the webhook server could not start.
#[derive(Debug, thiserror::Error)]
pub enum WebhookError {
    #[error("reading the serving certificate {path}: {message}")]
    Cert { path: String, message: String },
    #[error("TLS configuration: {0}")]
    Tls(#[from] rustls::Error),
    #[error("listening on {addr}: {source}")]
    Listen {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// How to serve.
#[derive(Debug, Clone)]
pub struct WebhookOptions {
    /// Directory with `tls.crt` and `tls.key`.
    pub cert_dir: PathBuf,
    /// Where to listen (controller-runtime's default port is 9443).
    pub addr: SocketAddr,
    pub faults: FaultSet,
}

/// A running webhook server; stops when dropped or on [`WebhookServer::shutdown`].
pub struct WebhookServer {
    pub addr: SocketAddr,
    task: tokio::task::JoinHandle<()>,
}

impl WebhookServer {
    pub fn shutdown(self) {
        self.task.abort();
    }
}

impl Drop for WebhookServer {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn tls_config(dir: &Path) -> Result<Arc<rustls::ServerConfig>, WebhookError> {
    let cert_path = dir.join("tls.crt");
    let key_path = dir.join("tls.key");
    let err = |p: &Path, e: &dyn std::fmt::Display| WebhookError::Cert {
        path: p.display().to_string(),
        message: e.to_string(),
    };
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&cert_path)
        .map_err(|e| err(&cert_path, &e))?
        .collect::<Result<_, _>>()
        .map_err(|e| err(&cert_path, &e))?;
    let key = PrivateKeyDer::from_pem_file(&key_path).map_err(|e| err(&key_path, &e))?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?
        .with_no_client_auth()
        .with_single_cert(certs, key)?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

/// Starts serving; returns once listening.
pub async fn serve(opts: WebhookOptions) -> Result<WebhookServer, WebhookError> {
    let acceptor = tokio_rustls::TlsAcceptor::from(tls_config(&opts.cert_dir)?);
    let listener = tokio::net::TcpListener::bind(opts.addr)
        .await
        .map_err(|source| WebhookError::Listen {
            addr: opts.addr,
            source,
        })?;
    let addr = listener
        .local_addr()
        .map_err(|source| WebhookError::Listen {
            addr: opts.addr,
            source,
        })?;
    // One handler per kind and webhook, as controller-runtime registers them.
    let mut app = axum::Router::new().route(CONVERT_PATH, post(convert_review));
    for k in crate::kinds::ALL {
        if DEFAULTED_KINDS.contains(&k.kind) {
            app = app.route(
                &mutate_path(k.group, "v1beta2", k.kind),
                post(mutate_review),
            );
        }
        app = app.route(
            &validate_path(k.group, "v1beta2", k.kind),
            post(validate_review),
        );
    }
    let app = app.with_state(Arc::new(opts.faults));
    let task = tokio::spawn(async move {
        loop {
            let Ok((tcp, _)) = listener.accept().await else {
                continue;
            };
            let acceptor = acceptor.clone();
            let app = app.clone();
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper_util::service::TowerToHyperService::new(app);
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
            });
        }
    });
    Ok(WebhookServer { addr, task })
}

type Faults = State<Arc<FaultSet>>;

async fn convert_review(State(faults): Faults, Json(review): Json<Value>) -> Json<Value> {
    let request = review.get("request").cloned().unwrap_or(Value::Null);
    let uid = request.get("uid").cloned().unwrap_or(json!(""));
    let desired = request
        .get("desiredAPIVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let lossless = !faults.has(id::all::CONVERSION_LOSSLESS);
    let objects = request
        .get("objects")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let converted: Result<Vec<Value>, String> = objects
        .iter()
        .map(|o| convert::convert(o, desired, lossless).map_err(|e| e.to_string()))
        .collect();
    let response = match converted {
        Ok(objects) => {
            json!({"uid": uid, "convertedObjects": objects, "result": {"status": "Success"}})
        }
        Err(message) => {
            json!({"uid": uid, "result": {"status": "Failure", "message": message}})
        }
    };
    Json(
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview", "response": response}),
    )
}

fn admission_response(request: &Value, verdict: admit::Verdict) -> Json<Value> {
    let uid = request.get("uid").cloned().unwrap_or(json!(""));
    let response = match verdict {
        admit::Verdict::Allowed(patch) if patch.is_empty() => json!({"uid": uid, "allowed": true}),
        admit::Verdict::Allowed(patch) => json!({
            "uid": uid, "allowed": true, "patchType": "JSONPatch",
            "patch": base64::engine::general_purpose::STANDARD.encode(Value::Array(patch).to_string()),
        }),
        admit::Verdict::Denied {
            code,
            reason,
            message,
        } => json!({
            "uid": uid, "allowed": false,
            "status": {"code": code, "reason": reason, "message": message},
        }),
    };
    Json(
        json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "response": response}),
    )
}

async fn mutate_review(State(faults): Faults, Json(review): Json<Value>) -> Json<Value> {
    let request = review.get("request").cloned().unwrap_or(Value::Null);
    let verdict = admit::default(&request, faults.has(id::all::DEFAULTING_ADMITTED));
    let dry_run = request.get("dryRun").and_then(Value::as_bool) == Some(true);
    if faults.has_named(TIMEOUT_FAULT)
        && dry_run
        && matches!(&verdict, admit::Verdict::Allowed(p) if !p.is_empty())
    {
        tokio::time::sleep(TIMEOUT_DELAY).await;
    }
    admission_response(&request, verdict)
}

async fn validate_review(State(faults): Faults, Json(review): Json<Value>) -> Json<Value> {
    let request = review.get("request").cloned().unwrap_or(Value::Null);
    let kind = request
        .pointer("/kind/kind")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let exempt = !(faults.has(id::template::SSA_DRY_RUN)
        || role_template_fault(kind).is_some_and(|f| faults.has(f)));
    let verdict = admit::validate(&request, exempt);
    admission_response(&request, verdict)
}

/// The role-specific ssa-dry-run fault of a template kind.
fn role_template_fault(kind: &str) -> Option<RuleId> {
    match kind {
        "MockMachineTemplate" => Some(id::infra_machine_template::SSA_DRY_RUN),
        "MockMachinePoolTemplate" => Some(id::infra_machinepool_template::SSA_DRY_RUN),
        "MockConfigTemplate" => Some(id::bootstrap_template::SSA_DRY_RUN),
        _ => None,
    }
}
