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
