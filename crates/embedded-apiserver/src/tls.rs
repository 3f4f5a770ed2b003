//! TLS for the TCP listener: a throw-away CA and a serving certificate for the bound address
//! (client-go only sends bearer tokens over https), ALPN h2 + http/1.1.

use std::net::IpAddr;
use std::sync::Arc;

use anyhow::Context as _;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

/// A CA, a serving certificate signed by it, and the acceptor using them.
pub struct ServingTls {
    pub ca_pem: String,
    pub ca_der: Vec<u8>,
    pub acceptor: TlsAcceptor,
}

/// Generates a fresh CA and a certificate for `127.0.0.1`, `::1`, `localhost` and `ip`.
pub fn generate(ip: IpAddr) -> anyhow::Result<ServingTls> {
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "capi-conformance embedded CA");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate()?;
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let mut names = vec![
        "127.0.0.1".to_string(),
        "::1".to_string(),
        "localhost".to_string(),
    ];
    if !ip.is_loopback() && !ip.is_unspecified() {
        names.push(ip.to_string());
    }
    let mut leaf = CertificateParams::new(names)?;
    leaf.distinguished_name
        .push(DnType::CommonName, "capi-conformance embedded apiserver");
    let leaf_key = KeyPair::generate()?;
    let leaf_cert = leaf.signed_by(&leaf_key, &issuer)?;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?
        .with_no_client_auth()
        .with_single_cert(
            vec![
                CertificateDer::from(leaf_cert.der().to_vec()),
                CertificateDer::from(ca_cert.der().to_vec()),
            ],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(leaf_key.serialize_der())),
        )
        .context("TLS serving certificate")?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(ServingTls {
        ca_pem: ca_cert.pem(),
        ca_der: ca_cert.der().to_vec(),
        acceptor: TlsAcceptor::from(Arc::new(config)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_a_ca_and_acceptor() {
        let t = generate("127.0.0.1".parse().unwrap()).unwrap();
        assert!(t.ca_pem.starts_with("-----BEGIN CERTIFICATE-----"));
        assert!(!t.ca_der.is_empty());
    }
}
