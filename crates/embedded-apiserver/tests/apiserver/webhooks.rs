//! Admission and conversion webhooks against a real HTTPS webhook server (tests/support):
//! what kube-apiserver sends, what it makes of the answers, and its error texts and codes.

use std::time::Duration;

use axum::http::Method;
use serde_json::{Value, json};

use super::common::{H, MERGE};
use super::webhook_support::{WebhookServer, gadget_crd, gadget_rules, hook};

pub(crate) const G1: &str = "/apis/conv.example.com/v1/namespaces/default/gadgets";
pub(crate) const GA: &str = "/apis/conv.example.com/v1alpha1/namespaces/default/gadgets";
pub(crate) const MWC: &str = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
pub(crate) const VWC: &str =
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";

/// A server with the Gadget CRD (conversion by `/convert` of `hooks`) installed.
pub(crate) async fn setup() -> (H, WebhookServer) {
    let hooks = WebhookServer::start().await;
    let h = H::new();
    install_gadgets(
        &h,
        Some(json!({"url": hooks.url("/convert"), "caBundle": hooks.ca_bundle})),
    )
    .await;
    (h, hooks)
}

pub(crate) async fn install_gadgets(h: &H, conversion: Option<Value>) {
    let r = h
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            gadget_crd(conversion),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    h.server
        .wait_established("gadgets.conv.example.com", Duration::from_secs(5))
        .await
        .unwrap();
}

pub(crate) fn url_config(hooks: &WebhookServer, path: &str) -> Value {
    json!({"url": hooks.url(path), "caBundle": hooks.ca_bundle})
}

pub(crate) async fn configure(h: &H, collection: &str, name: &str, webhooks: Vec<Value>) {
    let kind = if collection == MWC {
        "MutatingWebhookConfiguration"
    } else {
        "ValidatingWebhookConfiguration"
    };
    let r = h
        .post(
            collection,
            json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": kind,
                "metadata": {"name": name}, "webhooks": webhooks}),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
}

pub(crate) fn gadget_v1(name: &str, color: Option<&str>) -> Value {
    let mut spec = json!({"dimensions": {"size": "small"}});
    if let Some(c) = color {
        spec["paint"] = json!({"color": c});
    }
    json!({"apiVersion": "conv.example.com/v1", "kind": "Gadget", "metadata": {"name": name}, "spec": spec})
}

pub(crate) fn gadget_v1alpha1(name: &str, color: &str) -> Value {
    json!({"apiVersion": "conv.example.com/v1alpha1", "kind": "Gadget", "metadata": {"name": name},
        "spec": {"size": "large", "color": color}})
}

#[tokio::test]
pub(crate) async fn mutating_webhook_sees_defaults_and_its_patch_is_stored() {
    let (h, hooks) = setup().await;
    configure(
        &h,
        MWC,
        "defaults",
        vec![hook(
            "mgadget.example.com",
            url_config(&hooks, "/mutate"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let mut g = gadget_v1("g1", None);
    g["spec"]["paint"] = json!({});
    let r = h.post(G1, g).await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(r.body["spec"]["paint"]["color"], "blue");
    assert_eq!(r.body["metadata"]["labels"]["mutated-by"], "webhook");
    let calls = hooks.on("/mutate");
    assert_eq!(calls.len(), 1);
    let c = &calls[0];
    assert_eq!(c.content_type, "application/json");
    assert_eq!(
        c.alpn.as_deref(),
        Some("http/1.1"),
        "kube-apiserver forces HTTP/1.1"
    );
    let req = &c.body["request"];
    assert_eq!(c.body["apiVersion"], "admission.k8s.io/v1");
    assert_eq!(req["operation"], "CREATE");
    assert_eq!(req["options"]["kind"], "CreateOptions");
    assert_eq!(
        req["kind"],
        json!({"group": "conv.example.com", "version": "v1", "kind": "Gadget"})
    );
    assert_eq!(
        req["resource"],
        json!({"group": "conv.example.com", "version": "v1", "resource": "gadgets"})
    );
    assert_eq!(req["namespace"], "default");
    assert_eq!(req["dryRun"], false);
    assert!(req["oldObject"].is_null());
    // Schema defaults are applied before mutating admission; no uid yet.
    assert_eq!(req["object"]["spec"]["paint"]["finish"], "matte");
    assert!(req["object"]["metadata"]["uid"].is_null());
    // The stored object has the webhook's default.
    let got = h.get(&format!("{G1}/g1")).await;
    assert_eq!(got.body["spec"]["paint"]["color"], "blue");
    assert_eq!(h.server.webhook_counters().admission_calls, 1);
    // Without spec.paint the webhook sees no finish; its patch adds paint, and the object is
    // defaulted again after the patch.
    let r = h.post(G1, gadget_v1("g2", None)).await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert!(hooks.on("/mutate")[1].body["request"]["object"]["spec"]["paint"].is_null());
    assert_eq!(
        r.body["spec"]["paint"],
        json!({"color": "blue", "finish": "matte"})
    );
}

#[tokio::test]
pub(crate) async fn validating_webhook_denial_carries_kube_message_and_code() {
    let (h, hooks) = setup().await;
    configure(
        &h,
        VWC,
        "checks",
        vec![hook(
            "vgadget.example.com",
            url_config(&hooks, "/validate"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let r = h.post(G1, gadget_v1("red", Some("red"))).await;
    assert_eq!(r.code, 403, "{}", r.body);
    assert_eq!(r.body["reason"], "Forbidden");
    assert_eq!(
        r.body["message"],
        "admission webhook \"vgadget.example.com\" denied the request: red is not allowed"
    );
    assert_eq!(
        h.get(&format!("{G1}/red")).await.code,
        404,
        "nothing stored"
    );
    let ok = h.post(G1, gadget_v1("green", Some("green"))).await;
    assert_eq!(ok.code, 201, "{}", ok.body);
    // Validating webhooks see the fully formed object.
    let seen = hooks.on("/validate");
    let obj = &seen.last().unwrap().body["request"]["object"];
    assert!(obj["metadata"]["uid"].is_string());
    assert!(obj["metadata"]["creationTimestamp"].is_string());
    assert_eq!(obj["metadata"]["generation"], 1);
}

#[tokio::test]
pub(crate) async fn bare_and_invalid_denials() {
    let (h, hooks) = setup().await;
    configure(
        &h,
        VWC,
        "bare",
        vec![hook(
            "bare.example.com",
            url_config(&hooks, "/deny-bare"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let r = h.post(G1, gadget_v1("a", None)).await;
    assert_eq!(r.code, 400, "code raised to 400: {}", r.body);
    assert!(r.body.get("reason").is_none(), "no reason: {}", r.body);
    assert_eq!(
        r.body["message"],
        "admission webhook \"bare.example.com\" denied the request without explanation"
    );
    let del = h.delete(&format!("{VWC}/bare")).await;
    assert_eq!(del.code, 200);
    configure(
        &h,
        VWC,
        "invalid",
        vec![hook(
            "invalid.example.com",
            url_config(&hooks, "/deny-invalid"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let r = h.post(G1, gadget_v1("g", None)).await;
    assert_eq!(r.code, 422);
    assert_eq!(r.body["reason"], "Invalid");
    assert_eq!(
        r.body["details"]["causes"][0]["field"],
        "spec.dimensions.size"
    );
    assert!(r.body["message"].as_str().unwrap().starts_with("admission webhook \"invalid.example.com\" denied the request: Gadget.conv.example.com \"g\" is invalid"));
}

#[tokio::test]
pub(crate) async fn failure_policy_fail_and_ignore_on_a_dead_webhook() {
    let (h, _hooks) = setup().await;
    let dead = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let cc = json!({"url": format!("https://127.0.0.1:{port}/validate")});
    configure(
        &h,
        VWC,
        "dead",
        vec![hook("dead.example.com", cc.clone(), gadget_rules(&["v1"]))],
    )
    .await;
    let r = h.post(G1, gadget_v1("a", None)).await;
    assert_eq!(r.code, 500, "{}", r.body);
    assert_eq!(r.body["reason"], "InternalError");
    assert_eq!(
        r.body["message"],
        format!(
            "Internal error occurred: failed calling webhook \"dead.example.com\": failed to call webhook: Post \"https://127.0.0.1:{port}/validate?timeout=10s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    );
    let mut ignore = hook("dead.example.com", cc, gadget_rules(&["v1"]));
    ignore["failurePolicy"] = json!("Ignore");
    let cur = h.get(&format!("{VWC}/dead")).await.body;
    let mut updated = cur.clone();
    updated["webhooks"] = json!([ignore]);
    let put = h.put(&format!("{VWC}/dead"), updated).await;
    assert_eq!(put.code, 200, "{}", put.body);
    let r = h.post(G1, gadget_v1("a", None)).await;
    assert_eq!(r.code, 201, "Ignore admits: {}", r.body);
    assert!(h.server.webhook_counters().failed_calls >= 2);
    // Fail again: an update the server fails is logged as refused, as an injected fault's is,
    // so whoever judges the states of the object can tell that its writer's next state was
    // not meant as such.
    let mut fail = cur;
    fail["metadata"] = put.body["metadata"].clone();
    let put = h.put(&format!("{VWC}/dead"), fail).await;
    assert_eq!(put.code, 200, "{}", put.body);
    let before = std::time::Instant::now();
    let r = h
        .patch(
            &format!("{G1}/a"),
            "application/merge-patch+json",
            json!({"metadata": {"labels": {"x": "y"}}}),
        )
        .await;
    assert_eq!(r.code, 500, "{}", r.body);
    let refused = h.server.faults().refused_writes();
    let now = std::time::Instant::now();
    assert!(refused.refused_between("default", "gadgets", "a", before, now));
    assert!(!refused.refused_between("default", "gadgets", "b", before, now));
}

#[tokio::test]
pub(crate) async fn timeouts_garbage_and_bad_uid_are_calling_errors() {
    let (h, hooks) = setup().await;
    let mut slow = hook(
        "slow.example.com",
        url_config(&hooks, "/slow"),
        gadget_rules(&["v1"]),
    );
    slow["timeoutSeconds"] = json!(1);
    configure(&h, VWC, "slow", vec![slow]).await;
    let started = std::time::Instant::now();
    let r = h.post(G1, gadget_v1("a", None)).await;
    assert!(
        started.elapsed() < Duration::from_millis(2900),
        "the 1 s timeout applies"
    );
    assert_eq!(r.code, 500);
    assert_eq!(
        r.body["message"],
        format!(
            "Internal error occurred: failed calling webhook \"slow.example.com\": failed to call webhook: Post \"{}?timeout=1s\": context deadline exceeded",
            hooks.url("/slow")
        )
    );
    h.delete(&format!("{VWC}/slow")).await;
    configure(
        &h,
        VWC,
        "garbage",
        vec![hook(
            "garbage.example.com",
            url_config(&hooks, "/garbage"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let r = h.post(G1, gadget_v1("a", None)).await;
    assert_eq!(r.code, 500);
    let msg = r.body["message"].as_str().unwrap();
    assert!(msg.starts_with("Internal error occurred: failed calling webhook \"garbage.example.com\": couldn't get version/kind; json parse error"), "{msg}");
    h.delete(&format!("{VWC}/garbage")).await;
    configure(
        &h,
        MWC,
        "uid",
        vec![hook(
            "uid.example.com",
            url_config(&hooks, "/bad-uid"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let r = h.post(G1, gadget_v1("a", None)).await;
    assert_eq!(r.code, 500);
    let msg = r.body["message"].as_str().unwrap();
    assert!(msg.contains("failed calling webhook \"uid.example.com\": received invalid webhook response: expected response.uid=\""), "{msg}");
    assert!(msg.ends_with("got \"not-the-uid\""), "{msg}");
    h.delete(&format!("{MWC}/uid")).await;
    configure(
        &h,
        MWC,
        "status500",
        vec![hook(
            "s500.example.com",
            url_config(&hooks, "/status-500"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let r = h.post(G1, gadget_v1("a", None)).await;
    assert!(r.body["message"].as_str().unwrap().ends_with("failed to call webhook: an error on the server (\"boom\") has prevented the request from succeeding"), "{}", r.body);
}

#[tokio::test]
pub(crate) async fn service_references_resolve_through_the_stored_service_and_routes() {
    let (h, hooks) = setup().await;
    let cc = json!({"service": {"namespace": "webhooks", "name": "hooks", "path": "/mutate"}, "caBundle": hooks.ca_bundle});
    configure(
        &h,
        MWC,
        "svc",
        vec![hook("svc.example.com", cc, gadget_rules(&["v1"]))],
    )
    .await;
    let r = h.post(G1, gadget_v1("a", None)).await;
    assert_eq!(r.code, 500);
    assert_eq!(
        r.body["message"],
        "Internal error occurred: failed calling webhook \"svc.example.com\": failed to call webhook: Post \"https://hooks.webhooks.svc:443/mutate?timeout=10s\": service \"hooks\" not found"
    );
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
            json!({"metadata": {"name": "hooks"}, "spec": {"ports": [{"port": 443, "targetPort": "webhook-server"}]}}),
        )
        .await;
    assert_eq!(svc.code, 201, "{}", svc.body);
    let r = h.post(G1, gadget_v1("a", None)).await;
    assert!(r.body["message"].as_str().unwrap().ends_with("Post \"https://hooks.webhooks.svc:443/mutate?timeout=10s\": no endpoints available for service \"hooks\""), "{}", r.body);
    h.server.route_service("webhooks", "hooks", 443, hooks.addr);
    let r = h.post(G1, gadget_v1("a", None)).await;
    assert_eq!(r.code, 201, "{}", r.body);
    let c = hooks.on("/mutate");
    assert_eq!(
        c.last().unwrap().sni.as_deref(),
        Some("hooks.webhooks.svc"),
        "TLS server name"
    );
    // A certificate without the service name fails verification like Go's.
    let mut other = WebhookServer::start_with(&["localhost"]).await;
    let cc = json!({"service": {"namespace": "webhooks", "name": "hooks", "path": "/validate", "port": 8443}, "caBundle": other.ca_bundle});
    configure(
        &h,
        VWC,
        "name",
        vec![hook("name.example.com", cc, gadget_rules(&["v1"]))],
    )
    .await;
    let r = h.post(G1, gadget_v1("b", None)).await;
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .ends_with("no service port 8443 found for service \"hooks\""),
        "{}",
        r.body
    );
    let mut svc = h
        .get("/api/v1/namespaces/webhooks/services/hooks")
        .await
        .body;
    // Kube requires a name on every port of a multi-port Service.
    svc["spec"]["ports"] = json!([{"name": "https", "port": 443}, {"name": "alt", "port": 8443}]);
    assert_eq!(
        h.put("/api/v1/namespaces/webhooks/services/hooks", svc)
            .await
            .code,
        200
    );
    h.server
        .route_service("webhooks", "hooks", 8443, other.addr);
    let r = h.post(G1, gadget_v1("b", None)).await;
    assert!(
        r.body["message"].as_str().unwrap().ends_with("tls: failed to verify certificate: x509: certificate is valid for localhost, not hooks.webhooks.svc"),
        "{}",
        r.body
    );
    other.stop();
}

#[tokio::test]
pub(crate) async fn unknown_authority_is_refused() {
    let (h, hooks) = setup().await;
    let stranger = WebhookServer::start().await;
    let cc = json!({"url": hooks.url("/validate"), "caBundle": stranger.ca_bundle});
    configure(
        &h,
        VWC,
        "ca",
        vec![hook("ca.example.com", cc, gadget_rules(&["v1"]))],
    )
    .await;
    let r = h.post(G1, gadget_v1("a", None)).await;
    assert_eq!(r.code, 500);
    assert!(
        r.body["message"].as_str().unwrap().ends_with(
            "tls: failed to verify certificate: x509: certificate signed by unknown authority"
        ),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn no_webhooks_no_calls() {
    let h = H::widgets().await;
    h.widget("w", json!({"size": "small"})).await;
    let r = h
        .patch(
            "/apis/example.com/v1/namespaces/default/widgets/w",
            MERGE,
            json!({"spec": {"size": "large"}}),
        )
        .await;
    assert_eq!(r.code, 200);
    assert_eq!(
        h.delete("/apis/example.com/v1/namespaces/default/widgets/w")
            .await
            .code,
        200
    );
    assert_eq!(h.server.webhook_counters(), Default::default());
}

#[tokio::test]
async fn observers_see_every_call() {
    let (h, hooks) = setup().await;
    let mut calls = h.server.webhook_calls();
    configure(
        &h,
        MWC,
        "m",
        vec![hook(
            "m.example.com",
            url_config(&hooks, "/mutate"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    configure(
        &h,
        VWC,
        "v",
        vec![hook(
            "v.example.com",
            url_config(&hooks, "/validate"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    assert_eq!(h.post(GA, gadget_v1alpha1("o", "red")).await.code, 403);
    let mut seen = Vec::new();
    while let Ok(c) = calls.try_recv() {
        seen.push((format!("{:?}", c.kind), c.webhook.clone()));
    }
    assert!(
        seen.contains(&("Mutating".to_string(), "m.example.com".to_string())),
        "{seen:?}"
    );
    assert!(
        seen.contains(&("Validating".to_string(), "v.example.com".to_string())),
        "{seen:?}"
    );
    assert!(seen.iter().any(|(k, _)| k == "Conversion"), "{seen:?}");
    let _ = Method::GET;
}

#[tokio::test]
async fn v1beta1_reviews_and_built_in_kinds() {
    let h = H::new();
    let hooks = WebhookServer::start().await;
    let mut beta = hook(
        "beta.example.com",
        url_config(&hooks, "/mutate"),
        json!([{"operations": ["CREATE"], "apiGroups": [""], "apiVersions": ["v1"], "resources": ["configmaps", "namespaces"]}]),
    );
    beta["admissionReviewVersions"] = json!(["v1beta1"]);
    configure(&h, MWC, "beta", vec![beta]).await;
    let r = h
        .post(
            "/api/v1/namespaces/default/configmaps",
            json!({"metadata": {"name": "c"}, "data": {"a": "b"}}),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(r.body["metadata"]["labels"]["mutated-by"], "webhook");
    let calls = hooks.on("/mutate");
    assert_eq!(calls[0].body["apiVersion"], "admission.k8s.io/v1beta1");
    assert_eq!(
        calls[0].body["request"]["kind"],
        json!({"group": "", "version": "v1", "kind": "ConfigMap"})
    );
    // A Namespace's own request carries its name as namespace.
    let r = h
        .post("/api/v1/namespaces", json!({"metadata": {"name": "fresh"}}))
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(r.body["metadata"]["labels"]["mutated-by"], "webhook");
    assert_eq!(
        r.body["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "fresh"
    );
    assert_eq!(hooks.on("/mutate")[1].body["request"]["namespace"], "fresh");
}

#[tokio::test]
async fn connections_are_reused() {
    let (h, hooks) = setup().await;
    configure(
        &h,
        VWC,
        "v",
        vec![hook(
            "v.example.com",
            url_config(&hooks, "/validate"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    for i in 0..10 {
        assert_eq!(
            h.post(G1, gadget_v1(&format!("g{i}"), None)).await.code,
            201
        );
    }
    assert_eq!(hooks.on("/validate").len(), 10);
    assert_eq!(
        hooks.connections(),
        1,
        "one pooled connection serves every call"
    );
}
