//! Unit tests of `smp`.

use super::*;
use serde_json::json;

#[test]
fn kubectl_configmap_reapply_body() {
    // docs/embedded-apiserver.md §1 finding 3, §7 check 39.
    let original = json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "c", "namespace": "default", "finalizers": ["x.io/one", "x.io/two"],
            "labels": {"a": "1", "b": "2"}},
        "data": {"k1": "v1", "k2": "v2"}});
    let patch = json!({"data": {"k1": "v1b", "k2": null},
        "metadata": {"$deleteFromPrimitiveList/finalizers": ["x.io/one"],
            "$setElementOrder/finalizers": ["x.io/two"], "finalizers": ["x.io/two"],
            "labels": {"b": null}}});
    let got = apply(&original, &patch, "ConfigMap").unwrap();
    assert_eq!(
        got,
        json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "c", "namespace": "default", "finalizers": ["x.io/two"], "labels": {"a": "1"}},
            "data": {"k1": "v1b"}})
    );
    assert!(!got.to_string().contains('$'));
}

#[test]
fn finalizers_merge_as_a_set_and_follow_element_order() {
    let original = json!({"metadata": {"finalizers": ["a.io/x", "b.io/y"]}});
    let patch = json!({"metadata": {"finalizers": ["c.io/z", "a.io/x"],
        "$setElementOrder/finalizers": ["c.io/z", "a.io/x", "b.io/y"]}});
    let got = apply(&original, &patch, "Secret").unwrap();
    assert_eq!(
        got["metadata"]["finalizers"],
        json!(["c.io/z", "a.io/x", "b.io/y"])
    );
    let plain = apply(
        &original,
        &json!({"metadata": {"finalizers": ["c.io/z"]}}),
        "Secret",
    )
    .unwrap();
    assert_eq!(
        plain["metadata"]["finalizers"],
        json!(["a.io/x", "b.io/y", "c.io/z"])
    );
}

#[test]
fn owner_references_merge_by_uid_and_delete() {
    let original = json!({"metadata": {"ownerReferences": [
        {"uid": "1", "name": "a", "kind": "A", "apiVersion": "v1"},
        {"uid": "2", "name": "b", "kind": "B", "apiVersion": "v1"}]}});
    let patch = json!({"metadata": {"ownerReferences": [
        {"uid": "1", "controller": true},
        {"uid": "2", "$patch": "delete"},
        {"uid": "3", "name": "c", "kind": "C", "apiVersion": "v1"}]}});
    let got = apply(&original, &patch, "ConfigMap").unwrap();
    assert_eq!(
        got["metadata"]["ownerReferences"],
        json!([{"uid": "1", "name": "a", "kind": "A", "apiVersion": "v1", "controller": true},
               {"uid": "3", "name": "c", "kind": "C", "apiVersion": "v1"}])
    );
    let err = apply(
        &original,
        &json!({"metadata": {"ownerReferences": [{"name": "x"}]}}),
        "ConfigMap",
    )
    .unwrap_err();
    assert!(matches!(err, SmpError::MissingMergeKey { .. }));
}

#[test]
fn conditions_merge_by_type() {
    let original = json!({"status": {"conditions": [{"type": "Ready", "status": "False"}, {"type": "X", "status": "True"}]}});
    let patch = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    let got = apply(&original, &patch, "Namespace").unwrap();
    assert_eq!(
        got["status"]["conditions"],
        json!([{"type": "Ready", "status": "True"}, {"type": "X", "status": "True"}])
    );
}

#[test]
fn service_account_secrets_merge_but_rules_are_atomic() {
    let sa = json!({"secrets": [{"name": "a"}], "imagePullSecrets": [{"name": "p"}]});
    let got = apply(
        &sa,
        &json!({"secrets": [{"name": "b"}], "imagePullSecrets": [{"name": "q"}]}),
        "ServiceAccount",
    )
    .unwrap();
    assert_eq!(got["secrets"], json!([{"name": "a"}, {"name": "b"}]));
    assert_eq!(
        got["imagePullSecrets"],
        json!([{"name": "p"}, {"name": "q"}])
    );
    let role = json!({"rules": [{"verbs": ["get"], "resources": ["a"]}]});
    let got = apply(
        &role,
        &json!({"rules": [{"verbs": ["list"], "resources": ["b"]}]}),
        "ClusterRole",
    )
    .unwrap();
    assert_eq!(
        got["rules"],
        json!([{"verbs": ["list"], "resources": ["b"]}])
    );
}

#[test]
fn patch_directives_replace_delete_merge() {
    let original = json!({"data": {"a": "1", "b": "2"}, "metadata": {"labels": {"x": "y"}}});
    let got = apply(
        &original,
        &json!({"data": {"$patch": "replace", "c": "3"}}),
        "ConfigMap",
    )
    .unwrap();
    assert_eq!(got["data"], json!({"c": "3"}));
    let got = apply(
        &original,
        &json!({"data": {"$patch": "delete"}}),
        "ConfigMap",
    )
    .unwrap();
    assert!(got.get("data").is_none());
    let got = apply(
        &original,
        &json!({"data": {"$patch": "merge", "c": "3"}}),
        "ConfigMap",
    )
    .unwrap();
    assert_eq!(got["data"], json!({"a": "1", "b": "2", "c": "3"}));
    let err = apply(
        &original,
        &json!({"data": {"$patch": "bogus"}}),
        "ConfigMap",
    )
    .unwrap_err();
    assert_eq!(err.to_string(), "Unknown patch type: bogus");
}

#[test]
fn list_replace_marker() {
    let original = json!({"metadata": {"finalizers": ["a", "b"]}});
    let got = apply(
        &original,
        &json!({"metadata": {"finalizers": [{"$patch": "replace"}, "c"]}}),
        "ConfigMap",
    )
    .unwrap();
    assert_eq!(got["metadata"]["finalizers"], json!(["c"]));
}

#[test]
fn retain_keys_clears_other_fields() {
    let original =
        json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
    let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
    let got = apply(&original, &patch, "Deployment").unwrap();
    assert_eq!(got["spec"]["strategy"], json!({"type": "Recreate"}));
    let bad = json!({"spec": {"strategy": {"$retainKeys": ["type"], "other": 1}}});
    assert!(matches!(
        apply(&original, &bad, "Deployment"),
        Err(SmpError::RetainKeysMismatch(_))
    ));
}

#[test]
fn directives_in_new_subtrees_are_not_stored() {
    let got = apply(
        &json!({}),
        &json!({"metadata": {"$setElementOrder/finalizers": ["a"], "finalizers": ["a"],
            "labels": {"$patch": "merge", "k": "v"}}}),
        "Secret",
    )
    .unwrap();
    assert_eq!(
        got,
        json!({"metadata": {"finalizers": ["a"], "labels": {"k": "v"}}})
    );
}

/// kubectl's re-apply of a Job (or Deployment) with a changed image: the container merges
/// by name, its other fields stay.
#[test]
fn pod_template_containers_merge_by_name() {
    let original = json!({"spec": {"template": {"spec": {"containers": [
        {"name": "c", "image": "a:1", "args": ["x"],
         "volumeMounts": [{"name": "r", "mountPath": "/r"}]},
        {"name": "d", "image": "d:1"}]}}}});
    let patch = json!({"spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "c"}, {"name": "d"}],
        "containers": [{"name": "c", "image": "a:2"}]}}}});
    for kind in ["Job", "Deployment"] {
        let got = apply(&original, &patch, kind).unwrap();
        let c = &got["spec"]["template"]["spec"]["containers"];
        assert_eq!(c[0]["image"], "a:2", "{kind}");
        assert_eq!(c[0]["args"], json!(["x"]), "{kind}");
        assert_eq!(c[0]["volumeMounts"][0]["mountPath"], "/r", "{kind}");
        assert_eq!(c[1]["name"], "d", "{kind}");
    }
    assert_eq!(
        list_strategy(
            "Job",
            &["spec", "template", "spec", "containers", "volumeMounts"]
        ),
        ListStrategy::MergeKey("mountPath")
    );
    assert_eq!(
        list_strategy("ConfigMap", &["spec", "template", "spec", "containers"]),
        ListStrategy::Atomic
    );
}

#[test]
fn scalars_and_atomic_lists_replace() {
    let got = apply(
        &json!({"type": "Opaque", "immutable": false, "x": [1, 2]}),
        &json!({"immutable": true, "x": [3]}),
        "Secret",
    )
    .unwrap();
    assert_eq!(got, json!({"type": "Opaque", "immutable": true, "x": [3]}));
    assert_eq!(
        apply(&json!({}), &json!([1]), "Secret"),
        Err(SmpError::NotAnObject)
    );
}

fn arb_json() -> impl proptest::strategy::Strategy<Value = Value> {
    use proptest::prelude::*;
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        "[a-z$/]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("$patch".to_string()),
                    Just("$retainKeys".to_string()),
                    Just("$setElementOrder/finalizers".to_string()),
                    Just("$deleteFromPrimitiveList/finalizers".to_string()),
                    Just("finalizers".to_string()),
                    Just("conditions".to_string()),
                    Just("metadata".to_string()),
                    "[a-z]{1,4}",
                ],
                inner,
                0..4
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest::proptest! {
    #[test]
    fn arbitrary_patches_never_panic(original in arb_json(), patch in arb_json()) {
        if let Ok(v) = apply(&original, &patch, "ConfigMap") {
            // Directives never survive into the result's keys.
            fn no_directive_keys(v: &Value) -> bool {
                match v {
                    Value::Object(m) => m.iter().all(|(k, v)| !k.starts_with('$') && no_directive_keys(v)),
                    Value::Array(a) => a.iter().all(no_directive_keys),
                    _ => true,
                }
            }
            // Directives from the patch are never stored (unless the original already had
            // such keys, which a real object cannot).
            proptest::prop_assert!(no_directive_keys(&v) || !no_directive_keys(&original));
        }
    }
}
