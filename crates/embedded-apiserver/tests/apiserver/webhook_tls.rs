//! Webhook serving certificates verified as kube-apiserver (Go's crypto/x509) verifies them:
//! a self-signed `CA:TRUE` certificate (what `openssl req -x509` makes) that is itself the
//! `caBundle` is accepted, as Go accepts a leaf that is in the root pool; a wrong name, an
//! expired certificate, another CA and the like are still refused with Go's texts.

use std::path::Path;
use std::process::Command;

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair};
use serde_json::{Value, json};
use x509_parser::prelude::{FromDer as _, X509Certificate};

use super::common::H;
use super::webhook_support::{WebhookServer, gadget_rules, hook};
use super::webhooks::{G1, GA, VWC, configure, gadget_v1, gadget_v1alpha1, install_gadgets};

/// The names the tests' certificates are for: the routed Service and the loopback address.
const SANS: &str = "subjectAltName=DNS:hooks.webhooks.svc,DNS:localhost,IP:127.0.0.1";

/// A certificate and key (PEM) made by the real `openssl req -x509 -newkey rsa:2048 -nodes`,
/// with `-addext` for each of `addext`; `None` (the test is skipped, with a line saying so)
/// when there is no openssl.
fn openssl(dir: &Path, tag: &str, cn: &str, addext: &[&str]) -> Option<(String, String)> {
    let (cert, key) = (
        dir.join(format!("{tag}.crt")),
        dir.join(format!("{tag}.key")),
    );
    let mut cmd = Command::new("openssl");
    cmd.args([
        "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
    ])
    .arg("-subj")
    .arg(format!("/CN={cn}"))
    .arg("-keyout")
    .arg(&key)
    .arg("-out")
    .arg(&cert);
    for a in addext {
        cmd.args(["-addext", a]);
    }
    let out = match cmd.output() {
        Ok(out) => out,
        Err(e) => {
            println!("skipped: webhook_tls: openssl not runnable: {e}");
            return None;
        }
    };
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some((
        std::fs::read_to_string(cert).unwrap(),
        std::fs::read_to_string(key).unwrap(),
    ))
}

/// Whether a PEM certificate says `basicConstraints CA:TRUE`.
fn is_ca(pem: &str) -> bool {
    use tokio_rustls::rustls::pki_types::CertificateDer;
    use tokio_rustls::rustls::pki_types::pem::PemObject as _;
    let der = CertificateDer::from_pem_slice(pem.as_bytes()).unwrap();
    X509Certificate::from_der(&der).unwrap().1.is_ca()
}

/// A self-signed certificate made by rcgen and marked CA, for `names`: valid from 1975 to 4096
/// (rcgen's defaults), or `expired` (2020 to 2021).
fn rcgen_ca_leaf(names: &[&str], expired: bool) -> (String, String) {
    let mut p =
        CertificateParams::new(names.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap();
    p.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    p.distinguished_name.push(DnType::CommonName, names[0]);
    if expired {
        p.not_before = rcgen::date_time_ymd(2020, 1, 1);
        p.not_after = rcgen::date_time_ymd(2021, 1, 1);
    }
    let key = KeyPair::generate().unwrap();
    let cert = p.self_signed(&key).unwrap();
    (cert.pem(), key.serialize_pem())
}

/// A server whose routed Service `webhooks/hooks` (port 443) reaches `hooks`.
async fn routed(hooks: &WebhookServer) -> H {
    let h = H::new();
    install_gadgets(&h, None).await;
    let ns = h
        .post(
            "/api/v1/namespaces",
            json!({"metadata": {"name": "webhooks"}}),
        )
        .await;
    assert_eq!(ns.code, 201);
    let svc = h
        .post(
            "/api/v1/namespaces/webhooks/services",
            json!({"metadata": {"name": "hooks"}, "spec": {"ports": [{"port": 443}]}}),
        )
        .await;
    assert_eq!(svc.code, 201, "{}", svc.body);
    h.server.route_service("webhooks", "hooks", 443, hooks.addr);
    h
}

/// A validating webhook on gadgets at `/validate` by the Service and one by URL, both trusting
/// `ca_bundle` (base64 PEM).
async fn validate_both_ways(h: &H, hooks: &WebhookServer, ca_bundle: &str) {
    let svc = json!({"service": {"namespace": "webhooks", "name": "hooks", "path": "/validate"},
        "caBundle": ca_bundle});
    let url = json!({"url": hooks.url("/validate"), "caBundle": ca_bundle});
    configure(
        h,
        VWC,
        "tls",
        vec![
            hook("svc.tls.example.com", svc, gadget_rules(&["v1"])),
            hook("url.tls.example.com", url, gadget_rules(&["v1"])),
        ],
    )
    .await;
}

fn b64(pem: &str) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(pem)
}

/// Both webhooks were called over TLS and decided: `red` denied, `blue` stored.
async fn webhooks_decide(h: &H, hooks: &WebhookServer) {
    let r = h.post(G1, gadget_v1("red", Some("red"))).await;
    assert_eq!(r.code, 403, "{}", r.body);
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .ends_with("denied the request: red is not allowed"),
        "{}",
        r.body
    );
    let r = h.post(G1, gadget_v1("blue", Some("blue"))).await;
    assert_eq!(r.code, 201, "{}", r.body);
    let sni: Vec<Option<String>> = hooks.on("/validate").into_iter().map(|c| c.sni).collect();
    assert!(
        sni.contains(&Some("hooks.webhooks.svc".into())) && sni.contains(&None),
        "both the Service (SNI hooks.webhooks.svc) and the URL (an IP: no SNI) were called: {sni:?}"
    );
}

/// The refusal text of the validating webhooks, asserting both refused with `x509`.
async fn refusals(h: &H) -> Vec<String> {
    let r = h.post(G1, gadget_v1("a", None)).await;
    assert_eq!(r.code, 500, "{}", r.body);
    let message = r.body["message"].as_str().unwrap().to_string();
    assert!(
        message.contains("tls: failed to verify certificate: "),
        "{message}"
    );
    vec![message]
}

fn ends_with(messages: &[String], tail: &str) {
    assert!(
        messages.iter().all(|m| m.ends_with(tail)),
        "expected …{tail}: {messages:#?}"
    );
}

/// A certificate made the common way, `openssl req -x509` (CA:TRUE by openssl's default),
/// served by the webhook and given as its own caBundle, by Service name and by IP, for admission
/// and conversion.
#[tokio::test]
async fn openssl_self_signed_certificate_is_its_own_ca_bundle() {
    let dir = tempfile::tempdir().unwrap();
    let Some((cert, key)) = openssl(dir.path(), "hook", "hooks.webhooks.svc", &[SANS]) else {
        return;
    };
    assert!(
        is_ca(&cert),
        "openssl req -x509 marks the certificate CA:TRUE"
    );
    let hooks = WebhookServer::start_pem(&cert, &key, &cert).await;
    let h = routed(&hooks).await;
    validate_both_ways(&h, &hooks, &hooks.ca_bundle).await;
    webhooks_decide(&h, &hooks).await;

    // Among other certificates of the bundle, too.
    let (other, _) = openssl(dir.path(), "other", "other", &[]).unwrap();
    let h = routed(&hooks).await;
    validate_both_ways(&h, &hooks, &b64(&format!("{other}{cert}"))).await;
    webhooks_decide(&h, &hooks).await;

    // A conversion webhook with the same certificate: a v1alpha1 write is converted to v1.
    let h = H::new();
    install_gadgets(
        &h,
        Some(json!({"url": hooks.url("/convert"), "caBundle": hooks.ca_bundle})),
    )
    .await;
    let r = h.post(GA, gadget_v1alpha1("c", "green")).await;
    assert_eq!(r.code, 201, "{}", r.body);
    let v1: Value = h.get(&format!("{G1}/c")).await.body;
    assert_eq!(v1["spec"]["paint"]["color"], "green", "{v1}");
    assert!(!hooks.on("/convert").is_empty());
}

/// The same made in Rust: an rcgen certificate marked CA, self-signed, as its own caBundle.
#[tokio::test]
async fn rcgen_ca_marked_self_signed_certificate_is_its_own_ca_bundle() {
    let (cert, key) = rcgen_ca_leaf(&["hooks.webhooks.svc", "localhost", "127.0.0.1"], false);
    assert!(is_ca(&cert));
    let hooks = WebhookServer::start_pem(&cert, &key, &cert).await;
    let h = routed(&hooks).await;
    validate_both_ways(&h, &hooks, &hooks.ca_bundle).await;
    webhooks_decide(&h, &hooks).await;
}

/// A root served as its leaf is still checked for its names, like Go's `VerifyHostname`.
#[tokio::test]
async fn root_as_leaf_with_the_wrong_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let Some((cert, key)) = openssl(
        dir.path(),
        "wrong",
        "hooks.webhooks.svc",
        &["subjectAltName=DNS:other.example.com"],
    ) else {
        return;
    };
    let hooks = WebhookServer::start_pem(&cert, &key, &cert).await;
    let h = routed(&hooks).await;
    let svc = json!({"service": {"namespace": "webhooks", "name": "hooks", "path": "/validate"},
        "caBundle": hooks.ca_bundle});
    configure(
        &h,
        VWC,
        "svc",
        vec![hook("svc.example.com", svc, gadget_rules(&["v1"]))],
    )
    .await;
    ends_with(
        &refusals(&h).await,
        "x509: certificate is valid for other.example.com, not hooks.webhooks.svc",
    );
    let h = routed(&hooks).await;
    let url = json!({"url": hooks.url("/validate"), "caBundle": hooks.ca_bundle});
    configure(
        &h,
        VWC,
        "url",
        vec![hook("url.example.com", url, gadget_rules(&["v1"]))],
    )
    .await;
    ends_with(
        &refusals(&h).await,
        "x509: cannot validate certificate for 127.0.0.1 because it doesn't contain any IP SANs",
    );
    assert!(hooks.on("/validate").is_empty(), "no request got through");
}

/// A root served as its leaf is still checked for its validity period.
#[tokio::test]
async fn expired_root_as_leaf_is_refused() {
    let (cert, key) = rcgen_ca_leaf(&["hooks.webhooks.svc", "127.0.0.1"], true);
    let hooks = WebhookServer::start_pem(&cert, &key, &cert).await;
    let h = routed(&hooks).await;
    validate_both_ways(&h, &hooks, &hooks.ca_bundle).await;
    ends_with(
        &refusals(&h).await,
        "x509: certificate has expired or is not yet valid",
    );
    assert!(hooks.on("/validate").is_empty());
}

/// A self-signed CA certificate that is not the caBundle (another one is): unknown authority,
/// as Go says; a CA:TRUE leaf signed by another CA than the bundle's likewise.
#[tokio::test]
async fn root_as_leaf_of_another_bundle_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let Some((cert, key)) = openssl(dir.path(), "served", "hooks.webhooks.svc", &[SANS]) else {
        return;
    };
    let (stranger, _) = openssl(dir.path(), "stranger", "hooks.webhooks.svc", &[SANS]).unwrap();
    let hooks = WebhookServer::start_pem(&cert, &key, &stranger).await;
    let h = routed(&hooks).await;
    validate_both_ways(&h, &hooks, &hooks.ca_bundle).await;
    ends_with(
        &refusals(&h).await,
        "x509: certificate signed by unknown authority",
    );
    assert!(hooks.on("/validate").is_empty());
}

/// A root served as its leaf whose extended key usage excludes serving: Go's key-usage error.
#[tokio::test]
async fn root_as_leaf_for_client_auth_only_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let Some((cert, key)) = openssl(
        dir.path(),
        "client",
        "hooks.webhooks.svc",
        &[SANS, "extendedKeyUsage=clientAuth"],
    ) else {
        return;
    };
    let hooks = WebhookServer::start_pem(&cert, &key, &cert).await;
    let h = routed(&hooks).await;
    validate_both_ways(&h, &hooks, &hooks.ca_bundle).await;
    ends_with(
        &refusals(&h).await,
        "x509: certificate specifies an incompatible key usage",
    );
}

/// Only a leaf that is itself a caBundle certificate gets Go's rule: a CA:TRUE leaf *signed by*
/// the bundle's CA is still refused here (Go would accept it; README "Deviations"), and a
/// chain to the bundle's CA with an ordinary leaf still works.
#[tokio::test]
async fn ca_marked_leaf_signed_by_the_bundle_ca_is_still_refused() {
    let mut ca = CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, "bundle CA");
    let ca_key = KeyPair::generate().unwrap();
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    let issuer = Issuer::new(ca, ca_key);
    let mut leaf = CertificateParams::new(vec![
        "hooks.webhooks.svc".to_string(),
        "127.0.0.1".to_string(),
    ])
    .unwrap();
    leaf.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    let key = KeyPair::generate().unwrap();
    let cert = leaf.signed_by(&key, &issuer).unwrap();
    let hooks = WebhookServer::start_pem(&cert.pem(), &key.serialize_pem(), &ca_cert.pem()).await;
    let h = routed(&hooks).await;
    validate_both_ways(&h, &hooks, &hooks.ca_bundle).await;
    ends_with(
        &refusals(&h).await,
        "x509: certificate is a CA certificate (basicConstraints CA:TRUE) that is not itself in caBundle; this server accepts such a leaf only when it is a caBundle certificate",
    );
}
