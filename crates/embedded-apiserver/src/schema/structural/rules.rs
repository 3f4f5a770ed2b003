//! The structural-schema rules (`ValidateStructural`): invariants and completeness, and the
//! validation of `default` values.

use crate::schema::cause::{Cause, FieldPath};
use crate::schema::jsonschema::Schema;
use crate::schema::prune;
use crate::schema::validate::validate_schema_node;
use serde_json::Value;

use super::node::*;

/// `validateStructuralInvariants`.
pub(super) fn invariants(s: Schema<'_>, lvl: Level, path: &FieldPath, out: &mut Vec<Cause>) {
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

pub(super) fn root_metadata_ok(meta: &Value) -> bool {
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

pub(super) fn is_type_only(v: &Value, ty: &str) -> bool {
    v.as_object()
        .is_some_and(|m| m.len() == 1 && m.get("type").and_then(Value::as_str) == Some(ty))
}

pub(super) fn int_or_string_pair(list: Option<&Value>) -> bool {
    match list.and_then(Value::as_array).map(Vec::as_slice) {
        Some([a, b]) => is_type_only(a, "integer") && is_type_only(b, "string"),
        _ => false,
    }
}

pub(super) fn is_int_or_string_any_of(v: &Value) -> bool {
    int_or_string_pair(v.get("anyOf"))
}

pub(super) fn is_int_or_string_all_of(v: &Value) -> bool {
    v.get("allOf")
        .and_then(Value::as_array)
        .and_then(|a| a.first())
        .is_some_and(|first| int_or_string_pair(first.get("anyOf")))
}

/// `validateValueValidation`: what is allowed under junctors, and valid patterns.
pub(super) fn value_validation(
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
        && let Err(e) = crate::schema::goregex::compile(p)
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

pub(super) fn nested_value_validation(
    v: &Value,
    skip_any_of: bool,
    path: &FieldPath,
    out: &mut Vec<Cause>,
) {
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
pub(super) fn completeness(s: Schema<'_>, path: &FieldPath, out: &mut Vec<Cause>) {
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

pub(super) fn for_each_junctor<'a>(
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

pub(super) fn completeness_nested(
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
pub(super) fn defaults(s: Schema<'_>, path: &FieldPath, is_root: bool, out: &mut Vec<Cause>) {
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
