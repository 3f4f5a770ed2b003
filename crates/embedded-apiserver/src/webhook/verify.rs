//! The webhook client's server-certificate verification: rustls's [`WebPkiServerVerifier`]
//! first, with Go's rule for a certificate that is itself in the root pool as the one fallback.
//!
//! kube-apiserver verifies a webhook's certificate with Go's `crypto/x509`: when the served leaf
//! is byte-identical to a certificate of the root pool (the `caBundle`), `Verify` takes the leaf
//! as its own one-certificate chain, without building a chain and without looking at its
//! `basicConstraints`. So the certificate `openssl req -x509` makes (self-signed, marked
//! `CA:TRUE` by openssl's default `v3_ca` section), served by the webhook and given as its own
//! `caBundle`, works on a real cluster. webpki refuses any `CA:TRUE` end-entity certificate
//! (`CaUsedAsEndEntity`).
//!
//! The fallback applies only when WebPKI refused the certificate **and** the leaf is
//! byte-identical to a certificate of the `caBundle` (never the system roots). It then checks
//! what Go checks for that one-certificate chain, read with x509-parser: the validity period
//! at the handshake time, the server name against the SANs (`VerifyHostname`: DNS SANs with a
//! left-most `*` label, IP SANs for an IP; the subject CommonName never counts), and the
//! extended key usage (none, `any` or `serverAuth`). The handshake signature is verified
//! against the leaf's key as WebPKI verifies it (rustls's `verify_tls1x_signature`). Everything else keeps WebPKI's verdict: a leaf that is not
//! in the bundle must chain to it as an end-entity certificate, so a wrong name, an expired
//! certificate, an unknown or other CA and chain problems fail as before. A self-issued `CA:TRUE`
//! leaf outside the bundle is reported as Go does (`certificate signed by unknown authority`:
//! no root is that certificate).
//!
//! Left from Go's semantics: Go never checks a leaf's `basicConstraints`, so a `CA:TRUE` leaf
//! *signed by* the bundle's CA (not itself in the bundle) verifies there and is still refused
//! here (`x509: certificate is a CA certificate …`).

use std::sync::Arc;

use tokio_rustls::rustls;
use tokio_rustls::rustls::client::WebPkiServerVerifier;
use tokio_rustls::rustls::client::danger::{
    HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier,
};
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio_rustls::rustls::{CertificateError, DigitallySignedStruct, Error, SignatureScheme};
use x509_parser::extensions::GeneralName;
use x509_parser::prelude::{FromDer as _, X509Certificate};

/// A Go-worded x509 failure the fallback found (rendered verbatim by the client).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct GoX509Error(pub String);

/// WebPKI verification of a webhook's certificate plus Go's root-as-leaf rule (module docs).
#[derive(Debug)]
pub struct WebhookCertVerifier {
    /// `None` without any root (no system roots on the machine): every certificate is then
    /// `signed by unknown authority`.
    inner: Option<Arc<WebPkiServerVerifier>>,
    /// DER of every `caBundle` certificate (empty with system roots: no fallback).
    anchors: Vec<Vec<u8>>,
    algorithms: rustls::crypto::WebPkiSupportedAlgorithms,
}

impl WebhookCertVerifier {
    /// `roots` are what WebPKI trusts; `bundle` the DER certificates of the `caBundle` (the
    /// only ones the fallback accepts as leaves).
    pub fn new(
        roots: Arc<rustls::RootCertStore>,
        bundle: Vec<Vec<u8>>,
        provider: Arc<rustls::crypto::CryptoProvider>,
    ) -> Result<Self, String> {
        let algorithms = provider.signature_verification_algorithms;
        let inner = if roots.is_empty() {
            None
        } else {
            Some(
                WebPkiServerVerifier::builder_with_provider(roots, provider)
                    .build()
                    .map_err(|e| e.to_string())?,
            )
        };
        Ok(Self {
            inner,
            anchors: bundle,
            algorithms,
        })
    }
}

impl ServerCertVerifier for WebhookCertVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let Some(inner) = &self.inner else {
            return Err(CertificateError::UnknownIssuer.into());
        };
        let refused = match inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Ok(ok) => return Ok(ok),
            Err(e) => e,
        };
        let leaf = end_entity.as_ref();
        if self.anchors.iter().any(|a| a.as_slice() == leaf) {
            return verify_root_as_leaf(leaf, server_name, now)
                .map(|()| ServerCertVerified::assertion());
        }
        if let Ok((_, cert)) = X509Certificate::from_der(leaf)
            && cert.is_ca()
            && is_ca_used_as_end_entity(&refused)
        {
            // A self-issued certificate that is not itself a root has no chain in Go.
            if cert.issuer().as_raw() == cert.subject().as_raw() {
                return Err(CertificateError::UnknownIssuer.into());
            }
            return Err(go_error(
                "x509: certificate is a CA certificate (basicConstraints CA:TRUE) that is not itself in caBundle; this server accepts such a leaf only when it is a caBundle certificate",
            ));
        }
        Err(refused)
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

fn go_error(text: &str) -> Error {
    CertificateError::Other(rustls::OtherError(Arc::new(GoX509Error(text.to_string())))).into()
}

/// Whether WebPKI refused an end-entity certificate for being a CA (`CaUsedAsEndEntity`,
/// which rustls passes on as an opaque `Other`).
fn is_ca_used_as_end_entity(e: &Error) -> bool {
    matches!(e, Error::InvalidCertificate(CertificateError::Other(o))
        if format!("{o:?}").contains("CaUsedAsEndEntity"))
}

/// Go's checks of a one-certificate chain `[leaf]` where the leaf is a root: validity period,
/// then the server name, then the extended key usage.
fn verify_root_as_leaf(
    leaf: &[u8],
    server_name: &ServerName<'_>,
    now: UnixTime,
) -> Result<(), Error> {
    let (_, cert) =
        X509Certificate::from_der(leaf).map_err(|_| Error::from(CertificateError::BadEncoding))?;
    let secs = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
    let validity = cert.validity();
    let (not_before, not_after) = (
        validity.not_before.timestamp(),
        validity.not_after.timestamp(),
    );
    let unix = |t: i64| UnixTime::since_unix_epoch(std::time::Duration::from_secs(t.max(0) as u64));
    if secs < not_before {
        return Err(CertificateError::NotValidYetContext {
            time: now,
            not_before: unix(not_before),
        }
        .into());
    }
    if secs > not_after {
        return Err(CertificateError::ExpiredContext {
            time: now,
            not_after: unix(not_after),
        }
        .into());
    }
    let sans: Vec<GeneralName<'_>> = match cert.subject_alternative_name() {
        Ok(Some(ext)) => ext.value.general_names.clone(),
        Ok(None) => Vec::new(),
        Err(_) => return Err(CertificateError::BadEncoding.into()),
    };
    if !name_matches(&sans, server_name) {
        return Err(CertificateError::NotValidForNameContext {
            expected: server_name.to_owned(),
            presented: sans.iter().filter_map(presented).collect(),
        }
        .into());
    }
    match cert.extended_key_usage() {
        Ok(None) => Ok(()),
        Ok(Some(eku)) if eku.value.any || eku.value.server_auth => Ok(()),
        Ok(Some(_)) => Err(CertificateError::InvalidPurpose.into()),
        Err(_) => Err(CertificateError::BadEncoding.into()),
    }
}

/// WebPKI's rendering of a presented name (`DnsName("a")`, `IpAddress(1.2.3.4)`), which the
/// client turns into Go's `HostnameError` text.
fn presented(n: &GeneralName<'_>) -> Option<String> {
    match n {
        GeneralName::DNSName(d) => Some(format!("DnsName(\"{d}\")")),
        GeneralName::IPAddress(b) => ip_of(b).map(|ip| format!("IpAddress({ip})")),
        _ => None,
    }
}

fn ip_of(b: &[u8]) -> Option<std::net::IpAddr> {
    match b.len() {
        4 => <[u8; 4]>::try_from(b).ok().map(std::net::IpAddr::from),
        16 => <[u8; 16]>::try_from(b).ok().map(std::net::IpAddr::from),
        _ => None,
    }
}

/// Go's `VerifyHostname`: an IP only against IP SANs; a host name against the DNS SANs,
/// case-insensitively, ignoring a trailing dot, a left-most `*` label matching one label.
fn name_matches(sans: &[GeneralName<'_>], server_name: &ServerName<'_>) -> bool {
    match server_name {
        ServerName::IpAddress(ip) => {
            let want = std::net::IpAddr::from(*ip);
            sans.iter().any(|n| match n {
                GeneralName::IPAddress(b) => ip_of(b).is_some_and(|got| same_ip(got, want)),
                _ => false,
            })
        }
        ServerName::DnsName(host) => sans.iter().any(|n| match n {
            GeneralName::DNSName(pattern) => host_matches(pattern, host.as_ref()),
            _ => false,
        }),
        _ => false,
    }
}

/// Go's `net.IP.Equal`: an IPv4 address equals its IPv4-mapped IPv6 form.
fn same_ip(a: std::net::IpAddr, b: std::net::IpAddr) -> bool {
    let canon = |ip: std::net::IpAddr| match ip {
        std::net::IpAddr::V6(v6) => v6
            .to_ipv4_mapped()
            .map_or(std::net::IpAddr::V6(v6), std::net::IpAddr::V4),
        v4 => v4,
    };
    canon(a) == canon(b)
}

/// Go's `matchHostnames` (for valid host names; an exact match always counts).
fn host_matches(pattern: &str, host: &str) -> bool {
    let pattern = pattern.to_ascii_lowercase();
    let host = host.to_ascii_lowercase();
    if pattern == host {
        return true;
    }
    let (pattern, host) = (pattern.trim_end_matches('.'), host.trim_end_matches('.'));
    if pattern.is_empty() || host.is_empty() {
        return false;
    }
    let p: Vec<&str> = pattern.split('.').collect();
    let h: Vec<&str> = host.split('.').collect();
    p.len() == h.len()
        && p.iter()
            .zip(&h)
            .enumerate()
            .all(|(i, (p, h))| (i == 0 && *p == "*" && !h.is_empty()) || p == h)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_names_match_as_go_matches_them() {
        assert!(host_matches("hooks.webhooks.svc", "hooks.webhooks.svc"));
        assert!(host_matches("Hooks.Webhooks.SVC", "hooks.webhooks.svc."));
        assert!(host_matches("*.webhooks.svc", "hooks.webhooks.svc"));
        assert!(!host_matches("*.svc", "hooks.webhooks.svc"));
        assert!(!host_matches("hooks.*.svc", "hooks.webhooks.svc"));
        assert!(!host_matches("other.webhooks.svc", "hooks.webhooks.svc"));
        assert!(!host_matches("", "hooks.webhooks.svc"));
    }

    #[test]
    fn ips_match_only_ip_sans() {
        let dns = [GeneralName::DNSName("127.0.0.1")];
        let name = ServerName::try_from("127.0.0.1").unwrap();
        assert!(!name_matches(&dns, &name));
        let ip = [GeneralName::IPAddress(&[127, 0, 0, 1])];
        assert!(name_matches(&ip, &name));
        assert_eq!(presented(&ip[0]).unwrap(), "IpAddress(127.0.0.1)");
    }
}
