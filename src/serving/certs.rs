//! A throw-away CA and a serving certificate signed by it (what cert-manager's self-signed
//! Issuer + Certificate give a provider on a real cluster), issued and served by the embedded
//! API server's TLS code (`embedded_apiserver::tls`).

use embedded_apiserver::tls;
use std::sync::Arc;
use thiserror::Error;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::CertificateDer;

/// Why certificates could not be made or used.
#[derive(Debug, Error)]
pub enum CertError {
    #[error("generating the webhook serving certificate: {0}")]
    Generate(#[from] tls::TlsError),
    #[error("building the TLS configuration: {0}")]
    Tls(#[from] rustls::Error),
}

/// The names every serving certificate carries besides the Services' DNS names.
pub const LOCAL_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "::1"];

/// A CA and a serving certificate (PEM), for a webhook server.
#[derive(Clone)]
pub struct ServingCerts {
    pub ca_pem: String,
    pub cert_pem: String,
    /// PKCS#8 private key of the serving certificate. Never printed.
    pub key_pem: String,
    /// Subject alternative names of the serving certificate.
    pub names: Vec<String>,
    ca_der: Vec<u8>,
    identity: tls::ServingIdentity,
}

impl std::fmt::Debug for ServingCerts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ServingCerts")
            .field("names", &self.names)
            .finish_non_exhaustive()
    }
}

impl ServingCerts {
    /// A fresh CA and a certificate for `dns_names` plus [`LOCAL_NAMES`] (duplicates dropped),
    /// valid for server authentication.
    pub fn generate(dns_names: &[String]) -> Result<Self, CertError> {
        let mut names: Vec<String> = Vec::new();
        for n in dns_names
            .iter()
            .map(String::as_str)
            .chain(LOCAL_NAMES.iter().copied())
        {
            if !n.is_empty() && !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        }
        let cn = names.first().cloned().unwrap_or_default();
        let issued = tls::self_signed_serving("capi-conformance webhook CA", &cn, &names)?;
        Ok(ServingCerts {
            ca_pem: issued.ca_pem.clone(),
            cert_pem: issued.cert_pem.clone(),
            key_pem: issued.key_pem.clone(),
            names,
            ca_der: issued.ca_der.clone(),
            identity: issued.identity(),
        })
    }

    /// A rustls server configuration serving this certificate (ALPN `h2`, `http/1.1`), for an
    /// in-process webhook server.
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, CertError> {
        Ok(tls::server_config(&self.identity, None)?)
    }

    /// A rustls client configuration trusting only this CA (the readiness probe).
    pub fn client_config(&self) -> Result<Arc<rustls::ClientConfig>, CertError> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(CertificateDer::from(self.ca_der.clone()))?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()?
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Arc::new(config))
    }

    /// `caBundle` as the API stores it (base64 of the CA's PEM).
    pub fn ca_bundle(&self) -> String {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(self.ca_pem.as_bytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn certificate_names_services_and_loopback() {
        let c = ServingCerts::generate(&[
            "svc.ns.svc".to_string(),
            "svc.ns.svc".to_string(),
            "localhost".to_string(),
        ])
        .unwrap();
        assert_eq!(c.names, ["svc.ns.svc", "localhost", "127.0.0.1", "::1"]);
        assert!(c.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(c.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(c.key_pem.starts_with("-----BEGIN PRIVATE KEY-----"));
        assert!(!format!("{c:?}").contains("PRIVATE"));
        c.server_config().unwrap();
        c.client_config().unwrap();
    }
}
