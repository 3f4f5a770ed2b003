//! Structural pruning (apiextensions `pruning.PruneWithOptions` + `objectmeta.Coerce`): drops
//! fields the schema does not specify and records each dropped path (`spec.bogus`,
//! `spec.items[0].x`, `metadata.foo`).

use super::jsonschema::Schema;
use serde_json::{Map, Value};

/// The JSON fields of `metav1.ObjectMeta`.
pub const OBJECT_META_FIELDS: &[&str] = &[
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
];

const OWNER_REFERENCE_FIELDS: &[&str] = &[
    "apiVersion",
    "kind",
    "name",
    "uid",
    "controller",
    "blockOwnerDeletion",
];

const MANAGED_FIELDS_ENTRY_FIELDS: &[&str] = &[
    "manager",
    "operation",
    "apiVersion",
    "time",
    "fieldsType",
    "fieldsV1",
    "subresource",
];

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// Prunes a whole resource (root: keeps `apiVersion`, `kind`, `metadata`, coerces metadata to
/// ObjectMeta). Returns the pruned paths in traversal order (sorted keys).
pub fn prune_resource(obj: &mut Value, schema: &Value) -> Vec<String> {
    let mut pruned = Vec::new();
    prune_node(
        obj,
        Some(Schema(schema)),
        &mut String::new(),
        true,
        &mut pruned,
    );
    pruned
}

/// Prunes a value that is not a resource root.
pub fn prune_value(v: &mut Value, schema: &Value) -> Vec<String> {
    let mut pruned = Vec::new();
    prune_node(
        v,
        Some(Schema(schema)),
        &mut String::new(),
        false,
        &mut pruned,
    );
    pruned
}

/// Appends `.key` (or `key` at the root) to a path buffer, as [`join`] renders it.
fn push_key(path: &mut String, key: &str) {
    if !path.is_empty() {
        path.push('.');
    }
    path.push_str(key);
}

/// `path` is one buffer extended and truncated while walking: no String per visited node.
fn prune_node(
    v: &mut Value,
    s: Option<Schema<'_>>,
    path: &mut String,
    resource_root: bool,
    pruned: &mut Vec<String>,
) {
    match v {
        Value::Object(map) => {
            let Some(s) = s else {
                // Under preserve-unknown-fields without a schema: keep everything, but embedded
                // resources below still get nothing pruned (kube: s == nil keeps all).
                return;
            };
            let is_resource = resource_root || s.embedded();
            let additional = s.additional_properties();
            // Walk in place (key order) and remove afterwards: no copy of every key per write.
            let mut unknown: Vec<String> = Vec::new();
            for (k, child) in map.iter_mut() {
                if is_resource && (k == "apiVersion" || k == "kind") {
                    continue;
                }
                let len = path.len();
                push_key(path, k);
                if is_resource && k == "metadata" {
                    coerce_object_meta(child, path, pruned);
                } else if let Some(cs) = s.property(k).or(additional) {
                    prune_node(child, Some(cs), path, false, pruned);
                } else if s.preserve_unknown() {
                    // kept verbatim
                } else {
                    unknown.push(k.clone());
                    pruned.push(path.clone());
                }
                path.truncate(len);
            }
            for k in unknown {
                map.remove(&k);
            }
        }
        Value::Array(items) => {
            let item_schema = s.and_then(|s| s.items());
            for (i, item) in items.iter_mut().enumerate() {
                let len = path.len();
                path.push('[');
                path.push_str(&i.to_string());
                path.push(']');
                prune_node(item, item_schema, path, false, pruned);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// Removes the keys not in `allowed`; the path prefix is rendered only when one is removed.
fn keep_only(
    map: &mut Map<String, Value>,
    allowed: &[&str],
    path: impl Fn() -> String,
    pruned: &mut Vec<String>,
) {
    if map.keys().all(|k| allowed.contains(&k.as_str())) {
        return;
    }
    let path = path();
    let unknown: Vec<String> = map
        .keys()
        .filter(|k| !allowed.contains(&k.as_str()))
        .cloned()
        .collect();
    for k in unknown {
        map.remove(&k);
        pruned.push(join(&path, &k));
    }
}

/// Drops unknown ObjectMeta fields (and unknown fields of ownerReferences and managedFields
/// entries).
pub fn coerce_object_meta(meta: &mut Value, path: &str, pruned: &mut Vec<String>) {
    let Some(map) = meta.as_object_mut() else {
        return;
    };
    keep_only(map, OBJECT_META_FIELDS, || path.to_string(), pruned);
    for (list, allowed) in [
        ("ownerReferences", OWNER_REFERENCE_FIELDS),
        ("managedFields", MANAGED_FIELDS_ENTRY_FIELDS),
    ] {
        if let Some(Value::Array(items)) = map.get_mut(list) {
            for (i, item) in items.iter_mut().enumerate() {
                if let Some(m) = item.as_object_mut() {
                    keep_only(m, allowed, || format!("{}[{i}]", join(path, list)), pruned);
                }
            }
        }
    }
}
