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
        ("Deployment" | "DaemonSet" | "Job", ["spec", "template", "spec", rest @ ..]) => {
            pod_spec_strategy(rest)
        }
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
mod tests;
