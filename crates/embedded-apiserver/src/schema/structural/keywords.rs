//! The keyword-level checks (`ValidateCustomResourceDefinitionOpenAPISchema`): supported
//! keywords and types, `x-kubernetes-validations`, list and map types.

use crate::schema::cause::{Cause, FieldPath};
use crate::schema::jsonschema::Schema;
use serde_json::Value;

use super::node::*;

/// The keyword-level checks (`ValidateCustomResourceDefinitionOpenAPISchema` and the v3
/// standard validator).
pub(super) fn openapi_checks(
    v: &Value,
    path: &FieldPath,
    is_root: bool,
    inside_meta: bool,
    forbid_default: Option<&str>,
    out: &mut Vec<Cause>,
) {
    let s = Schema(v);
    match v.get("type") {
        Some(Value::String(t)) if !t.is_empty() => {
            if !OPENAPI_V3_TYPES.contains(&t.as_str()) {
                out.push(Cause::not_supported(
                    path.child("type").as_str(),
                    &Value::String(t.clone()),
                    &OPENAPI_V3_TYPES.map(String::from),
                ));
            }
            if t == "null" {
                out.push(Cause::forbidden(
                    path.child("type").as_str(),
                    "type cannot be set to null, use nullable as an alternative",
                ));
            }
        }
        Some(Value::String(_)) | None | Some(Value::Null) => {}
        Some(other) => out.push(Cause::type_invalid(
            path.child("type").as_str(),
            other,
            "type must be a string",
        )),
    }
    if let Some(reason) = forbid_default
        && s.default().is_some()
    {
        out.push(Cause::forbidden(
            path.child("default").as_str(),
            &format!("must not be set {reason}"),
        ));
    }
    for (key, msg) in [
        ("id", "id is not supported"),
        ("additionalItems", "additionalItems is not supported"),
        ("patternProperties", "patternProperties is not supported"),
        ("definitions", "definitions is not supported"),
        ("dependencies", "dependencies is not supported"),
        ("$ref", "$ref is not supported"),
    ] {
        if present(s, key) {
            out.push(Cause::forbidden(path.child(key).as_str(), msg));
        }
    }
    if v.get("items").is_some_and(Value::is_array) {
        out.push(Cause::forbidden(
            path.child("items").as_str(),
            "items must be a schema object and not an array",
        ));
    }
    if inside_meta && s.embedded() {
        out.push(Cause::forbidden(
            path.child("x-kubernetes-embedded-resource").as_str(),
            "must not be used inside of resource meta",
        ));
    }
    if s.bool("uniqueItems") {
        out.push(Cause::forbidden(
            path.child("uniqueItems").as_str(),
            "uniqueItems cannot be set to true since the runtime complexity becomes quadratic",
        ));
    }
    if let Some(ap) = v.get("additionalProperties") {
        if s.has_properties() && (ap.is_object() || ap == &Value::Bool(false)) {
            out.push(Cause::forbidden(
                path.child("additionalProperties").as_str(),
                "additionalProperties and properties are mutual exclusive",
            ));
        }
        if ap.is_object() {
            openapi_checks(
                ap,
                &path.child("additionalProperties"),
                false,
                inside_meta,
                None,
                out,
            );
        }
    }
    for (name, ps) in s.properties() {
        let is_meta = (is_root || s.embedded()) && META_FIELDS.contains(&name);
        let forbid = if is_root && is_meta {
            Some(format!("in top-level {name}"))
        } else {
            None
        };
        openapi_checks(
            ps.0,
            &path.child("properties").key(name),
            false,
            inside_meta || is_meta,
            forbid.as_deref().or(forbid_default),
            out,
        );
    }
    if let Some(not) = v.get("not").filter(|n| n.is_object()) {
        openapi_checks(
            not,
            &path.child("not"),
            false,
            inside_meta,
            forbid_default,
            out,
        );
    }
    for j in JUNCTORS {
        if let Some(list) = v.get(j).and_then(Value::as_array) {
            for (i, sub) in list.iter().enumerate() {
                openapi_checks(
                    sub,
                    &path.child(j).index(i),
                    false,
                    inside_meta,
                    forbid_default,
                    out,
                );
            }
        }
    }
    if let Some(items) = v.get("items").filter(|i| i.is_object()) {
        openapi_checks(
            items,
            &path.child("items"),
            false,
            inside_meta,
            forbid_default,
            out,
        );
    }
    if v.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(false)) {
        out.push(Cause::invalid(
            path.child("x-kubernetes-preserve-unknown-fields").as_str(),
            &Value::Bool(false),
            "must be true or undefined",
        ));
    }
    list_and_map_type_checks(s, path, out);
    validation_rule_checks(s, path, out);
}

/// Static checks of `x-kubernetes-validations` entries (compilation is not checked: the
/// interpreter covers a subset of CEL, and a false rejection would be worse than none).
pub(super) fn validation_rule_checks(s: Schema<'_>, path: &FieldPath, out: &mut Vec<Cause>) {
    let Some(rules) = s.get("x-kubernetes-validations").and_then(Value::as_array) else {
        return;
    };
    let has_newline = |t: &str| t.contains(['\n', '\r']);
    for (i, rule) in rules.iter().enumerate() {
        let p = path.child("x-kubernetes-validations").index(i);
        let text = |k: &str| rule.get(k).and_then(Value::as_str).unwrap_or("");
        let (src, msg) = (text("rule").trim(), text("message"));
        if src.is_empty() {
            out.push(Cause::required(
                p.child("rule").as_str(),
                "rule is not specified",
            ));
        } else if !msg.is_empty() && msg.trim().is_empty() {
            out.push(Cause::invalid(
                p.child("message").as_str(),
                &Value::String(msg.to_string()),
                "message must be non-empty if specified",
            ));
        } else if has_newline(msg.trim()) {
            out.push(Cause::invalid(
                p.child("message").as_str(),
                &Value::String(msg.to_string()),
                "message must not contain line breaks",
            ));
        } else if has_newline(src) && msg.trim().is_empty() {
            out.push(Cause::required(
                p.child("message").as_str(),
                "message must be specified if rule contains line breaks",
            ));
        }
        let me = text("messageExpression");
        if rule.get("messageExpression").is_some() && !me.is_empty() && me.trim().is_empty() {
            out.push(Cause::required(
                p.child("messageExpression").as_str(),
                "messageExpression must be non-empty if specified",
            ));
        }
        if let Some(reason) = rule.get("reason").and_then(Value::as_str) {
            let ok = [
                "FieldValueDuplicate",
                "FieldValueForbidden",
                "FieldValueInvalid",
                "FieldValueRequired",
            ];
            if !ok.contains(&reason) {
                out.push(Cause::not_supported(
                    p.child("reason").as_str(),
                    &Value::String(reason.to_string()),
                    &ok.map(String::from),
                ));
            }
        }
    }
}

pub(super) fn list_and_map_type_checks(s: Schema<'_>, path: &FieldPath, out: &mut Vec<Cause>) {
    let ty = s.ty().unwrap_or("");
    if let Some(mt) = s.str("x-kubernetes-map-type") {
        if ty != "object" {
            push_type_must_be(
                ty,
                path,
                "must be object if x-kubernetes-map-type is specified",
                out,
            );
        }
        if mt != "atomic" && mt != "granular" {
            out.push(Cause::not_supported(
                path.child("x-kubernetes-map-type").as_str(),
                &Value::String(mt.to_string()),
                &["atomic".into(), "granular".into()],
            ));
        }
    }
    let lt = s.list_type();
    if let Some(lt) = lt {
        if ty != "array" {
            push_type_must_be(
                ty,
                path,
                "must be array if x-kubernetes-list-type is specified",
                out,
            );
        }
        if !["atomic", "set", "map"].contains(&lt) {
            out.push(Cause::not_supported(
                path.child("x-kubernetes-list-type").as_str(),
                &Value::String(lt.to_string()),
                &["atomic".into(), "set".into(), "map".into()],
            ));
        }
    }
    let keys = s.list_map_keys();
    if !keys.is_empty() {
        match lt {
            None => out.push(Cause::required(
                path.child("x-kubernetes-list-type").as_str(),
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
            Some("map") => {}
            Some(other) => out.push(Cause::invalid(
                path.child("x-kubernetes-list-type").as_str(),
                &Value::String(other.to_string()),
                "must be map if x-kubernetes-list-map-keys is non-empty",
            )),
        }
    }
    if lt == Some("map") {
        if keys.is_empty() {
            out.push(Cause::required(
                path.child("x-kubernetes-list-map-keys").as_str(),
                "must not be empty if x-kubernetes-list-type is map",
            ));
        }
        match s.items() {
            None => out.push(Cause::required(
                path.child("items").as_str(),
                "must have a schema if x-kubernetes-list-type is map",
            )),
            Some(items) if items.ty() != Some("object") => out.push(Cause::invalid(
                path.child("items").child("type").as_str(),
                &Value::String(items.ty().unwrap_or("").to_string()),
                "must be object if parent array's x-kubernetes-list-type is map",
            )),
            Some(items) => {
                let props = items.properties();
                let keys_value = Value::from(keys.clone());
                let mut seen = Vec::new();
                for k in &keys {
                    match props.get(k.as_str()) {
                        Some(p) if matches!(p.ty(), Some("array" | "object")) => {
                            out.push(Cause::invalid(
                                path.child("items").child("properties").key(k).child("type").as_str(),
                                &Value::String("object".into()),
                                "must be a scalar type if parent array's x-kubernetes-list-type is map",
                            ));
                        }
                        Some(_) => {}
                        None => out.push(Cause::invalid(
                            path.child("x-kubernetes-list-map-keys").as_str(),
                            &keys_value,
                            "entries must all be names of item properties",
                        )),
                    }
                    if seen.contains(k) {
                        out.push(Cause::invalid(
                            path.child("x-kubernetes-list-map-keys").as_str(),
                            &keys_value,
                            "must not contain duplicate entries",
                        ));
                    }
                    seen.push(k.clone());
                }
            }
        }
    }
}
