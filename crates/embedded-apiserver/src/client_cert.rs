//! x509 client-certificate authentication, as kube-apiserver's `--client-ca-file` does it
//! (`apiserver/pkg/authentication/request/x509`): a client certificate whose chain verifies to the
//! configured CA, for client auth, at the time of the request, authenticates as user = Subject
//! CommonName, groups = Subject Organization values (`system:masters` is all-powerful).
//!
//! As kube-apiserver (Go `tls.RequestClientCert`), the TLS handshake *requests* a client
//! certificate and does not judge it (proof of key possession is still checked): an untrusted or
//! expired certificate is a 401 of the request, not a handshake failure, and a request that
//! presents none falls through to the bearer-token authenticator. A certificate with an empty
//! CommonName authenticates no one (as kube's `CommonNameUserConversion`).

use std::fmt;
use std::sync::Arc;

use tokio_rustls::rustls::client::danger::HandshakeSignatureValid;
use tokio_rustls::rustls::crypto::CryptoProvider;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, UnixTime};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use tokio_rustls::rustls::{self, DigitallySignedStruct, DistinguishedName, RootCertStore};

use super::rbac::UserInfo;

/// Why a client CA or a presented client certificate was refused.
#[derive(Debug, thiserror::Error)]
pub enum ClientCertError {
    #[error("client CA: {0}")]
    Ca(String),
    #[error("verifying client certificate: {0}")]
    Untrusted(rustls::Error),
    #[error("reading client certificate subject: {0}")]
    Subject(String),
}

/// The certificate chain a TLS client presented (leaf first); an axum request extension set by
/// the listener on every request of that connection.
#[derive(Clone)]
pub struct PeerCertificates(pub Arc<Vec<CertificateDer<'static>>>);

/// Verifies client certificates against one CA bundle and maps them to users.
#[derive(Debug, Clone)]
pub struct ClientCertAuthenticator {
    verifier: Arc<dyn ClientCertVerifier>,
}

impl ClientCertAuthenticator {
    /// From the PEM of the CA (one or more certificates) whose signed client certificates
    /// authenticate.
    pub fn from_ca_pem(pem: &str) -> Result<Self, ClientCertError> {
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(pem.as_bytes()) {
            let cert = cert.map_err(|e| ClientCertError::Ca(e.to_string()))?;
            roots
                .add(cert)
                .map_err(|e| ClientCertError::Ca(e.to_string()))?;
        }
        if roots.is_empty() {
            return Err(ClientCertError::Ca("no certificate in the PEM".into()));
        }
        let verifier = WebPkiClientVerifier::builder_with_provider(
            Arc::new(roots),
            Arc::new(rustls::crypto::ring::default_provider()),
        )
        .allow_unauthenticated()
        .build()
        .map_err(|e| ClientCertError::Ca(e.to_string()))?;
        Ok(Self { verifier })
    }

    /// The user of a presented chain (leaf first): `Ok(None)` when there is no certificate or
    /// its CommonName is empty (the next authenticator decides), an error when it does not
    /// verify (untrusted, expired, not for client auth).
    pub fn authenticate(
        &self,
        chain: &[CertificateDer<'_>],
    ) -> Result<Option<UserInfo>, ClientCertError> {
        let Some((leaf, intermediates)) = chain.split_first() else {
            return Ok(None);
        };
        self.verifier
            .verify_client_cert(leaf, intermediates, UnixTime::now())
            .map_err(ClientCertError::Untrusted)?;
        let (_, cert) = x509_parser::parse_x509_certificate(leaf)
            .map_err(|e| ClientCertError::Subject(e.to_string()))?;
        let subject = cert.subject();
        let text = |attr: &x509_parser::x509::AttributeTypeAndValue<'_>| {
            attr.as_str()
                .map(str::to_string)
                .map_err(|e| ClientCertError::Subject(e.to_string()))
        };
        // Go's pkix.Name keeps the last CommonName and every Organization, in order.
        let mut name = String::new();
        for cn in subject.iter_common_name() {
            name = text(cn)?;
        }
        if name.is_empty() {
            return Ok(None);
        }
        let mut groups = subject
            .iter_organization()
            .map(text)
            .collect::<Result<Vec<_>, _>>()?;
        // kube-apiserver's authenticated-group adder.
        if !groups.iter().any(|g| g == "system:authenticated") {
            groups.push("system:authenticated".to_string());
        }
        Ok(Some(UserInfo { name, groups }))
    }

    /// The handshake-level verifier: requests a certificate (naming this CA), checks the
    /// client's proof of key possession, and leaves the verdict to [`Self::authenticate`].
    pub(crate) fn requesting_verifier(&self) -> Arc<dyn ClientCertVerifier> {
        Arc::new(RequestClientCert {
            inner: self.verifier.clone(),
            provider: rustls::crypto::ring::default_provider(),
        })
    }
}

struct RequestClientCert {
    inner: Arc<dyn ClientCertVerifier>,
    provider: CryptoProvider,
}

impl fmt::Debug for RequestClientCert {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestClientCert").finish_non_exhaustive()
    }
}

impl ClientCertVerifier for RequestClientCert {
    fn offer_client_auth(&self) -> bool {
        true
    }

    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        self.inner.root_hint_subjects()
    }

    fn verify_client_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _now: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}
