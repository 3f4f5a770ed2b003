//! Reads as kube-apiserver v1.36 answers them: tables, content negotiation, list continuation,
//! selectors, watches and resource versions.

use super::*;

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
