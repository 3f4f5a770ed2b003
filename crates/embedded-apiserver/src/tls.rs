//! TLS for the TCP listener: a throw-away CA and a serving certificate for the bound address
//! (client-go only sends bearer tokens and client certificates over https), ALPN h2 + http/1.1.

use std::net::IpAddr;
use std::sync::Arc;

use anyhow::Context as _;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
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
    let mut names = vec![
        "127.0.0.1".to_string(),
        "::1".to_string(),
        "localhost".to_string(),
    ];
    if !ip.is_loopback() && !ip.is_unspecified() {
        names.push(ip.to_string());
    }
    let issued = self_signed_serving(
        "capi-conformance embedded CA",
        "capi-conformance embedded apiserver",
        &names,
    )?;
    Ok(issued.identity())
}

/// Why a certificate or a TLS configuration could not be made.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    #[error("generating a certificate: {0}")]
    Generate(#[from] rcgen::Error),
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
}

/// A throw-away CA and a serving certificate it signed (PEM and DER); the key is PKCS#8.
#[derive(Clone)]
pub struct SelfSignedServing {
    pub ca_pem: String,
    pub ca_der: Vec<u8>,
    pub cert_pem: String,
    pub cert_der: Vec<u8>,
    pub key_pem: String,
    pub key_pkcs8_der: Vec<u8>,
}

impl SelfSignedServing {
    /// The identity a listener serves it with (leaf, then the CA).
    pub fn identity(&self) -> ServingIdentity {
        ServingIdentity {
            chain_der: vec![self.cert_der.clone(), self.ca_der.clone()],
            key_pkcs8_der: self.key_pkcs8_der.clone(),
            ca_pem: self.ca_pem.clone(),
            ca_der: self.ca_der.clone(),
        }
    }
}

/// A fresh CA (common name `ca_cn`) and a certificate for server authentication of `names`
/// (IP addresses or DNS names), common name `cn`, signed by it.
pub fn self_signed_serving(
    ca_cn: &str,
    cn: &str,
    names: &[String],
) -> Result<SelfSignedServing, TlsError> {
    let mut ca_params = CertificateParams::new(Vec::<String>::new())?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params.distinguished_name.push(DnType::CommonName, ca_cn);
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_key = KeyPair::generate()?;
    let ca_cert = ca_params.self_signed(&ca_key)?;
    let issuer = Issuer::new(ca_params, ca_key);

    let mut leaf = CertificateParams::new(names.to_vec())?;
    leaf.distinguished_name.push(DnType::CommonName, cn);
    leaf.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    leaf.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let leaf_key = KeyPair::generate()?;
    let leaf_cert = leaf.signed_by(&leaf_key, &issuer)?;
    Ok(SelfSignedServing {
        ca_pem: ca_cert.pem(),
        ca_der: ca_cert.der().to_vec(),
        cert_pem: leaf_cert.pem(),
        cert_der: leaf_cert.der().to_vec(),
        key_pem: leaf_key.serialize_pem(),
        key_pkcs8_der: leaf_key.serialize_der(),
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
    let config = server_config(identity, client_auth).context("TLS serving certificate")?;
    Ok(ServingTls {
        ca_pem: identity.ca_pem.clone(),
        ca_der: identity.ca_der.clone(),
        acceptor: TlsAcceptor::from(config),
    })
}

/// The rustls server configuration of an identity (ALPN h2 + http/1.1), requesting client
/// certificates of `client_auth`'s CA when given.
pub fn server_config(
    identity: &ServingIdentity,
    client_auth: Option<&ClientCertAuthenticator>,
) -> Result<Arc<rustls::ServerConfig>, TlsError> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let builder = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()?;
    let builder = match client_auth {
        Some(auth) => builder.with_client_cert_verifier(auth.requesting_verifier()),
        None => builder.with_no_client_auth(),
    };
    let mut config = builder.with_single_cert(
        identity
            .chain_der
            .iter()
            .map(|c| CertificateDer::from(c.clone()))
            .collect(),
        PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(identity.key_pkcs8_der.clone())),
    )?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
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
