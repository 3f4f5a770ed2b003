//! The replica checks apiextensions adds for CRs with a scale subresource
//! (`customResourceValidator.ValidateScaleSpec` / `ValidateScaleStatus`): the value at
//! `specReplicasPath` / `statusReplicasPath` must be an integer in `0..=MaxInt32`. The cause's
//! field is the JSON path as written in the CRD (`.spec.replicas`, leading dot included).

use super::cause::Cause;
use serde_json::Value;

fn go_type(v: &Value) -> &'static str {
    match v {
        Value::String(_) => "string",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
        Value::Null => "<nil>",
    }
}

fn go_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

fn check_path(obj: &Value, json_path: &str, out: &mut Vec<Cause>) {
    if json_path.is_empty() {
        return;
    }
    let fields: Vec<&str> = json_path.trim_start_matches('.').split('.').collect();
    let mut cur = obj;
    for (i, f) in fields.iter().enumerate() {
        match cur.get(*f) {
            Some(next) => cur = next,
            None => return,
        }
        if i + 1 < fields.len() && !cur.is_object() {
            let walked = format!(".{}", fields[..=i].join("."));
            out.push(Cause::invalid(
                json_path,
                &Value::from(0),
                &format!(
                    "{walked} accessor error: {} is of the type {}, expected map[string]interface{{}}",
                    go_value(cur),
                    go_type(cur)
                ),
            ));
            return;
        }
    }
    let Some(n) = cur.as_i64().filter(|_| !cur.is_f64()) else {
        if cur.is_null() {
            return;
        }
        out.push(Cause::invalid(
            json_path,
            &Value::from(0),
            &format!(
                ".{} accessor error: {} is of the type {}, expected int64",
                fields.join("."),
                go_value(cur),
                go_type(cur)
            ),
        ));
        return;
    };
    if n < 0 {
        out.push(Cause::invalid(
            json_path,
            &Value::from(n),
            "should be a non-negative integer",
        ));
    } else if n > i64::from(i32::MAX) {
        out.push(Cause::invalid(
            json_path,
            &Value::from(n),
            &format!("should be less than or equal to {}", i32::MAX),
        ));
    }
}

/// Causes for the scale replica paths of a CR (pass the CRD's `subresources.scale` paths).
pub fn validate_scale_replicas(
    obj: &Value,
    spec_replicas_path: &str,
    status_replicas_path: &str,
) -> Vec<Cause> {
    let mut out = Vec::new();
    check_path(obj, spec_replicas_path, &mut out);
    check_path(obj, status_replicas_path, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn replicas_must_be_non_negative_int32() {
        let ok = json!({"spec": {"replicas": 3}, "status": {"replicas": 2}});
        assert!(validate_scale_replicas(&ok, ".spec.replicas", ".status.replicas").is_empty());
        assert!(
            validate_scale_replicas(&json!({}), ".spec.replicas", ".status.replicas").is_empty()
        );
        let neg = validate_scale_replicas(
            &json!({"spec": {"replicas": -1}}),
            ".spec.replicas",
            ".status.replicas",
        );
        assert_eq!(
            neg[0].error_string(),
            ".spec.replicas: Invalid value: -1: should be a non-negative integer"
        );
        let big = validate_scale_replicas(
            &json!({"spec": {"replicas": 3_000_000_000u64}}),
            ".spec.replicas",
            "",
        );
        assert!(
            big[0]
                .message
                .ends_with("should be less than or equal to 2147483647")
        );
        let s = validate_scale_replicas(
            &json!({"spec": {"replicas": "three"}}),
            ".spec.replicas",
            "",
        );
        assert_eq!(
            s[0].error_string(),
            ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: three is of the type string, expected int64"
        );
        let nested = validate_scale_replicas(&json!({"spec": "x"}), ".spec.replicas", "");
        assert_eq!(nested.len(), 1);
    }
}
