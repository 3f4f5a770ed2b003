//! `EmbeddedServer`'s construction (seed namespaces, controllers), router, in-process client and
//! TCP listener: the top of the crate (the shared state is `state.rs`).

use std::net::SocketAddr;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use anyhow::Context as _;
use serde_json::{Value, json};
use tokio::sync::oneshot;

use super::client_cert::ClientCertAuthenticator;
use super::controllers;
use super::faults::Faults;
use super::meta;
use super::ops::{self, Target, UpdateKind, WriteOpts};
use super::state::Inner;
pub use super::state::{EmbeddedServer, ServerOptions};
use super::store::Store;

/// Namespaces every cluster starts with.
pub const SEED_NAMESPACES: &[&str] = &["default", "kube-system", "kube-public", "kube-node-lease"];

impl EmbeddedServer {
    /// A new server with the seed namespaces; spawns its controllers on the current tokio runtime
    /// (when there is one).
    pub fn new(opts: ServerOptions) -> Self {
        let mut store = Store::new(opts.history);
        if let Some(rt) = store.registry.get("", "namespaces") {
            for ns in SEED_NAMESPACES {
                let t = Target {
                    rt: rt.clone(),
                    version: "v1".into(),
                    namespace: String::new(),
                    name: String::new(),
                    subresource: None,
                };
                let _ = ops::create(
                    &mut store,
                    &t,
                    json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}}),
                    &WriteOpts::default(),
                );
            }
        }
        let server = Self {
            inner: Arc::new(Inner {
                store: Mutex::new(store),
                tokens: super::access::TokenRegistry::default(),
                faults: Faults::default(),
                opts,
                webhooks: super::webhook::Webhooks::default(),
                metrics: super::metrics::Metrics::new(),
            }),
        };
        if tokio::runtime::Handle::try_current().is_ok() {
            controllers::spawn_all(&server);
        }
        server
    }

    /// The HTTP router (no authentication).
    pub fn router(&self) -> axum::Router {
        super::http::router(self.clone())
    }

    /// A kube client talking to the router in-process (no socket), default namespace
    /// `default`. It sends each request once: wrap [`Self::router`] in a retrying layer for
    /// clients that must ride out injected faults.
    pub fn client(&self) -> kube::Client {
        kube::Client::new(self.router(), "default")
    }

    /// Serves on a TCP address with a generated bearer token.
    pub async fn listen(&self, addr: SocketAddr) -> anyhow::Result<Listener> {
        self.listen_inner(addr, None).await
    }

    /// [`Self::listen`] with a serving certificate made by the embedder (its chain must cover
    /// the names clients dial, e.g. `127.0.0.1`); clients verify it with `identity.ca_pem`.
    pub async fn listen_with_identity(
        &self,
        addr: SocketAddr,
        identity: super::tls::ServingIdentity,
    ) -> anyhow::Result<Listener> {
        self.listen_inner(addr, Some(identity)).await
    }

    /// [`Self::listen_with_identity`] on a socket the embedder already holds bound (an address
    /// handed out before the server starts stays taken until the server serves on it).
    pub async fn listen_on_with_identity(
        &self,
        bound: std::net::TcpListener,
        identity: super::tls::ServingIdentity,
    ) -> anyhow::Result<Listener> {
        let addr = bound.local_addr()?;
        self.refuse_remote(addr)?;
        bound
            .set_nonblocking(true)
            .with_context(|| format!("serving on {addr}"))?;
        let listener = tokio::net::TcpListener::from_std(bound)
            .with_context(|| format!("serving on {addr}"))?;
        self.serve_listener(listener, Some(identity)).await
    }

    fn refuse_remote(&self, addr: SocketAddr) -> anyhow::Result<()> {
        if !addr.ip().is_loopback() && !self.inner.opts.allow_remote {
            anyhow::bail!(
                "refusing to listen on non-loopback address {addr} (pass --allow-remote to allow it)"
            );
        }
        Ok(())
    }

    async fn listen_inner(
        &self,
        addr: SocketAddr,
        identity: Option<super::tls::ServingIdentity>,
    ) -> anyhow::Result<Listener> {
        self.refuse_remote(addr)?;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("binding {addr}"))?;
        self.serve_listener(listener, identity).await
    }

    async fn serve_listener(
        &self,
        listener: tokio::net::TcpListener,
        identity: Option<super::tls::ServingIdentity>,
    ) -> anyhow::Result<Listener> {
        let local = listener.local_addr()?;
        let client_auth = match &self.inner.opts.client_ca_pem {
            Some(pem) => Some(ClientCertAuthenticator::from_ca_pem(pem)?),
            None => None,
        };
        let identity = match identity {
            Some(id) => id,
            None => super::tls::generate_identity(local.ip())?,
        };
        let tls = super::tls::serving_with_client_auth(&identity, client_auth.as_ref())?;
        let token = uuid::Uuid::new_v4().simple().to_string();
        let watches = Arc::new(AtomicU64::new(0));
        let counted = watches.clone();
        let serving = super::http::ServingAddress(local.to_string());
        let app = super::http::authenticated_router(self.clone(), token.clone(), client_auth)
            .layer(axum::middleware::from_fn(
                move |mut req: axum::extract::Request, next: axum::middleware::Next| {
                    req.extensions_mut().insert(serving.clone());
                    next.run(req)
                },
            ))
            .layer(axum::middleware::from_fn(
                move |req: axum::extract::Request, next: axum::middleware::Next| {
                    if req.uri().query().is_some_and(|q| {
                        q.split('&').any(|kv| {
                            kv.split_once('=').is_some_and(|(k, v)| {
                                k == "watch"
                                    && matches!(v.to_ascii_lowercase().as_str(), "true" | "1" | "t")
                            })
                        })
                    }) {
                        counted.fetch_add(1, Ordering::Relaxed);
                    }
                    next.run(req)
                },
            ));
        let (tx, rx) = oneshot::channel::<()>();
        let acceptor = tls.acceptor.clone();
        let handle = tokio::spawn(super::serve::serve_tls(listener, acceptor, app, rx));
        let host = if local.ip().is_unspecified() {
            "127.0.0.1".to_string()
        } else if local.is_ipv6() {
            format!("[{}]", local.ip())
        } else {
            local.ip().to_string()
        };
        Ok(Listener {
            url: format!("https://{host}:{}", local.port()),
            token,
            addr: local,
            ca_pem: tls.ca_pem,
            ca_der: tls.ca_der,
            shutdown: Some(tx),
            handle: Some(handle),
            watches,
        })
    }

    /// Creates or updates each document (CRDs first); waits until CRDs are Established.
    pub async fn apply_documents(&self, docs: Vec<Value>) -> anyhow::Result<()> {
        let (crds, rest): (Vec<Value>, Vec<Value>) = docs
            .into_iter()
            .filter(|d| d.is_object())
            .partition(|d| meta::str_at(d, "/kind") == "CustomResourceDefinition");
        for d in &crds {
            self.apply_one(d.clone())?;
        }
        for d in &crds {
            self.wait_established(meta::name(d), Duration::from_secs(30))
                .await?;
        }
        for d in rest {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
            loop {
                match self.apply_one(d.clone()) {
                    Ok(()) => break,
                    Err(e)
                        if tokio::time::Instant::now() < deadline
                            && e.to_string().contains("no resource") =>
                    {
                        tokio::time::sleep(Duration::from_millis(20)).await;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        Ok(())
    }

    fn apply_one(&self, doc: Value) -> anyhow::Result<()> {
        let api_version = meta::str_at(&doc, "/apiVersion").to_string();
        let kind = meta::str_at(&doc, "/kind").to_string();
        let (group, version) = match api_version.split_once('/') {
            Some((g, v)) => (g.to_string(), v.to_string()),
            None => (String::new(), api_version.clone()),
        };
        let mut store = self.lock();
        let rt = store
            .registry
            .by_kind(&group, &version, &kind)
            .with_context(|| format!("no resource for {api_version} {kind}"))?;
        let mut namespace = meta::namespace(&doc).to_string();
        if rt.namespaced && namespace.is_empty() {
            namespace = "default".into();
        }
        let t = Target {
            rt,
            version,
            namespace,
            name: meta::name(&doc).to_string(),
            subresource: None,
        };
        let opts = WriteOpts::default();
        match ops::create(&mut store, &t, doc.clone(), &opts) {
            Ok(_) => Ok(()),
            Err(e) if e.code == 409 => {
                let current = ops::get(&store, &t).map_err(|e| anyhow::anyhow!(e.message))?;
                let mut doc = doc;
                meta::set_meta(
                    &mut doc,
                    "resourceVersion",
                    json!(meta::resource_version(&current)),
                );
                ops::update(&mut store, &t, doc, UpdateKind::Put, &opts)
                    .map(|_| ())
                    .map_err(|e| anyhow::anyhow!("{kind} {}: {}", t.name, e.message))
            }
            Err(e) => Err(anyhow::anyhow!("{kind} {}: {}", t.name, e.message)),
        }
    }

    /// Waits until the named CRD is Established and its kind is served.
    pub async fn wait_established(&self, name: &str, timeout: Duration) -> anyhow::Result<()> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            {
                let store = self.lock();
                let key = (
                    "apiextensions.k8s.io".to_string(),
                    "customresourcedefinitions".to_string(),
                    String::new(),
                    name.to_string(),
                );
                if let Some(crd) = store.objects.get(&key)
                    && super::crd::condition_true(crd, "Established")
                {
                    let (g, p) = (
                        meta::str_at(crd, "/spec/group"),
                        meta::str_at(crd, "/spec/names/plural"),
                    );
                    if store.registry.get(g, p).is_some() {
                        return Ok(());
                    }
                }
            }
            if tokio::time::Instant::now() >= deadline {
                anyhow::bail!("CRD {name} not established within {timeout:?}");
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// A running TCP listener (https; a bearer token, or a client certificate signed by
/// [`ServerOptions::client_ca_pem`]).
pub struct Listener {
    pub url: String,
    pub token: String,
    pub addr: SocketAddr,
    /// PEM of the CA that signed the serving certificate.
    pub ca_pem: String,
    ca_der: Vec<u8>,
    shutdown: Option<oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<()>>,
    /// Watch requests served through this listener.
    watches: Arc<AtomicU64>,
}

impl Listener {
    /// How many watch requests (`watch=true`) came through this listener so far: its clients
    /// started watching, whatever the server's other clients do.
    pub fn watch_requests(&self) -> u64 {
        self.watches.load(Ordering::Relaxed)
    }

    /// A kubeconfig pointing at this listener with its bearer token.
    pub fn kubeconfig_yaml(&self) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters:\n- name: capi-conformance\n  cluster:\n    server: {url}\n    certificate-authority-data: {ca}\ncontexts:\n- name: capi-conformance\n  context:\n    cluster: capi-conformance\n    user: capi-conformance\n    namespace: default\ncurrent-context: capi-conformance\nusers:\n- name: capi-conformance\n  user:\n    token: {token}\n",
            url = self.url,
            token = self.token,
            ca = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &self.ca_pem),
        )
    }

    pub fn write_kubeconfig(&self, path: &Path) -> anyhow::Result<()> {
        std::fs::write(path, self.kubeconfig_yaml())
            .with_context(|| format!("writing kubeconfig {}", path.display()))
    }

    /// kube client configuration for this listener (URL, CA, token, namespace `default`).
    pub fn config(&self) -> anyhow::Result<kube::Config> {
        let mut config = kube::Config::new(self.url.parse()?);
        config.auth_info.token = Some(self.token.clone().into());
        config.root_cert = Some(vec![self.ca_der.clone()]);
        config.default_namespace = "default".into();
        Ok(config)
    }

    /// A kube client for this listener ([`Self::config`]; each request sent once).
    pub fn client(&self) -> anyhow::Result<kube::Client> {
        Ok(kube::Client::try_from(self.config()?)?)
    }

    /// Stops accepting connections and waits for the server task.
    pub async fn shutdown(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        if let Some(h) = self.handle.take() {
            let _ = tokio::time::timeout(Duration::from_secs(5), h).await;
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}
