//! Admission and conversion webhooks, called as kube-apiserver calls them.
//!
//! - [`config`]: `admissionregistration.k8s.io/v1` Mutating/ValidatingWebhookConfiguration
//!   (stored like any built-in kind; v1 defaulting and validation with kube's messages).
//! - [`matching`]: rules, `matchPolicy`, namespace/object selectors, `matchConditions`.
//! - [`admission`]: AdmissionReview v1/v1beta1, the mutating chain (reinvocation, patches,
//!   defaulting at the webhook's version) and the parallel validating webhooks.
//! - [`conversion`]: CRD `strategy: Webhook` with ConversionReview.
//! - [`client`]: the HTTPS client (caBundle trust, ALPN http/1.1, `?timeout=`, pooled
//!   connections); [`verify`]: its certificate verification (WebPKI, plus Go's rule for a
//!   leaf that is itself a caBundle certificate).
//! - [`oracle`]: how the synchronous write pipeline (under the store lock) asks for webhook
//!   results: it is replayed with the answers memoized until every answer is known, so no
//!   lock is held across a network call.
//!
//! Cost when unused: a write checks the stored configurations once (two map range lookups
//! when there are none) and the target type's conversion strategy; without a matching
//! webhook or a conversion webhook it takes the same single-pass path as before.
//!
//! # For embedders
//!
//! There are no Pods or Endpoints: a webhook's `clientConfig.service` resolves through the
//! stored Service (missing: `service "x" not found`; port not listed: `no service port N found
//! for service "x"`) to the address the embedder routed with [`EmbeddedServer::route_service`]
//! (none: `no endpoints available for service "x"`, kube's text for a Service without ready
//! endpoints). `clientConfig.url` endpoints are dialed directly.
//!
//! Every webhook call can be observed: [`EmbeddedServer::webhook_calls`] subscribes to a
//! stream of [`WebhookCall`]s, [`EmbeddedServer::webhook_counters`] reads totals. Both cost an
//! atomic increment and a send to no receiver when nobody listens.

pub mod admission;
pub mod client;
pub mod config;
pub mod conversion;
pub mod crd_conversion;
pub mod matching;
pub mod oracle;
pub mod stored_conversions;
pub mod verify;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::Duration;

use serde_json::Value;
use tokio::sync::broadcast;

use self::client::{ClientConfig, Dial, Endpoint, WebhookClient};
use self::config::Configs;
use super::store::Store;

/// What kind of webhook was called.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallKind {
    Mutating,
    Validating,
    Conversion,
}

/// How a webhook call ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOutcome {
    /// Allowed without a patch.
    Allowed,
    /// Allowed with a (non-empty) patch.
    Patched,
    /// Denied with this HTTP code.
    Denied(u16),
    /// Converted this many objects.
    Converted(usize),
    /// The call failed (transport, bad response): the reason.
    Failed(String),
}

/// One webhook call, as observers see it.
#[derive(Debug, Clone)]
pub struct WebhookCall {
    pub kind: CallKind,
    /// The webhook's name (the CRD's name for conversion).
    pub webhook: String,
    pub url: String,
    /// `CREATE`, `UPDATE`, `DELETE` (empty for conversion).
    pub operation: String,
    /// `group/version/resource[/subresource]` (conversion: the desired apiVersion).
    pub resource: String,
    /// The request's namespace (conversion: the objects' namespace when they share one; empty
    /// for cluster-scoped requests).
    pub namespace: String,
    pub outcome: CallOutcome,
    pub duration: Duration,
}

/// Totals of webhook calls since the server started.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WebhookCounters {
    pub admission_calls: u64,
    pub conversion_calls: u64,
    pub failed_calls: u64,
}

/// The stored configurations a parse was made from: (mutating, name, resourceVersion).
type Fingerprint = Vec<(bool, String, String)>;

/// A Service port routed to a real address: `(namespace, name, port)`.
type ServiceKey = (String, String, u16);

/// The server's webhook state: routes, client, observers and the parsed configurations.
pub struct Webhooks {
    routes: RwLock<HashMap<ServiceKey, Dial>>,
    pub(crate) client: WebhookClient,
    pub(crate) events: broadcast::Sender<Arc<WebhookCall>>,
    admission_calls: AtomicU64,
    conversion_calls: AtomicU64,
    failed_calls: AtomicU64,
    /// Configurations parsed at a fingerprint of the stored objects (name + resourceVersion).
    configs: Mutex<Option<(Fingerprint, Arc<Configs>)>>,
    /// Stored objects converted by this process's own webhook servers.
    pub(crate) stored_conversions: stored_conversions::StoredConversions,
}

impl Default for Webhooks {
    fn default() -> Self {
        let (events, _) = broadcast::channel(1024);
        Self {
            routes: RwLock::default(),
            client: WebhookClient::default(),
            events,
            admission_calls: AtomicU64::new(0),
            conversion_calls: AtomicU64::new(0),
            failed_calls: AtomicU64::new(0),
            configs: Mutex::new(None),
            stored_conversions: stored_conversions::StoredConversions::default(),
        }
    }
}

impl Webhooks {
    pub(crate) fn observe(&self, call: WebhookCall) {
        let counter = match call.kind {
            CallKind::Conversion => &self.conversion_calls,
            _ => &self.admission_calls,
        };
        counter.fetch_add(1, Ordering::Relaxed);
        if matches!(call.outcome, CallOutcome::Failed(_)) {
            self.failed_calls.fetch_add(1, Ordering::Relaxed);
        }
        if self.events.receiver_count() > 0 {
            let _ = self.events.send(Arc::new(call));
        }
    }

    pub(crate) fn counters(&self) -> WebhookCounters {
        WebhookCounters {
            admission_calls: self.admission_calls.load(Ordering::Relaxed),
            conversion_calls: self.conversion_calls.load(Ordering::Relaxed),
            failed_calls: self.failed_calls.load(Ordering::Relaxed),
        }
    }

    /// The stored configurations, parsed (cached until one of them changes).
    pub fn configs(&self, store: &Store) -> Arc<Configs> {
        let mut fingerprint: Fingerprint = Vec::new();
        for (mutating, resource) in [(true, config::MUTATING), (false, config::VALIDATING)] {
            for obj in store.objects_of(config::GROUP, resource, None) {
                fingerprint.push((
                    mutating,
                    super::meta::name(obj).to_string(),
                    super::meta::resource_version(obj).to_string(),
                ));
            }
        }
        let mut cache = self.configs.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((fp, parsed)) = &*cache
            && *fp == fingerprint
        {
            return parsed.clone();
        }
        let parsed = if fingerprint.is_empty() {
            Arc::new(Configs::default())
        } else {
            let objects = [(true, config::MUTATING), (false, config::VALIDATING)]
                .into_iter()
                .flat_map(|(m, r)| {
                    store
                        .objects_of(config::GROUP, r, None)
                        .map(move |o| (m, o))
                });
            let mut parsed = Configs::parse(objects);
            // Mutating webhooks run in configuration-name order (objects_of is name-ordered).
            parsed
                .mutating
                .sort_by(|a, b| a.configuration.cmp(&b.configuration));
            parsed
                .validating
                .sort_by(|a, b| a.configuration.cmp(&b.configuration));
            Arc::new(parsed)
        };
        *cache = Some((fingerprint, parsed.clone()));
        parsed
    }

    /// Routes Service port `namespace/name:port` to `target` (a new route drops pooled
    /// connections), or removes the route (`None`).
    pub(crate) fn route(&self, namespace: &str, name: &str, port: u16, target: Option<Dial>) {
        self.stored_conversions.clear();
        let mut routes = self.routes.write().unwrap_or_else(|p| p.into_inner());
        let key = (namespace.to_string(), name.to_string(), port);
        match target {
            Some(dial) => {
                routes.insert(key, dial);
                drop(routes);
                self.client.clear_pool();
            }
            None => {
                routes.remove(&key);
            }
        }
    }

    /// Where a webhook's endpoint is dialed: a URL's host, or the route of the Service port
    /// (the stored Service must exist and list the port).
    pub fn resolve(&self, store: &Mutex<Store>, cfg: &ClientConfig) -> Result<Dial, String> {
        match &cfg.endpoint {
            Endpoint::Url { host, port, .. } => Ok(match host.trim_matches(['[', ']']).parse() {
                Ok(ip) => Dial::Addr(SocketAddr::new(ip, *port)),
                Err(_) => Dial::Host(host.clone(), *port),
            }),
            Endpoint::Service {
                namespace,
                name,
                port,
                ..
            } => {
                {
                    let store = store.lock().unwrap_or_else(|p| p.into_inner());
                    let key = (
                        String::new(),
                        "services".to_string(),
                        namespace.clone(),
                        name.clone(),
                    );
                    let Some(svc) = store.objects.get(&key) else {
                        return Err(format!("service \"{name}\" not found"));
                    };
                    if svc.pointer("/spec/clusterIP").and_then(Value::as_str) == Some("None") {
                        return Err("cannot route to service with ClusterIP \"None\"".into());
                    }
                    let listed = svc
                        .pointer("/spec/ports")
                        .and_then(Value::as_array)
                        .is_some_and(|ps| {
                            ps.iter().any(|p| {
                                p.get("port").and_then(Value::as_u64) == Some(u64::from(*port))
                            })
                        });
                    if !listed {
                        return Err(format!(
                            "no service port {port} found for service \"{name}\""
                        ));
                    }
                }
                let routes = self.routes.read().unwrap_or_else(|p| p.into_inner());
                routes
                    .get(&(namespace.clone(), name.clone(), *port))
                    .cloned()
                    .ok_or_else(|| format!("no endpoints available for service \"{name}\""))
            }
        }
    }
}
