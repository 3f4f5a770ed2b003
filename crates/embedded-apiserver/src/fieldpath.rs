//! Field sets as structured-merge-diff models them: paths of field names (`f:`), associative
//! list keys (`k:`), set values (`v:`) and indices (`i:`), their `FieldsV1` encoding and the
//! path syntax kube-apiserver prints in apply conflicts.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

/// One step of a path.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum PathElement {
    /// A struct field or map key.
    Field(String),
    /// An item of a `map` list: the JSON object of its key fields (sorted by name).
    Key(String),
    /// An item of a `set` list: its JSON value.
    Value(String),
    /// A list position (lists without keys that are not atomic).
    Index(usize),
}

impl PathElement {
    /// The `FieldsV1` key.
    pub fn encode(&self) -> String {
        match self {
            Self::Field(f) => format!("f:{f}"),
            Self::Key(k) => format!("k:{k}"),
            Self::Value(v) => format!("v:{v}"),
            Self::Index(i) => format!("i:{i}"),
        }
    }

    /// From a `FieldsV1` key.
    pub fn decode(s: &str) -> Option<Self> {
        let (prefix, rest) = s.split_at_checked(2)?;
        match prefix {
            "f:" => Some(Self::Field(rest.to_string())),
            "k:" => Some(Self::Key(rest.to_string())),
            "v:" => Some(Self::Value(rest.to_string())),
            "i:" => rest.parse().ok().map(Self::Index),
            _ => None,
        }
    }

    /// The `k:` element for a list item with these key fields.
    pub fn key_of(item: &Value, keys: &[String]) -> Self {
        let mut m = Map::new();
        for k in keys {
            if let Some(v) = item.get(k) {
                m.insert(k.clone(), v.clone());
            }
        }
        Self::Key(Value::Object(m).to_string())
    }

    /// The `v:` element for a set item.
    pub fn value_of(item: &Value) -> Self {
        Self::Value(item.to_string())
    }
}

/// Go's `%q` of a string, as structured-merge-diff prints string values.
fn go_quote(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

fn value_string(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        other => other.to_string(),
    }
}

/// `fieldpath.Path.String()`: `.spec.ports[port=80,protocol="TCP"].name`, `[="a"]`, `[0]`.
pub fn display(path: &[PathElement]) -> String {
    let mut out = String::new();
    for pe in path {
        match pe {
            PathElement::Field(f) => {
                out.push('.');
                out.push_str(f);
            }
            PathElement::Key(k) => {
                let parts: Vec<String> = serde_json::from_str::<Map<String, Value>>(k)
                    .map(|m| {
                        m.iter()
                            .map(|(n, v)| format!("{n}={}", value_string(v)))
                            .collect()
                    })
                    .unwrap_or_default();
                out.push_str(&format!("[{}]", parts.join(",")));
            }
            PathElement::Value(v) => {
                let shown = serde_json::from_str::<Value>(v)
                    .map(|v| value_string(&v))
                    .unwrap_or_else(|_| v.clone());
                out.push_str(&format!("[={shown}]"));
            }
            PathElement::Index(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

pub type Path = Vec<PathElement>;

/// A set of member paths.
pub type Set = BTreeSet<Path>;

/// `FieldsV1` JSON for a set: a trie whose member nodes with children carry `".": {}`.
pub fn to_fields_v1(set: &Set) -> Value {
    let mut root = Map::new();
    for path in set {
        insert_member(&mut root, path);
    }
    strip_leaf_dots(&mut root);
    Value::Object(root)
}

fn insert_member(node: &mut Map<String, Value>, path: &[PathElement]) {
    let Some((first, rest)) = path.split_first() else {
        // Mark the member; dropped again when it ends up without children.
        node.entry(".".to_string())
            .or_insert_with(|| Value::Object(Map::new()));
        return;
    };
    let entry = node
        .entry(first.encode())
        .or_insert_with(|| Value::Object(Map::new()));
    if !entry.is_object() {
        *entry = Value::Object(Map::new());
    }
    if let Some(child) = entry.as_object_mut() {
        insert_member(child, rest);
    }
}

/// A node holding only `"."` is a plain leaf `{}`.
fn strip_leaf_dots(node: &mut Map<String, Value>) {
    for child in node.values_mut() {
        if let Some(m) = child.as_object_mut() {
            strip_leaf_dots(m);
            if m.len() == 1 && m.contains_key(".") {
                m.clear();
            }
        }
    }
}

/// The set encoded in `FieldsV1` JSON.
pub fn from_fields_v1(v: &Value) -> Set {
    let mut out = Set::new();
    walk_fields_v1(v, &mut Vec::new(), &mut out);
    out
}

fn walk_fields_v1(v: &Value, path: &mut Path, out: &mut Set) {
    let Some(m) = v.as_object() else {
        return;
    };
    if !path.is_empty() && (m.is_empty() || m.contains_key(".")) {
        out.insert(path.clone());
    }
    for (k, child) in m {
        if let Some(pe) = PathElement::decode(k) {
            path.push(pe);
            walk_fields_v1(child, path, out);
            path.pop();
        }
    }
}

/// `s` without `prefix` and everything under it.
pub fn without_prefix(s: &Set, prefix: &[PathElement]) -> Set {
    s.iter()
        .filter(|p| !p.starts_with(prefix))
        .cloned()
        .collect()
}

/// Only the paths under `prefix` (the prefix itself included).
pub fn only_prefix(s: &Set, prefix: &[PathElement]) -> Set {
    s.iter()
        .filter(|p| p.starts_with(prefix))
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(s: &str) -> PathElement {
        PathElement::Field(s.into())
    }

    #[test]
    fn fields_v1_round_trip_with_member_parents() {
        let item = PathElement::key_of(&json!({"name": "a", "x": 1}), &["name".into()]);
        let set: Set = [
            vec![f("spec"), f("size")],
            vec![f("spec"), f("ports"), item.clone()],
            vec![f("spec"), f("ports"), item.clone(), f("name")],
            vec![
                f("metadata"),
                f("finalizers"),
                PathElement::value_of(&json!("x/y")),
            ],
        ]
        .into_iter()
        .collect();
        let v = to_fields_v1(&set);
        assert_eq!(
            v,
            json!({
                "f:metadata": {"f:finalizers": {"v:\"x/y\"": {}}},
                "f:spec": {"f:size": {}, "f:ports": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}}}}
            })
        );
        assert_eq!(from_fields_v1(&v), set);
    }

    #[test]
    fn display_like_structured_merge_diff() {
        let p = vec![
            f("spec"),
            f("ports"),
            PathElement::key_of(
                &json!({"port": 80, "protocol": "TCP"}),
                &["port".into(), "protocol".into()],
            ),
            f("name"),
        ];
        assert_eq!(display(&p), ".spec.ports[port=80,protocol=\"TCP\"].name");
        assert_eq!(
            display(&[
                f("metadata"),
                f("finalizers"),
                PathElement::value_of(&json!("a"))
            ]),
            ".metadata.finalizers[=\"a\"]"
        );
        assert_eq!(PathElement::decode("i:3"), Some(PathElement::Index(3)));
        assert_eq!(PathElement::decode("x"), None);
    }
}
