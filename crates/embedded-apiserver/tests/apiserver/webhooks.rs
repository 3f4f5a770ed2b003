//! Admission and conversion webhooks against a real HTTPS webhook server (tests/support):
//! what kube-apiserver sends, what it makes of the answers, and its error texts and codes.

use std::time::Duration;

use axum::http::Method;
use serde_json::{Value, json};

use super::common::{APPLY, H, JSON, JSONPATCH, MERGE};
use super::webhook_support::{WebhookServer, gadget_crd, gadget_rules, hook};

const G1: &str = "/apis/conv.example.com/v1/namespaces/default/gadgets";
const GA: &str = "/apis/conv.example.com/v1alpha1/namespaces/default/gadgets";
const MWC: &str = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations";
const VWC: &str = "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations";

/// A server with the Gadget CRD (conversion by `/convert` of `hooks`) installed.
async fn setup() -> (H, WebhookServer) {
    let hooks = WebhookServer::start().await;
    let h = H::new();
    install_gadgets(
        &h,
        Some(json!({"url": hooks.url("/convert"), "caBundle": hooks.ca_bundle})),
    )
    .await;
    (h, hooks)
}

async fn install_gadgets(h: &H, conversion: Option<Value>) {
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

fn url_config(hooks: &WebhookServer, path: &str) -> Value {
    json!({"url": hooks.url(path), "caBundle": hooks.ca_bundle})
}

async fn configure(h: &H, collection: &str, name: &str, webhooks: Vec<Value>) {
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

fn gadget_v1(name: &str, color: Option<&str>) -> Value {
    let mut spec = json!({"dimensions": {"size": "small"}});
    if let Some(c) = color {
        spec["paint"] = json!({"color": c});
    }
    json!({"apiVersion": "conv.example.com/v1", "kind": "Gadget", "metadata": {"name": name}, "spec": spec})
}

fn gadget_v1alpha1(name: &str, color: &str) -> Value {
    json!({"apiVersion": "conv.example.com/v1alpha1", "kind": "Gadget", "metadata": {"name": name},
        "spec": {"size": "large", "color": color}})
}

#[tokio::test]
async fn mutating_webhook_sees_defaults_and_its_patch_is_stored() {
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
async fn validating_webhook_denial_carries_kube_message_and_code() {
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
async fn bare_and_invalid_denials() {
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
async fn failure_policy_fail_and_ignore_on_a_dead_webhook() {
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
}

#[tokio::test]
async fn timeouts_garbage_and_bad_uid_are_calling_errors() {
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
async fn service_references_resolve_through_the_stored_service_and_routes() {
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
async fn unknown_authority_is_refused() {
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
async fn subresource_rules_status_updates_and_patches_as_update() {
    let (h, hooks) = setup().await;
    let main_only = hook(
        "main.example.com",
        url_config(&hooks, "/validate"),
        json!([{"operations": ["*"], "apiGroups": ["conv.example.com"], "apiVersions": ["*"], "resources": ["gadgets"]}]),
    );
    let status_only = hook(
        "status.example.com",
        url_config(&hooks, "/allow-status"),
        json!([{"operations": ["UPDATE"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/status"]}]),
    );
    configure(&h, VWC, "subs", vec![main_only, status_only]).await;
    assert_eq!(h.post(G1, gadget_v1("s", None)).await.code, 201);
    assert_eq!(hooks.on("/validate").len(), 1);
    assert_eq!(hooks.on("/allow-status").len(), 0);
    let r = h
        .patch(
            &format!("{G1}/s/status"),
            MERGE,
            json!({"status": {"ready": true}}),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    let status_calls = hooks.on("/allow-status");
    assert_eq!(
        status_calls.len(),
        1,
        "only the */status rule matches a status write"
    );
    let req = &status_calls[0].body["request"];
    assert_eq!(req["subResource"], "status");
    assert_eq!(req["requestSubResource"], "status");
    assert_eq!(req["operation"], "UPDATE");
    assert_eq!(req["options"]["kind"], "UpdateOptions");
    assert_eq!(req["object"]["status"]["ready"], true);
    assert_eq!(
        hooks.on("/validate").len(),
        1,
        "gadgets (no /*) does not match status"
    );
    // A merge patch of the main resource is an UPDATE with the old object.
    let r = h
        .patch(
            &format!("{G1}/s"),
            MERGE,
            json!({"spec": {"paint": {"color": "green"}}}),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    let req = &hooks.on("/validate")[1].body["request"];
    assert_eq!(req["operation"], "UPDATE");
    assert_eq!(req["oldObject"]["spec"]["dimensions"]["size"], "small");
    assert_eq!(req["object"]["spec"]["paint"]["color"], "green");
    // A JSON patch to red is denied.
    let r = h
        .patch(
            &format!("{G1}/s"),
            JSONPATCH,
            json!([{"op": "replace", "path": "/spec/paint/color", "value": "red"}]),
        )
        .await;
    assert_eq!(r.code, 403);
}

#[tokio::test]
async fn server_side_apply_create_is_create_then_update() {
    let (h, hooks) = setup().await;
    configure(
        &h,
        VWC,
        "ssa",
        vec![hook(
            "ssa.example.com",
            url_config(&hooks, "/validate"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let body = serde_json::to_vec(&gadget_v1("applied", Some("green"))).unwrap();
    let r = h
        .raw(
            Method::PATCH,
            &format!("{G1}/applied?fieldManager=test"),
            APPLY,
            JSON,
            body,
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let body = serde_json::to_vec(&gadget_v1("applied", Some("red"))).unwrap();
    let r = h
        .raw(
            Method::PATCH,
            &format!("{G1}/applied?fieldManager=test"),
            APPLY,
            JSON,
            body,
        )
        .await;
    assert_eq!(r.code, 403, "{}", r.body);
    let ops: Vec<String> = hooks
        .on("/validate")
        .iter()
        .map(|c| c.body["request"]["operation"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(ops, ["CREATE", "UPDATE"]);
    assert_eq!(
        hooks.on("/validate")[0].body["request"]["options"]["fieldManager"],
        "test"
    );
}

#[tokio::test]
async fn delete_admission_sees_the_old_object_and_patches_fail() {
    let (h, hooks) = setup().await;
    assert_eq!(h.post(G1, gadget_v1("d", None)).await.code, 201);
    let del_rule = json!([{"operations": ["DELETE"], "apiGroups": ["conv.example.com"], "apiVersions": ["*"], "resources": ["gadgets"]}]);
    configure(
        &h,
        VWC,
        "del",
        vec![hook(
            "del.example.com",
            url_config(&hooks, "/record"),
            del_rule.clone(),
        )],
    )
    .await;
    configure(
        &h,
        MWC,
        "delpatch",
        vec![hook(
            "delpatch.example.com",
            url_config(&hooks, "/add-finalizer"),
            del_rule,
        )],
    )
    .await;
    let r = h.delete(&format!("{G1}/d")).await;
    assert_eq!(r.code, 500, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Internal error occurred: admission webhook \"delpatch.example.com\" attempted to modify the object, which is not supported for this operation"
    );
    assert_eq!(h.get(&format!("{G1}/d")).await.code, 200, "not deleted");
    h.delete(&format!("{MWC}/delpatch")).await;
    let r = h.delete(&format!("{G1}/d")).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let req = &hooks.on("/record")[0].body["request"];
    assert_eq!(req["operation"], "DELETE");
    assert!(req["object"].is_null());
    assert_eq!(req["oldObject"]["metadata"]["name"], "d");
    assert_eq!(req["options"]["kind"], "DeleteOptions");
}

#[tokio::test]
async fn dry_run_reaches_webhooks_and_stores_nothing() {
    let (h, hooks) = setup().await;
    configure(
        &h,
        VWC,
        "dry",
        vec![hook(
            "dry.example.com",
            url_config(&hooks, "/reject-dry-run"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let r = h
        .post(&format!("{G1}?dryRun=All"), gadget_v1("dry", None))
        .await;
    assert_eq!(r.code, 403, "{}", r.body);
    let seen = &hooks.on("/reject-dry-run")[0].body["request"];
    assert_eq!(seen["dryRun"], true);
    assert_eq!(seen["options"]["dryRun"], json!(["All"]));
    h.delete(&format!("{VWC}/dry")).await;
    configure(
        &h,
        MWC,
        "drym",
        vec![hook(
            "drym.example.com",
            url_config(&hooks, "/mutate"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let r = h
        .post(&format!("{G1}?dryRun=All"), gadget_v1("dry", None))
        .await;
    assert_eq!(r.code, 201);
    assert_eq!(r.body["spec"]["paint"]["color"], "blue");
    assert_eq!(h.get(&format!("{G1}/dry")).await.code, 404);
}

#[tokio::test]
async fn equivalent_match_policy_converts_for_the_webhook_and_back() {
    let (h, hooks) = setup().await;
    configure(
        &h,
        MWC,
        "eq",
        vec![
            hook(
                "eq.example.com",
                url_config(&hooks, "/mutate"),
                gadget_rules(&["v1"]),
            ),
            hook(
                "eq-next.example.com",
                url_config(&hooks, "/after"),
                gadget_rules(&["v1"]),
            ),
        ],
    )
    .await;
    let r = h.post(GA, gadget_v1alpha1("old", "")).await;
    assert_eq!(r.code, 201, "{}", r.body);
    // The webhook defaulted paint.color at v1; the client reads its own shape back.
    assert_eq!(r.body["apiVersion"], "conv.example.com/v1alpha1");
    assert_eq!(r.body["spec"]["color"], "");
    assert_eq!(r.body["metadata"]["labels"]["mutated-by"], "webhook");
    // After the patch the object was defaulted at v1 (paint.finish): the next webhook sees it.
    let next = &hooks.on("/after")[0].body["request"]["object"];
    assert_eq!(next["spec"]["paint"]["finish"], "matte");
    assert_eq!(next["metadata"]["labels"]["mutated-by"], "webhook");
    let req = &hooks.on("/mutate")[0].body["request"];
    assert_eq!(req["kind"]["version"], "v1");
    assert_eq!(req["requestKind"]["version"], "v1alpha1");
    assert_eq!(req["resource"]["version"], "v1");
    assert_eq!(req["requestResource"]["version"], "v1alpha1");
    assert_eq!(req["object"]["apiVersion"], "conv.example.com/v1");
    assert_eq!(req["object"]["spec"]["dimensions"]["size"], "large");
    // Exact does not match another version.
    let mut exact = hook(
        "exact.example.com",
        url_config(&hooks, "/record"),
        gadget_rules(&["v1"]),
    );
    exact["matchPolicy"] = json!("Exact");
    configure(&h, VWC, "exact", vec![exact]).await;
    assert_eq!(h.post(GA, gadget_v1alpha1("old2", "x")).await.code, 201);
    assert!(hooks.on("/record").is_empty());
    assert_eq!(h.post(G1, gadget_v1("new", None)).await.code, 201);
    assert_eq!(hooks.on("/record").len(), 1);
}

#[tokio::test]
async fn selectors_and_match_conditions() {
    let (h, hooks) = setup().await;
    let ns = h
        .post(
            "/api/v1/namespaces",
            json!({"metadata": {"name": "team-a", "labels": {"team": "a"}}}),
        )
        .await;
    assert_eq!(ns.code, 201);
    let mut by_ns = hook(
        "ns.example.com",
        url_config(&hooks, "/ns"),
        gadget_rules(&["*"]),
    );
    by_ns["namespaceSelector"] = json!({"matchLabels": {"team": "a"}});
    let mut by_label = hook(
        "obj.example.com",
        url_config(&hooks, "/obj"),
        gadget_rules(&["*"]),
    );
    by_label["objectSelector"] =
        json!({"matchExpressions": [{"key": "watched", "operator": "Exists"}]});
    let mut by_cel = hook(
        "cel.example.com",
        url_config(&hooks, "/cel"),
        gadget_rules(&["*"]),
    );
    by_cel["matchConditions"] =
        json!([{"name": "named-x", "expression": "object.metadata.name.startsWith('x')"}]);
    configure(&h, VWC, "sel", vec![by_ns, by_label, by_cel]).await;
    assert_eq!(h.post(G1, gadget_v1("plain", None)).await.code, 201);
    let mut labelled = gadget_v1("xlabelled", None);
    labelled["metadata"]["labels"] = json!({"watched": "1"});
    assert_eq!(h.post(G1, labelled).await.code, 201);
    let r = h
        .post(
            "/apis/conv.example.com/v1/namespaces/team-a/gadgets",
            gadget_v1("in-a", None),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let names = |p: &str| -> Vec<String> {
        hooks
            .on(p)
            .iter()
            .map(|c| {
                c.body["request"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string()
            })
            .collect()
    };
    assert_eq!(names("/ns"), ["in-a"]);
    assert_eq!(names("/obj"), ["xlabelled"]);
    assert_eq!(names("/cel"), ["xlabelled"]);
    // An expression that errors, failurePolicy Fail: 403 with kube's wording.
    let mut broken = hook(
        "broken.example.com",
        url_config(&hooks, "/broken"),
        gadget_rules(&["*"]),
    );
    broken["matchConditions"] = json!([{"name": "nope", "expression": "object.spec.nothing == 1"}]);
    configure(&h, VWC, "broken", vec![broken]).await;
    let r = h.post(G1, gadget_v1("z", None)).await;
    assert_eq!(r.code, 403, "{}", r.body);
    assert!(r.body["message"].as_str().unwrap().starts_with("gadgets.conv.example.com \"z\" is forbidden: expression 'object.spec.nothing == 1' resulted in error"), "{}", r.body);
}

#[tokio::test]
async fn reinvocation_if_needed_runs_once_more() {
    let (h, hooks) = setup().await;
    let mut first = hook(
        "a-first.example.com",
        url_config(&hooks, "/set-size-large"),
        gadget_rules(&["v1"]),
    );
    first["reinvocationPolicy"] = json!("IfNeeded");
    let second = hook(
        "b-second.example.com",
        url_config(&hooks, "/mutate"),
        gadget_rules(&["v1"]),
    );
    // Configurations run in name order: "a" then "b".
    configure(&h, MWC, "b", vec![second]).await;
    configure(&h, MWC, "a", vec![first]).await;
    let r = h.post(G1, gadget_v1("re", None)).await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(
        hooks.on("/set-size-large").len(),
        2,
        "reinvoked after the later patch"
    );
    assert_eq!(hooks.on("/mutate").len(), 1, "Never is not reinvoked");
    let second_call = &hooks.on("/set-size-large")[1].body["request"]["object"];
    assert_eq!(second_call["metadata"]["labels"]["mutated-by"], "webhook");
    assert_eq!(r.body["metadata"]["labels"]["second"], "yes");
}

#[tokio::test]
async fn warnings_become_headers_even_on_denial() {
    let (h, hooks) = setup().await;
    configure(
        &h,
        VWC,
        "warn",
        vec![hook(
            "warn.example.com",
            url_config(&hooks, "/warn"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let r = h.post(G1, gadget_v1("w", None)).await;
    assert_eq!(r.code, 201);
    assert_eq!(
        r.header("warning"),
        "299 - \"first warning\", 299 - \"second \\\"quoted\\\" warning\""
    );
    configure(
        &h,
        VWC,
        "warn2",
        vec![hook(
            "warn2.example.com",
            url_config(&hooks, "/warn-deny"),
            gadget_rules(&["v1"]),
        )],
    )
    .await;
    let r = h.post(G1, gadget_v1("w2", None)).await;
    assert_eq!(r.code, 403);
    assert!(
        r.header("warning")
            .contains("299 - \"denied with a warning\""),
        "{:?}",
        r.headers
    );
}

#[tokio::test]
async fn scale_subresource_admission_sees_a_scale() {
    let h = H::widgets().await;
    let hooks = WebhookServer::start().await;
    let rules = json!([{"operations": ["UPDATE"], "apiGroups": ["example.com"], "apiVersions": ["v1"], "resources": ["widgets/scale"]}]);
    configure(
        &h,
        VWC,
        "scale",
        vec![hook(
            "scale.example.com",
            url_config(&hooks, "/record"),
            rules,
        )],
    )
    .await;
    h.widget("w", json!({"size": "small", "replicas": 1})).await;
    let r = h
        .patch(
            "/apis/example.com/v1/namespaces/default/widgets/w/scale",
            MERGE,
            json!({"spec": {"replicas": 3}}),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    let calls = hooks.on("/record");
    assert_eq!(calls.len(), 1);
    let req = &calls[0].body["request"];
    assert_eq!(req["subResource"], "scale");
    assert_eq!(
        req["kind"],
        json!({"group": "autoscaling", "version": "v1", "kind": "Scale"})
    );
    assert_eq!(req["object"]["spec"]["replicas"], 3);
    assert_eq!(req["oldObject"]["spec"]["replicas"], 1);
}

#[tokio::test]
async fn configurations_are_defaulted_validated_and_exempt() {
    let (h, hooks) = setup().await;
    let mut bad = hook("foo", url_config(&hooks, "/x"), gadget_rules(&["v1"]));
    bad["timeoutSeconds"] = json!(31);
    let r = h
        .post(VWC, json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "bad"}, "webhooks": [bad]}))
        .await;
    assert_eq!(r.code, 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "ValidatingWebhookConfiguration.admissionregistration.k8s.io \"bad\" is invalid: [webhooks[0].name: Invalid value: \"foo\": should be a domain with at least three segments separated by dots, webhooks[0].timeoutSeconds: Invalid value: 31: the timeout value must be between 1 and 30 seconds]"
    );
    // A catch-all webhook that denies everything does not see configurations.
    let all = json!([{"operations": ["*"], "apiGroups": ["*"], "apiVersions": ["*"], "resources": ["*/*"]}]);
    configure(
        &h,
        VWC,
        "all",
        vec![hook(
            "all.example.com",
            url_config(&hooks, "/deny-bare"),
            all,
        )],
    )
    .await;
    let stored = h.get(&format!("{VWC}/all")).await.body;
    let w = &stored["webhooks"][0];
    assert_eq!(
        (
            w["failurePolicy"].as_str(),
            w["matchPolicy"].as_str(),
            w["timeoutSeconds"].as_i64()
        ),
        (Some("Fail"), Some("Equivalent"), Some(10))
    );
    assert_eq!(w["rules"][0]["scope"], "*");
    configure(&h, MWC, "still-allowed", vec![]).await;
    assert_eq!(h.delete(&format!("{VWC}/all")).await.code, 200);
    assert!(hooks.on("/deny-bare").is_empty());
}

#[tokio::test]
async fn conversion_on_read_list_and_watch() {
    let (h, hooks) = setup().await;
    assert_eq!(h.post(G1, gadget_v1("one", Some("red"))).await.code, 201);
    assert_eq!(h.post(G1, gadget_v1("two", None)).await.code, 201);
    assert!(
        hooks.on("/convert").is_empty(),
        "v1 is the storage version: no conversion"
    );
    let got = h.get(&format!("{GA}/one")).await;
    assert_eq!(got.code, 200, "{}", got.body);
    assert_eq!(got.body["apiVersion"], "conv.example.com/v1alpha1");
    assert_eq!(got.body["spec"], json!({"size": "small", "color": "red"}));
    assert_eq!(
        got.body["metadata"]["annotations"]["conv.example.com/finish"],
        "matte"
    );
    assert_eq!(hooks.on("/convert").len(), 1);
    hooks.clear();
    let list = h.get(GA).await;
    assert_eq!(list.body["items"].as_array().unwrap().len(), 2);
    assert_eq!(list.body["items"][1]["spec"]["size"], "small");
    let reviews = hooks.on("/convert");
    assert_eq!(reviews.len(), 1, "one review per list");
    assert_eq!(
        reviews[0].body["request"]["objects"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        reviews[0].body["request"]["desiredAPIVersion"],
        "conv.example.com/v1alpha1"
    );
    // Table rendering uses the v1alpha1 printer columns on converted objects.
    let table = h
        .raw(
            Method::GET,
            GA,
            "",
            "application/json;as=Table;v=v1;g=meta.k8s.io",
            Vec::new(),
        )
        .await;
    assert_eq!(table.body["rows"][0]["cells"][1], "small");
    hooks.clear();
    let mut w = h.watch(&format!("{GA}?watch=true")).await;
    let e1 = w.next().await;
    let e2 = w.next().await;
    assert_eq!(e1["object"]["apiVersion"], "conv.example.com/v1alpha1");
    assert_eq!(e2["object"]["spec"]["size"], "small");
    assert_eq!(hooks.on("/convert").len(), 2, "one review per watch event");
    assert_eq!(h.post(G1, gadget_v1("three", None)).await.code, 201);
    let e3 = w.next().await;
    assert_eq!(e3["type"], "ADDED");
    assert_eq!(e3["object"]["metadata"]["name"], "three");
    assert_eq!(e3["object"]["apiVersion"], "conv.example.com/v1alpha1");
}

#[tokio::test]
async fn conversion_on_write_stores_the_storage_version() {
    let (h, hooks) = setup().await;
    let r = h.post(GA, gadget_v1alpha1("a", "green")).await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(r.body["apiVersion"], "conv.example.com/v1alpha1");
    assert_eq!(r.body["spec"], json!({"size": "large", "color": "green"}));
    let stored = h.get(&format!("{G1}/a")).await.body;
    assert_eq!(stored["spec"]["dimensions"]["size"], "large");
    assert_eq!(stored["spec"]["paint"]["color"], "green");
    // resourceVersion is the stored object's, whatever the version read.
    let alpha = h.get(&format!("{GA}/a")).await.body;
    assert_eq!(
        alpha["metadata"]["resourceVersion"],
        stored["metadata"]["resourceVersion"]
    );
    // An update at v1alpha1 reads the old object through conversion and keeps the finish.
    let mut upd = alpha.clone();
    upd["spec"]["color"] = json!("black");
    let r = h.put(&format!("{GA}/a"), upd).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let stored = h.get(&format!("{G1}/a")).await.body;
    assert_eq!(stored["spec"]["paint"]["color"], "black");
    assert_eq!(stored["spec"]["paint"]["finish"], "matte");
    assert!(hooks.on("/convert").len() >= 4);
    // A no-op update keeps the resourceVersion.
    let alpha = h.get(&format!("{GA}/a")).await.body;
    let again = h.put(&format!("{GA}/a"), alpha.clone()).await;
    assert_eq!(
        again.body["metadata"]["resourceVersion"],
        alpha["metadata"]["resourceVersion"]
    );
}

#[tokio::test]
async fn conversion_failures_read_like_kube() {
    let hooks = WebhookServer::start().await;
    let h = H::new();
    install_gadgets(
        &h,
        Some(json!({"url": hooks.url("/convert-fail"), "caBundle": hooks.ca_bundle})),
    )
    .await;
    let r = h.post(GA, gadget_v1alpha1("a", "x")).await;
    assert_eq!(r.code, 500);
    assert_eq!(r.body["reason"], "InternalError");
    assert_eq!(
        r.body["message"],
        "Internal error occurred: conversion webhook for conv.example.com/v1alpha1, Kind=Gadget failed: conversion refused by test"
    );
    assert_eq!(h.post(G1, gadget_v1("b", None)).await.code, 201);
    let r = h.get(&format!("{GA}/b")).await;
    assert_eq!(r.code, 500);
    assert!(
        r.body.get("reason").is_none(),
        "reads fail without a reason: {}",
        r.body
    );
    assert_eq!(
        r.body["message"],
        "conversion webhook for conv.example.com/v1, Kind=Gadget failed: conversion refused by test"
    );
    let list = h.get(GA).await;
    assert_eq!(list.code, 500);
    assert_eq!(
        list.body["message"],
        "conversion webhook for conv.example.com/v1, Kind=GadgetList failed: conversion refused by test"
    );
    // A watch at the other version ends when its event cannot be converted.
    let mut w = h.watch(&format!("{GA}?watch=true")).await;
    assert!(w.ended_within(Duration::from_secs(5)).await);
    // A webhook that renames objects is refused.
    let renaming = WebhookServer::start().await;
    let h2 = H::new();
    install_gadgets(
        &h2,
        Some(json!({"url": renaming.url("/convert-rename"), "caBundle": renaming.ca_bundle})),
    )
    .await;
    assert_eq!(h2.post(G1, gadget_v1("b", None)).await.code, 201);
    let r = h2.get(&format!("{GA}/b")).await;
    assert_eq!(
        r.body["message"],
        "conversion webhook for conv.example.com/v1, Kind=Gadget returned invalid object: must have the same name: b != renamed"
    );
    // Dead conversion webhook: Go's transport error with the 30 s timeout in the URL.
    let dead = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = dead.local_addr().unwrap().port();
    drop(dead);
    let h3 = H::new();
    install_gadgets(
        &h3,
        Some(json!({"url": format!("https://127.0.0.1:{port}/convert")})),
    )
    .await;
    assert_eq!(
        h3.post(G1, gadget_v1("c", None)).await.code,
        201,
        "storage-version writes need no conversion"
    );
    let r = h3.get(&format!("{GA}/c")).await;
    assert_eq!(
        r.body["message"],
        format!(
            "conversion webhook for conv.example.com/v1, Kind=Gadget failed: Post \"https://127.0.0.1:{port}/convert?timeout=30s\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    );
}

#[tokio::test]
async fn lossy_conversion_output_is_pruned_and_metadata_restored() {
    let hooks = WebhookServer::start().await;
    let h = H::new();
    install_gadgets(
        &h,
        Some(json!({"url": hooks.url("/convert-lossy"), "caBundle": hooks.ca_bundle})),
    )
    .await;
    let mut g = gadget_v1("l", Some("green"));
    g["spec"]["paint"]["finish"] = json!("gloss");
    assert_eq!(h.post(G1, g).await.code, 201);
    let alpha = h.get(&format!("{GA}/l")).await.body;
    assert!(
        alpha["metadata"]["annotations"].is_null(),
        "the lossy webhook kept nothing"
    );
    let r = h.put(&format!("{GA}/l"), alpha).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let stored = h.get(&format!("{G1}/l")).await.body;
    assert_eq!(
        stored["spec"]["paint"]["finish"], "matte",
        "the finish was lost (and defaulted again)"
    );
}

#[tokio::test]
async fn crd_conversion_config_is_validated_and_stored_versions_kept() {
    let h = H::new();
    let mut crd = gadget_crd(None);
    crd["spec"]["conversion"] = json!({"strategy": "Webhook"});
    let r = h
        .post(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions",
            crd,
        )
        .await;
    assert_eq!(r.code, 422);
    assert!(
        r.body["message"].as_str().unwrap().contains("spec.conversion.webhookClientConfig: Required value: required when strategy is set to Webhook"),
        "{}",
        r.body
    );
    install_gadgets(&h, None).await;
    let path = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/gadgets.conv.example.com";
    let mut crd = h.get(path).await.body;
    assert_eq!(crd["status"]["storedVersions"], json!(["v1"]));
    crd["spec"]["versions"][0]["storage"] = json!(true);
    crd["spec"]["versions"][1]["storage"] = json!(false);
    let r = h.put(path, crd).await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(
        r.body["status"]["storedVersions"],
        json!(["v1", "v1alpha1"]),
        "appended synchronously"
    );
    let mut crd = r.body;
    crd["spec"]["versions"].as_array_mut().unwrap().remove(1);
    let r = h.put(path, crd).await;
    assert_eq!(
        r.code, 422,
        "a stored version cannot leave spec.versions: {}",
        r.body
    );
    assert!(
        r.body["message"].as_str().unwrap().contains(
            "status.storedVersions[0]: Invalid value: \"v1\": must appear in spec.versions"
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
