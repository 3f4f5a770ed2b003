//! The webhook client's errors in Go's words: `net/http`'s `Post "<url>": <cause>`, `net`'s dial
//! errors, crypto/tls's and crypto/x509's handshake failures, client-go's text for a reply that
//! is not a Status. kube-apiserver puts that text verbatim into its Status messages.

use std::net::SocketAddr;
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;
use tokio_rustls::rustls;

use super::ClientConfig;
use crate::webhook::verify::GoX509Error;

/// Go's error for a request that failed before or during the exchange: `Post "<url>": <cause>`.
pub fn post_error(cfg: &ClientConfig, timeout: Duration, cause: &str) -> String {
    format!("Post \"{}\": {cause}", timeout_url(&cfg.url(), timeout))
}

/// `url` with kube's `timeout` query (whole seconds, rounded up).
pub fn timeout_url(url: &str, timeout: Duration) -> String {
    let secs = timeout.as_secs() + u64::from(timeout.subsec_nanos() > 0);
    let sep = if url.contains('?') { '&' } else { '?' };
    format!("{url}{sep}timeout={secs}s")
}

/// Go's `net.OpError` text for a failed dial.
pub(super) fn dial_error(addr: SocketAddr, e: &std::io::Error) -> String {
    let cause = match e.kind() {
        std::io::ErrorKind::ConnectionRefused => "connect: connection refused".to_string(),
        std::io::ErrorKind::TimedOut => "i/o timeout".to_string(),
        _ => format!("connect: {e}"),
    };
    format!("dial tcp {addr}: {cause}")
}

/// An HTTP-level failure as Go reports it (a connection closed before a reply is `EOF`).
pub(super) fn hyper_error(e: &hyper::Error) -> String {
    if e.is_incomplete_message() || e.is_closed() || e.is_canceled() {
        "EOF".into()
    } else if e.is_parse() {
        format!("net/http: HTTP/1.x transport connection broken: malformed HTTP response: {e}")
    } else {
        e.to_string()
    }
}

/// A TLS handshake failure as crypto/tls and crypto/x509 word it.
pub(super) fn tls_error(e: &std::io::Error, host: &str) -> String {
    use rustls::{CertificateError, Error as TlsError};
    let inner = e
        .get_ref()
        .and_then(|i| i.downcast_ref::<TlsError>())
        .cloned();
    match inner {
        Some(TlsError::InvalidCertificate(c)) => {
            let x509 = match c {
                CertificateError::UnknownIssuer | CertificateError::BadSignature => {
                    "x509: certificate signed by unknown authority".to_string()
                }
                CertificateError::NotValidForName => {
                    format!(
                        "x509: certificate is not valid for any names, but wanted to match {host}"
                    )
                }
                CertificateError::NotValidForNameContext { presented, .. } => {
                    hostname_error(host, &presented)
                }
                CertificateError::Expired
                | CertificateError::ExpiredContext { .. }
                | CertificateError::NotValidYet
                | CertificateError::NotValidYetContext { .. } => {
                    "x509: certificate has expired or is not yet valid".to_string()
                }
                CertificateError::InvalidPurpose
                | CertificateError::InvalidPurposeContext { .. } => {
                    "x509: certificate specifies an incompatible key usage".to_string()
                }
                CertificateError::Other(o) if o.0.downcast_ref::<GoX509Error>().is_some() => {
                    o.0.to_string()
                }
                other => format!("x509: {other:?}"),
            };
            format!("tls: failed to verify certificate: {x509}")
        }
        Some(other) => format!("remote error: tls: {other}"),
        None if e.kind() == std::io::ErrorKind::UnexpectedEof => "EOF".into(),
        None => e.to_string(),
    }
}

/// crypto/x509's `HostnameError` text from webpki's presented names (`DnsName("a")`).
pub(super) fn hostname_error(host: &str, presented: &[String]) -> String {
    let unwrap = |p: &str, tag: &str| {
        p.strip_prefix(tag)
            .and_then(|r| r.strip_suffix(')'))
            .map(|r| r.trim_matches('"').to_string())
    };
    let dns: Vec<String> = presented
        .iter()
        .filter_map(|p| unwrap(p, "DnsName("))
        .collect();
    let ips: Vec<String> = presented
        .iter()
        .filter_map(|p| unwrap(p, "IpAddress("))
        .collect();
    let valid = if host.parse::<std::net::IpAddr>().is_ok() {
        if ips.is_empty() {
            return format!(
                "x509: cannot validate certificate for {host} because it doesn't contain any IP SANs"
            );
        }
        ips.join(", ")
    } else {
        dns.join(", ")
    };
    if valid.is_empty() {
        format!("x509: certificate is not valid for any names, but wanted to match {host}")
    } else {
        format!("x509: certificate is valid for {valid}, not {host}")
    }
}

/// client-go's text for a non-2xx reply whose body is not a Status (`NewGenericServerResponse`).
pub fn status_error(status: u16, body: &Bytes) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body)
        && v.get("kind").and_then(Value::as_str) == Some("Status")
        && let Some(m) = v.get("message").and_then(Value::as_str)
    {
        return m.to_string();
    }
    let text = String::from_utf8_lossy(body);
    match status {
        400 => "the server rejected our request for an unknown reason".into(),
        401 => "the server has asked for the client to provide credentials".into(),
        403 => text.trim().to_string(),
        404 => "the server could not find the requested resource".into(),
        405 => "the server does not allow this method on the requested resource".into(),
        409 => "the server reported a conflict".into(),
        410 => "the server has asked for the client to provide credentials".into(),
        415 => "the server responded with the status code 415 but did not return more information".into(),
        422 => "the server rejected our request due to an error in our request".into(),
        429 => "the server has received too many requests and has asked us to try again later".into(),
        500 => format!(
            "an error on the server ({:?}) has prevented the request from succeeding",
            text.trim()
        ),
        503 => "the server is currently unable to handle the request".into(),
        504 => "the server was unable to return a response in the time allotted, but may still be processing the request".into(),
        n => format!("the server responded with the status code {n} but did not return more information"),
    }
}

/// kube's cause for review versions without one it speaks (`v1`, `v1beta1`) at `field`.
pub(crate) fn unsupported_review_versions(
    field: &str,
    versions: &[impl AsRef<str>],
) -> crate::error::StatusCause {
    let listed = versions
        .iter()
        .map(|v| format!("\"{}\"", v.as_ref()))
        .collect::<Vec<_>>()
        .join(", ");
    crate::error::StatusCause::new(
        "FieldValueInvalid",
        field,
        format!("Invalid value: []string{{{listed}}}: must include at least one of v1, v1beta1"),
    )
}
