//! What the fuzz tests share: the proptest configuration (`FUZZ_CASES`) and the generators of
//! keys, JSON values, CRD-like documents, manifest text, JSON schemas and schema paths.

use capi_conformance::inventory::{Document, Inventory, Origin};
use capi_conformance::suite::JsonType;
use proptest::prelude::*;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;

pub(crate) fn cases() -> u32 {
    std::env::var("FUZZ_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(10_000)
}

pub(crate) fn config() -> ProptestConfig {
    ProptestConfig {
        failure_persistence: None,
        ..ProptestConfig::with_cases(cases())
    }
}

/// Keys real manifests use, plus a few odd ones, so generated documents reach deep code paths.
pub(crate) const KEYS: &[&str] = &[
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "labels",
    "annotations",
    "spec",
    "status",
    "group",
    "names",
    "plural",
    "singular",
    "scope",
    "versions",
    "served",
    "storage",
    "schema",
    "openAPIV3Schema",
    "properties",
    "items",
    "additionalProperties",
    "type",
    "subresources",
    "scale",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
    "$ref",
    "rules",
    "template",
    "cluster.x-k8s.io/provider",
    "cluster.x-k8s.io/v1beta1",
    "",
    "..",
    "é",
];

pub(crate) const STRINGS: &[&str] = &[
    "CustomResourceDefinition",
    "apiextensions.k8s.io/v1",
    "ClusterRole",
    "Role",
    "Deployment",
    "Namespace",
    "List",
    "Metadata",
    "clusterctl.cluster.x-k8s.io/v1alpha3",
    "infrastructure.cluster.x-k8s.io",
    "FooMachine",
    "foomachines",
    "Namespaced",
    "Cluster",
    "object",
    "string",
    "array",
    "integer",
    "boolean",
    "v1beta1",
    "v1beta2",
    "v1beta1_v1beta2",
    "",
    "../..",
];

pub(crate) fn key() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::sample::select(KEYS).prop_map(str::to_string),
        1 => "\\PC{0,8}",
    ]
}

pub(crate) fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        proptest::sample::select(STRINGS).prop_map(|s| Value::String(s.into())),
        "\\PC{0,12}".prop_map(Value::String),
    ]
}

pub(crate) fn json_value() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(5, 48, 6, |inner| {
        prop_oneof![
            proptest::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            proptest::collection::vec((key(), inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// A CRD-shaped document whose schema and other fields are arbitrary.
pub(crate) fn crd_like() -> impl Strategy<Value = Value> {
    (json_value(), json_schema(), json_value(), any::<bool>()).prop_map(
        |(labels, schema, extra, scoped)| {
            json!({
                "apiVersion": "apiextensions.k8s.io/v1",
                "kind": "CustomResourceDefinition",
                "metadata": {"name": "foomachines.infrastructure.cluster.x-k8s.io", "labels": labels},
                "spec": {
                    "group": "infrastructure.cluster.x-k8s.io",
                    "names": {"kind": "FooMachine", "plural": "foomachines", "extra": extra},
                    "scope": if scoped { "Namespaced" } else { "Cluster" },
                    "versions": [{"name": "v1beta1", "served": true, "storage": true,
                                  "schema": {"openAPIV3Schema": schema},
                                  "subresources": {"status": {}}}],
                },
            })
        },
    )
}

/// Documents as YAML or JSON text, optionally cut or spliced with noise.
pub(crate) fn manifest_text() -> impl Strategy<Value = String> {
    let docs = proptest::collection::vec(prop_oneof![json_value(), crd_like()], 1..3);
    (
        docs,
        any::<bool>(),
        any::<prop::sample::Index>(),
        "\\PC{0,6}",
    )
        .prop_map(|(docs, yaml, cut, noise)| {
            let mut text = String::new();
            for d in &docs {
                if yaml {
                    text.push_str("---\n");
                    text.push_str(&serde_saphyr::to_string(d).unwrap_or_default());
                } else {
                    text.push_str(&serde_json::to_string(d).unwrap_or_default());
                    text.push('\n');
                }
            }
            if !noise.is_empty() {
                let mut at = cut.index(text.len() + 1);
                while !text.is_char_boundary(at) {
                    at -= 1;
                }
                text.insert_str(at, &noise);
            }
            text
        })
}

pub(crate) const TYPES: &[&str] = &[
    "object", "array", "string", "integer", "number", "boolean", "",
];
pub(crate) const FIELDS: &[&str] = &[
    "spec",
    "status",
    "a",
    "b",
    "ready",
    "items",
    "properties",
    "",
];

/// JSON-schema-like nodes: mostly well-formed, sometimes wrong-typed values in every slot.
pub(crate) fn json_schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        8 => (proptest::sample::select(TYPES), any::<u8>()).prop_map(|(t, flags)| {
            let mut o = Map::new();
            if !t.is_empty() {
                o.insert("type".into(), json!(t));
            }
            if flags & 1 != 0 {
                o.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
            }
            if flags & 2 != 0 {
                o.insert("x-kubernetes-int-or-string".into(), json!(flags & 4 != 0));
            }
            Value::Object(o)
        }),
        1 => scalar(),
    ];
    leaf.prop_recursive(8, 64, 4, |inner| {
        (
            proptest::sample::select(TYPES),
            proptest::collection::vec((proptest::sample::select(FIELDS), inner.clone()), 0..4),
            proptest::option::of(inner.clone()),
            proptest::option::of(prop_oneof![inner, any::<bool>().prop_map(Value::Bool)]),
            any::<u8>(),
        )
            .prop_map(|(t, props, items, additional, flags)| {
                let mut o = Map::new();
                if !t.is_empty() {
                    o.insert("type".into(), json!(t));
                }
                if flags & 1 != 0 {
                    o.insert("x-kubernetes-preserve-unknown-fields".into(), json!(true));
                }
                if flags & 2 != 0 {
                    // Wrong shape on purpose: properties as an array.
                    o.insert("properties".into(), json!(["a", 1]));
                } else if !props.is_empty() {
                    let m: Map<String, Value> =
                        props.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
                    o.insert("properties".into(), Value::Object(m));
                }
                if let Some(i) = items {
                    o.insert("items".into(), i);
                }
                if let Some(a) = additional {
                    o.insert("additionalProperties".into(), a);
                }
                Value::Object(o)
            })
    })
}

/// Dotted paths with `[]` array steps, empty segments and odd names.
pub(crate) fn schema_path() -> impl Strategy<Value = String> {
    proptest::collection::vec(
        (
            prop_oneof![
                6 => proptest::sample::select(FIELDS).prop_map(str::to_string),
                1 => "\\PC{0,4}",
            ],
            any::<bool>(),
        ),
        0..7,
    )
    .prop_map(|segs| {
        segs.into_iter()
            .map(|(s, arr)| if arr { format!("{s}[]") } else { s })
            .collect::<Vec<_>>()
            .join(".")
    })
}

/// The schema with every node the walk reaches made structural: a scalar node becomes
/// `{type: string}`, an untyped node without the Kubernetes flags gets `type: object`.
pub(crate) fn structural(v: Value) -> Value {
    let Value::Object(mut o) = v else {
        return json!({"type": "string"});
    };
    o.remove("$ref");
    let typed = o
        .get("type")
        .and_then(Value::as_str)
        .is_some_and(|t| !t.is_empty());
    let flag = |o: &Map<String, Value>, k: &str| o.get(k).and_then(Value::as_bool) == Some(true);
    if !typed
        && !flag(&o, "x-kubernetes-int-or-string")
        && !flag(&o, "x-kubernetes-preserve-unknown-fields")
    {
        o.insert("type".into(), json!("object"));
    }
    if let Some(Value::Object(props)) = o.remove("properties") {
        let props: Map<String, Value> =
            props.into_iter().map(|(k, c)| (k, structural(c))).collect();
        o.insert("properties".into(), Value::Object(props));
    }
    for key in ["items", "additionalProperties"] {
        if let Some(child @ Value::Object(_)) = o.remove(key) {
            o.insert(key.into(), structural(child));
        }
    }
    Value::Object(o)
}

/// Every path that exists in a schema (walking `properties`, `items`), capped.
pub(crate) fn existing_paths(node: &Value, prefix: Option<&str>, out: &mut Vec<String>) {
    if out.len() > 64 {
        return;
    }
    let Some(props) = node.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (k, child) in props {
        if k.contains('.') || k.ends_with("[]") {
            continue;
        }
        let p = match prefix {
            None => k.clone(),
            Some(prefix) => format!("{prefix}.{k}"),
        };
        out.push(p.clone());
        existing_paths(child, Some(&p), out);
        if let Some(items) = child.get("items") {
            let arr = format!("{p}[]");
            out.push(arr.clone());
            existing_paths(items, Some(&arr), out);
        }
    }
}

pub(crate) const JSON_TYPES: &[JsonType] = &[
    JsonType::Boolean,
    JsonType::String,
    JsonType::Integer,
    JsonType::Number,
    JsonType::Object,
    JsonType::Array,
    JsonType::StringMap,
    JsonType::ObjectMap,
    JsonType::StringArray,
    JsonType::ObjectArray,
    JsonType::IntOrString,
];

pub(crate) fn doc(value: Value) -> Document {
    Document::new(value, Origin::new("fuzz.yaml", 0, 1))
}

/// Loader errors always name their source (`fuzz.yaml…` / `fuzz.json…`).
pub(crate) fn assert_names_source(
    file: &str,
    docs: &[Result<Document, capi_conformance::inventory::InputError>],
) {
    for d in docs {
        match d {
            Ok(doc) => {
                assert_eq!(doc.origin.file, file);
                assert!(doc.value.is_object());
            }
            Err(e) => {
                let msg = e.to_string();
                assert!(msg.starts_with(file), "error does not name {file}: {msg}");
                assert!(!msg.contains('\n'), "multi-line error: {msg}");
                assert!(e.source_label().starts_with(file));
            }
        }
    }
}

pub(crate) fn build_inventory(
    docs: Vec<Result<Document, capi_conformance::inventory::InputError>>,
) {
    let ok: Vec<Document> = docs.into_iter().filter_map(Result::ok).collect();
    let overrides = BTreeMap::new();
    match Inventory::build(ok.clone(), &overrides, true) {
        Ok((inv, problems)) => {
            for p in problems {
                assert!(p.to_string().starts_with("fuzz."), "{p}");
            }
            let _ = inv.crd_count();
        }
        Err(e) => panic!("keep_going build failed: {e}"),
    }
    if let Err(e) = Inventory::build(ok, &overrides, false) {
        assert!(e.to_string().starts_with("fuzz."), "{e}");
    }
}
