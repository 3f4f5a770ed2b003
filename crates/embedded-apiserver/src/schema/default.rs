//! Structural defaulting (apiextensions `structuraldefaulting.Default` and
//! `PruneNonNullableNullsWithoutDefaults`).

use super::jsonschema::Schema;
use serde_json::Value;

/// Applies `default`s where a property is absent (or a non-nullable `null`), recursing into
/// values including freshly defaulted ones, then drops non-nullable `null`s without default.
pub fn apply_defaults(v: &mut Value, schema: &Value) {
    default_node(v, Schema(schema));
}

fn default_node(v: &mut Value, s: Schema<'_>) {
    match v {
        Value::Object(map) => {
            for (name, ps) in s.properties_iter() {
                let Some(default) = ps.default() else {
                    continue;
                };
                let absent_or_null = match map.get(name) {
                    None => true,
                    Some(Value::Null) => !ps.nullable(),
                    Some(_) => false,
                };
                if absent_or_null {
                    map.insert(name.to_string(), default.clone());
                }
            }
            // Walk in place and drop the bad nulls afterwards (no copy of every key per write).
            let mut bad_nulls: Vec<String> = Vec::new();
            for (k, child) in map.iter_mut() {
                let Some(cs) = s.child(k) else {
                    continue;
                };
                if child.is_null() && !cs.nullable() && cs.default().is_none() {
                    bad_nulls.push(k.clone());
                    continue;
                }
                default_node(child, cs);
            }
            for k in bad_nulls {
                map.remove(&k);
            }
        }
        Value::Array(items) => {
            if let Some(is) = s.items() {
                for item in items.iter_mut() {
                    if item.is_null()
                        && !is.nullable()
                        && let Some(d) = is.default()
                    {
                        *item = d.clone();
                    }
                    default_node(item, is);
                }
            }
        }
        _ => {}
    }
}
