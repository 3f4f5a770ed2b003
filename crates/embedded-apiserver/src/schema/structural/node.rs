//! What every structural check shares: the keyword sets, the level of a node, zero values.

use crate::schema::cause::{Cause, FieldPath};
use crate::schema::jsonschema::Schema;
use serde_json::Value;

pub(super) const OPENAPI_V3_TYPES: [&str; 6] =
    ["array", "boolean", "integer", "number", "object", "string"];
pub(super) const JUNCTORS: [&str; 3] = ["allOf", "anyOf", "oneOf"];
pub(super) const META_FIELDS: [&str; 3] = ["apiVersion", "kind", "metadata"];

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Level {
    Root,
    Item,
    Field,
}

pub(super) fn is_zero(v: &Value) -> bool {
    match v {
        Value::Null => true,
        Value::Bool(b) => !b,
        Value::String(s) => s.is_empty(),
        Value::Array(a) => a.is_empty(),
        Value::Object(o) => o.is_empty(),
        Value::Number(_) => false,
    }
}

pub(super) fn present(s: Schema<'_>, key: &str) -> bool {
    s.get(key).is_some_and(|v| !is_zero(v))
}

pub(super) fn push_type_must_be(ty: &str, path: &FieldPath, msg: &str, out: &mut Vec<Cause>) {
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
