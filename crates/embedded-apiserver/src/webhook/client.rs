//! The HTTPS client kube-apiserver uses for webhooks (`k8s.io/apiserver/pkg/util/webhook`):
//! `clientConfig.url` or `clientConfig.service` (`https://<name>.<namespace>.svc:<port><path>`,
//! TLS server name `<name>.<namespace>.svc`, resolved through the stored Service and the
//! embedder's routes), `caBundle` as the only trust root (system roots when empty), ALPN
//! `http/1.1` only, `Content-Type: application/json`, `?timeout=<n>s`.
//!
//! Errors are rendered as Go's `net/http` client renders them (`Post "<url>": <cause>`), since
//! kube-apiserver puts that text verbatim into its Status messages.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio_rustls::TlsConnector;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName};

use super::verify::WebhookCertVerifier;

mod go_errors;
pub(crate) use go_errors::unsupported_review_versions;
use go_errors::{dial_error, hyper_error, tls_error};
pub use go_errors::{post_error, status_error, timeout_url};

/// Where a webhook is served.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Endpoint {
    /// `clientConfig.url`: `https://host[:port][/path]`.
    Url {
        url: String,
        host: String,
        port: u16,
    },
    /// `clientConfig.service` (port defaults to 443, path to none).
    Service {
        namespace: String,
        name: String,
        path: String,
        port: u16,
    },
}

/// A webhook's `clientConfig`: where to POST and which CA to trust.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientConfig {
    pub endpoint: Endpoint,
    /// PEM bytes of `caBundle` (empty: system roots).
    pub ca_bundle: Vec<u8>,
}

impl ClientConfig {
    /// Reads a `clientConfig` object (`url` or `service`, `caBundle` base64); `Err` says what is
    /// wrong (validation reports it before anything is stored).
    pub fn from_value(v: &Value) -> Result<Self, String> {
        let ca_bundle = match v.get("caBundle").and_then(Value::as_str) {
            Some(b64) if !b64.is_empty() => base64::engine::general_purpose::STANDARD
                .decode(b64)
                .map_err(|e| format!("caBundle: {e}"))?,
            _ => Vec::new(),
        };
        let url = v.get("url").and_then(Value::as_str);
        let service = v.get("service").filter(|s| s.is_object());
        let endpoint = match (url, service) {
            (Some(url), None) => parse_url(url)?,
            (None, Some(s)) => Endpoint::Service {
                namespace: str_of(s, "namespace"),
                name: str_of(s, "name"),
                path: str_of(s, "path"),
                port: s
                    .get("port")
                    .and_then(Value::as_u64)
                    .and_then(|p| u16::try_from(p).ok())
                    .unwrap_or(443),
            },
            _ => return Err("exactly one of url or service is required".into()),
        };
        Ok(Self {
            endpoint,
            ca_bundle,
        })
    }

    /// The URL kube-apiserver posts to (without the `timeout` query).
    pub fn url(&self) -> String {
        match &self.endpoint {
            Endpoint::Url { url, .. } => url.clone(),
            Endpoint::Service {
                namespace,
                name,
                path,
                port,
            } => format!("https://{name}.{namespace}.svc:{port}{path}"),
        }
    }

    /// The TLS server name (and `Host`): the URL host, or `<name>.<namespace>.svc`.
    pub fn server_name(&self) -> String {
        match &self.endpoint {
            Endpoint::Url { host, .. } => host.trim_matches(['[', ']']).to_string(),
            Endpoint::Service {
                namespace, name, ..
            } => format!("{name}.{namespace}.svc"),
        }
    }
}

fn str_of(v: &Value, k: &str) -> String {
    v.get(k)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

/// `https://host[:port]/path` → its parts (validation has checked the scheme).
fn parse_url(url: &str) -> Result<Endpoint, String> {
    let uri: http::Uri = url.parse().map_err(|e| format!("url: {e}"))?;
    if uri.scheme_str() != Some("https") {
        return Err(format!(
            "url: {url:?}: 'https' is the only allowed URL scheme"
        ));
    }
    let host = uri
        .host()
        .filter(|h| !h.is_empty())
        .ok_or_else(|| format!("url: {url:?}: host must be specified"))?
        .to_string();
    Ok(Endpoint::Url {
        url: url.to_string(),
        host,
        port: uri.port_u16().unwrap_or(443),
    })
}

/// Why a call did not produce a decodable reply: the text after `failed to call webhook: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct CallError(pub String);

/// Where to dial, once a Service was resolved (or the URL host looked up).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Dial {
    Addr(SocketAddr),
    /// A host name to look up (URL endpoints).
    Host(String, u16),
    /// A webhook server in this process ([`WebhookClient::serve_local`]): called without a
    /// socket, TLS or HTTP framing; the review it answers is the same.
    Local(u64),
}

/// A webhook HTTP reply.
#[derive(Debug, Clone)]
pub struct Reply {
    pub status: u16,
    pub body: Bytes,
}

type PoolKey = (Dial, String, Vec<u8>);

/// Idle connections kept per webhook destination (dial address, server name, CA): as many as
/// kube-apiserver's REST transports keep per host (`utilnet.SetTransportDefaults`:
/// `MaxIdleConnsPerHost` 25), so a burst of concurrent calls (a run's scenarios reading their
/// converted objects at once) does not pay a TLS handshake per call once it is over.
const MAX_IDLE: usize = 25;

/// The webhook client: TLS configurations per CA bundle and a small connection pool.
#[derive(Default)]
pub struct WebhookClient {
    tls: Mutex<HashMap<Vec<u8>, Arc<rustls::ClientConfig>>>,
    idle: Mutex<HashMap<PoolKey, Vec<SendRequest<Full<Bytes>>>>>,
    /// Webhook servers of this process, by [`Dial::Local`] id.
    local: Mutex<HashMap<u64, axum::Router>>,
}

impl WebhookClient {
    fn tls_config(&self, ca_bundle: &[u8]) -> Result<Arc<rustls::ClientConfig>, CallError> {
        let mut cache = self.tls.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(c) = cache.get(ca_bundle) {
            return Ok(c.clone());
        }
        let mut roots = rustls::RootCertStore::empty();
        let mut bundle = Vec::new();
        if ca_bundle.is_empty() {
            for cert in rustls_native_certs::load_native_certs().certs {
                let _ = roots.add(cert);
            }
        } else {
            for cert in CertificateDer::pem_slice_iter(ca_bundle) {
                let cert =
                    cert.map_err(|e| CallError(format!("unable to load root certificates: {e}")))?;
                bundle.push(cert.as_ref().to_vec());
                roots
                    .add(cert)
                    .map_err(|e| CallError(format!("unable to load root certificates: {e}")))?;
            }
            if roots.is_empty() {
                return Err(CallError(
                    "unable to load root certificates: unable to parse bytes as PEM block".into(),
                ));
            }
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        // WebPKI, plus Go's rule for a leaf that is itself a caBundle certificate (verify.rs).
        let verifier = WebhookCertVerifier::new(Arc::new(roots), bundle, provider.clone())
            .map_err(|e| CallError(format!("unable to load root certificates: {e}")))?;
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| CallError(format!("tls: {e}")))?
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(verifier))
            .with_no_client_auth();
        // kube-apiserver forces HTTP/1.1 for webhooks (kubernetes#75791).
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let config = Arc::new(config);
        cache.insert(ca_bundle.to_vec(), config.clone());
        Ok(config)
    }

    /// POSTs `body` as JSON to `cfg`'s URL (plus `?timeout=<n>s`) over `dial`, within `timeout`.
    /// `Err` is the Go-style `Post "<url>": <cause>` text.
    pub async fn post(
        &self,
        cfg: &ClientConfig,
        dial: Dial,
        body: Bytes,
        timeout: Duration,
    ) -> Result<Reply, CallError> {
        let url = timeout_url(&cfg.url(), timeout);
        let wrap = |cause: String| CallError(format!("Post \"{url}\": {cause}"));
        match tokio::time::timeout(timeout, self.post_inner(cfg, dial, &url, body)).await {
            Ok(Ok(r)) => Ok(r),
            Ok(Err(cause)) => Err(wrap(cause)),
            Err(_) => Err(wrap("context deadline exceeded".into())),
        }
    }

    /// Registers a webhook server of this process; calls dialed to the returned id reach it.
    pub fn serve_local(&self, router: axum::Router) -> u64 {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.local
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(id, router);
        id
    }

    /// A call to a webhook server of this process: the request a remote one would get (path,
    /// query, headers, body), answered without a socket.
    async fn post_local(&self, id: u64, url: &str, body: Bytes) -> Result<Reply, String> {
        use tower::ServiceExt;
        let router = self
            .local
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&id)
            .cloned()
            .ok_or_else(|| "dial tcp: connect: connection refused".to_string())?;
        let uri: http::Uri = url.parse().map_err(|e| format!("{e}"))?;
        let path = uri
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| "/".into());
        let req = http::Request::post(path.as_str())
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(http::header::ACCEPT, "application/json, */*")
            .header(http::header::USER_AGENT, "kube-apiserver-admission")
            .body(axum::body::Body::from(body))
            .map_err(|e| e.to_string())?;
        let resp = router.oneshot(req).await.map_err(|e| e.to_string())?;
        let status = resp.status().as_u16();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?
            .to_bytes();
        Ok(Reply { status, body })
    }

    async fn post_inner(
        &self,
        cfg: &ClientConfig,
        dial: Dial,
        url: &str,
        body: Bytes,
    ) -> Result<Reply, String> {
        if let Dial::Local(id) = dial {
            return self.post_local(id, url, body).await;
        }
        let server_name = cfg.server_name();
        let key: PoolKey = (dial.clone(), server_name.clone(), cfg.ca_bundle.clone());
        let uri: http::Uri = url.parse().map_err(|e| format!("{e}"))?;
        let path = uri
            .path_and_query()
            .map(|p| p.as_str().to_string())
            .unwrap_or_else(|| "/".into());
        let authority = uri
            .authority()
            .map(|a| a.as_str().to_string())
            .unwrap_or_default();
        let build = || {
            http::Request::post(path.as_str())
                .header(http::header::HOST, authority.as_str())
                .header(http::header::CONTENT_TYPE, "application/json")
                .header(http::header::ACCEPT, "application/json, */*")
                .header(http::header::USER_AGENT, "kube-apiserver-admission")
                .body(Full::new(body.clone()))
                .map_err(|e| e.to_string())
        };
        // A pooled connection first; a stale one is dropped and a fresh one dialed.
        while let Some(mut sender) = self.take_idle(&key) {
            if sender.ready().await.is_err() {
                continue;
            }
            if let Ok(resp) = sender.send_request(build()?).await {
                return self.finish(key, sender, resp).await;
            }
        }
        let mut sender = self.connect(cfg, &dial, &server_name).await?;
        let resp = sender
            .send_request(build()?)
            .await
            .map_err(|e| hyper_error(&e))?;
        self.finish(key, sender, resp).await
    }

    async fn finish(
        &self,
        key: PoolKey,
        sender: SendRequest<Full<Bytes>>,
        resp: http::Response<hyper::body::Incoming>,
    ) -> Result<Reply, String> {
        let status = resp.status().as_u16();
        let body = resp
            .into_body()
            .collect()
            .await
            .map_err(|e| hyper_error(&e))?
            .to_bytes();
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        let slot = idle.entry(key).or_default();
        if slot.len() < MAX_IDLE && !sender.is_closed() {
            slot.push(sender);
        }
        Ok(Reply { status, body })
    }

    fn take_idle(&self, key: &PoolKey) -> Option<SendRequest<Full<Bytes>>> {
        let mut idle = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        idle.get_mut(key).and_then(Vec::pop)
    }

    /// Drops every pooled connection (a test's webhook server restarted).
    pub fn clear_pool(&self) {
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    async fn connect(
        &self,
        cfg: &ClientConfig,
        dial: &Dial,
        server_name: &str,
    ) -> Result<SendRequest<Full<Bytes>>, String> {
        let tls = self.tls_config(&cfg.ca_bundle).map_err(|e| e.0)?;
        let addr = match dial {
            Dial::Local(_) => return Err("dial tcp: a local webhook server has no address".into()),
            Dial::Addr(a) => *a,
            Dial::Host(host, port) => {
                let host = host.trim_matches(['[', ']']);
                tokio::net::lookup_host((host, *port))
                    .await
                    .map_err(|e| format!("dial tcp: lookup {host}: {e}"))?
                    .next()
                    .ok_or_else(|| format!("dial tcp: lookup {host}: no such host"))?
            }
        };
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| dial_error(addr, &e))?;
        let _ = tcp.set_nodelay(true);
        let name = ServerName::try_from(server_name.to_string())
            .map_err(|e| format!("tls: invalid server name {server_name:?}: {e}"))?;
        let stream = TlsConnector::from(tls)
            .connect(name, tcp)
            .await
            .map_err(|e| tls_error(&e, server_name))?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| hyper_error(&e))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(sender)
    }
}

#[cfg(test)]
mod tests {
    use super::go_errors::hostname_error;
    use super::*;
    use serde_json::json;

    #[test]
    fn service_and_url_configs() {
        let c = ClientConfig::from_value(
            &json!({"service": {"namespace": "ns", "name": "svc", "path": "/mutate"}}),
        )
        .unwrap();
        assert_eq!(c.url(), "https://svc.ns.svc:443/mutate");
        assert_eq!(c.server_name(), "svc.ns.svc");
        assert_eq!(
            timeout_url(&c.url(), Duration::from_secs(10)),
            "https://svc.ns.svc:443/mutate?timeout=10s"
        );
        let u = ClientConfig::from_value(&json!({"url": "https://127.0.0.1:9443/x"})).unwrap();
        assert_eq!(u.server_name(), "127.0.0.1");
        assert!(ClientConfig::from_value(&json!({"url": "http://a/x"})).is_err());
        assert!(ClientConfig::from_value(&json!({})).is_err());
        assert!(ClientConfig::from_value(&json!({"url": "https://a", "caBundle": "!!"})).is_err());
    }

    #[test]
    fn hostname_errors_read_like_go() {
        assert_eq!(
            hostname_error(
                "svc.ns.svc",
                &["DnsName(\"a\")".into(), "DnsName(\"b\")".into()]
            ),
            "x509: certificate is valid for a, b, not svc.ns.svc"
        );
        assert_eq!(
            hostname_error("127.0.0.1", &["DnsName(\"a\")".into()]),
            "x509: cannot validate certificate for 127.0.0.1 because it doesn't contain any IP SANs"
        );
    }

    #[test]
    fn generic_status_texts() {
        assert_eq!(
            status_error(404, &Bytes::from_static(b"nope")),
            "the server could not find the requested resource"
        );
        assert_eq!(
            status_error(500, &Bytes::from_static(b"boom")),
            "an error on the server (\"boom\") has prevented the request from succeeding"
        );
        assert_eq!(
            status_error(
                400,
                &Bytes::from_static(br#"{"kind":"Status","message":"bad review"}"#)
            ),
            "bad review"
        );
    }
}
