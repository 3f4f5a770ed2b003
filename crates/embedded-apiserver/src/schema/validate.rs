//! Value validation of a custom resource against its structural schema, with kube-openapi's
//! messages and apiextensions' mapping of them to field errors.

use super::cause::{Cause, go_float, render_value};
use super::jsonschema::Schema;
use regex::Regex;
use serde_json::Value;
use std::collections::BTreeSet;
use std::sync::LazyLock;

/// The JSON type name kube-openapi reports for a value (`integer` vs `number` like Go's decoder).
pub fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn as_f64(v: &Value) -> Option<f64> {
    v.as_f64()
}

fn is_integral(v: &Value) -> bool {
    match v {
        Value::Number(n) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// JSON equality with numbers compared by value (`1` equals `1.0`), like Go's reflect on
/// decoded numbers after kube's normalisation.
pub fn json_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => match (x.as_i64(), y.as_i64()) {
            (Some(i), Some(j)) => i == j,
            _ => x.as_f64() == y.as_f64(),
        },
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_eq(p, q))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_eq(v, w)))
        }
        _ => a == b,
    }
}

/// Validates `value` against `schema`, appending causes with paths under `path` (kube-openapi
/// joins with `.` and indexes with `[i]`; an empty `path` means the value is the root).
pub fn validate(value: &Value, schema: &Value, path: &str, causes: &mut Vec<Cause>) {
    validate_node(value, &Schema(schema), path, false, causes);
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn name_of(path: &str) -> &str {
    if path.is_empty() { "." } else { path }
}

fn body(path: &str, rest: &str) -> String {
    format!("{} in body {rest}", name_of(path))
}

fn type_ok(value: &Value, s: &Schema) -> Option<String> {
    if s.int_or_string() {
        return match value {
            Value::String(_) => None,
            v if is_integral(v) => None,
            Value::Null if s.nullable() => None,
            _ => Some("integer,string".into()),
        };
    }
    let ty = s.ty()?;
    let ok = match (ty, value) {
        (_, Value::Null) => s.nullable(),
        ("integer", v) => is_integral(v),
        ("number", Value::Number(_)) => true,
        ("string", Value::String(_)) => true,
        ("boolean", Value::Bool(_)) => true,
        ("object", Value::Object(_)) => true,
        ("array", Value::Array(_)) => true,
        _ => false,
    };
    if ok { None } else { Some(ty.to_string()) }
}

fn validate_node(value: &Value, s: &Schema, path: &str, embedded_root: bool, out: &mut Vec<Cause>) {
    let field = path;
    if let Some(want) = type_ok(value, s) {
        let got = type_name(value);
        out.push(Cause::type_invalid(
            field,
            &Value::String(got.to_string()),
            &body(
                path,
                &format!(
                    "must be of type {want}: {}",
                    render_value(&Value::String(got.into()))
                ),
            ),
        ));
        check_enum(value, s, field, out);
        return;
    }
    if value.is_null() {
        return;
    }
    check_junctors(value, s, path, out);
    match value {
        Value::String(st) => check_string(st, value, s, path, out),
        Value::Number(_) => check_number(value, s, path, out),
        Value::Array(items) => check_array(items, value, s, path, out),
        _ => {}
    }
    check_enum(value, s, field, out);
    if value.is_object() {
        check_object(value, s, path, embedded_root, out);
    }
}

/// The field kube reports junctor failures on: they are not `*Validation` errors, so
/// apiextensions files them under the root path, which prints as `<nil>`.
pub const JUNCTOR_FIELD: &str = "<nil>";

fn junctor_cause(path: &str, msg: &str) -> Cause {
    Cause::invalid(
        JUNCTOR_FIELD,
        &Value::String(String::new()),
        &format!(
            "{} {msg}",
            render_value(&Value::String(name_of(path).to_string()))
        ),
    )
}

fn sub_causes(value: &Value, sub: &Value, path: &str) -> Vec<Cause> {
    let mut c = Vec::new();
    validate_node(value, &Schema(sub), path, false, &mut c);
    c
}

/// `allOf`, `anyOf`, `oneOf`, `not` (go-openapi's schema-props validator).
fn check_junctors(value: &Value, s: &Schema, path: &str, out: &mut Vec<Cause>) {
    let list = |k: &str| {
        s.get(k)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    };
    let all_of = list("allOf");
    if !all_of.is_empty() {
        let results: Vec<Vec<Cause>> = all_of
            .iter()
            .map(|sub| sub_causes(value, sub, path))
            .collect();
        let valid = results.iter().filter(|r| r.is_empty()).count();
        if valid != results.len() {
            let extra = if valid == 0 { ". None validated" } else { "" };
            out.push(junctor_cause(
                path,
                &format!("must validate all the schemas (allOf){extra}"),
            ));
            out.extend(results.into_iter().flatten());
        }
    }
    let any_of = list("anyOf");
    if !any_of.is_empty() {
        let results: Vec<Vec<Cause>> = any_of
            .iter()
            .map(|sub| sub_causes(value, sub, path))
            .collect();
        if !results.iter().any(Vec::is_empty) {
            out.push(junctor_cause(
                path,
                "must validate at least one schema (anyOf)",
            ));
            if let Some(best) = results.into_iter().min_by_key(Vec::len) {
                out.extend(best);
            }
        }
    }
    let one_of = list("oneOf");
    if !one_of.is_empty() {
        let results: Vec<Vec<Cause>> = one_of
            .iter()
            .map(|sub| sub_causes(value, sub, path))
            .collect();
        let valid = results.iter().filter(|r| r.is_empty()).count();
        if valid == 0 {
            out.push(junctor_cause(
                path,
                "must validate one and only one schema (oneOf). Found none valid",
            ));
            if let Some(best) = results.into_iter().min_by_key(Vec::len) {
                out.extend(best);
            }
        } else if valid > 1 {
            out.push(junctor_cause(
                path,
                &format!("must validate one and only one schema (oneOf). Found {valid} valid alternatives"),
            ));
        }
    }
    if let Some(not) = s.get("not").filter(|n| n.is_object())
        && sub_causes(value, not, path).is_empty()
    {
        out.push(junctor_cause(path, "must not validate the schema (not)"));
    }
}

fn check_enum(value: &Value, s: &Schema, field: &str, out: &mut Vec<Cause>) {
    let Some(options) = s.get("enum").and_then(Value::as_array) else {
        return;
    };
    if options.iter().any(|o| json_eq(o, value)) {
        return;
    }
    let supported: Vec<String> = options
        .iter()
        .map(|o| match o {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect();
    out.push(Cause::not_supported(field, value, &supported));
}

/// go-openapi's string validator stops at the first failure: maxLength, minLength, pattern.
/// The format validator is separate and always runs.
fn check_string(st: &str, value: &Value, s: &Schema, path: &str, out: &mut Vec<Cause>) {
    let len = st.chars().count();
    let first = if let Some(max) = s.u64("maxLength").filter(|m| len as u64 > *m) {
        Some(Cause::too_long(path, max as usize, "bytes"))
    } else if let Some(min) = s.u64("minLength").filter(|m| (len as u64) < *m) {
        Some(Cause::invalid(
            path,
            value,
            &body(path, &format!("should be at least {min} chars long")),
        ))
    } else if let Some(pattern) = s.str("pattern") {
        match super::goregex::cached(pattern) {
            Some(re) if re.is_match(st) => None,
            Some(_) => Some(Cause::invalid(
                path,
                value,
                &body(path, &format!("should match '{pattern}'")),
            )),
            None => Some(Cause::invalid(
                path,
                value,
                &format!("pattern {pattern:?} is not a valid regular expression"),
            )),
        }
    } else {
        None
    };
    out.extend(first);
    if let Some(format) = s.str("format")
        && !format_ok(format, st)
    {
        out.push(Cause::type_invalid(
            path,
            value,
            &body(
                path,
                &format!("must be of type {format}: {}", render_value(value)),
            ),
        ));
    }
}

fn is_duration(s: &str) -> bool {
    static RE: LazyLock<Regex> = LazyLock::new(|| {
        Regex::new(r"^[-+]?(\d+(\.\d*)?\s*(ns|us|µs|μs|ms|s|m|h|d|w)\s*)+$")
            .expect("constant duration regex compiles")
    });
    s == "0" || RE.is_match(s.trim())
}

fn is_hostname(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 253
        && s.trim_end_matches('.').split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        })
}

/// The formats kube keeps (`StripUnsupportedFormatsPostProcess`); others are ignored.
fn format_ok(format: &str, s: &str) -> bool {
    use std::net::IpAddr;
    match format {
        "date-time" | "datetime" => s.parse::<jiff::Timestamp>().is_ok(),
        "date" => s.parse::<jiff::civil::Date>().is_ok() && s.len() == 10,
        "byte" => {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.decode(s).is_ok()
        }
        "uuid" | "uuid3" | "uuid4" | "uuid5" => uuid::Uuid::parse_str(s).is_ok() && s.len() == 36,
        "ipv4" => s.parse::<IpAddr>().is_ok_and(|ip| ip.is_ipv4()),
        "ipv6" => s.parse::<IpAddr>().is_ok_and(|ip| ip.is_ipv6()),
        "cidr" => s.split_once('/').is_some_and(|(ip, bits)| {
            match (ip.parse::<IpAddr>(), bits.parse::<u8>()) {
                (Ok(IpAddr::V4(_)), Ok(b)) => b <= 32,
                (Ok(IpAddr::V6(_)), Ok(b)) => b <= 128,
                _ => false,
            }
        }),
        "uri" => {
            !s.is_empty()
                && !s.contains(char::is_whitespace)
                && (s.starts_with('/')
                    || s.split_once(':').is_some_and(|(scheme, _)| {
                        scheme.starts_with(|c: char| c.is_ascii_alphabetic())
                            && scheme
                                .chars()
                                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
                    }))
        }
        "email" => s
            .split_once('@')
            .is_some_and(|(user, host)| !user.is_empty() && is_hostname(host)),
        "hostname" => is_hostname(s),
        "duration" => is_duration(s),
        "mac" => {
            let parts: Vec<&str> = s.split([':', '-']).collect();
            matches!(parts.len(), 6 | 8 | 20)
                && parts
                    .iter()
                    .all(|p| p.len() == 2 && p.chars().all(|c| c.is_ascii_hexdigit()))
        }
        _ => true,
    }
}

/// go-openapi's number validator stops at the first failure: multipleOf, maximum, minimum.
fn check_number(value: &Value, s: &Schema, path: &str, out: &mut Vec<Cause>) {
    let Some(x) = as_f64(value) else {
        return;
    };
    if let Some(m) = s.f64("multipleOf").filter(|m| *m > 0.0) {
        let q = x / m;
        if (q - q.round()).abs() > 1e-9 {
            out.push(Cause::invalid(
                path,
                value,
                &body(path, &format!("should be a multiple of {}", go_float(m))),
            ));
            return;
        }
    }
    if let Some(max) = s.f64("maximum") {
        let excl = s.bool("exclusiveMaximum");
        if (excl && x >= max) || (!excl && x > max) {
            let rel = if excl {
                "less than"
            } else {
                "less than or equal to"
            };
            out.push(Cause::invalid(
                path,
                value,
                &body(path, &format!("should be {rel} {}", go_float(max))),
            ));
            return;
        }
    }
    if let Some(min) = s.f64("minimum") {
        let excl = s.bool("exclusiveMinimum");
        if (excl && x <= min) || (!excl && x < min) {
            let rel = if excl {
                "greater than"
            } else {
                "greater than or equal to"
            };
            out.push(Cause::invalid(
                path,
                value,
                &body(path, &format!("should be {rel} {}", go_float(min))),
            ));
        }
    }
}

/// Items first, then minItems, maxItems, uniqueItems (all reported), then the
/// `x-kubernetes-list-type` set/map uniqueness apiextensions checks afterwards.
fn check_array(items: &[Value], value: &Value, s: &Schema, path: &str, out: &mut Vec<Cause>) {
    if let Some(item_schema) = s.items() {
        for (i, item) in items.iter().enumerate() {
            validate_node(
                item,
                &item_schema,
                &format!("{path}[{i}]"),
                item_schema.embedded(),
                out,
            );
        }
    }
    if let Some(min) = s.u64("minItems")
        && (items.len() as u64) < min
    {
        out.push(Cause::invalid(
            path,
            value,
            &body(path, &format!("should have at least {min} items")),
        ));
    }
    if let Some(max) = s.u64("maxItems")
        && items.len() as u64 > max
    {
        out.push(Cause::too_many(path, items.len(), max as usize));
    }
    if s.bool("uniqueItems") {
        for (i, a) in items.iter().enumerate() {
            if items[..i].iter().any(|b| json_eq(a, b)) {
                out.push(Cause::duplicate(&format!("{path}[{i}]"), a));
                break;
            }
        }
    }
    if s.list_type() == Some("set") {
        for (i, a) in items.iter().enumerate() {
            if items[..i].iter().any(|b| json_eq(a, b)) {
                out.push(Cause::duplicate(&format!("{path}[{i}]"), a));
            }
        }
    }
    if s.list_type() == Some("map") {
        let keys = s.list_map_keys();
        let mut seen: Vec<Vec<Value>> = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let k: Vec<Value> = keys
                .iter()
                .map(|k| item.get(k.as_str()).cloned().unwrap_or(Value::Null))
                .collect();
            if seen
                .iter()
                .any(|o| o.iter().zip(&k).all(|(a, b)| json_eq(a, b)))
            {
                let dup = if keys.len() == 1 {
                    k.into_iter().next().unwrap_or(Value::Null)
                } else {
                    Value::Object(
                        keys.iter()
                            .cloned()
                            .zip(k)
                            .collect::<serde_json::Map<_, _>>(),
                    )
                };
                out.push(Cause::duplicate(&format!("{path}[{i}]"), &dup));
            } else {
                seen.push(k);
            }
        }
    }
}

fn check_object(value: &Value, s: &Schema, path: &str, embedded_root: bool, out: &mut Vec<Cause>) {
    let Some(obj) = value.as_object() else {
        return;
    };
    let n = obj.len() as u64;
    if let Some(max) = s.u64("maxProperties")
        && n > max
    {
        out.push(Cause::too_many(path, obj.len(), max as usize));
    }
    if let Some(min) = s.u64("minProperties")
        && n < min
    {
        out.push(Cause::invalid(
            path,
            value,
            &body(path, &format!("should have at least {min} properties")),
        ));
    }
    if embedded_root {
        for key in ["apiVersion", "kind"] {
            if obj
                .get(key)
                .and_then(Value::as_str)
                .is_none_or(str::is_empty)
            {
                out.push(Cause::required(&join(path, key), "must not be empty"));
            }
        }
    }
    let required: BTreeSet<&str> = s.required().into_iter().collect();
    let mut names: BTreeSet<&str> = required.clone();
    names.extend(obj.keys().map(String::as_str));
    for name in names {
        let child_path = join(path, name);
        match obj.get(name) {
            None => {
                if required.contains(name) {
                    out.push(Cause::required(&child_path, ""));
                }
            }
            Some(v) => {
                if let Some(ps) = s.property(name) {
                    if path.is_empty() && name == "metadata" {
                        validate_root_metadata(v, &ps, &child_path, out);
                    } else {
                        validate_node(v, &ps, &child_path, ps.embedded(), out);
                    }
                } else if let Some(ap) = s.additional_properties() {
                    validate_node(v, &ap, &child_path, ap.embedded(), out);
                }
            }
        }
    }
}

/// Root `metadata` may only constrain `name` and `generateName`.
fn validate_root_metadata(v: &Value, s: &Schema, path: &str, out: &mut Vec<Cause>) {
    for key in ["name", "generateName"] {
        if let (Some(val), Some(ps)) = (v.get(key), s.property(key)) {
            validate_node(val, &ps, &join(path, key), false, out);
        }
    }
}

/// Re-exported for the structural checks (they validate `default` values).
pub(super) fn validate_schema_node(value: &Value, s: &Schema, path: &str, out: &mut Vec<Cause>) {
    validate_node(value, s, path, s.embedded(), out);
}
