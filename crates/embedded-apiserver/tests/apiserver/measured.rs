//! Differences the differential test (the workspace's `tests/real_cluster/differential.rs`) measured between
//! this server and kube-apiserver v1.36, each one fixed: one test per difference, asserting
//! kube's answer as it was measured.

use axum::http::Method;
use serde_json::{Value, json};

use super::common::*;

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

fn resource<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["resources"]
        .as_array()
        .and_then(|rs| rs.iter().find(|r| r["name"] == name))
        .unwrap_or_else(|| panic!("no {name} in {list}"))
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
async fn kubes_protected_namespaces_cannot_be_deleted() {
    let h = H::new();
    for ns in ["default", "kube-system", "kube-public"] {
        let r = h.delete(&format!("/api/v1/namespaces/{ns}")).await;
        assert_eq!(r.code, 403, "{ns}: {}", r.body);
        assert_eq!(
            r.body["message"],
            format!("namespaces \"{ns}\" is forbidden: this namespace may not be deleted")
        );
        assert_eq!(r.body["details"], json!({"name": ns, "kind": "namespaces"}));
        let after = h.get(&format!("/api/v1/namespaces/{ns}")).await;
        assert!(after.body["metadata"]["deletionTimestamp"].is_null());
    }
}

#[tokio::test]
async fn delete_collection_answers_every_deleted_object() {
    let h = H::widgets().await;
    h.widget("gone", json!({"size": "small"})).await;
    let r = h
        .post(
            W,
            json!({"apiVersion": "example.com/v1", "kind": "Widget",
                "metadata": {"name": "held", "finalizers": ["example.com/hold"]},
                "spec": {"size": "small"}}),
        )
        .await;
    assert_eq!(r.code, 201);
    let r = h.delete(W).await;
    assert_eq!(r.code, 200, "{}", r.body);
    let names: Vec<&str> = r.body["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| o["metadata"]["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["gone", "held"], "{}", r.body);
    assert!(r.body["items"][1]["metadata"]["deletionTimestamp"].is_string());
}

#[tokio::test]
async fn delete_preconditions_are_worded_as_kubes_generic_store() {
    let h = H::widgets().await;
    let w = h.widget("p", json!({"size": "small"})).await;
    let r = h
        .delete_with(
            &format!("{W}/p"),
            json!({"preconditions": {"uid": "00000000-0000-0000-0000-000000000000"}}),
        )
        .await;
    assert_eq!(r.code, 409);
    assert_eq!(
        r.body["message"],
        format!(
            "Operation cannot be fulfilled on Widget.example.com \"p\": the UID in the precondition (00000000-0000-0000-0000-000000000000) does not match the UID in record ({}). The object might have been deleted and then recreated",
            w["metadata"]["uid"].as_str().unwrap()
        )
    );
    assert_eq!(
        r.body["details"],
        json!({"name": "p", "group": "example.com", "kind": "Widget"})
    );
    let r = h
        .delete_with(
            &format!("{W}/p"),
            json!({"preconditions": {"resourceVersion": "1"}}),
        )
        .await;
    assert_eq!(
        r.body["message"],
        format!(
            "Operation cannot be fulfilled on Widget.example.com \"p\": the ResourceVersion in the precondition (1) does not match the ResourceVersion in record ({}). The object might have been modified",
            rv(&w)
        )
    );
    // A core kind: the bare kind. Namespaces keep their storage's older wording.
    h.post(
        "/api/v1/namespaces/default/configmaps",
        json!({"metadata": {"name": "c"}}),
    )
    .await;
    let r = h
        .delete_with(
            "/api/v1/namespaces/default/configmaps/c",
            json!({"preconditions": {"resourceVersion": "1"}}),
        )
        .await;
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .starts_with("Operation cannot be fulfilled on ConfigMap \"c\": the ResourceVersion"),
        "{}",
        r.body
    );
    let r = h
        .delete_with(
            "/api/v1/namespaces/default",
            json!({"preconditions": {"resourceVersion": "1"}}),
        )
        .await;
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .starts_with("Operation cannot be fulfilled on namespaces \"default\": Precondition failed: ResourceVersion in precondition: 1,"),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn namespace_and_crd_deletion_set_only_the_timestamp_and_crds_say_terminating() {
    let h = H::widgets().await;
    h.widget("w", json!({"size": "small"})).await;
    let r = h
        .post(
            "/api/v1/namespaces",
            json!({"metadata": {"name": "short-lived"}}),
        )
        .await;
    assert_eq!(r.code, 201);
    let ns = h.delete("/api/v1/namespaces/short-lived").await.body;
    assert!(ns["metadata"]["deletionTimestamp"].is_string(), "{ns}");
    assert!(
        ns["metadata"].get("deletionGracePeriodSeconds").is_none(),
        "{ns}"
    );
    let crd = h
        .delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/widgets.example.com")
        .await
        .body;
    assert!(crd["metadata"]["deletionTimestamp"].is_string(), "{crd}");
    assert!(
        crd["metadata"].get("deletionGracePeriodSeconds").is_none(),
        "{crd}"
    );
    assert_eq!(crd["metadata"]["generation"], 1, "{crd}");
    let terminating = crd["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["type"] == "Terminating")
        .unwrap_or_else(|| panic!("no Terminating condition: {crd}"));
    assert_eq!(terminating["reason"], "InstanceDeletionPending");
    assert_eq!(
        terminating["message"],
        "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon"
    );
}

fn widget_body(name: &str, spec: Value) -> Value {
    json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name}, "spec": spec})
}

const CM: &str = "/api/v1/namespaces/default/configmaps";
const DEPLOYMENTS: &str = "/apis/apps/v1/namespaces/default/deployments";
const CRDS: &str = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions";

fn deployment(name: &str) -> Value {
    json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
            "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
}

#[tokio::test]
async fn an_update_without_resource_version_names_the_resource_and_value_0() {
    let h = H::widgets().await;
    h.widget("w", json!({"size": "small"})).await;
    let r = h
        .put(
            &format!("{W}/w"),
            widget_body("w", json!({"size": "large"})),
        )
        .await;
    assert_eq!(r.code, 422);
    assert_eq!(
        r.body["message"],
        "widgets.example.com \"w\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update"
    );
    assert_eq!(r.body["details"]["kind"], "widgets");
}

#[tokio::test]
async fn bodies_that_are_no_objects_are_refused_with_kubes_decoder_words() {
    let h = H::widgets().await;
    let r = h
        .raw(Method::POST, W, JSON, JSON, br#""not an object""#.to_vec())
        .await;
    assert_eq!(r.code, 400);
    assert_eq!(
        r.body["message"],
        "the object provided is unrecognized (must be of type Widget): couldn't get version/kind; json parse error: json: cannot unmarshal string into Go value of type struct { APIVersion string \"json:\\\"apiVersion,omitempty\\\"\"; Kind string \"json:\\\"kind,omitempty\\\"\" } (226e6f7420616e206f626a65637422)"
    );
    let r = h
        .raw(Method::POST, W, JSON, JSON, br#"{"apiVersion":"#.to_vec())
        .await;
    assert_eq!(
        r.body["message"],
        "the object provided is unrecognized (must be of type Widget): couldn't get version/kind; json parse error: unexpected end of JSON input ({\"apiVersion\":)"
    );
}

#[tokio::test]
async fn a_custom_resources_kind_and_api_version_are_checked_as_kube_checks_them() {
    let h = H::widgets().await;
    let mut body = widget_body("k", json!({"size": "small"}));
    body["kind"] = json!("Gadget");
    let r = h.post(W, body).await;
    assert_eq!(r.code, 422, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "Gadget.example.com \"k\" is invalid: kind: Invalid value: \"Gadget\": must be Widget"
    );
    assert_eq!(r.body["details"]["kind"], "Gadget");
    let mut body = widget_body("k", json!({"size": "small"}));
    body["apiVersion"] = json!("example.com/v2");
    let r = h.post(W, body).await;
    assert_eq!(r.code, 400);
    assert_eq!(
        r.body["message"],
        "the API version in the data (example.com/v2) does not match the expected API version (example.com/v1)"
    );
    let r = h.post(W, json!({"metadata": {"name": "k"}})).await;
    assert_eq!(r.code, 400);
    assert!(
        r.body["message"].as_str().unwrap().starts_with(
            "the object provided is unrecognized (must be of type Widget): Object 'Kind' is missing in '"
        ),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn scale_replica_paths_are_validated_on_every_write() {
    let h = H::widgets().await;
    let r = h
        .post(
            W,
            widget_body("a", json!({"size": "small", "replicas": "three"})),
        )
        .await;
    assert_eq!(r.code, 422);
    let scale_cause = r.body["details"]["causes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["field"] == ".spec.replicas")
        .cloned()
        .unwrap_or_else(|| panic!("{}", r.body));
    assert_eq!(
        scale_cause["message"],
        "Invalid value: 0: .spec.replicas accessor error: three is of the type string, expected int64"
    );
    let r = h
        .post(
            W,
            widget_body("b", json!({"size": "small", "replicas": -1})),
        )
        .await;
    assert!(
        causes(&r.body).contains(&(".spec.replicas".into(), "FieldValueInvalid".into())),
        "{}",
        r.body
    );
    // Through /scale the object is what is invalid, not the Scale.
    h.widget("w", json!({"size": "small"})).await;
    let r = h
        .patch(
            &format!("{W}/w/scale"),
            MERGE,
            json!({"spec": {"replicas": -1}}),
        )
        .await;
    assert_eq!(r.code, 422);
    assert_eq!(r.body["details"]["kind"], "Widget");
    assert_eq!(r.body["details"]["group"], "example.com");
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .starts_with("Widget.example.com \"w\" is invalid: ["),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn strict_decoding_errors_say_which_kind_could_not_be_handled() {
    let h = H::widgets().await;
    let r = h
        .post(
            &format!("{W}?fieldValidation=Strict"),
            widget_body("u", json!({"size": "small", "bogus": 1})),
        )
        .await;
    assert_eq!(r.code, 400);
    assert_eq!(
        r.body["message"],
        "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: unknown field \"spec.bogus\""
    );
    let r = h
        .post(
            &format!("{CM}?fieldValidation=Strict"),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "bogus": 1}),
        )
        .await;
    assert_eq!(
        r.body["message"],
        "ConfigMap in version \"v1\" cannot be handled as a ConfigMap: strict decoding error: unknown field \"bogus\""
    );
    let mut d = deployment("d");
    d["spec"]["replicas"] = json!("two");
    let r = h.post(DEPLOYMENTS, d).await;
    assert!(
        r.body["message"]
            .as_str()
            .unwrap()
            .starts_with("Deployment in version \"v1\" cannot be handled as a Deployment: "),
        "{}",
        r.body
    );
}

#[tokio::test]
async fn bad_write_options_are_invalid_options_objects() {
    let h = H::widgets().await;
    let r = h
        .post(
            &format!("{W}?fieldValidation=Bogus"),
            widget_body("o", json!({"size": "small"})),
        )
        .await;
    assert_eq!(r.code, 422);
    assert_eq!(
        r.body["message"],
        "CreateOptions.meta.k8s.io \"\" is invalid: fieldValidation: Unsupported value: \"Bogus\": supported values: \"\", \"Ignore\", \"Strict\", \"Warn\""
    );
    assert_eq!(r.body["details"]["kind"], "CreateOptions");
    h.widget("w", json!({"size": "small"})).await;
    let r = h
        .patch(&format!("{W}/w?dryRun=bogus"), MERGE, json!({}))
        .await;
    assert_eq!(r.code, 422);
    assert_eq!(
        r.body["message"],
        "PatchOptions.meta.k8s.io \"\" is invalid: dryRun: Unsupported value: [\"bogus\"]: supported values: \"All\""
    );
}

#[tokio::test]
async fn unsupported_patch_types_are_refused_without_details() {
    let h = H::widgets().await;
    h.widget("w", json!({"size": "small"})).await;
    let r = h.patch(&format!("{W}/w"), SMP, json!({})).await;
    assert_eq!(r.code, 415);
    assert_eq!(
        r.body["message"],
        "the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml"
    );
    assert!(r.body.get("details").is_none(), "{}", r.body);
}

#[tokio::test]
async fn apply_of_fields_the_schema_does_not_declare_fails_as_kubes_field_manager() {
    let h = H::widgets().await;
    let mut a = widget_body("a1", json!({"size": "large", "extra": 1}));
    a["metadata"]["namespace"] = json!("default");
    let r = h
        .patch(&format!("{W}/a1?fieldManager=m"), APPLY, a.clone())
        .await;
    assert_eq!(r.code, 500, "{}", r.body);
    assert_eq!(
        r.body["message"],
        "failed to create typed patch object (default/a1; example.com/v1, Kind=Widget): .spec.extra: field not declared in schema"
    );
    a["top"] = json!(1);
    let r = h
        .patch(
            &format!("{W}/a1?fieldManager=m&fieldValidation=Strict"),
            APPLY,
            a,
        )
        .await;
    assert_eq!(
        r.body["message"],
        "failed to create typed patch object (default/a1; example.com/v1, Kind=Widget): errors:\n  .spec.extra: field not declared in schema\n  .top: field not declared in schema"
    );
    let r = h
        .patch(
            &format!("{CM}/c?fieldManager=m"),
            APPLY,
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "bogus": 1}),
        )
        .await;
    assert_eq!(
        r.body["message"],
        "failed to create typed patch object (/c; /v1, Kind=ConfigMap): .bogus: field not declared in schema"
    );
    let r = h
        .patch(
            &format!("{W}/a1?fieldManager=m"),
            APPLY,
            widget_body("a1", json!({"size": "large"})),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
}

#[tokio::test]
async fn broken_apply_yaml_is_reported_on_one_line_with_kubes_prefix() {
    let h = H::widgets().await;
    let r = h
        .raw(
            Method::PATCH,
            &format!("{W}/a?fieldManager=m"),
            APPLY,
            JSON,
            b"apiVersion: example.com/v1\nkind: Widget\nspec: [\n".to_vec(),
        )
        .await;
    assert_eq!(r.code, 400);
    let m = r.body["message"].as_str().unwrap();
    assert!(
        m.starts_with("error decoding YAML: error converting YAML to JSON: yaml: line 3"),
        "{m}"
    );
    assert!(!m.contains('\n'), "{m}");
}

#[tokio::test]
async fn an_undefined_subresource_of_a_custom_resource_is_the_object_not_found() {
    let h = H::widgets().await;
    h.widget("w", json!({"size": "small"})).await;
    let r = h.get(&format!("{W}/w/bogus")).await;
    assert_eq!(r.code, 404);
    assert_eq!(r.body["message"], "widgets.example.com \"w\" not found");
    assert_eq!(
        r.body["details"],
        json!({"name": "w", "group": "example.com", "kind": "widgets"})
    );
}

const TABLE: &str = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";

#[tokio::test]
async fn tables_have_kubes_columns_and_descriptions() {
    let h = H::widgets().await;
    h.widget("w", json!({"size": "large"})).await;
    let t = h.raw(Method::GET, W, "", TABLE, vec![]).await.body;
    let cols = t["columnDefinitions"].as_array().unwrap();
    assert_eq!(cols.len(), 2, "{t}");
    assert!(
        cols[0]["description"].as_str().unwrap().starts_with(
            "Name must be unique within a namespace. Is required when creating resources"
        ),
        "{t}"
    );
    assert_eq!(
        cols[1]["description"],
        "Custom resource definition column (in JSONPath format): .spec.size"
    );
    // A CRD without columns gets apiextensions' Age column.
    let mut crd = widget_crd();
    crd["metadata"]["name"] = json!("plains.example.com");
    crd["spec"]["names"] = json!({"plural": "plains", "singular": "plain", "kind": "Plain"});
    crd["spec"]["versions"][0]
        .as_object_mut()
        .unwrap()
        .remove("additionalPrinterColumns");
    assert_eq!(h.post(CRDS, crd).await.code, 201);
    h.server
        .wait_established("plains.example.com", std::time::Duration::from_secs(5))
        .await
        .unwrap();
    let t = h
        .raw(
            Method::GET,
            "/apis/example.com/v1/namespaces/default/plains",
            "",
            TABLE,
            vec![],
        )
        .await
        .body;
    let names: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Name", "Age"]);
    assert_eq!(t["columnDefinitions"][1]["type"], "date");
}

#[tokio::test]
async fn an_accept_header_naming_nothing_served_is_406() {
    let h = H::widgets().await;
    h.widget("w", json!({"size": "small"})).await;
    let r = h
        .raw(Method::GET, &format!("{W}/w"), "", "text/html", vec![])
        .await;
    assert_eq!(r.code, 406);
    assert_eq!(r.body["reason"], "NotAcceptable");
    assert_eq!(
        r.body["message"],
        "only the following media types are accepted: application/json, application/yaml, application/vnd.kubernetes.protobuf"
    );
    for ok in [
        "*/*",
        "application/yaml",
        "application/vnd.kubernetes.protobuf",
        TABLE,
    ] {
        let r = h.raw(Method::GET, &format!("{W}/w"), "", ok, vec![]).await;
        assert_eq!(r.code, 200, "{ok}");
    }
}

#[tokio::test]
async fn custom_resource_lists_say_continue_even_when_empty() {
    let h = H::widgets().await;
    h.widget("w", json!({"size": "small"})).await;
    assert_eq!(h.get(W).await.body["metadata"]["continue"], "");
    assert!(h.get(CM).await.body["metadata"].get("continue").is_none());
    let partial = h
        .raw(
            Method::GET,
            W,
            "",
            "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1",
            vec![],
        )
        .await
        .body;
    assert!(partial["metadata"].get("continue").is_none(), "{partial}");
    assert_eq!(h.delete(W).await.body["metadata"]["continue"], "");
}

#[tokio::test]
async fn a_bad_continue_token_is_reported_as_go_decodes_it() {
    let h = H::widgets().await;
    let r = h.get(&format!("{W}?continue=garbage")).await;
    assert_eq!(r.code, 400);
    assert_eq!(
        r.body["message"],
        "invalid continue token: continue key is not valid: invalid character '\\u0081' looking for beginning of value"
    );
}

#[tokio::test]
async fn a_selector_error_is_prefixed_once() {
    let h = H::widgets().await;
    let r = h.get(&format!("{W}?labelSelector=env%20in%20a")).await;
    assert_eq!(r.code, 400);
    assert_eq!(
        r.body["message"],
        "unable to parse requirement: found 'a' expected: '('"
    );
}

#[tokio::test]
async fn a_watch_from_no_version_with_bookmarks_ends_its_initial_events() {
    let h = H::widgets().await;
    h.widget("w", json!({"size": "small"})).await;
    for rv in ["", "&resourceVersion=0"] {
        let mut w = h
            .watch(&format!(
                "{W}?watch=true&allowWatchBookmarks=true&timeoutSeconds=5{rv}"
            ))
            .await;
        assert_eq!(w.next().await["type"], "ADDED");
        let end = w.next().await;
        assert_eq!(end["type"], "BOOKMARK", "{end}");
        assert_eq!(
            end["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
            "true"
        );
        // kube ≥ 1.35 writes no unset creationTimestamp.
        assert!(
            end["object"]["metadata"].get("creationTimestamp").is_none(),
            "{end}"
        );
    }
    // Without bookmarks: the ADDED events only.
    let mut w = h.watch(&format!("{W}?watch=true&timeoutSeconds=5")).await;
    assert_eq!(w.next().await["type"], "ADDED");
    assert!(
        w.next_within(std::time::Duration::from_millis(300))
            .await
            .is_none()
    );
}

#[tokio::test]
async fn a_watch_from_before_a_crd_was_served_is_too_old() {
    let h = H::widgets().await;
    let mut w = h.watch(&format!("{W}?watch=true&resourceVersion=1")).await;
    let e = w.next().await;
    assert_eq!(e["type"], "ERROR", "{e}");
    assert_eq!(e["object"]["code"], 410);
    assert!(
        e["object"]["message"]
            .as_str()
            .unwrap()
            .starts_with("too old resource version: 1 ("),
        "{e}"
    );
}

#[tokio::test]
async fn resource_versions_that_are_no_numbers_are_refused_as_kube_parses_them() {
    let h = H::widgets().await;
    let r = h.get(&format!("{W}?watch=true&resourceVersion=abc")).await;
    assert_eq!(r.code, 500);
    assert_eq!(
        r.body["message"],
        "resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"
    );
    assert!(r.body.get("reason").is_none(), "{}", r.body);
    let r = h.get(&format!("{W}?resourceVersion=abc")).await;
    assert_eq!(r.code, 400);
    assert_eq!(
        r.body["message"],
        "invalid resource version: resourceVersion: Invalid value: \"abc\": strconv.ParseUint: parsing \"abc\": invalid syntax"
    );
}

#[tokio::test]
async fn a_finalizer_added_while_deleting_a_custom_resource_is_two_causes_one_message() {
    let h = H::widgets().await;
    let mut w = widget_body("f", json!({"size": "small"}));
    w["metadata"]["finalizers"] = json!(["example.com/a"]);
    assert_eq!(h.post(W, w).await.code, 201);
    h.delete(&format!("{W}/f")).await;
    let r = h
        .patch(
            &format!("{W}/f"),
            MERGE,
            json!({"metadata": {"finalizers": ["example.com/a", "example.com/b"]}}),
        )
        .await;
    assert_eq!(r.code, 422);
    assert_eq!(r.body["details"]["causes"].as_array().unwrap().len(), 2);
    assert_eq!(
        r.body["message"],
        "Widget.example.com \"f\" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"example.com/b\"}"
    );
}

#[tokio::test]
async fn complex_invalid_values_are_rendered_as_json() {
    let h = H::new();
    let mut d = deployment("d");
    d["spec"]["template"]["metadata"]["labels"] = json!({"app": "y"});
    let r = h.post(DEPLOYMENTS, d).await;
    assert_eq!(r.code, 422);
    assert!(
        r.body["message"].as_str().unwrap().contains(
            "Invalid value: {\"app\":\"y\"}: `selector` does not match template `labels`"
        ),
        "{}",
        r.body
    );
}

fn two_version_crd() -> Value {
    json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "singular": "gadget", "kind": "Gadget"},
            "versions": [
                {"name": "v1alpha1", "served": true, "storage": false, "deprecated": true,
                 "deprecationWarning": "example.com/v1alpha1 Gadget is going away",
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                    "properties": {"color": {"type": "string", "default": "blue"}}}}}}},
                {"name": "v1", "served": true, "storage": true,
                 "selectableFields": [{"jsonPath": ".spec.size"}],
                 "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {"type": "object",
                    "properties": {"size": {"type": "string"}, "replicas": {"type": "integer", "default": 1}}}}}}}]}})
}

#[tokio::test]
async fn an_object_written_at_another_version_is_stored_with_the_storage_versions_defaults() {
    let h = H::new();
    assert_eq!(h.post(CRDS, two_version_crd()).await.code, 201);
    h.server
        .wait_established("gadgets.example.com", std::time::Duration::from_secs(5))
        .await
        .unwrap();
    let r = h
        .post(
            "/apis/example.com/v1alpha1/namespaces/default/gadgets",
            json!({"apiVersion": "example.com/v1alpha1", "kind": "Gadget", "metadata": {"name": "g"}, "spec": {}}),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let g = h
        .get("/apis/example.com/v1/namespaces/default/gadgets/g")
        .await
        .body;
    assert_eq!(g["spec"], json!({"replicas": 1}), "{g}");
}

#[tokio::test]
async fn a_watch_of_a_deprecated_version_carries_its_warning() {
    let h = H::new();
    assert_eq!(h.post(CRDS, two_version_crd()).await.code, 201);
    h.server
        .wait_established("gadgets.example.com", std::time::Duration::from_secs(5))
        .await
        .unwrap();
    let r = h
        .raw(
            Method::GET,
            "/apis/example.com/v1alpha1/namespaces/default/gadgets?watch=true&timeoutSeconds=1",
            "",
            JSON,
            vec![],
        )
        .await;
    assert_eq!(r.code, 200);
    assert_eq!(
        r.header("warning"),
        "299 - \"example.com/v1alpha1 Gadget is going away\""
    );
}

#[tokio::test]
async fn crds_are_defaulted_and_their_status_written_as_kube_writes_it() {
    let h = H::new();
    let mut crd = widget_crd();
    crd["spec"]["names"]
        .as_object_mut()
        .unwrap()
        .remove("singular");
    let r = h.post(CRDS, crd).await;
    assert_eq!(r.code, 201);
    assert_eq!(r.body["spec"]["conversion"], json!({"strategy": "None"}));
    assert_eq!(r.body["spec"]["names"]["listKind"], "WidgetList");
    assert_eq!(r.body["spec"]["names"]["singular"], "widget");
    assert_eq!(r.body["status"]["conditions"], Value::Null, "{}", r.body);
    h.server
        .wait_established("widgets.example.com", std::time::Duration::from_secs(5))
        .await
        .unwrap();
    let crd = h.get(&format!("{CRDS}/widgets.example.com")).await.body;
    let entry = crd["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "kube-apiserver")
        .cloned()
        .unwrap_or_else(|| panic!("no kube-apiserver entry: {crd}"));
    assert_eq!(entry["operation"], "Update");
    assert_eq!(entry["subresource"], "status");
    assert!(
        entry["fieldsV1"]["f:status"]["f:conditions"]["k:{\"type\":\"Established\"}"].is_object(),
        "{entry}"
    );
}

#[tokio::test]
async fn the_garbage_collectors_writes_take_what_they_remove_from_every_manager() {
    let h = H::widgets().await;
    let owner = h.widget("owner", json!({"size": "small"})).await;
    let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dep",
        "ownerReferences": [{"apiVersion": "example.com/v1", "kind": "Widget", "name": "owner",
            "uid": owner["metadata"]["uid"]}]}, "data": {"k": "v"}});
    let r = h.post(&format!("{CM}?fieldManager=creator"), cm).await;
    assert_eq!(r.code, 201);
    // The owner reference is owned whole (atomic).
    let fields = &r.body["metadata"]["managedFields"][0]["fieldsV1"];
    let key = format!(
        "k:{{\"uid\":\"{}\"}}",
        owner["metadata"]["uid"].as_str().unwrap()
    );
    assert_eq!(
        fields["f:metadata"]["f:ownerReferences"][&key],
        json!({}),
        "{fields}"
    );
    h.delete_with(
        &format!("{W}/owner"),
        json!({"propagationPolicy": "Orphan"}),
    )
    .await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let dep = h.get(&format!("{CM}/dep")).await.body;
        if dep["metadata"].get("ownerReferences").is_none() {
            let creator = dep["metadata"]["managedFields"]
                .as_array()
                .unwrap()
                .iter()
                .find(|e| e["manager"] == "creator")
                .cloned()
                .unwrap();
            assert!(creator["fieldsV1"].get("f:metadata").is_none(), "{dep}");
            break;
        }
        assert!(std::time::Instant::now() < deadline, "not orphaned: {dep}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_namespaces_finalizer_belongs_to_no_manager() {
    let h = H::new();
    let r = h
        .post(
            "/api/v1/namespaces?fieldManager=m",
            json!({"metadata": {"name": "n"}}),
        )
        .await;
    assert_eq!(r.body["spec"], json!({"finalizers": ["kubernetes"]}));
    let fields = &r.body["metadata"]["managedFields"][0]["fieldsV1"];
    assert!(fields.get("f:spec").is_none(), "{fields}");
    assert!(fields["f:metadata"]["f:labels"]["f:kubernetes.io/metadata.name"].is_object());
}

#[tokio::test]
async fn secret_data_must_be_standard_base64() {
    let h = H::new();
    let r = h
        .post(
            "/api/v1/namespaces/default/secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}, "data": {"a": "not base64!"}}),
        )
        .await;
    assert_eq!(r.code, 400);
    assert_eq!(
        r.body["message"],
        "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 3"
    );
    let r = h
        .post(
            "/api/v1/namespaces/default/secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "t"}, "data": {"a": "Yg=="}}),
        )
        .await;
    assert_eq!(r.code, 201);
}

#[tokio::test]
async fn workloads_are_stored_with_their_go_zero_values() {
    let h = H::new();
    let mut d = deployment("d");
    d["spec"]["template"]["metadata"]["creationTimestamp"] = Value::Null;
    d["spec"]["replicas"] = Value::Null;
    let r = h.post(DEPLOYMENTS, d).await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(r.body["status"], json!({}));
    assert_eq!(r.body["spec"]["replicas"], 1);
    assert_eq!(
        r.body["spec"]["template"]["spec"]["containers"][0]["resources"],
        json!({})
    );
    assert!(
        r.body["spec"]["template"]["metadata"]
            .get("creationTimestamp")
            .is_none(),
        "{}",
        r.body
    );
    let mut ds = deployment("ds");
    ds["kind"] = json!("DaemonSet");
    let r = h
        .post("/apis/apps/v1/namespaces/default/daemonsets", ds)
        .await;
    assert_eq!(
        r.body["status"],
        json!({"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0})
    );
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "i"}]}}}});
    let r = h.post("/apis/batch/v1/namespaces/default/jobs", job).await;
    assert_eq!(r.body["status"], json!({}), "{}", r.body);
}

#[tokio::test]
async fn reviews_answer_what_kubes_review_storages_answer() {
    let h = H::new();
    let r = h
        .post(
            "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews?fieldManager=asker",
            json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
                "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}}),
        )
        .await;
    assert_eq!(r.body["status"], json!({"allowed": true}));
    assert_eq!(r.body["metadata"]["managedFields"][0]["manager"], "asker");
    assert!(r.body["metadata"].get("creationTimestamp").is_none());
    let r = h
        .post(
            "/apis/authentication.k8s.io/v1/selfsubjectreviews",
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}),
        )
        .await;
    assert!(
        r.body["metadata"]["creationTimestamp"].is_string(),
        "{}",
        r.body
    );
    let r = h
        .post(
            "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
            json!({"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectRulesReview",
                "spec": {"namespace": "default"}}),
        )
        .await;
    assert_eq!(r.body["metadata"], json!({}));
    let rules = r.body["status"]["resourceRules"].as_array().unwrap();
    assert_eq!(
        rules[0]["resources"],
        json!(["selfsubjectaccessreviews", "selfsubjectrulesreviews"])
    );
    assert_eq!(rules[2]["resources"], json!(["*"]));
    let urls = r.body["status"]["nonResourceRules"].as_array().unwrap();
    assert_eq!(urls.len(), 3, "{}", r.body);
    assert_eq!(urls[1]["nonResourceURLs"], json!(["*"]));
    // A TokenRequest names its ServiceAccount and the fields its requester set.
    let sa = h
        .post(
            "/api/v1/namespaces/default/serviceaccounts",
            json!({"metadata": {"name": "robot"}}),
        )
        .await
        .body;
    let r = h
        .post(
            "/api/v1/namespaces/default/serviceaccounts/robot/token?fieldManager=asker",
            json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {}}),
        )
        .await;
    assert_eq!(r.code, 201);
    assert_eq!(r.body["metadata"]["uid"], sa["metadata"]["uid"]);
    assert!(r.body["metadata"]["creationTimestamp"].is_string());
    assert_eq!(r.body["spec"]["boundObjectRef"], Value::Null);
    let entry = &r.body["metadata"]["managedFields"][0];
    assert_eq!(entry["subresource"], "token");
    assert_eq!(
        entry["fieldsV1"],
        json!({"f:spec": {"f:expirationSeconds": {}}})
    );
}

#[tokio::test]
async fn an_events_k8s_io_event_comes_back_with_the_core_fields_it_lacks() {
    let h = H::new();
    let r = h
        .post(
            "/apis/events.k8s.io/v1/namespaces/default/events",
            json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e"},
                "eventTime": "2026-01-01T00:00:00.000000Z", "reportingController": "c/x",
                "reportingInstance": "i", "action": "A", "reason": "R", "type": "Normal"}),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    assert_eq!(r.body["deprecatedSource"], json!({}));
    assert_eq!(r.body["deprecatedFirstTimestamp"], Value::Null);
    let fields = &r.body["metadata"]["managedFields"][0]["fieldsV1"];
    assert!(fields.get("f:deprecatedSource").is_none(), "{fields}");
}

#[tokio::test]
async fn label_selectors_are_applied_whole() {
    let h = H::new();
    let r = h
        .patch(
            &format!("{DEPLOYMENTS}/d?fieldManager=m"),
            APPLY,
            deployment("d"),
        )
        .await;
    assert_eq!(r.code, 201, "{}", r.body);
    let fields = &r.body["metadata"]["managedFields"][0]["fieldsV1"];
    assert_eq!(fields["f:spec"]["f:selector"], json!({}), "{fields}");
}

#[tokio::test]
async fn a_namespace_being_deleted_says_what_holds_it() {
    let h = H::new();
    h.post("/api/v1/namespaces", json!({"metadata": {"name": "held"}}))
        .await;
    let r = h
        .post(
            "/api/v1/namespaces/held/configmaps",
            json!({"metadata": {"name": "c", "finalizers": ["x.io/hold"]}}),
        )
        .await;
    assert_eq!(r.code, 201);
    h.delete("/api/v1/namespaces/held").await;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    loop {
        let ns = h.get("/api/v1/namespaces/held").await.body;
        let conds = ns["status"]["conditions"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let find = |t: &str| conds.iter().find(|c| c["type"] == t).cloned();
        if let Some(f) = find("NamespaceFinalizersRemaining") {
            assert_eq!(f["status"], "True");
            assert_eq!(f["reason"], "SomeFinalizersRemain");
            assert_eq!(
                f["message"],
                "Some content in the namespace has finalizers remaining: x.io/hold in 1 resource instances"
            );
            let remaining = find("NamespaceContentRemaining").unwrap();
            assert_eq!(
                remaining["message"],
                "Some resources are remaining: configmaps. has 1 resource instances"
            );
            assert_eq!(
                find("NamespaceDeletionDiscoveryFailure").unwrap()["status"],
                "False"
            );
            assert_eq!(conds.len(), 5);
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{ns}");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
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
async fn a_new_scale_managers_entry_has_no_time() {
    let h = H::widgets().await;
    h.widget("w", json!({"size": "small"})).await;
    let r = h
        .patch(
            &format!("{W}/w/scale?fieldManager=scaler"),
            MERGE,
            json!({"spec": {"replicas": 2}}),
        )
        .await;
    assert_eq!(r.code, 200);
    let w = h.get(&format!("{W}/w")).await.body;
    let entry = w["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "scaler")
        .cloned()
        .unwrap();
    assert_eq!(entry["subresource"], "scale");
    assert!(entry.get("time").is_none(), "{entry}");
    // Sorted first among the Update entries (kube sorts a missing time as zero).
    let updates: Vec<&str> = w["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["operation"] == "Update")
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(updates[0], "scaler", "{w}");
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
