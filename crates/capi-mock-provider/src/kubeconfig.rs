//! Cluster kubeconfigs that authenticate with a client certificate: the mock's control plane
//! writes one and renews its certificate before it expires, as KCP does
//! (`util/kubeconfig.NeedsClientCertRotation`, `RegenerateSecret`); the tool reads the
//! certificates' validity and puts an expiring one in place to see it renewed
//! (control-plane/kubeconfig-rotation).

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use kube::config::Kubeconfig;
use x509_parser::prelude::{FromDer, X509Certificate};

/// Validity of the mock's client certificate, in days (KCP: one year).
pub const VALIDITY_DAYS: i64 = 365;
/// Renewal threshold, in days: a certificate expiring sooner is renewed (KCP:
/// `certs.ClientCertificateRenewalDuration`, six months).
pub const RENEW_WITHIN_DAYS: i64 = 180;

#[derive(Debug, thiserror::Error)]
pub enum KubeconfigError {
    #[error("not a kubeconfig: {0}")]
    Parse(String),
    #[error("user {user}: client-certificate-data is not {what}")]
    Certificate { user: String, what: &'static str },
    #[error("cannot issue a client certificate: {0}")]
    Issue(#[from] rcgen::Error),
}

/// One user's client certificate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientCertificate {
    pub user: String,
    /// Unix seconds.
    pub not_before: i64,
    /// Unix seconds.
    pub not_after: i64,
    /// The kubeconfig's `client-certificate-data` (base64 of the PEM), as written.
    pub data: String,
}

/// The client certificates of a kubeconfig's users (empty: it authenticates otherwise, e.g.
/// with a token).
pub fn client_certificates(text: &str) -> Result<Vec<ClientCertificate>, KubeconfigError> {
    let config = Kubeconfig::from_yaml(text).map_err(|e| KubeconfigError::Parse(e.to_string()))?;
    let mut out = Vec::new();
    for named in &config.auth_infos {
        let Some(data) = named
            .auth_info
            .as_ref()
            .and_then(|a| a.client_certificate_data.as_ref())
        else {
            continue;
        };
        let bad = |what| KubeconfigError::Certificate {
            user: named.name.clone(),
            what,
        };
        let pem = STANDARD.decode(data.trim()).map_err(|_| bad("base64"))?;
        let der = first_pem_block(&pem).ok_or_else(|| bad("a PEM certificate"))?;
        let (_, cert) = X509Certificate::from_der(&der).map_err(|_| bad("an X.509 certificate"))?;
        let validity = cert.validity();
        out.push(ClientCertificate {
            user: named.name.clone(),
            not_before: validity.not_before.timestamp(),
            not_after: validity.not_after.timestamp(),
            data: data.trim().to_string(),
        });
    }
    Ok(out)
}

/// The DER of the first `CERTIFICATE` block of a PEM text.
fn first_pem_block(pem: &[u8]) -> Option<Vec<u8>> {
    let text = std::str::from_utf8(pem).ok()?;
    let body = text
        .split("-----BEGIN CERTIFICATE-----")
        .nth(1)?
        .split("-----END CERTIFICATE-----")
        .next()?;
    let b64: String = body.split_whitespace().collect();
    STANDARD.decode(b64).ok()
}

/// A self-signed client certificate (CN `kubernetes-admin`, O `system:masters`, as CAPI's)
/// valid from yesterday for `days` days: (certificate PEM, key PEM).
pub fn self_signed_client(days: i64) -> Result<(String, String), KubeconfigError> {
    use rcgen::{CertificateParams, DnType, ExtendedKeyUsagePurpose, KeyPair};
    let mut params = CertificateParams::new(Vec::<String>::new())?;
    params
        .distinguished_name
        .push(DnType::CommonName, "kubernetes-admin");
    params
        .distinguished_name
        .push(DnType::OrganizationName, "system:masters");
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    let date = |offset_days: i64| {
        let d = jiff::Zoned::now().date();
        let d = d
            .checked_add(jiff::Span::new().days(offset_days))
            .unwrap_or(d);
        let (m, day) = (
            u8::try_from(d.month()).unwrap_or(1),
            u8::try_from(d.day()).unwrap_or(1),
        );
        rcgen::date_time_ymd(i32::from(d.year()), m, day)
    };
    params.not_before = date(-1);
    params.not_after = date(days);
    let key = KeyPair::generate()?;
    let cert = params.self_signed(&key)?;
    Ok((cert.pem(), key.serialize_pem()))
}

/// `text` with every user's client certificate and key replaced by `cert_pem` / `key_pem`
/// (the rest of the kubeconfig as written).
pub fn with_client_certificate(
    text: &str,
    cert_pem: &str,
    key_pem: &str,
) -> Result<String, KubeconfigError> {
    let config = Kubeconfig::from_yaml(text).map_err(|e| KubeconfigError::Parse(e.to_string()))?;
    let mut out = text.to_string();
    for auth in config
        .auth_infos
        .iter()
        .filter_map(|n| n.auth_info.as_ref())
    {
        if let Some(old) = &auth.client_certificate_data {
            out = out.replace(old.trim(), &STANDARD.encode(cert_pem));
        }
        if let Some(old) = &auth.client_key_data {
            use secrecy::ExposeSecret;
            out = out.replace(old.expose_secret().trim(), &STANDARD.encode(key_pem));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(cert: &str, key: &str) -> String {
        format!(
            "apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers:\n- name: admin\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n",
            STANDARD.encode(cert),
            STANDARD.encode(key)
        )
    }

    #[test]
    fn reads_the_validity_and_replaces_the_certificate() {
        let (cert, key) = self_signed_client(VALIDITY_DAYS).unwrap();
        let text = config(&cert, &key);
        let certs = client_certificates(&text).unwrap();
        assert_eq!(certs.len(), 1);
        let days = (certs[0].not_after - certs[0].not_before) / 86_400;
        assert_eq!(days, VALIDITY_DAYS + 1);
        let (short, short_key) = self_signed_client(1).unwrap();
        let replaced = with_client_certificate(&text, &short, &short_key).unwrap();
        let now = client_certificates(&replaced).unwrap();
        assert_eq!((now[0].not_after - now[0].not_before) / 86_400, 2);
        assert_ne!(now[0].data, certs[0].data);
        assert!(!replaced.contains(&STANDARD.encode(&key)));
    }

    #[test]
    fn a_token_kubeconfig_has_no_client_certificate_and_garbage_is_an_error() {
        let token = "apiVersion: v1\nkind: Config\nusers:\n- name: a\n  user:\n    token: t\n";
        assert!(client_certificates(token).unwrap().is_empty());
        let bad = "apiVersion: v1\nkind: Config\nusers:\n- name: a\n  user:\n    client-certificate-data: bm90IGEgY2VydA==\n";
        assert!(matches!(
            client_certificates(bad),
            Err(KubeconfigError::Certificate { .. })
        ));
    }
}
