//! x509 client-certificate authentication over TCP (kube-apiserver's `--client-ca-file`):
//! CommonName → user, Organizations → groups; untrusted or expired → 401; no certificate →
//! the bearer token still decides.

use base64::Engine as _;
use embedded_apiserver::{EmbeddedServer, Listener, ServerOptions};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{Api, ListParams, PostParams};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, ExtendedKeyUsagePurpose, IsCa, Issuer, KeyPair,
    KeyUsagePurpose,
};
use serde_json::{Value, json};

struct Ca {
    pem: String,
    issuer: Issuer<'static, KeyPair>,
}

fn ca(cn: &str) -> Ca {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, cn);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let key = KeyPair::generate().unwrap();
    let cert = params.self_signed(&key).unwrap();
    Ca {
        pem: cert.pem(),
        issuer: Issuer::new(params, key),
    }
}

/// A client certificate (PEM, key PEM) for `cn` in `orgs`; `expired`: valid only in 2001.
fn client(ca: &Ca, cn: &str, orgs: &[&str], expired: bool) -> (String, String) {
    let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
    params.distinguished_name.push(DnType::CommonName, cn);
    for o in orgs {
        params.distinguished_name.push(DnType::OrganizationName, *o);
    }
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ClientAuth];
    if expired {
        params.not_before = rcgen::date_time_ymd(2001, 1, 1);
        params.not_after = rcgen::date_time_ymd(2001, 12, 31);
    }
    let key = KeyPair::generate().unwrap();
    let cert = params.signed_by(&key, &ca.issuer).unwrap();
    (cert.pem(), key.serialize_pem())
}

async fn listening(ca: &Ca) -> (EmbeddedServer, Listener) {
    let server = EmbeddedServer::new(ServerOptions {
        client_ca_pem: Some(ca.pem.clone()),
        ..ServerOptions::default()
    });
    let listener = server.listen("127.0.0.1:0".parse().unwrap()).await.unwrap();
    (server, listener)
}

/// A client of `listener` presenting `cert` (and `token` when given), through a kubeconfig as
/// kubectl reads it.
async fn client_with(
    listener: &Listener,
    cert: Option<&(String, String)>,
    token: Option<&str>,
) -> kube::Client {
    let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    let mut user = String::new();
    if let Some((crt, key)) = cert {
        user.push_str(&format!(
            "    client-certificate-data: {}\n    client-key-data: {}\n",
            b64(crt),
            b64(key)
        ));
    }
    if let Some(t) = token {
        user.push_str(&format!("    token: {t}\n"));
    }
    if user.is_empty() {
        user.push_str("    {}\n");
    }
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {}\n    certificate-authority-data: {}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\nusers:\n- name: u\n  user:\n{user}",
        listener.url,
        b64(&listener.ca_pem),
    );
    let kc = kube::config::Kubeconfig::from_yaml(&text).unwrap();
    let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
        .await
        .unwrap();
    kube::Client::try_from(config).unwrap()
}

/// The user the server sees (SelfSubjectReview).
async fn whoami(client: &kube::Client) -> Result<Value, kube::Error> {
    let req = http::Request::post("/apis/authentication.k8s.io/v1/selfsubjectreviews")
        .header("content-type", "application/json")
        .body(
            serde_json::to_vec(
                &json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
            )
            .unwrap(),
        )
        .unwrap();
    let review: Value = client.request(req).await?;
    Ok(review["status"]["userInfo"].clone())
}

fn status_code(e: kube::Error) -> u16 {
    match e {
        kube::Error::Api(s) => s.code,
        other => panic!("not an API error: {other}"),
    }
}

#[tokio::test]
async fn a_client_certificate_of_the_configured_ca_authenticates_as_cn_in_its_organizations() {
    let ca = ca("kubernetes");
    let (_server, listener) = listening(&ca).await;
    let admin = client_with(
        &listener,
        Some(&client(&ca, "kubernetes-admin", &["system:masters"], false)),
        None,
    )
    .await;
    let me = whoami(&admin).await.unwrap();
    assert_eq!(me["username"], "kubernetes-admin");
    assert_eq!(
        me["groups"],
        json!(["system:masters", "system:authenticated"])
    );
    let nss: Api<Namespace> = Api::all(admin.clone());
    assert!(
        !nss.list(&ListParams::default())
            .await
            .unwrap()
            .items
            .is_empty()
    );

    // Not in system:masters: RBAC decides, by the certificate's user and groups.
    let alice = client_with(
        &listener,
        // (rcgen writes one attribute per type: one Organization.)
        Some(&client(&ca, "alice", &["team-b"], false)),
        None,
    )
    .await;
    let me = whoami(&alice).await.unwrap();
    assert_eq!(me["username"], "alice");
    assert_eq!(me["groups"], json!(["team-b", "system:authenticated"]));
    let cms: Api<ConfigMap> = Api::namespaced(alice.clone(), "default");
    let denied = cms.list(&ListParams::default()).await.unwrap_err();
    assert_eq!(status_code(denied), 403);
    let grant: Vec<Value> = vec![
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
               "metadata": {"name": "cm-reader"},
               "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["list"]}]}),
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
               "metadata": {"name": "team-b-cm-reader"},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cm-reader"},
               "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "team-b"}]}),
    ];
    let dynamic = |kind: &str, plural: &str| {
        let ar = kube::core::ApiResource {
            group: "rbac.authorization.k8s.io".into(),
            version: "v1".into(),
            api_version: "rbac.authorization.k8s.io/v1".into(),
            kind: kind.into(),
            plural: plural.into(),
        };
        Api::<kube::api::DynamicObject>::all_with(admin.clone(), &ar)
    };
    dynamic("ClusterRole", "clusterroles")
        .create(
            &PostParams::default(),
            &serde_json::from_value(grant[0].clone()).unwrap(),
        )
        .await
        .unwrap();
    dynamic("ClusterRoleBinding", "clusterrolebindings")
        .create(
            &PostParams::default(),
            &serde_json::from_value(grant[1].clone()).unwrap(),
        )
        .await
        .unwrap();
    assert!(cms.list(&ListParams::default()).await.is_ok());
    let write = cms
        .create(&PostParams::default(), &ConfigMap::default())
        .await
        .unwrap_err();
    assert_eq!(status_code(write), 403);
    listener.shutdown().await;
}

#[tokio::test]
async fn untrusted_or_expired_client_certificates_are_401_and_tokens_still_work() {
    let ca_ = ca("kubernetes");
    let other = ca("someone else");
    let (_server, listener) = listening(&ca_).await;
    for (what, cert) in [
        (
            "untrusted",
            client(&other, "kubernetes-admin", &["system:masters"], false),
        ),
        (
            "expired",
            client(&ca_, "kubernetes-admin", &["system:masters"], true),
        ),
    ] {
        let c = client_with(&listener, Some(&cert), None).await;
        let nss: Api<Namespace> = Api::all(c);
        let e = nss.list(&ListParams::default()).await.unwrap_err();
        assert_eq!(status_code(e), 401, "{what} certificate");
        // kube's union of authenticators: a failed certificate does not stop a valid token.
        let c = client_with(&listener, Some(&cert), Some(&listener.token)).await;
        assert_eq!(
            whoami(&c).await.unwrap()["groups"][0],
            "system:masters",
            "{what}"
        );
    }
    // No common name: no one (the certificate is ignored).
    let c = client_with(
        &listener,
        Some(&client(&ca_, "", &["system:masters"], false)),
        None,
    )
    .await;
    assert_eq!(status_code(whoami(&c).await.unwrap_err()), 401);
    // No certificate: the bearer token decides.
    let c = client_with(&listener, None, Some(&listener.token)).await;
    assert!(whoami(&c).await.is_ok());
    let c = client_with(&listener, None, None).await;
    assert_eq!(status_code(whoami(&c).await.unwrap_err()), 401);
    listener.shutdown().await;
}

#[tokio::test]
async fn without_a_client_ca_certificates_authenticate_no_one() {
    let ca_ = ca("kubernetes");
    let server = EmbeddedServer::new(ServerOptions::default());
    let listener = server.listen("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let cert = client(&ca_, "kubernetes-admin", &["system:masters"], false);
    let c = client_with(&listener, Some(&cert), None).await;
    assert_eq!(status_code(whoami(&c).await.unwrap_err()), 401);
    listener.shutdown().await;
}

#[test]
fn a_client_ca_that_is_not_pem_is_an_error() {
    let e = embedded_apiserver::client_cert::ClientCertAuthenticator::from_ca_pem("not a pem")
        .unwrap_err();
    assert!(e.to_string().contains("client CA"), "{e}");
}

/// CAPI's ClusterCache probes `GET /` with the Cluster kubeconfig's certificate (CN
/// `kubernetes-admin`, O `system:masters`): the root index answers. A certificate user outside
/// `system:masters` is authorized by RBAC, which grants `/` to cluster-admin only (kube's
/// bootstrap policy), while `/version` stays public information.
#[tokio::test]
async fn the_root_index_over_tls_is_for_cluster_admins_as_on_kube() {
    let ca = ca("kubernetes");
    let (_server, listener) = listening(&ca).await;
    let get = |path: &str| http::Request::get(path).body(Vec::new()).unwrap();
    let admin = client_with(
        &listener,
        Some(&client(&ca, "kubernetes-admin", &["system:masters"], false)),
        None,
    )
    .await;
    let root: Value = admin.request(get("/")).await.unwrap();
    assert!(
        root["paths"].as_array().unwrap().contains(&json!("/apis")),
        "{root}"
    );
    let alice = client_with(
        &listener,
        Some(&client(&ca, "alice", &["team-b"], false)),
        None,
    )
    .await;
    let denied = alice.request::<Value>(get("/")).await.unwrap_err();
    match denied {
        kube::Error::Api(s) => {
            assert_eq!(s.code, 403);
            assert_eq!(s.message, "forbidden: User \"alice\" cannot get path \"/\"");
        }
        other => panic!("not an API error: {other}"),
    }
    let version: Value = alice.request(get("/version")).await.unwrap();
    assert_eq!(version["major"], "1");
}
