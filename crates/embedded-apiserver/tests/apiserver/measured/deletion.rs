//! Deletion as kube-apiserver v1.36 does it: protected namespaces, collections, preconditions,
//! finalizing namespaces and CRDs.

use super::*;

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
