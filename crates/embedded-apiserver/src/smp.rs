//! Strategic merge patch (`application/strategic-merge-patch+json`) for the built-in kinds the
//! emulator serves, following apimachinery `strategicpatch`: `null` deletes, `$patch`
//! (`replace`/`delete`/`merge`), `$retainKeys`, `$setElementOrder/<field>`,
//! `$deleteFromPrimitiveList/<field>`, and merge-by-key lists from a small table. Other lists are
//! replaced. Directives never reach the stored object.

use serde_json::{Map, Value};

const PATCH: &str = "$patch";
const RETAIN_KEYS: &str = "$retainKeys";
const SET_ELEMENT_ORDER: &str = "$setElementOrder/";
const DELETE_FROM_PRIMITIVE_LIST: &str = "$deleteFromPrimitiveList/";

/// Why a strategic merge patch could not be applied (the server answers 400 / 422).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SmpError {
    #[error("the patch must be a JSON object")]
    NotAnObject,
    #[error("Unknown patch type: {0}")]
    UnknownPatchType(String),
    #[error("invalid value for {directive}: {detail}")]
    InvalidDirective { directive: String, detail: String },
    #[error("map: {map} does not contain declared merge key: {key}")]
    MissingMergeKey { map: String, key: String },
    #[error("retainKeys: field {0} is in the patch but not in $retainKeys")]
    RetainKeysMismatch(String),
}

/// How a list field merges.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListStrategy {
    /// Replaced by the patch's list.
    Atomic,
    /// Scalars: union, de-duplicated, original order first.
    MergePrimitive,
    /// Objects merged element-wise by this key.
    MergeKey(&'static str),
}

/// The merge strategy of the list at `path` (field names from the object root, list indexes
/// omitted) in an object of `kind`.
pub fn list_strategy(kind: &str, path: &[&str]) -> ListStrategy {
    match (kind, path) {
        (_, ["metadata", "finalizers"]) => ListStrategy::MergePrimitive,
        (_, ["metadata", "ownerReferences"]) => ListStrategy::MergeKey("uid"),
        ("ServiceAccount", ["secrets"]) | ("ServiceAccount", ["imagePullSecrets"]) => {
            ListStrategy::MergeKey("name")
        }
        (_, [.., "conditions"]) => ListStrategy::MergeKey("type"),
        ("Deployment" | "Job", ["spec", "template", "spec", rest @ ..]) => pod_spec_strategy(rest),
        ("MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration", ["webhooks"]) => {
            ListStrategy::MergeKey("name")
        }
        ("Service", ["spec", "ports"]) => ListStrategy::MergeKey("port"),
        _ => ListStrategy::Atomic,
    }
}

/// The `patchMergeKey`s of `core/v1 PodSpec` and `Container` lists (path below the pod spec).
fn pod_spec_strategy(path: &[&str]) -> ListStrategy {
    match path {
        ["containers" | "initContainers" | "volumes" | "imagePullSecrets"] => {
            ListStrategy::MergeKey("name")
        }
        ["hostAliases"] => ListStrategy::MergeKey("ip"),
        ["containers" | "initContainers", "env"] => ListStrategy::MergeKey("name"),
        ["containers" | "initContainers", "ports"] => ListStrategy::MergeKey("containerPort"),
        ["containers" | "initContainers", "volumeMounts"] => ListStrategy::MergeKey("mountPath"),
        _ => ListStrategy::Atomic,
    }
}

/// Applies `patch` to `original` for an object of `kind` (`ConfigMap`, `Secret`, …).
pub fn apply(original: &Value, patch: &Value, kind: &str) -> Result<Value, SmpError> {
    let patch = patch.as_object().ok_or(SmpError::NotAnObject)?;
    let base = original.as_object().cloned().unwrap_or_default();
    let mut path = Vec::new();
    match merge_map(base, patch, kind, &mut path)? {
        Some(m) => Ok(Value::Object(m)),
        None => Ok(Value::Object(Map::new())),
    }
}

fn directive_err(directive: &str, detail: &str) -> SmpError {
    SmpError::InvalidDirective {
        directive: directive.to_string(),
        detail: detail.to_string(),
    }
}

/// Merges a patch map into an original map; `None` means `$patch: delete` (drop this map).
fn merge_map(
    mut original: Map<String, Value>,
    patch: &Map<String, Value>,
    kind: &str,
    path: &mut Vec<String>,
) -> Result<Option<Map<String, Value>>, SmpError> {
    if let Some(p) = patch.get(PATCH) {
        match p.as_str() {
            Some("replace") => {
                let mut fresh = Map::new();
                let mut stripped = patch.clone();
                stripped.remove(PATCH);
                return merge_map_fresh(&mut fresh, &stripped, kind, path).map(|_| Some(fresh));
            }
            Some("delete") => return Ok(None),
            Some("merge") => {}
            _ => return Err(SmpError::UnknownPatchType(value_text(p))),
        }
    }

    if let Some(rk) = patch.get(RETAIN_KEYS) {
        let keys: Vec<&str> = rk
            .as_array()
            .ok_or_else(|| directive_err(RETAIN_KEYS, "must be a list of strings"))?
            .iter()
            .map(|v| {
                v.as_str()
                    .ok_or_else(|| directive_err(RETAIN_KEYS, "must be a list of strings"))
            })
            .collect::<Result<_, _>>()?;
        for k in patch.keys() {
            if !k.starts_with('$') && !patch[k].is_null() && !keys.contains(&k.as_str()) {
                return Err(SmpError::RetainKeysMismatch(k.clone()));
            }
        }
        original.retain(|k, _| keys.contains(&k.as_str()));
    }

    // $deleteFromPrimitiveList/<f> first: it acts on the original list.
    for (k, v) in patch {
        if let Some(field) = k.strip_prefix(DELETE_FROM_PRIMITIVE_LIST) {
            let remove = v
                .as_array()
                .ok_or_else(|| directive_err(k, "must be a list"))?;
            if let Some(Value::Array(list)) = original.get_mut(field) {
                list.retain(|item| !remove.contains(item));
            }
        }
    }

    for (k, pv) in patch {
        if k.starts_with('$') {
            continue;
        }
        path.push(k.clone());
        let merged = merge_field(original.remove(k), pv, kind, path);
        path.pop();
        if let Some(v) = merged? {
            original.insert(k.clone(), v);
        }
    }

    for (k, order) in patch {
        if let Some(field) = k.strip_prefix(SET_ELEMENT_ORDER) {
            let order = order
                .as_array()
                .ok_or_else(|| directive_err(k, "must be a list"))?;
            path.push(field.to_string());
            let strategy = strategy_at(kind, path);
            path.pop();
            if let Some(Value::Array(list)) = original.get_mut(field) {
                reorder(list, order, strategy);
            }
        }
    }
    Ok(Some(original))
}

/// A patch applied where the original has nothing: directives are still interpreted so that
/// none reach the stored object.
fn merge_map_fresh(
    target: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    kind: &str,
    path: &mut Vec<String>,
) -> Result<(), SmpError> {
    if let Some(m) = merge_map(std::mem::take(target), patch, kind, path)? {
        *target = m;
    }
    Ok(())
}

fn strategy_at(kind: &str, path: &[String]) -> ListStrategy {
    let p: Vec<&str> = path.iter().map(String::as_str).collect();
    list_strategy(kind, &p)
}

fn value_text(v: &Value) -> String {
    v.as_str().map_or_else(|| v.to_string(), str::to_string)
}

/// Result `None` = remove the field.
fn merge_field(
    original: Option<Value>,
    patch: &Value,
    kind: &str,
    path: &mut Vec<String>,
) -> Result<Option<Value>, SmpError> {
    match (original, patch) {
        (_, Value::Null) => Ok(None),
        (Some(Value::Object(o)), Value::Object(p)) => {
            Ok(merge_map(o, p, kind, path)?.map(Value::Object))
        }
        (None, Value::Object(p)) | (Some(_), Value::Object(p)) => {
            Ok(merge_map(Map::new(), p, kind, path)?.map(Value::Object))
        }
        (orig, Value::Array(p)) => {
            let strategy = strategy_at(kind, path);
            let o = match orig {
                Some(Value::Array(o)) => o,
                _ => Vec::new(),
            };
            merge_list(o, p, strategy, kind, path).map(|l| Some(Value::Array(l)))
        }
        (_, other) => Ok(Some(other.clone())),
    }
}

fn is_replace_marker(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|m| m.len() == 1 && m.get(PATCH).and_then(Value::as_str) == Some("replace"))
}

fn merge_list(
    original: Vec<Value>,
    patch: &[Value],
    strategy: ListStrategy,
    kind: &str,
    path: &mut Vec<String>,
) -> Result<Vec<Value>, SmpError> {
    if patch.iter().any(is_replace_marker) {
        let rest: Vec<Value> = patch
            .iter()
            .filter(|v| !is_replace_marker(v))
            .cloned()
            .collect();
        return merge_list(Vec::new(), &rest, strategy, kind, path);
    }
    match strategy {
        ListStrategy::Atomic => {
            // Replaced, but nested maps still lose their directives.
            patch
                .iter()
                .map(|v| match v {
                    Value::Object(p) => Ok(Value::Object(
                        merge_map(Map::new(), p, kind, path)?.unwrap_or_default(),
                    )),
                    other => Ok(other.clone()),
                })
                .collect()
        }
        ListStrategy::MergePrimitive => {
            let mut out = original;
            for v in patch {
                let v = match v {
                    Value::Object(p) => {
                        Value::Object(merge_map(Map::new(), p, kind, path)?.unwrap_or_default())
                    }
                    other => other.clone(),
                };
                if !out.contains(&v) {
                    out.push(v);
                }
            }
            Ok(out)
        }
        ListStrategy::MergeKey(key) => {
            let mut out = original;
            for item in patch {
                let Some(pm) = item.as_object() else {
                    out.push(item.clone());
                    continue;
                };
                let Some(kv) = pm.get(key) else {
                    return Err(SmpError::MissingMergeKey {
                        map: item.to_string(),
                        key: key.to_string(),
                    });
                };
                let pos = out.iter().position(|o| o.get(key) == Some(kv));
                let is_delete = pm.get(PATCH).and_then(Value::as_str) == Some("delete");
                match (pos, is_delete) {
                    (Some(_), true) => out.retain(|o| o.get(key) != Some(kv)),
                    (None, true) => {}
                    (Some(i), false) => {
                        let base = out[i].as_object().cloned().unwrap_or_default();
                        match merge_map(base, pm, kind, path)? {
                            Some(m) => out[i] = Value::Object(m),
                            None => {
                                out.remove(i);
                            }
                        }
                    }
                    (None, false) => {
                        if let Some(m) = merge_map(Map::new(), pm, kind, path)? {
                            out.push(Value::Object(m));
                        }
                    }
                }
            }
            Ok(out)
        }
    }
}

/// `$setElementOrder`: listed elements first, in the given order; the rest keep their order.
fn reorder(list: &mut Vec<Value>, order: &[Value], strategy: ListStrategy) {
    let matches = |item: &Value, o: &Value| match strategy {
        ListStrategy::MergeKey(key) => item.get(key).is_some() && item.get(key) == o.get(key),
        _ => item == o,
    };
    let mut ordered = Vec::with_capacity(list.len());
    let mut rest: Vec<Value> = std::mem::take(list);
    for o in order {
        if let Some(i) = rest.iter().position(|item| matches(item, o)) {
            ordered.push(rest.remove(i));
        }
    }
    ordered.extend(rest);
    *list = ordered;
}

#[cfg(test)]
mod tests {
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
        let original = json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
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
}
