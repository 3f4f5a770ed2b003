//! The probe objects: a minimal valid instance of a kind, with chosen values at one field (its
//! `$ref`s followed through the OpenAPI definitions), and variants of a field's value that
//! differ in every scalar.

use serde_json::{Map, Value, json};

/// One step from an object's root to a field: a property, or the (single) item of a list.
#[derive(Debug, Clone)]
pub(super) enum Step {
    Field(String),
    Item,
}

pub(super) const REF_PREFIX: &str = "#/components/schemas/";

/// `node` with `$ref`s (bare, or the single `allOf` schemars writes beside a description)
/// followed into `defs`; the name of the definition it ended in, if any.
pub(crate) fn resolve<'a>(
    defs: &'a Map<String, Value>,
    mut node: &'a Value,
) -> (&'a Value, Option<&'a str>) {
    let mut name = None;
    for _ in 0..16 {
        let reference = node.get("$ref").or_else(|| {
            node.get("allOf")
                .and_then(Value::as_array)
                .filter(|a| a.len() == 1)
                .and_then(|a| a[0].get("$ref"))
        });
        match reference
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix(REF_PREFIX))
            .and_then(|n| defs.get_key_value(n))
        {
            Some((n, target)) => {
                name = Some(n.as_str());
                node = target;
            }
            None => break,
        }
    }
    (node, name)
}

pub(super) fn type_of(node: &Value) -> Option<&str> {
    node.get("type").and_then(Value::as_str)
}

/// A scalar the probe can vary: a typed string, number, integer or boolean, or int-or-string.
pub(super) fn is_scalar(node: &Value) -> bool {
    matches!(
        type_of(node),
        Some("string" | "integer" | "number" | "boolean")
    ) || node.get("x-kubernetes-int-or-string").is_some()
}

/// Variant `n` (1 or 2) of a scalar, valid for its format.
pub(super) fn variant(node: &Value, n: u8) -> Value {
    match (type_of(node), node.get("format").and_then(Value::as_str)) {
        (Some("integer" | "number"), _) => json!(n),
        (Some("boolean"), _) => json!(n == 2),
        (_, Some("date-time")) => json!(format!("2000-01-01T00:00:0{n}Z")),
        (_, Some("byte")) => json!(if n == 1 { "YQ==" } else { "Yg==" }),
        _ => json!(if n == 1 { "a" } else { "b" }),
    }
}

/// The smallest value of `node` its Rust type decodes: required properties only.
pub(super) fn minimal(defs: &Map<String, Value>, node: &Value, depth: usize) -> Value {
    let (node, _) = resolve(defs, node);
    if depth > 32 {
        return Value::Null;
    }
    match type_of(node) {
        Some("array") => json!([]),
        Some("integer" | "number") => json!(0),
        Some("boolean") => json!(false),
        Some("string") => variant(node, 1),
        _ if node.get("x-kubernetes-int-or-string").is_some() => json!("a"),
        _ => {
            let mut obj = Map::new();
            let props = node.get("properties").and_then(Value::as_object);
            for req in node
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                if let Some(p) = props.and_then(|p| p.get(req)) {
                    obj.insert(req.to_string(), minimal(defs, p, depth + 1));
                }
            }
            Value::Object(obj)
        }
    }
}

/// An item of list schema `item` with every scalar property at variant `n` (a scalar item: the
/// variant itself).
pub(super) fn item_variant(defs: &Map<String, Value>, item: &Value, n: u8) -> Value {
    let (item, _) = resolve(defs, item);
    if is_scalar(item) {
        return variant(item, n);
    }
    let mut v = minimal(defs, item, 0);
    for (name, p) in scalar_props(defs, item) {
        v[name.as_str()] = variant(p, n);
    }
    v
}

pub(super) fn scalar_props<'a>(
    defs: &'a Map<String, Value>,
    node: &'a Value,
) -> Vec<(String, &'a Value)> {
    node.get("properties")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .filter_map(|(k, p)| {
            let (p, _) = resolve(defs, p);
            is_scalar(p).then(|| (k.clone(), p))
        })
        .collect()
}

/// The kind's object with `leaf` at `steps` (intermediate objects and single list items
/// filled with their minimal values).
pub(super) fn instance(
    defs: &Map<String, Value>,
    root: &Value,
    api_version: &str,
    kind: &str,
    steps: &[Step],
    leaf: Value,
) -> Value {
    fn place(defs: &Map<String, Value>, node: &Value, v: &mut Value, steps: &[Step], leaf: Value) {
        let (node, _) = resolve(defs, node);
        let Some((step, rest)) = steps.split_first() else {
            *v = leaf;
            return;
        };
        match step {
            Step::Field(name) => {
                let child = node
                    .get("properties")
                    .and_then(|p| p.get(name))
                    .unwrap_or(&Value::Null);
                if !v.is_object() {
                    *v = json!({});
                }
                let slot = v.as_object_mut().map(|o| {
                    o.entry(name.clone())
                        .or_insert_with(|| minimal(defs, child, 0))
                });
                if let Some(slot) = slot {
                    place(defs, child, slot, rest, leaf);
                }
            }
            Step::Item => {
                let item = node.get("items").unwrap_or(&Value::Null);
                *v = json!([minimal(defs, item, 0)]);
                if let Some(slot) = v.get_mut(0) {
                    place(defs, item, slot, rest, leaf);
                }
            }
        }
    }
    let mut v = minimal(defs, root, 0);
    place(defs, root, &mut v, steps, leaf);
    v["apiVersion"] = json!(api_version);
    v["kind"] = json!(kind);
    v
}

pub(super) fn at<'v>(v: &'v Value, steps: &[Step]) -> Option<&'v Value> {
    steps.iter().try_fold(v, |v, s| match s {
        Step::Field(n) => v.get(n),
        Step::Item => v.get(0),
    })
}
