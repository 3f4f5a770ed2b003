//! Small helpers over unstructured objects: dotted-path access and changed-path diffs.

use serde_json::Value;

/// The value at a dotted path (`status.initialization.provisioned`), if present.
pub fn get<'a>(v: &'a Value, path: &str) -> Option<&'a Value> {
    path.split('.')
        .filter(|s| !s.is_empty())
        .try_fold(v, |cur, key| cur.get(key))
}

pub fn get_bool(v: &Value, path: &str) -> Option<bool> {
    get(v, path).and_then(Value::as_bool)
}

pub fn get_str<'a>(v: &'a Value, path: &str) -> Option<&'a str> {
    get(v, path).and_then(Value::as_str)
}

/// True when the path holds a non-empty string.
pub fn has_text(v: &Value, path: &str) -> bool {
    get_str(v, path).is_some_and(|s| !s.is_empty())
}

/// Sets a dotted path, creating intermediate objects.
pub fn set(v: &mut Value, path: &str, value: Value) {
    let keys: Vec<&str> = path.split('.').filter(|s| !s.is_empty()).collect();
    let Some((last, parents)) = keys.split_last() else {
        return;
    };
    let mut cur = v;
    for key in parents {
        if !cur.get(*key).is_some_and(Value::is_object) {
            if let Some(obj) = cur.as_object_mut() {
                obj.insert((*key).to_string(), Value::Object(Default::default()));
            } else {
                return;
            }
        }
        let Some(next) = cur.get_mut(*key) else {
            return;
        };
        cur = next;
    }
    if let Some(obj) = cur.as_object_mut() {
        obj.insert((*last).to_string(), value);
    }
}

/// The finalizers of an object.
pub fn finalizers(v: &Value) -> Vec<String> {
    get(v, "metadata.finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The condition of `type` in `status.conditions`, if any.
pub fn condition<'a>(v: &'a Value, type_: &str) -> Option<&'a Value> {
    get(v, "status.conditions")
        .and_then(Value::as_array)?
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(type_))
}

/// The paths whose values differ between `old` and `new` (objects are walked, other values
/// compared whole). Bookkeeping fields (`metadata.resourceVersion`, `metadata.managedFields`,
/// `metadata.generation`) are ignored.
pub fn changed_paths(old: Option<&Value>, new: &Value) -> Vec<String> {
    let mut out = Vec::new();
    diff("", old.unwrap_or(&Value::Null), new, &mut out);
    out.retain(|p| !is_bookkeeping(p));
    out
}

fn is_bookkeeping(path: &str) -> bool {
    path == "metadata.resourceVersion"
        || path == "metadata.generation"
        || path.starts_with("metadata.managedFields")
}

fn diff(prefix: &str, old: &Value, new: &Value, out: &mut Vec<String>) {
    match (old, new) {
        (Value::Object(a), Value::Object(b)) => {
            let mut keys: Vec<&String> = a.keys().chain(b.keys()).collect();
            keys.sort();
            keys.dedup();
            for k in keys {
                let p = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                let null = Value::Null;
                diff(
                    &p,
                    a.get(k).unwrap_or(&null),
                    b.get(k).unwrap_or(&null),
                    out,
                );
            }
        }
        (Value::Null, Value::Object(b)) if !prefix.is_empty() || !b.is_empty() => {
            let empty = Value::Object(Default::default());
            diff(prefix, &empty, new, out);
        }
        (a, b) if a != b => out.push(prefix.to_string()),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn get_and_set_paths() {
        let mut v = json!({"status": {"initialization": {"provisioned": true}}});
        assert_eq!(
            get_bool(&v, "status.initialization.provisioned"),
            Some(true)
        );
        assert_eq!(get(&v, "status.ready"), None);
        set(&mut v, "spec.providerID", json!("mock://x"));
        assert!(has_text(&v, "spec.providerID"));
        assert!(!has_text(&v, "spec.missing"));
    }

    #[test]
    fn changed_paths_lists_leaves_and_ignores_bookkeeping() {
        let a = json!({"metadata": {"resourceVersion": "1", "finalizers": []}, "status": {"ready": false}});
        let b = json!({"metadata": {"resourceVersion": "2", "finalizers": ["f"]},
                       "status": {"ready": true, "initialization": {"provisioned": true}}});
        assert_eq!(
            changed_paths(Some(&a), &b),
            vec![
                "metadata.finalizers",
                "status.initialization.provisioned",
                "status.ready"
            ]
        );
        assert_eq!(changed_paths(Some(&b), &b), Vec::<String>::new());
        assert!(changed_paths(None, &b).contains(&"status.ready".to_string()));
    }

    #[test]
    fn condition_lookup() {
        let v = json!({"status": {"conditions": [{"type": "Paused", "status": "True"}]}});
        assert_eq!(condition(&v, "Paused").unwrap()["status"], "True");
        assert!(condition(&v, "Ready").is_none());
    }
}
