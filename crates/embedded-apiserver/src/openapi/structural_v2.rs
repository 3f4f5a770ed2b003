//! A custom resource's schema as apiextensions-apiserver publishes it in OpenAPI v2
//! (`ToStructuralOpenAPIV2`), used by the v2 document and the kinds' definitions.

use serde_json::{Map, Value};

/// apiextensions-apiserver's `ToStructuralOpenAPIV2`: what kubectl's v2 model parser cannot
/// take is removed: junctors (`allOf`, `oneOf`, `anyOf`, `not`); nullable values lose their type,
/// items and properties; `x-kubernetes-preserve-unknown-fields` values lose items and properties
/// (objects their type too); arrays left without items lose their type; a nullable property is
/// no longer required.
pub(crate) fn to_v2(schema: &Value) -> Value {
    let Value::Object(m) = schema else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (k, v) in m {
        match k.as_str() {
            "allOf" | "oneOf" | "anyOf" | "not" | "nullable" => {}
            "properties" => {
                let props: Map<String, Value> = v
                    .as_object()
                    .map(|p| p.iter().map(|(n, s)| (n.clone(), to_v2(s))).collect())
                    .unwrap_or_default();
                out.insert(k.clone(), Value::Object(props));
            }
            "items" | "additionalProperties" if v.is_object() => {
                out.insert(k.clone(), to_v2(v));
            }
            _ => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    let flag = |key: &str| m.get(key).and_then(Value::as_bool).unwrap_or(false);
    if flag("nullable") {
        out.remove("type");
        out.remove("items");
        out.remove("properties");
    }
    if flag("x-kubernetes-preserve-unknown-fields") {
        out.remove("items");
        out.remove("properties");
        if out.get("type").and_then(Value::as_str) == Some("object") {
            out.remove("type");
        }
    }
    if out.get("type").and_then(Value::as_str) == Some("array") && !out.contains_key("items") {
        out.remove("type");
    }
    let nullable_props: Vec<String> = m
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .filter(|(_, s)| s.get("nullable").and_then(Value::as_bool) == Some(true))
                .map(|(n, _)| n.clone())
                .collect()
        })
        .unwrap_or_default();
    let nullable_values = m
        .get("additionalProperties")
        .and_then(|a| a.get("nullable"))
        .and_then(Value::as_bool)
        == Some(true);
    if let Some(Value::Array(req)) = out.get_mut("required") {
        if nullable_values {
            req.clear();
        } else {
            req.retain(|r| {
                !r.as_str()
                    .is_some_and(|r| nullable_props.contains(&r.to_string()))
            });
        }
        if req.is_empty() {
            out.remove("required");
        }
    }
    Value::Object(out)
}
