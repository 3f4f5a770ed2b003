//! Field errors as kube-apiserver reports them (`field.Error` → `metav1.StatusCause`), and the
//! `Kind.group "name" is invalid: …` message of a 422.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One `metav1.StatusCause`: `reason` is the field error type (`FieldValueRequired`, …),
/// `message` the error body (`Required value`, `Invalid value: …`), `field` the path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Cause {
    pub reason: String,
    pub message: String,
    pub field: String,
}

/// `field.ErrorType` reasons.
pub mod reason {
    pub const REQUIRED: &str = "FieldValueRequired";
    pub const INVALID: &str = "FieldValueInvalid";
    pub const FORBIDDEN: &str = "FieldValueForbidden";
    pub const NOT_SUPPORTED: &str = "FieldValueNotSupported";
    pub const TYPE_INVALID: &str = "FieldValueTypeInvalid";
    pub const DUPLICATE: &str = "FieldValueDuplicate";
    pub const TOO_LONG: &str = "FieldValueTooLong";
    pub const TOO_MANY: &str = "FieldValueTooMany";
}

fn with_detail(body: String, detail: &str) -> String {
    if detail.is_empty() {
        body
    } else {
        format!("{body}: {detail}")
    }
}

/// How kube prints a bad value inside `Invalid value: …` (`field.Error.ErrorBody`): strings
/// quoted, numbers and booleans bare, `nil` as `"null"`, maps and lists with Go's `%#v`.
pub fn render_value(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        Value::Number(n) => number_text(n),
        Value::Bool(b) => b.to_string(),
        Value::Null => go_quote("null"),
        other => go_json(other),
    }
}

fn number_text(n: &serde_json::Number) -> String {
    match (n.as_i64(), n.as_u64(), n.as_f64()) {
        (Some(i), _, _) => i.to_string(),
        (None, Some(u), _) => u.to_string(),
        (_, _, Some(f)) => go_float(f),
        _ => n.to_string(),
    }
}

/// A complex value as kube 1.36's field errors render it: `json.Marshal` of the decoded value
/// (`{"a":1}`, `["x"]`; map keys sorted, `<`, `>`, `&` escaped as Go escapes them).
fn go_json(v: &Value) -> String {
    match v {
        Value::Null => "null".to_string(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match (n.as_i64(), n.as_u64(), n.as_f64()) {
            (Some(i), _, _) => i.to_string(),
            (None, Some(u), _) => u.to_string(),
            (_, _, Some(f)) => go_json_float(f),
            _ => n.to_string(),
        },
        Value::String(s) => serde_json::to_string(s)
            .unwrap_or_default()
            .replace('<', "\\u003c")
            .replace('>', "\\u003e")
            .replace('&', "\\u0026"),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(go_json).collect::<Vec<_>>().join(",")
        ),
        Value::Object(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}:{}", go_json(&Value::String(k.clone())), go_json(v)))
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

/// encoding/json's float64: shortest `f` notation, `e` below 1e-6 and from 1e21.
fn go_json_float(f: f64) -> String {
    let a = f.abs();
    if a != 0.0 && !(1e-6..1e21).contains(&a) {
        let s = format!("{f:e}");
        // Go writes e-07 as e-07 and e21 as e+21.
        match s.split_once('e') {
            Some((m, e)) => {
                let (sign, digits) = match e.strip_prefix('-') {
                    Some(d) => ("-", d),
                    None => ("+", e),
                };
                let digits = if digits.len() < 2 {
                    format!("0{digits}")
                } else {
                    digits.to_string()
                };
                format!("{m}e{sign}{digits}")
            }
            None => s,
        }
    } else {
        let s = format!("{f}");
        s.strip_suffix(".0").map(str::to_string).unwrap_or(s)
    }
}

/// Go's `%q` for the common cases (JSON string escaping is the same for printable text).
pub fn go_quote(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// Go's `%v` for a float64 (`strconv.FormatFloat(f, 'g', -1, 64)`): shortest digits, with
/// an exponent when it is below -4 or at least 6 (`0`, `1.5`, `100000`, `1e+06`,
/// `2.147483647e+09`), which is how kube prints schema bounds.
pub fn go_float(f: f64) -> String {
    if f == 0.0 {
        return "0".to_string();
    }
    if f.is_nan() {
        return "NaN".to_string();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.to_string();
    }
    let sci = format!("{:e}", f.abs());
    let (mant, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mant.chars().filter(char::is_ascii_digit).collect();
    let sign = if f < 0.0 { "-" } else { "" };
    if !(-4..6).contains(&exp) {
        let (first, rest) = digits.split_at(1);
        let frac = if rest.is_empty() {
            String::new()
        } else {
            format!(".{rest}")
        };
        let esign = if exp < 0 { '-' } else { '+' };
        return format!("{sign}{first}{frac}e{esign}{:02}", exp.abs());
    }
    let dp = exp + 1;
    let body = if dp <= 0 {
        format!("0.{}{digits}", "0".repeat((-dp) as usize))
    } else if dp as usize >= digits.len() {
        format!("{digits}{}", "0".repeat(dp as usize - digits.len()))
    } else {
        let (int, frac) = digits.split_at(dp as usize);
        format!("{int}.{frac}")
    };
    format!("{sign}{body}")
}

impl Cause {
    fn new(reason: &str, message: String, field: &str) -> Self {
        Cause {
            reason: reason.to_string(),
            message,
            field: field.to_string(),
        }
    }

    /// `field.Required`.
    pub fn required(field: &str, detail: &str) -> Self {
        Self::new(
            reason::REQUIRED,
            with_detail("Required value".into(), detail),
            field,
        )
    }

    /// `field.Invalid`.
    pub fn invalid(field: &str, value: &Value, detail: &str) -> Self {
        Self::new(
            reason::INVALID,
            with_detail(format!("Invalid value: {}", render_value(value)), detail),
            field,
        )
    }

    /// `field.TypeInvalid`.
    pub fn type_invalid(field: &str, value: &Value, detail: &str) -> Self {
        Self::new(
            reason::TYPE_INVALID,
            with_detail(format!("Invalid value: {}", render_value(value)), detail),
            field,
        )
    }

    /// `field.Forbidden`.
    pub fn forbidden(field: &str, detail: &str) -> Self {
        Self::new(
            reason::FORBIDDEN,
            with_detail("Forbidden".into(), detail),
            field,
        )
    }

    /// `field.NotSupported` with the list of supported values.
    pub fn not_supported(field: &str, value: &Value, supported: &[String]) -> Self {
        let detail = if supported.is_empty() {
            String::new()
        } else {
            format!(
                "supported values: {}",
                supported
                    .iter()
                    .map(|s| go_quote(s))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        };
        Self::new(
            reason::NOT_SUPPORTED,
            with_detail(
                format!("Unsupported value: {}", render_value(value)),
                &detail,
            ),
            field,
        )
    }

    /// `field.Duplicate`.
    pub fn duplicate(field: &str, value: &Value) -> Self {
        Self::new(
            reason::DUPLICATE,
            format!("Duplicate value: {}", render_value(value)),
            field,
        )
    }

    /// `field.TooLong` (value omitted, like kube).
    pub fn too_long(field: &str, max: usize, unit: &str) -> Self {
        Self::new(
            reason::TOO_LONG,
            format!("Too long: may not be more than {max} {unit}"),
            field,
        )
    }

    /// `field.TooLong` for a byte budget (`Too long: must have at most N bytes`).
    pub fn new_too_long_bytes(field: &str, max: usize) -> Self {
        Self::new(
            reason::TOO_LONG,
            format!("Too long: must have at most {max} bytes"),
            field,
        )
    }

    /// `field.TooMany`.
    pub fn too_many(field: &str, actual: usize, max: usize) -> Self {
        Self::new(
            reason::TOO_MANY,
            format!("Too many: {actual}: must have at most {max} items"),
            field,
        )
    }

    /// `field.Error.Error()`: `field: body` (just the body when the field is empty).
    pub fn error_string(&self) -> String {
        if self.field.is_empty() {
            self.message.clone()
        } else {
            format!("{}: {}", self.field, self.message)
        }
    }
}

/// kube's 422 message: `Widget.example.com "w1" is invalid: [a: …, b: …]` (no brackets for a
/// single cause; duplicate messages collapse like `ToAggregate`). An empty group gives `Kind`.
pub fn invalid_message(kind: &str, group: &str, name: &str, causes: &[Cause]) -> String {
    let qualified = if group.is_empty() {
        kind.to_string()
    } else {
        format!("{kind}.{group}")
    };
    let mut msgs: Vec<String> = Vec::new();
    for c in causes {
        let s = c.error_string();
        if !msgs.contains(&s) {
            msgs.push(s);
        }
    }
    let agg = match msgs.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    format!("{qualified} {} is invalid: {agg}", go_quote(name))
}

/// Builds kube `field.Path` strings: `.child`, `[key]`, `[index]`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldPath(String);

impl FieldPath {
    /// A path starting at `root` (may be empty).
    pub fn new(root: &str) -> Self {
        FieldPath(root.to_string())
    }

    /// `.name` (no dot at the start).
    pub fn child(&self, name: &str) -> Self {
        if self.0.is_empty() {
            FieldPath(name.to_string())
        } else {
            FieldPath(format!("{}.{name}", self.0))
        }
    }

    /// `[key]`.
    pub fn key(&self, key: &str) -> Self {
        FieldPath(format!("{}[{key}]", self.0))
    }

    /// `[i]`.
    pub fn index(&self, i: usize) -> Self {
        FieldPath(format!("{}[{i}]", self.0))
    }

    /// The rendered path.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn bodies_match_kube() {
        assert_eq!(
            Cause::required("spec.size", "").error_string(),
            "spec.size: Required value"
        );
        assert_eq!(
            Cause::type_invalid(
                "spec.replicas",
                &json!("string"),
                "spec.replicas in body must be of type integer: \"string\""
            )
            .error_string(),
            "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\""
        );
        assert_eq!(
            Cause::not_supported(
                "spec.size",
                &json!("huge"),
                &["small".into(), "large".into()]
            )
            .message,
            "Unsupported value: \"huge\": supported values: \"small\", \"large\""
        );
        assert_eq!(
            Cause::invalid("x", &json!(-1), "d").message,
            "Invalid value: -1: d"
        );
        assert_eq!(Cause::forbidden("x", "").message, "Forbidden");
        assert_eq!(
            Cause::too_many("x", 5, 3).message,
            "Too many: 5: must have at most 3 items"
        );
    }

    #[test]
    fn cause_serialises_like_status_cause() {
        let v = serde_json::to_value(Cause::required("spec.size", "")).unwrap();
        assert_eq!(
            v,
            json!({"reason": "FieldValueRequired", "message": "Required value", "field": "spec.size"})
        );
    }

    #[test]
    fn invalid_message_brackets_only_for_many() {
        let a = Cause::type_invalid(
            "spec.replicas",
            &json!("string"),
            "spec.replicas in body must be of type integer: \"string\"",
        );
        let b = Cause::required("spec.size", "");
        assert_eq!(
            invalid_message("Widget", "example.com", "w1", &[a.clone(), b.clone()]),
            "Widget.example.com \"w1\" is invalid: [spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\", spec.size: Required value]"
        );
        assert_eq!(
            invalid_message("Widget", "example.com", "w1", &[b.clone(), b.clone()]),
            "Widget.example.com \"w1\" is invalid: spec.size: Required value"
        );
        assert_eq!(
            invalid_message("ConfigMap", "", "c", &[b]),
            "ConfigMap \"c\" is invalid: spec.size: Required value"
        );
    }

    #[test]
    fn paths_and_floats() {
        let p = FieldPath::new("spec.versions[0].schema.openAPIV3Schema");
        assert_eq!(
            p.child("properties").key("spec").child("type").as_str(),
            "spec.versions[0].schema.openAPIV3Schema.properties[spec].type"
        );
        assert_eq!(FieldPath::new("").child("a").index(2).as_str(), "a[2]");
        assert_eq!(go_float(0.0), "0");
        assert_eq!(render_value(&json!(null)), "\"null\"");
        assert_eq!(
            render_value(&json!({"a": 1, "b": ["x", 1.5, null, 1e6, "<&>"]})),
            "{\"a\":1,\"b\":[\"x\",1.5,null,1000000,\"\\u003c\\u0026\\u003e\"]}"
        );
        assert_eq!(go_float(1.5), "1.5");
        for (f, want) in [
            (100000.0, "100000"),
            (1e6, "1e+06"),
            (2147483647.0, "2.147483647e+09"),
            (0.0001, "0.0001"),
            (0.00001, "1e-05"),
            (-2.5, "-2.5"),
            (123456.5, "123456.5"),
            (1e21, "1e+21"),
        ] {
            assert_eq!(go_float(f), want, "{f}");
        }
    }
}
