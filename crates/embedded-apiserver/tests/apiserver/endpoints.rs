//! The non-resource endpoints beside discovery (docs/embedded-apiserver.md "Endpoints"): the
//! `/` index, `/openapi/v2` (JSON and gnostic protobuf), `/metrics`, and the absent
//! service-account issuer discovery; RBAC on non-resource paths as kube's bootstrap policy
//! grants them.

use axum::body::Body;
use axum::http::{Method, Request};
use embedded_apiserver::openapi::v2_proto;
use http_body_util::BodyExt;
use prost::Message;
use serde_json::{Value, json};
use tower::ServiceExt;

use super::common::*;

/// What client-go asks for, and the spelling kube-openapi answers (Go's mime parser refuses `@`).
const PB: &str = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
const PB_ANSWERED: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// A GET as `user` (impersonated, as `kubectl --as` sends it): status, Content-Type, body bytes.
async fn get_as(h: &H, user: Option<&str>, path: &str, accept: &str) -> (u16, String, Vec<u8>) {
    let mut b = Request::builder().method(Method::GET).uri(path);
    if let Some(u) = user {
        b = b.header("impersonate-user", u);
    }
    if !accept.is_empty() {
        b = b.header("accept", accept);
    }
    let resp = h
        .server
        .router()
        .oneshot(b.body(Body::empty()).unwrap())
        .await
        .unwrap();
    let code = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .map(|v| v.to_str().unwrap().to_string())
        .unwrap_or_default();
    let bytes = resp
        .into_body()
        .collect()
        .await
        .unwrap()
        .to_bytes()
        .to_vec();
    (code, ct, bytes)
}

#[tokio::test]
async fn root_index_lists_every_served_root_path_sorted() {
    let h = H::widgets().await;
    for path in ["/", "/index.html"] {
        let r = h.get(path).await;
        assert_eq!(r.code, 200, "{path}: {}", r.body);
        assert_eq!(r.header("content-type"), "application/json");
        let paths: Vec<&str> = r.body["paths"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p.as_str().unwrap())
            .collect();
        let mut sorted = paths.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(paths, sorted, "sorted, no duplicates");
        for p in [
            "/api",
            "/api/v1",
            "/apis",
            "/apis/",
            "/apis/apps",
            "/apis/apps/v1",
            "/apis/apiextensions.k8s.io/v1",
            "/apis/example.com",
            "/apis/example.com/v1",
            "/healthz",
            "/livez",
            "/readyz",
            "/metrics",
            "/openapi/v2",
            "/openapi/v3",
            "/version",
        ] {
            assert!(paths.contains(&p), "{p} missing from {paths:?}");
        }
        // Issuer discovery is not served (opaque tokens), so not listed.
        assert!(!paths.iter().any(|p| p.starts_with("/.well-known")));
        // Every listed path answers.
        for p in &paths {
            let (code, _, _) = get_as(&h, None, p, "").await;
            assert_eq!(code, 200, "GET {p}");
        }
    }
    // A CRD's group goes with it.
    let r = h
        .delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
        .await;
    assert_eq!(r.code, 200);
    for _ in 0..100 {
        let r = h.get("/").await;
        if !r.body["paths"]
            .as_array()
            .unwrap()
            .contains(&json!("/apis/example.com"))
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("/apis/example.com still listed after the CRD's deletion");
}

#[tokio::test]
async fn root_and_metrics_are_authorized_as_kubes_bootstrap_policy_grants() {
    let h = H::new();
    // `/` is in no bootstrap role but cluster-admin's; `/version` is public information.
    let (code, _, body) = get_as(&h, Some("bob"), "/", "").await;
    assert_eq!(code, 403);
    let status: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        status["message"],
        "forbidden: User \"bob\" cannot get path \"/\""
    );
    assert_eq!(get_as(&h, Some("bob"), "/version", "").await.0, 200);
    assert_eq!(get_as(&h, Some("bob"), "/openapi/v2", "").await.0, 200);
    // `/metrics`: system:monitoring, bound to the group of that name.
    let (code, _, body) = get_as(&h, Some("bob"), "/metrics", "").await;
    assert_eq!(code, 403, "{}", String::from_utf8_lossy(&body));
    let r = h
        .post(
            "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings",
            json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                   "metadata": {"name": "bob-monitoring"},
                   "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "system:monitoring"},
                   "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "bob"}]}),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(get_as(&h, Some("bob"), "/metrics", "").await.0, 200);
    assert_eq!(get_as(&h, Some("bob"), "/", "").await.0, 403);
}

#[tokio::test]
async fn openapi_v2_json_publishes_every_kind_with_its_gvk_and_patch_operations() {
    let h = H::widgets().await;
    let (code, ct, body) = get_as(&h, None, "/openapi/v2", "application/json").await;
    assert_eq!(code, 200);
    assert_eq!(ct, "application/json");
    let doc: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(doc["swagger"], "2.0");
    let widget = &doc["definitions"]["com.example.v1.Widget"];
    assert_eq!(
        widget["x-kubernetes-group-version-kind"],
        json!([{"group": "example.com", "version": "v1", "kind": "Widget"}])
    );
    assert_eq!(
        widget["properties"]["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert_eq!(widget["properties"]["apiVersion"]["type"], "string");
    assert_eq!(
        widget["properties"]["spec"]["properties"]["size"]["enum"],
        json!(["small", "large"])
    );
    // Preserve-unknown objects lose their type and properties in v2 (apiextensions' conversion).
    let status = &widget["properties"]["status"];
    assert!(status.get("type").is_none(), "{status}");
    assert_eq!(status["x-kubernetes-preserve-unknown-fields"], true);
    assert!(doc["definitions"]["com.example.v1.WidgetList"].is_object());
    assert!(
        doc["definitions"]["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].is_object(),
        "every $ref resolves"
    );
    assert_eq!(
        doc["definitions"]["io.k8s.api.core.v1.ConfigMap"]["x-kubernetes-group-version-kind"],
        json!([{"group": "", "version": "v1", "kind": "ConfigMap"}])
    );
    let patch =
        &doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"];
    assert_eq!(
        patch["x-kubernetes-group-version-kind"],
        json!({"group": "example.com", "version": "v1", "kind": "Widget"})
    );
    assert!(
        patch["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "fieldValidation" && p["in"] == "query")
    );
    let consumes = patch["consumes"].as_array().unwrap();
    assert!(consumes.contains(&json!("application/apply-patch+yaml")));
    assert!(!consumes.contains(&json!("application/strategic-merge-patch+json")));
    assert!(doc["paths"]["/api/v1/namespaces/{name}"]["patch"].is_object());
    // Every definition reference resolves.
    let text = String::from_utf8(body).unwrap();
    for r in text.split("\"$ref\":\"#/definitions/").skip(1) {
        let name = &r[..r.find('"').unwrap()];
        assert!(doc["definitions"].get(name).is_some(), "{name}");
    }
}

#[tokio::test]
async fn openapi_v2_protobuf_is_gnostics_document_and_negotiated_like_kube() {
    let h = H::widgets().await;
    let (code, ct, body) = get_as(&h, None, "/openapi/v2", PB).await;
    assert_eq!(code, 200);
    assert_eq!(ct, PB_ANSWERED);
    let doc = v2_proto::Document::decode(body.as_slice()).unwrap();
    assert_eq!(doc.swagger, "2.0");
    let widget = doc
        .definitions
        .as_ref()
        .unwrap()
        .additional_properties
        .iter()
        .find(|d| d.name == "com.example.v1.Widget")
        .unwrap();
    let gvk = widget
        .value
        .as_ref()
        .unwrap()
        .vendor_extension
        .iter()
        .find(|e| e.name == "x-kubernetes-group-version-kind")
        .unwrap();
    let yaml: Value = serde_json::from_str(&gvk.value.as_ref().unwrap().yaml).unwrap();
    assert_eq!(
        yaml,
        json!([{"group": "example.com", "version": "v1", "kind": "Widget"}])
    );
    assert!(doc.paths.unwrap().path.iter().any(|p| p.name
        == "/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"
        && p.value.as_ref().unwrap().patch.is_some()));
    // What client-go sends first wins; wildcards get JSON; nothing acceptable is 406.
    let accept = format!("{PB}, application/json");
    assert_eq!(
        get_as(&h, None, "/openapi/v2", &accept).await.1,
        PB_ANSWERED
    );
    assert_eq!(
        get_as(&h, None, "/openapi/v2", PB_ANSWERED).await.1,
        PB_ANSWERED
    );
    assert_eq!(
        get_as(&h, None, "/openapi/v2", "*/*").await.1,
        "application/json"
    );
    assert_eq!(get_as(&h, None, "/openapi/v2", "text/html").await.0, 406);
    // ETag and a conditional GET.
    let req = |etag: Option<&str>| {
        let mut b = Request::builder().uri("/openapi/v2").header("accept", PB);
        if let Some(e) = etag {
            b = b.header("if-none-match", e);
        }
        b.body(Body::empty()).unwrap()
    };
    let first = h.server.router().oneshot(req(None)).await.unwrap();
    let etag = first.headers()["etag"].to_str().unwrap().to_string();
    assert!(etag.starts_with('"') && etag.ends_with('"'), "{etag}");
    let again = h.server.router().oneshot(req(Some(&etag))).await.unwrap();
    assert_eq!(again.status().as_u16(), 304);
}

fn metric(text: &str, series: &str) -> Option<u64> {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.trim().parse().ok())
}

#[tokio::test]
async fn metrics_count_requests_with_kubes_names_and_labels() {
    let h = H::widgets().await;
    h.widget("w1", json!({"size": "small"})).await;
    assert_eq!(h.get(&format!("{W}/w1")).await.code, 200);
    assert_eq!(h.get(&format!("{W}/nope")).await.code, 404);
    assert_eq!(h.get(&format!("{W}/nope")).await.code, 404);
    assert_eq!(h.get("/apis/example.com/v1/widgets").await.code, 200);
    let r = h
        .patch(
            &format!("{W}/w2?fieldManager=m&dryRun=All"),
            APPLY,
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w2"}, "spec": {"size": "large"}}),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(h.get("/healthz").await.code, 200);
    assert_eq!(h.get("/healthz/ping").await.code, 200);
    assert_eq!(h.get("/openapi/v3").await.code, 200);
    assert_eq!(h.get("/openapi/v3/api/v1").await.code, 200);
    let aggregated =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    assert_eq!(get_as(&h, None, "/apis", aggregated).await.0, 200);
    assert_eq!(h.get("/apis").await.code, 200);
    let (code, ct, body) = get_as(&h, None, "/metrics", "").await;
    assert_eq!(code, 200);
    assert_eq!(ct, "text/plain; version=0.0.4; charset=utf-8");
    let text = String::from_utf8(body).unwrap();
    assert!(
        text.contains("# TYPE apiserver_request_total counter"),
        "{text}"
    );
    let series = |code: &str,
                  dry: &str,
                  group: &str,
                  resource: &str,
                  scope: &str,
                  sub: &str,
                  verb: &str,
                  version: &str,
                  component: &str| {
        format!(
            "apiserver_request_total{{code=\"{code}\",component=\"{component}\",dry_run=\"{dry}\",group=\"{group}\",resource=\"{resource}\",scope=\"{scope}\",subresource=\"{sub}\",verb=\"{verb}\",version=\"{version}\"}}"
        )
    };
    let api = "apiserver";
    assert_eq!(
        metric(
            &text,
            &series(
                "201",
                "",
                "example.com",
                "widgets",
                "resource",
                "",
                "POST",
                "v1",
                api
            )
        ),
        Some(1),
        "{text}"
    );
    assert_eq!(
        metric(
            &text,
            &series(
                "200",
                "",
                "example.com",
                "widgets",
                "resource",
                "",
                "GET",
                "v1",
                api
            )
        ),
        Some(1)
    );
    assert_eq!(
        metric(
            &text,
            &series(
                "404",
                "",
                "example.com",
                "widgets",
                "resource",
                "",
                "GET",
                "v1",
                api
            )
        ),
        Some(2)
    );
    assert_eq!(
        metric(
            &text,
            &series(
                "200",
                "",
                "example.com",
                "widgets",
                "cluster",
                "",
                "LIST",
                "v1",
                api
            )
        ),
        Some(1)
    );
    assert_eq!(
        metric(
            &text,
            &series(
                "201",
                "All",
                "example.com",
                "widgets",
                "resource",
                "",
                "APPLY",
                "v1",
                api
            )
        ),
        Some(1)
    );
    // The non-resource handlers kube instruments (root health checks, not their sub-checks;
    // OpenAPI v3; aggregated discovery, not the legacy documents).
    for (sub, component) in [
        ("/healthz", ""),
        ("openapi/v3", ""),
        ("openapi/v3/", ""),
        ("/apis", "apiserver"),
    ] {
        assert_eq!(
            metric(
                &text,
                &series("200", "", "", "", "", sub, "GET", "", component)
            ),
            Some(1),
            "{sub}: {text}"
        );
    }
    assert!(!text.contains("/healthz/ping"), "{text}");
    assert!(
        text.contains("apiserver_current_inflight_requests{request_kind=\"readOnly\"} 1"),
        "the /metrics request itself: {text}"
    );
    assert!(text.contains("apiserver_current_inflight_requests{request_kind=\"mutating\"} 0"));
}

#[tokio::test]
async fn service_account_issuer_discovery_is_not_served_for_opaque_tokens() {
    let h = H::new();
    for path in ["/.well-known/openid-configuration", "/openid/v1/jwks"] {
        let r = h.get(path).await;
        assert_eq!(r.code, 404, "{path}: {}", r.body);
        // As kube-apiserver without issuer discovery: no handler, Go's 404 page.
        assert_eq!(r.body, "404 page not found\n");
    }
}

#[tokio::test]
async fn built_in_kinds_have_kubes_full_schemas_in_openapi_v3_and_bare_ones_in_v2() {
    let h = H::new();
    let root = h.get("/openapi/v3").await;
    let url = root.body["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_string();
    let doc = h.get(&url).await;
    assert_eq!(doc.code, 200);
    let schemas = &doc.body["components"]["schemas"];
    let deployment = &schemas["io.k8s.api.apps.v1.Deployment"];
    assert_eq!(
        deployment["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "version": "v1", "kind": "Deployment"}])
    );
    // kube's v3 shape: a described reference is an `allOf` of one `$ref`.
    assert_eq!(
        deployment["properties"]["spec"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.api.apps.v1.DeploymentSpec"
    );
    assert_eq!(
        schemas["io.k8s.api.apps.v1.DeploymentSpec"]["properties"]["replicas"]["type"],
        "integer"
    );
    // Every reference resolves within the group version's document.
    let text = doc.body.to_string();
    for r in text.split("\"$ref\":\"#/components/schemas/").skip(1) {
        let name = &r[..r.find('"').unwrap()];
        assert!(schemas.get(name).is_some(), "{name}");
    }
    // The PATCH operation still lists no strategic merge: kubectl never computes a patch from
    // these schemas, which carry no merge keys.
    let patch =
        &doc.body["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"]["patch"];
    assert!(
        patch["requestBody"]["content"]
            .get("application/strategic-merge-patch+json")
            .is_none()
    );
    // v2 keeps built-ins bare (kubectl ≤ 1.28 would compute patches from a full v2 schema).
    let (_, _, body) = get_as(&h, None, "/openapi/v2", "application/json").await;
    let v2: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(
        v2["definitions"]["io.k8s.api.apps.v1.Deployment"]["type"],
        "object"
    );
    assert!(
        v2["definitions"]["io.k8s.api.apps.v1.Deployment"]
            .get("properties")
            .is_none()
    );
}
