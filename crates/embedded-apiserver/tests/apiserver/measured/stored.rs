//! What is stored, as kube-apiserver v1.36 stores it: defaults of the storage version, CRDs'
//! defaults and status, built-in kinds' Go zero values, the fields of events, reviews' answers,
//! and which manager owns what.

use super::*;

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
