//! Certificates the tool makes while it plays CAPI core: the cluster certificate Secrets an
//! initialized control plane leaves (`<cluster>-ca`, `-etcd`, `-proxy`, `-sa`, as CAPI's
//! `util/secret` names, types and labels them), the `<cluster>-kubeconfig` Secret (as
//! `util/kubeconfig` builds it), serving certificates for the workload API server and the core
//! conversion webhook.
//!
//! Keys are ECDSA P-256 (CAPI generates RSA-2048; `ring` cannot generate RSA keys, and every
//! consumer reads them as PEM certificates / PKCS#8 keys, which both algorithms are).

use base64::Engine;
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use serde_json::{Value, json};

/// CAPI's Secret type for the Secrets it generates (`clusterv1.ClusterSecretType`).
pub const CLUSTER_SECRET_TYPE: &str = "cluster.x-k8s.io/secret";
/// CAPI's cluster-name label.
pub const CLUSTER_NAME_LABEL: &str = "cluster.x-k8s.io/cluster-name";
/// The certificate purposes of a control plane (`util/secret`: ClusterCA, EtcdCA, FrontProxyCA,
/// ServiceAccount).
pub const CERTIFICATE_PURPOSES: [&str; 4] = ["ca", "etcd", "proxy", "sa"];

#[derive(Debug, thiserror::Error)]
#[error("generating {what}: {source}")]
pub struct PkiError {
    what: String,
    #[source]
    source: rcgen::Error,
}

fn err(what: &str) -> impl FnOnce(rcgen::Error) -> PkiError + '_ {
    move |source| PkiError {
        what: what.to_string(),
        source,
    }
}

/// A certificate authority: its certificate and the key it signs with.
pub struct Authority {
    pub cert_pem: String,
    pub cert_der: Vec<u8>,
    pub key_pem: String,
    issuer: Issuer<'static, KeyPair>,
}

/// Validity like CAPI's: from an hour ago (clock skew) for `years`.
fn validity(params: &mut CertificateParams, years: i16) {
    let now = jiff::Zoned::now().date();
    let from = now.checked_sub(jiff::Span::new().days(1)).unwrap_or(now);
    let month = |m: i8| u8::try_from(m).unwrap_or(1);
    let day = |d: i8| u8::try_from(d).unwrap_or(1).min(28);
    params.not_before =
        rcgen::date_time_ymd(i32::from(from.year()), month(from.month()), day(from.day()));
    params.not_after = rcgen::date_time_ymd(
        i32::from(now.year()) + i32::from(years),
        month(now.month()),
        day(now.day()),
    );
}

/// What a client certificate of CN `cn`, O `organization` says, but its validity.
fn client_params(cn: &str, organization: &str) -> Result<CertificateParams, PkiError> {
    let mut params = CertificateParams::new(Vec::<String>::new()).map_err(err("client"))?;
    params.distinguished_name.push(DnType::CommonName, cn);
    params
        .distinguished_name
        .push(DnType::OrganizationName, organization);
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    Ok(params)
}

impl Authority {
    /// A self-signed CA with common name `cn` (CAPI: `kubernetes`), 10 years, CertSign.
    pub fn new(cn: &str) -> Result<Self, PkiError> {
        let mut params = CertificateParams::new(Vec::<String>::new()).map_err(err("CA params"))?;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, cn);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        validity(&mut params, 10);
        let key = KeyPair::generate().map_err(err("CA key"))?;
        let cert = params.self_signed(&key).map_err(err("CA certificate"))?;
        Ok(Authority {
            cert_pem: cert.pem(),
            cert_der: cert.der().to_vec(),
            key_pem: key.serialize_pem(),
            issuer: Issuer::new(params, key),
        })
    }

    /// An existing CA (a provider's `<cluster>-ca`: `tls.crt`, `tls.key`), to sign with. Keys
    /// in PKCS#8 (`PRIVATE KEY`) or PKCS#1 RSA (`RSA PRIVATE KEY`, what CAPI's
    /// `certs.EncodePrivateKeyPEM` writes for its RSA-2048 keys) PEM.
    pub fn from_pem(cert_pem: &str, key_pem: &str) -> Result<Self, PkiError> {
        use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, pem::PemObject};
        let bad = |what: &str, message: String| PkiError {
            what: what.to_string(),
            source: rcgen::Error::X509(message),
        };
        let pkcs8 = match PrivateKeyDer::from_pem_slice(key_pem.as_bytes())
            .map_err(|e| bad("the CA key", e.to_string()))?
        {
            PrivateKeyDer::Pkcs8(k) => k.secret_pkcs8_der().to_vec(),
            PrivateKeyDer::Pkcs1(k) => pkcs1_rsa_to_pkcs8(k.secret_pkcs1_der()),
            _ => {
                return Err(bad(
                    "the CA key",
                    "unsupported key form (PKCS#8 PRIVATE KEY or PKCS#1 RSA PRIVATE KEY)".into(),
                ));
            }
        };
        let key = KeyPair::try_from(pkcs8.as_slice()).map_err(err("the CA key"))?;
        let cert_der = CertificateDer::from_pem_slice(cert_pem.as_bytes())
            .map_err(|e| bad("the CA certificate", e.to_string()))?
            .to_vec();
        let issuer = Issuer::from_ca_cert_der(&cert_der.as_slice().into(), key)
            .map_err(err("the CA certificate"))?;
        Ok(Authority {
            cert_pem: cert_pem.to_string(),
            cert_der,
            key_pem: key_pem.to_string(),
            issuer,
        })
    }

    /// A serving certificate for `names` (IP addresses or DNS names).
    pub fn serving(&self, cn: &str, names: &[String]) -> Result<Leaf, PkiError> {
        let mut params = CertificateParams::new(names.to_vec()).map_err(err("serving params"))?;
        params.distinguished_name.push(DnType::CommonName, cn);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        validity(&mut params, 1);
        self.sign(params, "serving certificate")
    }

    /// A client certificate (CAPI's kubeconfig: CN `kubernetes-admin`, O `system:masters`).
    pub fn client(&self, cn: &str, organization: &str) -> Result<Leaf, PkiError> {
        let mut params = client_params(cn, organization)?;
        validity(&mut params, 1);
        self.sign(params, "client certificate")
    }

    /// [`Self::client`] expiring tomorrow: a certificate any renewal threshold calls due
    /// (control-plane/kubeconfig-rotation).
    pub fn expiring_client(&self, cn: &str, organization: &str) -> Result<Leaf, PkiError> {
        let mut params = client_params(cn, organization)?;
        validity(&mut params, 0);
        let today = jiff::Zoned::now().date();
        let tomorrow = today
            .checked_add(jiff::Span::new().days(1))
            .unwrap_or(today);
        params.not_after = rcgen::date_time_ymd(
            i32::from(tomorrow.year()),
            u8::try_from(tomorrow.month()).unwrap_or(1),
            u8::try_from(tomorrow.day()).unwrap_or(1),
        );
        self.sign(params, "client certificate")
    }

    fn sign(&self, params: CertificateParams, what: &str) -> Result<Leaf, PkiError> {
        let key = KeyPair::generate().map_err(err(what))?;
        let cert = params.signed_by(&key, &self.issuer).map_err(err(what))?;
        Ok(Leaf {
            cert_pem: cert.pem(),
            cert_der: cert.der().to_vec(),
            key_pem: key.serialize_pem(),
            key_der: key.serialize_der(),
        })
    }

    /// The serving identity of an embedded API server signed by this CA.
    pub fn serving_identity(
        &self,
        cn: &str,
        names: &[String],
    ) -> Result<embedded_apiserver::tls::ServingIdentity, PkiError> {
        let leaf = self.serving(cn, names)?;
        Ok(embedded_apiserver::tls::ServingIdentity {
            chain_der: vec![leaf.cert_der, self.cert_der.clone()],
            key_pkcs8_der: leaf.key_der,
            ca_pem: self.cert_pem.clone(),
            ca_der: self.cert_der.clone(),
        })
    }
}

/// DER length octets.
fn der_len(len: usize) -> Vec<u8> {
    if len < 0x80 {
        return vec![u8::try_from(len).unwrap_or(0)];
    }
    let bytes: Vec<u8> = len
        .to_be_bytes()
        .into_iter()
        .skip_while(|b| *b == 0)
        .collect();
    let mut out = vec![0x80 | u8::try_from(bytes.len()).unwrap_or(0)];
    out.extend(bytes);
    out
}

/// PKCS#8 `PrivateKeyInfo` around a PKCS#1 `RSAPrivateKey` (version 0, algorithm
/// rsaEncryption with NULL parameters), the only key form `ring` loads.
fn pkcs1_rsa_to_pkcs8(pkcs1: &[u8]) -> Vec<u8> {
    const VERSION: [u8; 3] = [0x02, 0x01, 0x00];
    const RSA_ALGORITHM: [u8; 15] = [
        0x30, 0x0d, 0x06, 0x09, 0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x01, 0x01, 0x05, 0x00,
    ];
    let mut octets = vec![0x04];
    octets.extend(der_len(pkcs1.len()));
    octets.extend_from_slice(pkcs1);
    let mut body = VERSION.to_vec();
    body.extend_from_slice(&RSA_ALGORITHM);
    body.extend(octets);
    let mut out = vec![0x30];
    out.extend(der_len(body.len()));
    out.extend(body);
    out
}

/// A certificate signed by an [`Authority`].
pub struct Leaf {
    pub cert_pem: String,
    pub cert_der: Vec<u8>,
    pub key_pem: String,
    pub key_der: Vec<u8>,
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s.as_bytes())
}

/// The Secret of one certificate purpose (`Certificate.AsSecret`): data `tls.crt` / `tls.key`,
/// type `cluster.x-k8s.io/secret`, label cluster-name; for `sa` the public key in `tls.crt`.
pub fn certificate_secret(cluster: &str, purpose: &str, crt_pem: &str, key_pem: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": format!("{cluster}-{purpose}"),
            "labels": {CLUSTER_NAME_LABEL: cluster},
        },
        "type": CLUSTER_SECRET_TYPE,
        "data": {"tls.crt": b64(crt_pem), "tls.key": b64(key_pem)},
    })
}

/// The four certificate Secrets of a cluster (`ca` is `cluster_ca`; the others fresh) without
/// owner references (the caller adds the owner core would put there).
pub fn certificate_secrets(cluster: &str, cluster_ca: &Authority) -> Result<Vec<Value>, PkiError> {
    let mut out = vec![certificate_secret(
        cluster,
        "ca",
        &cluster_ca.cert_pem,
        &cluster_ca.key_pem,
    )];
    for (purpose, cn) in [("etcd", "etcd-ca"), ("proxy", "front-proxy-ca")] {
        let ca = Authority::new(cn)?;
        out.push(certificate_secret(
            cluster,
            purpose,
            &ca.cert_pem,
            &ca.key_pem,
        ));
    }
    let sa = KeyPair::generate().map_err(err("service account key"))?;
    out.push(certificate_secret(
        cluster,
        "sa",
        &sa.public_key_pem(),
        &sa.serialize_pem(),
    ));
    Ok(out)
}

/// A kubeconfig as CAPI's `util/kubeconfig` generates it: cluster `<cluster>` at `server` with
/// the cluster CA, user `<cluster>-admin` with a client certificate from that CA (CN
/// `kubernetes-admin`, O `system:masters`), context `<cluster>-admin@<cluster>`. `token`: the
/// bearer token of the embedded workload API server, which authenticates both (the client
/// certificate alone suffices, as KCP's kubeconfig has no token).
pub fn kubeconfig(
    cluster: &str,
    server: &str,
    ca: &Authority,
    token: Option<&str>,
) -> Result<String, PkiError> {
    let client = ca.client("kubernetes-admin", "system:masters")?;
    let user = format!("{cluster}-admin");
    let context = format!("{user}@{cluster}");
    let mut text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: {cluster}\n  cluster:\n    server: {server}\n    certificate-authority-data: {ca}\ncontexts:\n- name: {context}\n  context:\n    cluster: {cluster}\n    user: {user}\ncurrent-context: {context}\nusers:\n- name: {user}\n  user:\n    client-certificate-data: {crt}\n    client-key-data: {key}\n",
        ca = b64(&ca.cert_pem),
        crt = b64(&client.cert_pem),
        key = b64(&client.key_pem),
    );
    if let Some(t) = token {
        text.push_str(&format!("    token: {t}\n"));
    }
    Ok(text)
}

/// The `<cluster>-kubeconfig` Secret (`GenerateSecretWithOwner`): data key `value`, CAPI type,
/// cluster-name label; no owner (the caller adds it).
pub fn kubeconfig_secret(cluster: &str, kubeconfig: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {
            "name": format!("{cluster}-kubeconfig"),
            "labels": {CLUSTER_NAME_LABEL: cluster},
        },
        "type": CLUSTER_SECRET_TYPE,
        "data": {"value": b64(kubeconfig)},
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_existing_ca_signs_after_a_round_trip_through_its_secret() {
        let ca = Authority::new("kubernetes").unwrap();
        let loaded = Authority::from_pem(&ca.cert_pem, &ca.key_pem).unwrap();
        assert_eq!(loaded.cert_der, ca.cert_der);
        let id = loaded
            .serving_identity("kube-apiserver", &["127.0.0.1".into()])
            .unwrap();
        assert_eq!(id.chain_der[1], ca.cert_der);
        assert!(Authority::from_pem(&ca.cert_pem, "not a key").is_err());
        assert!(Authority::from_pem("not a cert", &ca.key_pem).is_err());
    }

    /// CAPI writes its RSA-2048 CA keys as PKCS#1 `RSA PRIVATE KEY` (made here with openssl,
    /// which `ring` cannot do; skipped without it).
    #[test]
    fn a_capi_style_rsa_pkcs1_ca_key_signs() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("ca.key");
        let crt = dir.path().join("ca.crt");
        let run = |args: &[&str]| {
            std::process::Command::new("openssl")
                .args(args)
                .output()
                .is_ok_and(|o| o.status.success())
        };
        let (k, c) = (key.to_str().unwrap(), crt.to_str().unwrap());
        if !run(&["genrsa", "-traditional", "-out", k, "2048"])
            || !run(&[
                "req",
                "-x509",
                "-new",
                "-key",
                k,
                "-subj",
                "/CN=kubernetes",
                "-days",
                "1",
                "-out",
                c,
            ])
        {
            println!("skip: no openssl to make an RSA PKCS#1 CA key");
            return;
        }
        let key_pem = std::fs::read_to_string(&key).unwrap();
        assert!(key_pem.contains("BEGIN RSA PRIVATE KEY"), "{key_pem:.40}");
        let ca = Authority::from_pem(&std::fs::read_to_string(&crt).unwrap(), &key_pem).unwrap();
        let leaf = ca.serving("kube-apiserver", &["127.0.0.1".into()]).unwrap();
        assert!(leaf.cert_pem.starts_with("-----BEGIN CERTIFICATE-----"));
    }

    fn decode(s: &Value, key: &str) -> String {
        let raw = s["data"][key].as_str().unwrap();
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(raw)
                .unwrap(),
        )
        .unwrap()
    }

    #[test]
    fn certificate_secrets_are_named_typed_labelled_and_real_pem() {
        let ca = Authority::new("kubernetes").unwrap();
        let secrets = certificate_secrets("c1", &ca).unwrap();
        let names: Vec<&str> = secrets
            .iter()
            .map(|s| s["metadata"]["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["c1-ca", "c1-etcd", "c1-proxy", "c1-sa"]);
        for s in &secrets {
            assert_eq!(s["type"], CLUSTER_SECRET_TYPE);
            assert_eq!(s["metadata"]["labels"][CLUSTER_NAME_LABEL], "c1");
            assert!(decode(s, "tls.key").starts_with("-----BEGIN PRIVATE KEY-----"));
        }
        for s in &secrets[..3] {
            let crt = decode(s, "tls.crt");
            let pem = crt
                .lines()
                .filter(|l| !l.starts_with("-----"))
                .collect::<String>();
            let der = base64::engine::general_purpose::STANDARD
                .decode(pem)
                .unwrap();
            // A DER SEQUENCE: a real certificate, not a placeholder.
            assert_eq!(der[0], 0x30);
        }
        assert!(decode(&secrets[3], "tls.crt").starts_with("-----BEGIN PUBLIC KEY-----"));
        assert_eq!(decode(&secrets[0], "tls.crt"), ca.cert_pem);
    }

    #[test]
    fn kubeconfig_has_capi_names_and_a_client_certificate() {
        let ca = Authority::new("kubernetes").unwrap();
        let text = kubeconfig("c1", "https://127.0.0.1:1", &ca, Some("tok")).unwrap();
        let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
        assert_eq!(kc.current_context.as_deref(), Some("c1-admin@c1"));
        let user = kc.auth_infos[0].auth_info.as_ref().unwrap();
        assert!(user.client_certificate_data.is_some());
        assert_eq!(kc.clusters[0].name, "c1");
        let secret = kubeconfig_secret("c1", &text);
        assert_eq!(secret["metadata"]["name"], "c1-kubeconfig");
        assert_eq!(decode(&secret, "value"), text);
    }
}
