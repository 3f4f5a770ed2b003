//! Writes refused or decoded as kube-apiserver v1.36 refuses and decodes them: bodies, kinds and
//! versions, write options, patch types, apply, and kube's wording of each error.

use super::*;

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
