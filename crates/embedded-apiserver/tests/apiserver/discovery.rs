//! docs/embedded-apiserver.md §7 checks 1–7.

use axum::http::Method;
use serde_json::json;

use super::common::*;

#[tokio::test]
async fn check_01_version() {
    let h = H::new();
    let r = h.get("/version").await;
    assert_eq!(r.code, 200);
    assert_eq!(r.body["major"], "1");
    assert!(r.body["minor"].is_string());
    assert!(r.body["gitVersion"].as_str().unwrap().starts_with("v1."));
    assert!(r.body["platform"].is_string());
}

#[tokio::test]
async fn check_02_api_versions() {
    let r = H::new().get("/api").await;
    assert_eq!(r.code, 200);
    assert_eq!(r.body["kind"], "APIVersions");
    assert_eq!(r.body["versions"], json!(["v1"]));
    assert!(r.body["serverAddressByClientCIDRs"].is_array());
}

#[tokio::test]
async fn check_03_api_group_list() {
    let r = H::new().get("/apis").await;
    assert_eq!(r.code, 200);
    assert_eq!(r.header("content-type"), "application/json");
    assert_eq!(r.body["kind"], "APIGroupList");
    let ext = r.body["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "apiextensions.k8s.io")
        .unwrap();
    assert_eq!(ext["preferredVersion"]["version"], "v1");
}

#[tokio::test]
async fn check_04_aggregated_discovery_v2() {
    let h = H::widgets().await;
    let accept =
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json";
    let r = h.raw(Method::GET, "/apis", "", accept, vec![]).await;
    assert_eq!(r.code, 200);
    assert_eq!(
        r.header("content-type"),
        "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    );
    assert_eq!(r.body["kind"], "APIGroupDiscoveryList");
    let ex = r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "example.com")
        .unwrap();
    let widgets = &ex["versions"][0]["resources"][0];
    assert_eq!(widgets["resource"], "widgets");
    assert_eq!(widgets["scope"], "Namespaced");
    assert_eq!(widgets["responseKind"]["kind"], "Widget");
    // v2beta1-only clients (kubectl ≤1.29) get the legacy list.
    let legacy = h.raw(Method::GET, "/apis", "", "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json", vec![]).await;
    assert_eq!(legacy.body["kind"], "APIGroupList");
    let core = h.raw(Method::GET, "/api", "", accept, vec![]).await;
    assert_eq!(core.body["items"][0]["versions"][0]["version"], "v1");
}

#[tokio::test]
async fn check_05_resource_list_after_crd() {
    let h = H::widgets().await;
    let r = h.get("/apis/example.com/v1").await;
    assert_eq!(r.code, 200);
    let res = r.body["resources"].as_array().unwrap();
    let w = res.iter().find(|x| x["name"] == "widgets").unwrap();
    assert_eq!(w["namespaced"], true);
    assert_eq!(w["kind"], "Widget");
    assert_eq!(w["shortNames"], json!(["wd"]));
    assert_eq!(w["categories"], json!(["all"]));
    assert!(res.iter().any(|x| x["name"] == "widgets/status"));
    let scale = res.iter().find(|x| x["name"] == "widgets/scale").unwrap();
    assert_eq!(
        (
            scale["group"].as_str(),
            scale["version"].as_str(),
            scale["kind"].as_str()
        ),
        (Some("autoscaling"), Some("v1"), Some("Scale"))
    );
    assert_eq!(
        h.get("/apis/example.com").await.body["preferredVersion"]["version"],
        "v1"
    );
}

#[tokio::test]
async fn check_06_unknown_group_version_404() {
    // A group nothing serves: Go's plain-text page, as kube-apiserver answers it.
    let r = H::new().get("/apis/nope.example.com/v1").await;
    assert_eq!(r.code, 404);
    assert_eq!(r.body, "404 page not found\n");
    // An unknown version of a served group: the NotFound Status.
    let r = H::new().get("/apis/apps/v0").await;
    assert_eq!(r.code, 404);
    assert_eq!(r.body["kind"], "Status");
    assert_eq!(r.body["reason"], "NotFound");
    assert_eq!(
        H::new()
            .get("/apis/example.com/v1/namespaces/default/widgets")
            .await
            .code,
        404
    );
}

#[tokio::test]
async fn check_07_openapi_v3() {
    let h = H::widgets().await;
    let root = h.get("/openapi/v3").await;
    assert_eq!(root.code, 200);
    assert!(root.body["paths"].get("api/v1").is_some());
    let url = root.body["paths"]["apis/example.com/v1"]["serverRelativeURL"]
        .as_str()
        .unwrap()
        .to_string();
    let doc = h.get(&url).await;
    assert_eq!(doc.code, 200);
    let patch =
        &doc.body["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"];
    assert!(
        patch["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .any(|p| p["name"] == "fieldValidation")
    );
    let content = patch["requestBody"]["content"].as_object().unwrap();
    assert!(content.contains_key("application/merge-patch+json"));
    assert!(!content.contains_key("application/strategic-merge-patch+json"));
    // Schema update changes the hash.
    let mut crd = h
        .get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
        .await
        .body;
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["color"] =
        json!({"type": "string"});
    let r = h
        .put(
            "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com",
            crd,
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    let mut changed = false;
    for _ in 0..100 {
        let again = h.get("/openapi/v3").await;
        if again.body["paths"]["apis/example.com/v1"]["serverRelativeURL"] != json!(url) {
            changed = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(changed, "hash must change after a schema update");
}
