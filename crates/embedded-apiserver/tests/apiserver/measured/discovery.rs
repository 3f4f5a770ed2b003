//! Discovery, the OpenAPI documents and the paths nothing serves, as kube-apiserver v1.36 answers them.

use super::*;

/// `GET path` over the TCP listener: status, Content-Type and body (JSON, or text).
async fn tcp_get(client: &kube::Client, path: &str) -> (u16, String, Value) {
    use http_body_util::BodyExt;
    let req = http::Request::get(path)
        .body(kube::client::Body::empty())
        .unwrap();
    let resp = client.send(req).await.unwrap();
    let code = resp.status().as_u16();
    let ct = resp
        .headers()
        .get("content-type")
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default()
        .to_string();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let body = serde_json::from_slice(&bytes)
        .unwrap_or_else(|_| Value::String(String::from_utf8_lossy(&bytes).into_owned()));
    (code, ct, body)
}

#[tokio::test]
async fn api_advertises_the_address_the_listener_serves_on() {
    let h = H::new();
    let listener = h
        .server
        .listen("127.0.0.1:0".parse().unwrap())
        .await
        .unwrap();
    let (code, _, body) = tcp_get(&listener.client().unwrap(), "/api").await;
    assert_eq!(code, 200);
    assert_eq!(
        body["serverAddressByClientCIDRs"][0]["serverAddress"],
        listener.addr.to_string(),
        "{body}"
    );
}

#[tokio::test]
async fn the_core_resource_list_has_no_api_version() {
    let h = H::new();
    let core = h.get("/api/v1").await.body;
    assert_eq!(core["kind"], "APIResourceList");
    assert!(core.get("apiVersion").is_none(), "{core}");
    assert_eq!(h.get("/apis/apps/v1").await.body["apiVersion"], "v1");
}

#[tokio::test]
async fn discovery_carries_kubes_storage_version_hashes() {
    let h = H::widgets().await;
    let core = h.get("/api/v1").await.body;
    assert_eq!(
        resource(&core, "configmaps")["storageVersionHash"],
        "qFsyl6wFWjQ="
    );
    assert_eq!(
        resource(&core, "events")["storageVersionHash"],
        "r2yiGXH7wu8="
    );
    assert!(
        resource(&core, "namespaces/status")
            .get("storageVersionHash")
            .is_none()
    );
    // Events of events.k8s.io are stored as core Events; CRDs still as v1beta1.
    let events = h.get("/apis/events.k8s.io/v1").await.body;
    assert_eq!(
        resource(&events, "events")["storageVersionHash"],
        "r2yiGXH7wu8="
    );
    let ext = h.get("/apis/apiextensions.k8s.io/v1").await.body;
    assert_eq!(
        resource(&ext, "customresourcedefinitions")["storageVersionHash"],
        "jfWCUB31mvA="
    );
    let authz = h.get("/apis/authorization.k8s.io/v1").await.body;
    assert!(
        resource(&authz, "selfsubjectaccessreviews")
            .get("storageVersionHash")
            .is_none()
    );
    // sha256("example.com/v1/Widget")[..8], base64.
    let widgets = h.get("/apis/example.com/v1").await.body;
    assert_eq!(
        resource(&widgets, "widgets")["storageVersionHash"],
        "gIwvi5rymmg="
    );
}

#[tokio::test]
async fn namespaces_offer_no_deletecollection() {
    let h = H::new();
    let core = h.get("/api/v1").await.body;
    assert_eq!(
        resource(&core, "namespaces")["verbs"],
        json!([
            "create", "delete", "get", "list", "patch", "update", "watch"
        ])
    );
    let r = h.delete("/api/v1/namespaces").await;
    assert_eq!(r.code, 405, "{}", r.body);
    assert_eq!(r.body["reason"], "MethodNotAllowed");
    assert_eq!(h.get("/api/v1/namespaces/default").await.code, 200);
}

#[tokio::test]
async fn crds_are_api_extensions_and_custom_resources_list_kubes_verb_order() {
    let h = H::widgets().await;
    let ext = h.get("/apis/apiextensions.k8s.io/v1").await.body;
    assert_eq!(
        resource(&ext, "customresourcedefinitions")["categories"],
        json!(["api-extensions"])
    );
    let widgets = h.get("/apis/example.com/v1").await.body;
    assert_eq!(
        resource(&widgets, "widgets")["verbs"],
        json!([
            "delete",
            "deletecollection",
            "get",
            "list",
            "patch",
            "create",
            "update",
            "watch"
        ])
    );
}

#[tokio::test]
async fn aggregated_discovery_metadata_and_core_kinds_are_kubes() {
    let h = H::widgets().await;
    let accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    let core = h
        .raw(Method::GET, "/api", "", accept, Vec::new())
        .await
        .body;
    let item = &core["items"][0];
    assert_eq!(item["metadata"], json!({}), "{item}");
    let cm = item["versions"][0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "configmaps")
        .unwrap();
    assert_eq!(
        cm["responseKind"],
        json!({"group": "", "version": "", "kind": "ConfigMap"})
    );
    let apis = h
        .raw(Method::GET, "/apis", "", accept, Vec::new())
        .await
        .body;
    let widgets = apis["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "example.com")
        .unwrap();
    assert_eq!(widgets["metadata"], json!({"name": "example.com"}));
    assert_eq!(
        widgets["versions"][0]["resources"][0]["responseKind"]["version"],
        "v1"
    );
}

#[tokio::test]
async fn groups_are_listed_in_kubes_priority_order() {
    let h = H::widgets().await;
    let names = |v: &Value, pointer: &str| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|g| g.pointer(pointer).unwrap().as_str().unwrap().to_string())
            .collect()
    };
    let legacy = names(&h.get("/apis").await.body["groups"], "/name");
    assert_eq!(
        legacy,
        [
            "apps",
            "events.k8s.io",
            "authentication.k8s.io",
            "authorization.k8s.io",
            "batch",
            "rbac.authorization.k8s.io",
            "admissionregistration.k8s.io",
            "apiextensions.k8s.io",
            "coordination.k8s.io",
            "example.com"
        ]
    );
    let accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    let aggregated = h
        .raw(Method::GET, "/apis", "", accept, Vec::new())
        .await
        .body;
    assert_eq!(names(&aggregated["items"], "/metadata/name"), legacy);
}

#[tokio::test]
async fn paths_of_unknown_groups_are_go_404_pages() {
    let h = H::new();
    for path in [
        "/apis/nope.example.com",
        "/apis/nope.example.com/v1",
        "/apis/nope.example.com/v1/namespaces/default/things",
        "/nothing/here",
    ] {
        let r = h.get(path).await;
        assert_eq!(r.code, 404, "{path}");
        assert_eq!(
            r.header("content-type"),
            "text/plain; charset=utf-8",
            "{path}"
        );
        assert_eq!(r.body, "404 page not found\n", "{path}");
    }
    // A known group: the API's NotFound Status.
    let r = h.get("/apis/apps/v0").await;
    assert_eq!(r.code, 404);
    assert_eq!(r.body["reason"], "NotFound", "{}", r.body);
    // OpenAPI v3 of an unknown group version: 404 without a body.
    let r = h.get("/openapi/v3/apis/nope.example.com/v1").await;
    assert_eq!(r.code, 404);
    assert_eq!(r.body, Value::Null);
}

#[tokio::test]
async fn the_openapi_v3_index_is_sniffed_text_as_kube_serves_it() {
    let h = H::new();
    let r = h.get("/openapi/v3").await;
    assert_eq!(r.code, 200);
    assert_eq!(r.header("content-type"), "text/plain; charset=utf-8");
    assert!(r.body["paths"]["api/v1"].is_object(), "{}", r.body);
    let gv = h.get("/openapi/v3/api/v1").await;
    assert_eq!(gv.header("content-type"), "application/json");
}

#[tokio::test]
async fn a_crds_openapi_definitions_are_apiextensions() {
    let h = H::new();
    assert_eq!(h.post(CRDS, two_version_crd()).await.code, 201);
    h.server
        .wait_established("gadgets.example.com", std::time::Duration::from_secs(5))
        .await
        .unwrap();
    let v3 = h.get("/openapi/v3/apis/example.com/v1").await.body;
    assert_eq!(
        v3["info"],
        json!({"title": "Kubernetes CRD Swagger", "version": "v0.1.0"})
    );
    let schemas = &v3["components"]["schemas"];
    let g = &schemas["com.example.v1.Gadget"];
    assert_eq!(
        g["properties"]["metadata"]["allOf"][0]["$ref"],
        "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert!(
        g["properties"]["apiVersion"]["description"]
            .as_str()
            .is_some_and(|d| !d.is_empty())
    );
    assert_eq!(
        g["x-kubernetes-selectable-fields"],
        json!([{"fieldPath": "spec.size"}])
    );
    let list = &schemas["com.example.v1.GadgetList"];
    assert_eq!(list["description"], "GadgetList is a list of Gadget");
    assert_eq!(
        list["x-kubernetes-group-version-kind"][0]["kind"],
        "GadgetList"
    );
    assert!(schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].is_object());
    assert!(schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta"].is_object());
    let v2 = h.get("/openapi/v2").await.body;
    let d = &v2["definitions"]["com.example.v1.Gadget"];
    assert!(
        d["properties"]["spec"]["properties"]["replicas"]
            .get("default")
            .is_none(),
        "{d}"
    );
    assert_eq!(
        d["properties"]["metadata"]["$ref"],
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    );
    assert_eq!(
        v2["definitions"]["com.example.v1.GadgetList"]["x-kubernetes-selectable-fields"][0]["fieldPath"],
        "spec.size"
    );
}

#[tokio::test]
async fn unknown_paths_of_crd_groups_are_go_404_pages() {
    let h = H::widgets().await;
    for path in [
        "/apis/example.com/v1/namespaces/default/nothings",
        "/apis/example.com/v9",
    ] {
        let r = h.get(path).await;
        assert_eq!(r.code, 404, "{path}");
        assert_eq!(r.body, "404 page not found\n", "{path}");
    }
    let r = h.get("/apis/apps/v1/namespaces/default/nothings").await;
    assert_eq!(r.body["reason"], "NotFound");
}

#[tokio::test]
async fn deployments_have_the_scale_subresource() {
    let h = H::new();
    assert_eq!(h.post(DEPLOYMENTS, deployment("d")).await.code, 201);
    let s = h.get(&format!("{DEPLOYMENTS}/d/scale")).await;
    assert_eq!(s.code, 200, "{}", s.body);
    assert_eq!(s.body["kind"], "Scale");
    assert_eq!(s.body["spec"]["replicas"], 1);
    assert_eq!(s.body["status"]["selector"], "a=b");
    let r = h
        .patch(
            &format!("{DEPLOYMENTS}/d/scale"),
            MERGE,
            json!({"spec": {"replicas": 3}}),
        )
        .await;
    assert_eq!(r.code, 200, "{}", r.body);
    assert_eq!(
        h.get(&format!("{DEPLOYMENTS}/d")).await.body["spec"]["replicas"],
        3
    );
    let apps = h.get("/apis/apps/v1").await.body;
    let names: Vec<&str> = apps["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .filter(|n| n.starts_with("deployments"))
        .collect();
    assert_eq!(
        names,
        ["deployments", "deployments/scale", "deployments/status"]
    );
}

#[tokio::test]
async fn discovery_lists_the_token_subresource_and_built_in_kinds_bare() {
    let h = H::new();
    let core = h.get("/api/v1").await.body;
    assert_eq!(
        resource(&core, "serviceaccounts/token")["kind"],
        "TokenRequest"
    );
    let accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";
    let apis = h
        .raw(Method::GET, "/apis", "", accept, Vec::new())
        .await
        .body;
    let apps = apis["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["metadata"]["name"] == "apps")
        .unwrap();
    let deployments = apps["versions"][0]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["resource"] == "deployments")
        .unwrap();
    assert_eq!(
        deployments["responseKind"],
        json!({"group": "", "version": "", "kind": "Deployment"})
    );
}
