//! A real HTTPS webhook server for the webhook tests (axum behind rustls, certificate from a
//! throw-away rcgen CA given to configurations as `caBundle`), answering the way
//! controller-runtime's webhook server does, plus a test CRD with two versions of genuinely
//! different shapes that it converts between.
//!
//! Routes: `/mutate` (defaults `spec.paint.color` to `blue`, labels `mutated-by: webhook`),
//! `/validate` (denies `spec.paint.color: red` like c-r's `Denied`), `/deny-bare`
//! (`allowed: false` and nothing else), `/deny-invalid` (a 422 Status with causes, as CAPI's
//! validators answer), `/warn` (allowed with two warnings), `/slow` (answers after 3 s),
//! `/garbage` (not JSON), `/bad-uid` (wrong response uid), `/reject-dry-run` (denies dry-run
//! requests), `/convert` (Gadget v1alpha1 ⇄ v1), `/convert-lossy` (drops `paint.finish`),
//! `/convert-fail` (result Failure), `/convert-rename` (changes the name). Every request is
//! recorded with its Content-Type, ALPN protocol and TLS server name.
#![allow(dead_code)]

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::body::Bytes;
use axum::extract::{Extension, Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use base64::Engine as _;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use serde_json::{Value, json};
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// One request the server received.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub path: String,
    pub content_type: String,
    pub alpn: Option<String>,
    pub sni: Option<String>,
    pub body: Value,
}

#[derive(Clone)]
struct ConnInfo {
    alpn: Option<String>,
    sni: Option<String>,
}

#[derive(Clone, Default)]
struct Shared {
    recorded: Arc<Mutex<Vec<Recorded>>>,
    connections: Arc<std::sync::atomic::AtomicUsize>,
}

/// A running webhook server.
pub struct WebhookServer {
    pub addr: SocketAddr,
    /// The CA's PEM, base64 (a `caBundle` value).
    pub ca_bundle: String,
    shared: Shared,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
}

/// A CA plus a serving certificate for `names`.
pub struct Certs {
    pub ca_pem: String,
    pub cert_der: Vec<u8>,
    pub key_der: Vec<u8>,
}

pub fn certs(names: &[&str]) -> Certs {
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "webhook test CA");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let leaf =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    let key = KeyPair::generate().unwrap();
    let cert = leaf.signed_by(&key, &issuer).unwrap();
    Certs {
        ca_pem: ca_cert.pem(),
        cert_der: cert.der().to_vec(),
        key_der: key.serialize_der(),
    }
}

impl WebhookServer {
    /// Serves on 127.0.0.1 with a certificate for `localhost`, `127.0.0.1` and
    /// `hooks.webhooks.svc` (the Service the tests route).
    pub async fn start() -> Self {
        Self::start_with(&["localhost", "127.0.0.1", "hooks.webhooks.svc"]).await
    }

    pub async fn start_with(names: &[&str]) -> Self {
        let c = certs(names);
        Self::start_serving(
            CertificateDer::from(c.cert_der),
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(c.key_der)),
            &c.ca_pem,
        )
        .await
    }

    /// Serves `cert` (PEM, one certificate) with `key` (PEM, any of PKCS#8, PKCS#1, SEC1);
    /// `ca_pem` becomes [`WebhookServer::ca_bundle`]. For certificates made outside the tests,
    /// e.g. by `openssl req -x509`.
    pub async fn start_pem(cert: &str, key: &str, ca_pem: &str) -> Self {
        use rustls::pki_types::pem::PemObject as _;
        Self::start_serving(
            CertificateDer::from_pem_slice(cert.as_bytes()).unwrap(),
            PrivateKeyDer::from_pem_slice(key.as_bytes()).unwrap(),
            ca_pem,
        )
        .await
    }

    async fn start_serving(
        cert: CertificateDer<'static>,
        key: PrivateKeyDer<'static>,
        ca_pem: &str,
    ) -> Self {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(vec![cert], key)
            .unwrap();
        // controller-runtime's default: h2 offered (kube-apiserver must still get HTTP/1.1).
        config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let shared = Shared::default();
        let app = Router::new()
            .route("/{*path}", axum::routing::post(handle))
            .with_state(shared.clone());
        let (tx, mut rx) = tokio::sync::oneshot::channel::<()>();
        let counter = shared.connections.clone();
        tokio::spawn(async move {
            use hyper_util::rt::{TokioExecutor, TokioIo};
            use hyper_util::server::conn::auto;
            use hyper_util::service::TowerToHyperService;
            let mut conns = tokio::task::JoinSet::new();
            loop {
                tokio::select! {
                    _ = &mut rx => break,
                    accepted = listener.accept() => {
                        let Ok((stream, _)) = accepted else { continue };
                        let acceptor = acceptor.clone();
                        let app = app.clone();
                        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        conns.spawn(async move {
                            let Ok(tls) = acceptor.accept(stream).await else { return };
                            let (_, conn) = tls.get_ref();
                            let info = ConnInfo {
                                alpn: conn.alpn_protocol().map(|p| String::from_utf8_lossy(p).into_owned()),
                                sni: conn.server_name().map(str::to_string),
                            };
                            let service = TowerToHyperService::new(app.layer(Extension(info)));
                            let _ = auto::Builder::new(TokioExecutor::new())
                                .serve_connection(TokioIo::new(tls), service)
                                .await;
                        });
                    }
                    Some(_) = conns.join_next(), if !conns.is_empty() => {}
                }
            }
            conns.abort_all();
        });
        Self {
            addr,
            ca_bundle: base64::engine::general_purpose::STANDARD.encode(ca_pem),
            shared,
            stop: Some(tx),
        }
    }

    /// `https://127.0.0.1:<port><path>`.
    pub fn url(&self, path: &str) -> String {
        format!("https://127.0.0.1:{}{path}", self.addr.port())
    }

    /// Requests received so far.
    pub fn recorded(&self) -> Vec<Recorded> {
        self.shared.recorded.lock().unwrap().clone()
    }

    /// Requests received on `path`.
    pub fn on(&self, path: &str) -> Vec<Recorded> {
        self.recorded()
            .into_iter()
            .filter(|r| r.path == path)
            .collect()
    }

    /// TCP connections accepted so far.
    pub fn connections(&self) -> usize {
        self.shared
            .connections
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    pub fn clear(&self) {
        self.shared.recorded.lock().unwrap().clear();
    }

    /// Stops accepting and drops open connections.
    pub fn stop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

impl Drop for WebhookServer {
    fn drop(&mut self) {
        self.stop();
    }
}

async fn handle(
    State(shared): State<Shared>,
    Extension(info): Extension<ConnInfo>,
    Path(path): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let path = format!("/{path}");
    let content_type = headers
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let review: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    shared.recorded.lock().unwrap().push(Recorded {
        path: path.clone(),
        content_type: content_type.clone(),
        alpn: info.alpn,
        sni: info.sni,
        body: review.clone(),
    });
    // controller-runtime refuses any other Content-Type.
    if content_type != "application/json" {
        return (
            StatusCode::BAD_REQUEST,
            "contentType must be application/json",
        )
            .into_response();
    }
    if path.starts_with("/convert") {
        return axum::Json(convert(&path, &review)).into_response();
    }
    let request = &review["request"];
    let uid = request["uid"].clone();
    let answer = |response: Value| {
        let mut r = response;
        r["uid"] = uid.clone();
        axum::Json(json!({
            "apiVersion": review["apiVersion"].as_str().unwrap_or("admission.k8s.io/v1"),
            "kind": "AdmissionReview",
            "response": r,
        }))
        .into_response()
    };
    match path.as_str() {
        "/mutate" => {
            let obj = &request["object"];
            let mut ops = Vec::new();
            if obj.pointer("/metadata/labels").is_none() {
                ops.push(json!({"op": "add", "path": "/metadata/labels", "value": {}}));
            }
            ops.push(
                json!({"op": "add", "path": "/metadata/labels/mutated-by", "value": "webhook"}),
            );
            if obj.pointer("/spec/paint/color").is_none()
                && request["kind"]
                    == json!({"group": "conv.example.com", "version": "v1", "kind": "Gadget"})
            {
                if obj.pointer("/spec/paint").is_none() {
                    ops.push(json!({"op": "add", "path": "/spec/paint", "value": {}}));
                }
                ops.push(json!({"op": "add", "path": "/spec/paint/color", "value": "blue"}));
            }
            if request["operation"] == "DELETE" {
                return answer(json!({"allowed": true}));
            }
            let patch =
                base64::engine::general_purpose::STANDARD.encode(Value::Array(ops).to_string());
            answer(json!({"allowed": true, "patchType": "JSONPatch", "patch": patch}))
        }
        "/add-finalizer" => {
            let patch =
                json!([{"op": "add", "path": "/metadata/annotations", "value": {"seen": "yes"}}]);
            answer(json!({"allowed": true, "patchType": "JSONPatch",
                "patch": base64::engine::general_purpose::STANDARD.encode(patch.to_string())}))
        }
        "/validate" => {
            let color = request
                .pointer("/object/spec/paint/color")
                .or_else(|| request.pointer("/object/spec/color"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            if color == "red" {
                answer(
                    json!({"allowed": false, "status": {"code": 403, "reason": "Forbidden", "message": "red is not allowed"}}),
                )
            } else {
                answer(json!({"allowed": true, "status": {"code": 200}}))
            }
        }
        "/deny-bare" => answer(json!({"allowed": false})),
        "/deny-invalid" => answer(json!({"allowed": false, "status": {
            "status": "Failure", "code": 422, "reason": "Invalid",
            "message": "Gadget.conv.example.com \"g\" is invalid: spec.dimensions.size: Forbidden: immutable",
            "details": {"name": request["name"], "group": "conv.example.com", "kind": "Gadget",
                "causes": [{"reason": "FieldValueForbidden", "message": "Forbidden: immutable", "field": "spec.dimensions.size"}]}}})),
        "/warn" => answer(
            json!({"allowed": true, "warnings": ["first warning", "second \"quoted\" warning"]}),
        ),
        "/warn-deny" => answer(
            json!({"allowed": false, "warnings": ["denied with a warning"], "status": {"code": 403, "message": "no"}}),
        ),
        "/slow" => {
            tokio::time::sleep(Duration::from_secs(3)).await;
            answer(json!({"allowed": true}))
        }
        "/garbage" => (StatusCode::OK, "this is not json").into_response(),
        "/status-500" => (StatusCode::INTERNAL_SERVER_ERROR, "boom").into_response(),
        "/bad-uid" => axum::Json(
            json!({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
            "response": {"uid": "not-the-uid", "allowed": true}}),
        )
        .into_response(),
        "/reject-dry-run" => {
            if request["dryRun"] == true {
                answer(
                    json!({"allowed": false, "status": {"code": 403, "reason": "Forbidden", "message": "dry run refused"}}),
                )
            } else {
                answer(json!({"allowed": true}))
            }
        }
        "/bad-patch" => {
            let patch = json!([{"op": "remove", "path": "/spec/nothing/here"}]);
            answer(json!({"allowed": true, "patchType": "JSONPatch",
                "patch": base64::engine::general_purpose::STANDARD.encode(patch.to_string())}))
        }
        "/set-size-large" => {
            // An IfNeeded reinvocation probe: sets a label only when absent (idempotent).
            let obj = &request["object"];
            let mut ops = Vec::new();
            if obj.pointer("/metadata/labels").is_none() {
                ops.push(json!({"op": "add", "path": "/metadata/labels", "value": {}}));
            }
            if obj.pointer("/metadata/labels/second").is_none() {
                ops.push(json!({"op": "add", "path": "/metadata/labels/second", "value": "yes"}));
            }
            let patch =
                base64::engine::general_purpose::STANDARD.encode(Value::Array(ops).to_string());
            answer(json!({"allowed": true, "patchType": "JSONPatch", "patch": patch}))
        }
        _ => answer(json!({"allowed": true})),
    }
}

/// Gadget v1alpha1 `{size, color}` ⇄ v1 `{dimensions: {size}, paint: {color, finish}}`; the
/// finish survives a round trip through v1alpha1 in an annotation (as CAPI's conversions keep
/// hub-only fields).
pub fn convert_gadget(obj: &Value, desired: &str, lossy: bool) -> Value {
    const FINISH: &str = "conv.example.com/finish";
    let mut out = obj.clone();
    let spec = obj.get("spec").cloned().unwrap_or_else(|| json!({}));
    match desired {
        "conv.example.com/v1" => {
            let mut paint = json!({});
            if let Some(c) = spec.get("color") {
                paint["color"] = c.clone();
            }
            if let Some(f) = obj.pointer(&format!(
                "/metadata/annotations/{}",
                FINISH.replace('/', "~1")
            )) {
                paint["finish"] = f.clone();
            }
            let mut new_spec = json!({"paint": paint});
            if let Some(s) = spec.get("size") {
                new_spec["dimensions"] = json!({"size": s});
            }
            out["spec"] = new_spec;
            if let Some(a) = out
                .pointer_mut("/metadata/annotations")
                .and_then(Value::as_object_mut)
            {
                a.remove(FINISH);
                if a.is_empty() {
                    out["metadata"]
                        .as_object_mut()
                        .unwrap()
                        .remove("annotations");
                }
            }
        }
        _ => {
            let mut new_spec = json!({});
            if let Some(s) = spec.pointer("/dimensions/size") {
                new_spec["size"] = s.clone();
            }
            if let Some(c) = spec.pointer("/paint/color") {
                new_spec["color"] = c.clone();
            }
            out["spec"] = new_spec;
            if !lossy && let Some(f) = spec.pointer("/paint/finish") {
                if out.pointer("/metadata/annotations").is_none() {
                    out["metadata"]["annotations"] = json!({});
                }
                out["metadata"]["annotations"][FINISH] = f.clone();
            }
        }
    }
    out["apiVersion"] = json!(desired);
    out
}

pub fn convert(path: &str, review: &Value) -> Value {
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].as_str().unwrap_or_default();
    let objects = request["objects"].as_array().cloned().unwrap_or_default();
    let mut result = json!({"status": "Success"});
    let converted: Vec<Value> = match path {
        "/convert-fail" => {
            result = json!({"status": "Failure", "message": "conversion refused by test"});
            Vec::new()
        }
        _ => objects
            .iter()
            .map(|o| {
                let mut c = convert_gadget(o, desired, path == "/convert-lossy");
                if path == "/convert-rename" {
                    c["metadata"]["name"] = json!("renamed");
                }
                c
            })
            .collect(),
    };
    json!({
        "apiVersion": review["apiVersion"],
        "kind": "ConversionReview",
        "response": {"uid": request["uid"], "convertedObjects": converted, "result": result},
    })
}

/// The Gadget CRD (`gadgets.conv.example.com`): v1alpha1 (served) and v1 (served, storage),
/// genuinely different shapes, converted by `conversion` (a `webhook` clientConfig object, or
/// None for strategy None).
pub fn gadget_crd(conversion: Option<Value>) -> Value {
    let mut crd = json!({
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.conv.example.com"},
        "spec": {
            "group": "conv.example.com",
            "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget", "listKind": "GadgetList"},
            "versions": [
                {"name": "v1alpha1", "served": true, "storage": false,
                 "additionalPrinterColumns": [{"name": "Size", "type": "string", "jsonPath": ".spec.size"},
                                              {"name": "Color", "type": "string", "jsonPath": ".spec.color"}],
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "size": {"type": "string"}, "color": {"type": "string"}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
                 "subresources": {"status": {}}},
                {"name": "v1", "served": true, "storage": true,
                 "additionalPrinterColumns": [{"name": "Size", "type": "string", "jsonPath": ".spec.dimensions.size"},
                                              {"name": "Color", "type": "string", "jsonPath": ".spec.paint.color"},
                                              {"name": "Finish", "type": "string", "jsonPath": ".spec.paint.finish"}],
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "properties": {
                        "dimensions": {"type": "object", "properties": {"size": {"type": "string"}}},
                        "paint": {"type": "object", "properties": {
                            "color": {"type": "string"},
                            "finish": {"type": "string", "default": "matte"}}}}},
                    "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}},
                 "subresources": {"status": {}}}
            ]
        }
    });
    if let Some(cc) = conversion {
        crd["spec"]["conversion"] = json!({"strategy": "Webhook", "webhook": {
            "conversionReviewVersions": ["v1"], "clientConfig": cc}});
    }
    crd
}

/// A webhook entry for a configuration.
pub fn hook(name: &str, client_config: Value, rules: Value) -> Value {
    json!({
        "name": name,
        "clientConfig": client_config,
        "rules": rules,
        "sideEffects": "None",
        "admissionReviewVersions": ["v1"],
    })
}

/// Rules for gadgets at `versions` (CREATE and UPDATE).
pub fn gadget_rules(versions: &[&str]) -> Value {
    json!([{"operations": ["CREATE", "UPDATE"], "apiGroups": ["conv.example.com"],
        "apiVersions": versions, "resources": ["gadgets"]}])
}
