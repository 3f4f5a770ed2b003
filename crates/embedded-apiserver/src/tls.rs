//! TLS for the TCP listener: a throw-away CA and a serving certificate for the bound address
//! (client-go only sends bearer tokens and client certificates over https), ALPN h2 + http/1.1.

use std::net::IpAddr;
use std::sync::Arc;

use anyhow::Context as _;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use super::client_cert::ClientCertAuthenticator;

/// A CA, a serving certificate signed by it, and the acceptor using them.
pub struct ServingTls {
    pub ca_pem: String,
    pub ca_der: Vec<u8>,
    pub acceptor: TlsAcceptor,
}

/// Generates a fresh CA and a certificate for `127.0.0.1`, `::1`, `localhost` and `ip`.
pub fn generate(ip: IpAddr) -> anyhow::Result<ServingTls> {
    serving(&generate_identity(ip)?)
}

/// The identity [`generate`] serves with.
pub fn generate_identity(ip: IpAddr) -> anyhow::Result<ServingIdentity> {
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
    Ok(ServingIdentity {
        chain_der: vec![leaf_cert.der().to_vec(), ca_cert.der().to_vec()],
        key_pkcs8_der: leaf_key.serialize_der(),
        ca_pem: ca_cert.pem(),
        ca_der: ca_cert.der().to_vec(),
    })
}

/// A serving certificate made by the embedder (e.g. signed by a CA it owns, for the names it
/// needs), for [`crate::EmbeddedServer::listen_with_identity`].
#[derive(Clone)]
pub struct ServingIdentity {
    /// The leaf certificate first, then its issuers (DER).
    pub chain_der: Vec<Vec<u8>>,
    /// The leaf's private key (PKCS#8 DER).
    pub key_pkcs8_der: Vec<u8>,
    /// The CA clients verify the chain with (PEM and DER).
    pub ca_pem: String,
    pub ca_der: Vec<u8>,
}

/// The acceptor of an identity (ALPN h2 + http/1.1), no client certificates.
pub fn serving(identity: &ServingIdentity) -> anyhow::Result<ServingTls> {
    serving_with_client_auth(identity, None)
}

/// [`serving`] that requests (does not require) client certificates naming `client_auth`'s CA;
/// what is presented is judged per request by [`ClientCertAuthenticator::authenticate`].
pub fn serving_with_client_auth(
    identity: &ServingIdentity,
    client_auth: Option<&ClientCertAuthenticator>,
) -> anyhow::Result<ServingTls> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .context("TLS protocol versions")?;
    let builder = match client_auth {
        Some(auth) => builder.with_client_cert_verifier(auth.requesting_verifier()),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder
        .with_single_cert(
            identity
                .chain_der
                .iter()
                .map(|c| CertificateDer::from(c.clone()))
                .collect(),
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(identity.key_pkcs8_der.clone())),
        )
        .context("TLS serving certificate")?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(ServingTls {
        ca_pem: identity.ca_pem.clone(),
        ca_der: identity.ca_der.clone(),
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
