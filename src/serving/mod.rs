//! Serving certificates for a provider's webhook server, provided the way a real management
//! cluster provides them: cert-manager issues a certificate for the webhook Service(s) and its CA
//! injector writes the CA into the CRDs' conversion config and the webhook configurations.
//!
//! Without cert-manager (the embedded server installs none), `check --embedded --provider-cmd`
//! plays both parts for the provider's components:
//!
//! - [`components`]: which Services the webhook configurations and CRD conversions reference,
//!   and where each Service port really goes (its `targetPort`, a named port resolved through the
//!   Deployment the Service selects).
//! - [`certs`]: a throw-away CA and a serving certificate for those Services' DNS names
//!   (`<svc>.<ns>.svc`, `<svc>.<ns>.svc.cluster.local`), `localhost` and `127.0.0.1`.
//! - [`inject`]: cert-manager's CA injector (`cert-manager.io/inject-ca-from`,
//!   `inject-ca-from-secret`): the CA into `caBundle` of every webhook of an annotated
//!   configuration and of an annotated CRD whose conversion strategy is `Webhook`.
//! - [`cert_dir`]: `tls.crt`, `tls.key`, `ca.crt` in a private temporary directory (0700),
//!   removed when dropped, for `{webhook-cert-dir}`.
//! - [`placeholders`]: the `--provider-cmd` placeholders and free ports for them.
//! - [`ready`]: waiting for the provider's webhook server (a TLS handshake) or health endpoint.
//!
//! Nothing here knows about the embedded server: callers route the Services themselves
//! (`EmbeddedServer::route_service`). An in-process webhook server (CAPI core's conversion) takes
//! [`certs::ServingCerts::server_config`].

pub mod cert_dir;
pub mod certs;
pub mod components;
pub mod inject;
pub mod placeholders;
pub mod ready;

pub use cert_dir::CertDir;
pub use certs::ServingCerts;
pub use components::{WebhookService, webhook_services};
pub use inject::{Injection, inject_ca};
pub use placeholders::Placeholders;

/// What serving a provider's webhooks takes: the certificates, the Services to route and what
/// CA injection did.
#[derive(Debug, Clone)]
pub struct Plan {
    pub certs: ServingCerts,
    pub services: Vec<WebhookService>,
    pub injections: Vec<Injection>,
}

impl Plan {
    /// Issues a certificate for the Services the components' webhooks call (and the
    /// components' Certificates' DNS names) and injects its CA into `docs` as cainjector would.
    pub fn for_components(docs: &mut [serde_json::Value]) -> Result<Self, certs::CertError> {
        let services = webhook_services(docs);
        let names = components::serving_names(docs, &services);
        let certs = ServingCerts::generate(&names)?;
        let injections = inject_ca(docs, &certs.ca_bundle());
        Ok(Plan {
            certs,
            services,
            injections,
        })
    }

    /// No components: a certificate for `localhost` and `127.0.0.1` only (a webhook server
    /// that registers its own configurations by URL).
    pub fn local() -> Result<Self, certs::CertError> {
        Ok(Plan {
            certs: ServingCerts::generate(&[])?,
            services: Vec::new(),
            injections: Vec::new(),
        })
    }
}
