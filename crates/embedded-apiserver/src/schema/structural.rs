//! CRD schema validation: apiextensions' `ValidateCustomResourceDefinitionOpenAPISchema`
//! (unsupported keywords), the structural-schema rules (`ValidateStructural`: invariants and
//! completeness), and validation of `default` values.

use super::cause::{Cause, FieldPath};
use super::jsonschema::Schema;
use super::prune;
use super::validate::validate_schema_node;
use serde_json::Value;

const OPENAPI_V3_TYPES: [&str; 6] = ["array", "boolean", "integer", "number", "object", "string"];
const JUNCTORS: [&str; 3] = ["allOf", "anyOf", "oneOf"];
const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

#[derive(Clone, Copy, PartialEq, Eq)]
enum Level {
    Root,
    Item,
    Field,
}

/// Every cause kube-apiserver would report for this `openAPIV3Schema`, with paths under
/// `field_prefix` (e.g. `spec.versions[0].schema.openAPIV3Schema`). Empty = acceptable.
pub fn structural_errors(schema: &Value, field_prefix: &str) -> Vec<Cause> {
    let root = FieldPath::new(field_prefix);
    if !schema.is_object() {
        return vec![Cause::required(root.as_str(), "")];
    }
    let mut out = Vec::new();
    openapi_checks(schema, &root, true, false, None, &mut out);

    let mut structural = Vec::new();
    invariants(Schema(schema), Level::Root, &root, &mut structural);
    completeness(Schema(schema), &root, &mut structural);
    structural.sort_by_key(Cause::error_string);
    let structural_ok = structural.is_empty();
    out.extend(structural);

    if out.is_empty() && structural_ok {
        defaults(Schema(schema), &root, true, &mut out);
    }
    out
}

fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) => false,
    }
}

fn present(s: Schema<'_>, key: &str) -> bool {
    s.get(key).is_some_and(|v| !is_zero(v))
}

/// The keyword-level checks (`ValidateCustomResourceDefinitionOpenAPISchema` and the v3
/// standard validator).
fn openapi_checks(
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
fn validation_rule_checks(s: Schema<'_>, path: &FieldPath, out: &mut Vec<Cause>) {
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

fn list_and_map_type_checks(s: Schema<'_>, path: &FieldPath, out: &mut Vec<Cause>) {
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

fn push_type_must_be(ty: &str, path: &FieldPath, msg: &str, out: &mut Vec<Cause>) {
    if ty.is_empty() {
        out.push(Cause::required(path.child("type").as_str(), msg));
    } else {
        out.push(Cause::invalid(
            path.child("type").as_str(),
            &Value::String(ty.to_string()),
            msg,
        ));
    }
}

/// `validateStructuralInvariants`.
fn invariants(s: Schema<'_>, lvl: Level, path: &FieldPath, out: &mut Vec<Cause>) {
    let ty = s.ty().unwrap_or("");
    if ty == "array" && s.items().is_none() {
        out.push(Cause::required(
            path.child("items").as_str(),
            "must be specified",
        ));
    }
    if let Some(items) = s.items() {
        invariants(items, Level::Item, &path.child("items"), out);
    }
    for (name, ps) in s.properties() {
        invariants(ps, Level::Field, &path.child("properties").key(name), out);
    }
    if s.get("additionalProperties").is_some_and(|a| !a.is_null()) {
        if lvl == Level::Root {
            out.push(Cause::forbidden(
                path.child("additionalProperties").as_str(),
                "must not be used at the root",
            ));
        }
        if let Some(ap) = s.get("additionalProperties").filter(|a| a.is_object()) {
            invariants(
                Schema(ap),
                Level::Field,
                &path.child("additionalProperties"),
                out,
            );
        }
    }
    if s.int_or_string() && s.preserve_unknown() {
        out.push(Cause::invalid(
            path.child("x-kubernetes-preserve-unknown-fields").as_str(),
            &Value::Bool(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    if s.int_or_string() && s.embedded() {
        out.push(Cause::invalid(
            path.child("x-kubernetes-embedded-resource").as_str(),
            &Value::Bool(true),
            "must be false if x-kubernetes-int-or-string is true",
        ));
    }
    value_validation(
        s.0,
        is_int_or_string_any_of(s.0),
        is_int_or_string_all_of(s.0),
        path,
        out,
    );

    let check_metadata = lvl == Level::Root || s.embedded();
    if s.embedded() && ty != "object" {
        push_type_must_be(
            ty,
            path,
            "must be object if x-kubernetes-embedded-resource is true",
            out,
        );
    } else if ty.is_empty() && !s.int_or_string() && !s.preserve_unknown() {
        let msg = match lvl {
            Level::Root => "must not be empty at the root",
            Level::Item => "must not be empty for specified array items",
            Level::Field => "must not be empty for specified object fields",
        };
        out.push(Cause::required(path.child("type").as_str(), msg));
    }
    if s.embedded() && s.get("additionalProperties").is_some() {
        out.push(Cause::forbidden(
            path.child("additionalProperties").as_str(),
            "must not be used if x-kubernetes-embedded-resource is set",
        ));
    }
    if lvl == Level::Root && !ty.is_empty() && ty != "object" {
        out.push(Cause::invalid(
            path.child("type").as_str(),
            &Value::String(ty.to_string()),
            "must be object at the root",
        ));
    }
    let props = s.properties();
    if check_metadata {
        for (name, want) in [
            ("kind", "string"),
            ("apiVersion", "string"),
            ("metadata", "object"),
        ] {
            if let Some(p) = props.get(name) {
                let t = p.ty().unwrap_or("");
                if t != want {
                    out.push(Cause::invalid(
                        path.child("properties").key(name).child("type").as_str(),
                        &Value::String(t.to_string()),
                        &format!("must be {want}"),
                    ));
                }
            }
        }
    }
    if lvl == Level::Root
        && let Some(meta) = props.get("metadata")
        && !root_metadata_ok(meta.0)
    {
        out.push(Cause::forbidden(
            path.child("properties").key("metadata").as_str(),
            "must not specify anything other than name and generateName, but metadata is implicitly specified",
        ));
    }
    if s.embedded() && !s.preserve_unknown() && !s.has_properties() {
        out.push(Cause::required(
            path.child("properties").as_str(),
            "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields",
        ));
    }
}

fn root_metadata_ok(meta: &Value) -> bool {
    let Some(map) = meta.as_object() else {
        return false;
    };
    for (k, v) in map {
        match k.as_str() {
            "type" | "default" => {}
            "properties" => {
                let Some(props) = v.as_object() else {
                    return false;
                };
                if !props.keys().all(|k| k == "name" || k == "generateName") {
                    return false;
                }
            }
            _ if is_zero(v) => {}
            _ => return false,
        }
    }
    true
}

fn is_type_only(v: &Value, ty: &str) -> bool {
    v.as_object()
        .is_some_and(|m| m.len() == 1 && m.get("type").and_then(Value::as_str) == Some(ty))
}

fn int_or_string_pair(list: Option<&Value>) -> bool {
    match list.and_then(Value::as_array).map(Vec::as_slice) {
        Some([a, b]) => is_type_only(a, "integer") && is_type_only(b, "string"),
        _ => false,
    }
}

fn is_int_or_string_any_of(v: &Value) -> bool {
    int_or_string_pair(v.get("anyOf"))
}

fn is_int_or_string_all_of(v: &Value) -> bool {
    v.get("allOf")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .is_some_and(|first| int_or_string_pair(first.get("anyOf")))
}

/// `validateValueValidation`: what is allowed under junctors, and valid patterns.
fn value_validation(
    v: &Value,
    skip_any_of: bool,
    skip_first_all_of_any_of: bool,
    path: &FieldPath,
    out: &mut Vec<Cause>,
) {
    if !skip_any_of && let Some(list) = v.get("anyOf").and_then(Value::as_array) {
        for (i, sub) in list.iter().enumerate() {
            nested_value_validation(sub, false, &path.child("anyOf").index(i), out);
        }
    }
    if let Some(list) = v.get("allOf").and_then(Value::as_array) {
        for (i, sub) in list.iter().enumerate() {
            nested_value_validation(
                sub,
                skip_first_all_of_any_of && i == 0,
                &path.child("allOf").index(i),
                out,
            );
        }
    }
    if let Some(list) = v.get("oneOf").and_then(Value::as_array) {
        for (i, sub) in list.iter().enumerate() {
            nested_value_validation(sub, false, &path.child("oneOf").index(i), out);
        }
    }
    if let Some(not) = v.get("not").filter(|n| n.is_object()) {
        nested_value_validation(not, false, &path.child("not"), out);
    }
    if let Some(p) = v.get("pattern").and_then(Value::as_str)
        && let Err(e) = super::goregex::compile(p)
    {
        out.push(Cause::invalid(
            path.child("pattern").as_str(),
            &Value::String(p.to_string()),
            &format!(
                "must be a valid regular expression, but isn't: {}",
                e.to_string().lines().last().unwrap_or("")
            ),
        ));
    }
}

fn nested_value_validation(v: &Value, skip_any_of: bool, path: &FieldPath, out: &mut Vec<Cause>) {
    let s = Schema(v);
    value_validation(v, skip_any_of, false, path, out);
    if let Some(items) = s.items() {
        nested_value_validation(items.0, false, &path.child("items"), out);
    }
    for (name, ps) in s.properties() {
        nested_value_validation(ps.0, false, &path.child("properties").key(name), out);
    }
    for (key, msg) in [
        ("type", "must be empty to be structural"),
        ("additionalProperties", "must be undefined to be structural"),
        ("default", "must be undefined to be structural"),
        ("title", "must be empty to be structural"),
        ("description", "must be empty to be structural"),
        ("nullable", "must be false to be structural"),
        (
            "x-kubernetes-preserve-unknown-fields",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-embedded-resource",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-int-or-string",
            "must be false to be structural",
        ),
        (
            "x-kubernetes-list-map-keys",
            "must be empty to be structural",
        ),
        (
            "x-kubernetes-list-type",
            "must be undefined to be structural",
        ),
    ] {
        if present(s, key) {
            out.push(Cause::forbidden(path.child(key).as_str(), msg));
        }
    }
    if s.properties().contains_key("metadata") {
        out.push(Cause::forbidden(
            path.child("properties").key("metadata").as_str(),
            "must not be specified in a nested context",
        ));
    }
}

/// `validateStructuralCompleteness`: everything named under a junctor is also specified
/// outside of it (checked at every node of the structural tree).
fn completeness(s: Schema<'_>, path: &FieldPath, out: &mut Vec<Cause>) {
    for_each_junctor(s, path, |sub, sub_path| {
        completeness_nested(sub, Some(s), path, &sub_path, out)
    });
    if let Some(items) = s.items() {
        completeness(items, &path.child("items"), out);
    }
    for (name, ps) in s.properties() {
        completeness(ps, &path.child("properties").key(name), out);
    }
    if let Some(ap) = s.get("additionalProperties").filter(|a| a.is_object()) {
        completeness(Schema(ap), &path.child("additionalProperties"), out);
    }
}

fn for_each_junctor<'a>(
    v: Schema<'a>,
    v_path: &FieldPath,
    mut f: impl FnMut(Schema<'a>, FieldPath),
) {
    if let Some(not) = v.get("not").filter(|n| n.is_object()) {
        f(Schema(not), v_path.child("not"));
    }
    for j in JUNCTORS {
        if let Some(list) = v.get(j).and_then(Value::as_array) {
            for (i, sub) in list.iter().enumerate() {
                f(Schema(sub), v_path.child(j).index(i));
            }
        }
    }
}

fn completeness_nested(
    v: Schema<'_>,
    s: Option<Schema<'_>>,
    s_path: &FieldPath,
    v_path: &FieldPath,
    out: &mut Vec<Cause>,
) {
    let Some(s) = s else {
        out.push(Cause::required(
            s_path.as_str(),
            &format!("because it is defined in {}", v_path.as_str()),
        ));
        return;
    };
    let mut subs = Vec::new();
    for_each_junctor(v, v_path, |sub, sub_path| subs.push((sub, sub_path)));
    for (sub, sub_path) in subs {
        completeness_nested(sub, Some(s), s_path, &sub_path, out);
    }
    if let Some(items) = v.items() {
        completeness_nested(
            items,
            s.items(),
            &s_path.child("items"),
            &v_path.child("items"),
            out,
        );
    }
    let s_props = s.properties();
    for (name, vp) in v.properties() {
        let sp = s_path.child("properties").key(name);
        let vpp = v_path.child("properties").key(name);
        match s_props.get(name) {
            None => out.push(Cause::required(
                sp.as_str(),
                &format!("because it is defined in {}", vpp.as_str()),
            )),
            Some(ps) => completeness_nested(vp, Some(*ps), &sp, &vpp, out),
        }
    }
}

/// Each `default` must validate against its own schema and survive pruning.
fn defaults(s: Schema<'_>, path: &FieldPath, is_root: bool, out: &mut Vec<Cause>) {
    if !is_root && let Some(d) = s.default() {
        let dp = path.child("default");
        let mut pruned = d.clone();
        let dropped = prune::prune_value(&mut pruned, s.0);
        if !dropped.is_empty() {
            out.push(Cause::invalid(
                dp.as_str(),
                d,
                "must not have unknown fields",
            ));
        }
        validate_schema_node(d, &s, dp.as_str(), out);
    }
    if let Some(items) = s.items() {
        defaults(items, &path.child("items"), false, out);
    }
    for (name, ps) in s.properties() {
        if is_root && META_FIELDS.contains(&name) {
            continue;
        }
        defaults(ps, &path.child("properties").key(name), false, out);
    }
    if let Some(ap) = s.get("additionalProperties").filter(|a| a.is_object()) {
        defaults(Schema(ap), &path.child("additionalProperties"), false, out);
    }
}
