//! `x-kubernetes-validations` enforcement: walks object and schema together, evaluates each
//! rule with `self` (and `oldSelf` on updates) and reports failures like kube's CEL validator.
//! Rules outside the interpreter's subset (or that do not parse) are skipped, never guessed.

use super::cause::{Cause, reason};
use super::cel::{self, CelError, Env};
use super::jsonschema::Schema;
use super::validate::{JUNCTOR_FIELD, json_eq};
use serde_json::Value;

/// kube's message when CEL rules are skipped because of type/enum errors.
pub const RULES_NOT_CHECKED: &str = "some validation rules were not checked because the object was invalid; correct the existing errors to complete validation";

/// Whether any node of the schema carries `x-kubernetes-validations`.
pub fn has_rules(schema: &Value) -> bool {
    match schema {
        Value::Object(m) => {
            m.get("x-kubernetes-validations")
                .and_then(Value::as_array)
                .is_some_and(|a| !a.is_empty())
                || m.iter()
                    .filter(|(k, _)| *k != "default" && *k != "enum" && *k != "example")
                    .any(|(_, v)| has_rules(v))
        }
        Value::Array(a) => a.iter().any(has_rules),
        _ => false,
    }
}

/// Evaluates every rule reachable in `value` (paths as kube-openapi prints them).
pub fn check(value: &Value, old: Option<&Value>, schema: &Value, out: &mut Vec<Cause>) {
    walk(value, old, Schema(schema), "", out);
}

fn join(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

fn walk(value: &Value, old: Option<&Value>, s: Schema<'_>, path: &str, out: &mut Vec<Cause>) {
    if value.is_null() {
        return;
    }
    if let Some(rules) = s.get("x-kubernetes-validations").and_then(Value::as_array) {
        for rule in rules {
            check_rule(rule, value, old, s, path, out);
        }
    }
    match value {
        Value::Object(map) => {
            for (k, v) in map {
                let Some(cs) = s.child(k) else {
                    continue;
                };
                let old_child = old.and_then(|o| o.get(k));
                walk(v, old_child, cs, &join(path, k), out);
            }
        }
        Value::Array(items) => {
            let Some(is) = s.items() else {
                return;
            };
            let keys = if s.list_type() == Some("map") {
                s.list_map_keys()
            } else {
                Vec::new()
            };
            for (i, item) in items.iter().enumerate() {
                let old_item = correlate(item, old, &keys, s.list_type());
                walk(item, old_item, is, &format!("{path}[{i}]"), out);
            }
        }
        _ => {}
    }
}

/// The old element matching `item`: by map keys for `map` lists, by value for `set` lists.
fn correlate<'a>(
    item: &Value,
    old: Option<&'a Value>,
    keys: &[String],
    list_type: Option<&str>,
) -> Option<&'a Value> {
    let old_items = old?.as_array()?;
    match list_type {
        Some("map") if !keys.is_empty() => old_items.iter().find(|o| {
            keys.iter().all(|k| {
                o.get(k.as_str())
                    .zip(item.get(k.as_str()))
                    .is_some_and(|(a, b)| json_eq(a, b))
            })
        }),
        Some("set") => old_items.iter().find(|o| json_eq(o, item)),
        _ => None,
    }
}

fn check_rule(
    rule: &Value,
    value: &Value,
    old: Option<&Value>,
    s: Schema<'_>,
    path: &str,
    out: &mut Vec<Cause>,
) {
    let Some(src) = rule.get("rule").and_then(Value::as_str) else {
        return;
    };
    let Ok(expr) = cel::parse(src) else {
        return;
    };
    let transition = cel::uses_old_self(&expr);
    let optional_old_self = rule.get("optionalOldSelf").and_then(Value::as_bool) == Some(true);
    if transition && old.is_none() && !optional_old_self {
        return;
    }
    let mut env = Env::from([("self".to_string(), value.clone())]);
    if let Some(o) = old {
        env.insert("oldSelf".to_string(), o.clone());
    } else if transition {
        // optionalOldSelf without an old value: oldSelf is an empty optional, which the
        // subset cannot express.
        return;
    }
    let field = {
        let base = match rule.get("fieldPath").and_then(Value::as_str).map(str::trim) {
            Some(fp) if !fp.is_empty() => {
                let fp = fp.trim_start_matches('.');
                join(path, fp)
            }
            _ => path.to_string(),
        };
        if base.is_empty() {
            JUNCTOR_FIELD.to_string()
        } else {
            base
        }
    };
    let ty = Value::String(s.ty().unwrap_or("object").to_string());
    let message = match rule.get("message").and_then(Value::as_str).map(str::trim) {
        Some(m) if !m.is_empty() => m.to_string(),
        _ => {
            let from_expr = rule
                .get("messageExpression")
                .and_then(Value::as_str)
                .and_then(|me| cel::parse(me).ok())
                .and_then(|e| cel::eval(&e, &env).ok())
                .and_then(|v| v.as_str().map(str::to_string))
                .filter(|m| !m.trim().is_empty());
            from_expr.unwrap_or_else(|| format!("failed rule: {}", src.trim()))
        }
    };
    match cel::eval(&expr, &env) {
        Ok(Value::Bool(true)) => {}
        Ok(Value::Bool(false)) => {
            let r = rule
                .get("reason")
                .and_then(Value::as_str)
                .unwrap_or(reason::INVALID);
            out.push(match r {
                reason::REQUIRED => Cause::required(&field, &message),
                reason::FORBIDDEN => Cause::forbidden(&field, &message),
                reason::DUPLICATE => Cause::duplicate(&field, &ty),
                _ => Cause::invalid(&field, &ty, &message),
            });
        }
        Err(CelError::Eval(e)) => {
            // kube: runtime errors name the rule (its message when it has one).
            let rule_text = match rule.get("message").and_then(Value::as_str).map(str::trim) {
                Some(m) if !m.is_empty() => m.to_string(),
                _ => src.trim().to_string(),
            };
            let msg = if e.starts_with("no such overload") {
                format!(
                    "'{e}': call arguments did not match a supported operator, function or macro signature for rule: {rule_text}"
                )
            } else {
                format!("{e} evaluating rule: {rule_text}")
            };
            out.push(Cause::invalid(&field, &ty, &msg));
        }
        Ok(_) | Err(_) => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"spec": {"type": "object",
        "x-kubernetes-validations": [
            {"rule": "!has(self.a) || !has(self.b)", "message": "a and b are mutually exclusive"},
            {"rule": "self.quantity().isZero()"}
        ],
        "properties": {
            "id": {"type": "string", "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "id is immutable"}]},
            "a": {"type": "string"},
            "b": {"type": "string", "x-kubernetes-validations": [{"rule": "self.startsWith('x')", "reason": "FieldValueForbidden"}]},
            "nets": {"type": "array", "items": {"type": "string"},
                "x-kubernetes-validations": [{"rule": "self.all(i, isCIDR(i))", "fieldPath": ".x"}]}
        }}}})
    }

    fn fields(c: &[Cause]) -> Vec<(String, String, String)> {
        c.iter()
            .map(|c| (c.field.clone(), c.reason.clone(), c.message.clone()))
            .collect()
    }

    #[test]
    fn rules_report_kube_style_causes() {
        let mut out = Vec::new();
        check(
            &json!({"spec": {"a": "1", "b": "y", "nets": ["nope"]}}),
            None,
            &schema(),
            &mut out,
        );
        assert_eq!(
            fields(&out),
            vec![
                (
                    "spec".into(),
                    reason::INVALID.into(),
                    "Invalid value: \"object\": a and b are mutually exclusive".into()
                ),
                (
                    "spec.b".into(),
                    reason::FORBIDDEN.into(),
                    "Forbidden: failed rule: self.startsWith('x')".into()
                ),
                (
                    "spec.nets.x".into(),
                    reason::INVALID.into(),
                    "Invalid value: \"array\": failed rule: self.all(i, isCIDR(i))".into()
                ),
            ]
        );
    }

    #[test]
    fn transition_rules_need_an_old_value() {
        let mut out = Vec::new();
        check(&json!({"spec": {"id": "1"}}), None, &schema(), &mut out);
        assert!(out.is_empty());
        check(
            &json!({"spec": {"id": "2"}}),
            Some(&json!({"spec": {"id": "1"}})),
            &schema(),
            &mut out,
        );
        assert_eq!(out.len(), 1);
        assert_eq!(
            out[0].error_string(),
            "spec.id: Invalid value: \"string\": id is immutable"
        );
    }

    #[test]
    fn map_lists_correlate_by_key() {
        let s = json!({"type": "object", "properties": {"l": {"type": "array", "x-kubernetes-list-type": "map",
            "x-kubernetes-list-map-keys": ["name"],
            "items": {"type": "object", "properties": {"name": {"type": "string"}, "v": {"type": "string",
                "x-kubernetes-validations": [{"rule": "self == oldSelf"}]}}}}}});
        let old = json!({"l": [{"name": "a", "v": "1"}, {"name": "b", "v": "2"}]});
        let mut out = Vec::new();
        check(
            &json!({"l": [{"name": "b", "v": "2"}, {"name": "a", "v": "1"}, {"name": "c", "v": "3"}]}),
            Some(&old),
            &s,
            &mut out,
        );
        assert!(out.is_empty(), "{out:?}");
        check(
            &json!({"l": [{"name": "a", "v": "9"}]}),
            Some(&old),
            &s,
            &mut out,
        );
        assert_eq!(out[0].field, "l[0].v");
    }

    #[test]
    fn evaluation_errors_are_reported_and_root_rules_use_nil() {
        let s =
            json!({"type": "object", "x-kubernetes-validations": [{"rule": "self.spec.x == 1"}]});
        let mut out = Vec::new();
        check(&json!({"spec": {}}), None, &s, &mut out);
        assert_eq!(out[0].field, JUNCTOR_FIELD);
        assert_eq!(
            out[0].message,
            "Invalid value: \"object\": no such key: x evaluating rule: self.spec.x == 1"
        );
        assert!(has_rules(&s));
        assert!(!has_rules(
            &json!({"type": "object", "default": {"x-kubernetes-validations": [1]}})
        ));
    }
}
