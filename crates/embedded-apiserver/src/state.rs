//! The shared state of an embedded server: its options, the store behind one lock, the tokens,
//! faults and webhooks it holds, and the accessors every layer above uses. [`EmbeddedServer`]'s
//! construction, router and listener are in `server.rs` (the top).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::broadcast;

use super::access::TokenRegistry;
use super::faults::Faults;
use super::metrics::Metrics;
use super::rbac::UserInfo;
use super::store::Store;
use super::webhook::{WebhookCall, WebhookCounters, Webhooks};

/// Options of an embedded server.
#[derive(Debug, Clone)]
pub struct ServerOptions {
    /// Events retained for watch replay.
    pub history: usize,
    /// Interval of periodic watch bookmarks (when a client allows them).
    pub bookmark_interval: Duration,
    /// Run the garbage collector.
    pub garbage_collector: bool,
    /// Run the namespace deletion controller.
    pub namespace_controller: bool,
    /// Run the ClusterRole aggregation controller.
    pub aggregation_controller: bool,
    /// Allow `listen` on non-loopback addresses.
    pub allow_remote: bool,
    /// PEM of the CA whose client certificates the TCP listener authenticates (kube-apiserver's
    /// `--client-ca-file`): user = Subject CommonName, groups = Subject Organizations.
    pub client_ca_pem: Option<String>,
}

impl Default for ServerOptions {
    fn default() -> Self {
        Self {
            history: 2_048,
            bookmark_interval: Duration::from_secs(60),
            garbage_collector: true,
            namespace_controller: true,
            aggregation_controller: true,
            allow_remote: false,
            client_ca_pem: None,
        }
    }
}

pub(crate) struct Inner {
    pub store: Mutex<Store>,
    pub tokens: TokenRegistry,
    pub faults: Faults,
    pub opts: ServerOptions,
    pub webhooks: Webhooks,
    pub metrics: Metrics,
}

/// The embedded Kubernetes API server. Cheap to clone.
#[derive(Clone)]
pub struct EmbeddedServer {
    pub(crate) inner: Arc<Inner>,
}

impl EmbeddedServer {
    pub(crate) fn lock(&self) -> MutexGuard<'_, Store> {
        match self.inner.store.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    pub fn options(&self) -> &ServerOptions {
        &self.inner.opts
    }

    /// ServiceAccount tokens issued by the TokenRequest subresource.
    pub fn tokens(&self) -> &TokenRegistry {
        &self.inner.tokens
    }

    /// The ServiceAccount a token from the TokenRequest subresource authenticates as.
    pub fn authenticate_token(&self, token: &str) -> Option<UserInfo> {
        let store = self.lock();
        self.inner.tokens.authenticate(&store, token)
    }

    /// The server's metrics (`GET /metrics` serves their text exposition).
    pub fn metrics(&self) -> &Metrics {
        &self.inner.metrics
    }

    pub fn faults(&self) -> &Faults {
        &self.inner.faults
    }

    /// Forgets the watch history (the next resume from an older RV gets 410 Expired).
    pub fn compact_history(&self) {
        self.lock().compact();
    }

    /// The current global resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.lock().rv
    }

    /// Live event subscribers (open watch streams plus the controllers).
    pub fn subscribers(&self) -> usize {
        self.lock().subscribers()
    }

    /// Number of stored objects.
    pub fn object_count(&self) -> usize {
        self.lock().objects.len()
    }

    pub(crate) fn webhooks(&self) -> &Webhooks {
        &self.inner.webhooks
    }

    /// Tells the server where port `port` of Service `namespace/name` is really served (there
    /// are no Pods or Endpoints here). Webhooks whose `clientConfig.service` names that Service
    /// port are dialed at `target`, with TLS verified for `<name>.<namespace>.svc`. Replaces a
    /// previous route.
    pub fn route_service(&self, namespace: &str, name: &str, port: u16, target: SocketAddr) {
        self.inner.webhooks.route(
            namespace,
            name,
            port,
            Some(crate::webhook::client::Dial::Addr(target)),
        );
    }

    /// Routes Service port `namespace/name:port` to a webhook server of this process (`router`
    /// answers what the API server posts, as over HTTPS, without a socket or TLS): for the
    /// webhooks a run serves itself, whose certificates it issued.
    pub fn route_service_in_process(
        &self,
        namespace: &str,
        name: &str,
        port: u16,
        router: axum::Router,
    ) {
        let id = self.inner.webhooks.client.serve_local(router);
        self.inner.webhooks.route(
            namespace,
            name,
            port,
            Some(crate::webhook::client::Dial::Local(id)),
        );
    }

    /// Removes a route (calls then fail with `no endpoints available for service "x"`).
    pub fn unroute_service(&self, namespace: &str, name: &str, port: u16) {
        self.inner.webhooks.route(namespace, name, port, None);
    }

    /// A stream of every webhook call from now on (admission and conversion).
    pub fn webhook_calls(&self) -> broadcast::Receiver<Arc<WebhookCall>> {
        self.inner.webhooks.events.subscribe()
    }

    /// Totals of webhook calls so far.
    pub fn webhook_counters(&self) -> WebhookCounters {
        self.inner.webhooks.counters()
    }
}
