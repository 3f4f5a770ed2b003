//! Small helpers over `serde_json::Value` objects: metadata access, timestamps, names.

use rand::Rng;
use serde_json::{Map, Value};

pub fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    v.pointer(ptr).and_then(Value::as_str).unwrap_or_default()
}

pub fn name(obj: &Value) -> &str {
    str_at(obj, "/metadata/name")
}

pub fn namespace(obj: &Value) -> &str {
    str_at(obj, "/metadata/namespace")
}

pub fn resource_version(obj: &Value) -> &str {
    str_at(obj, "/metadata/resourceVersion")
}

pub fn uid(obj: &Value) -> &str {
    str_at(obj, "/metadata/uid")
}

/// The metadata map, created if absent or not an object (`None` only if `obj` cannot hold one).
pub fn meta_mut(obj: &mut Value) -> Option<&mut Map<String, Value>> {
    if !obj.is_object() {
        *obj = Value::Object(Map::new());
    }
    let root = obj.as_object_mut()?;
    let m = root
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !m.is_object() {
        *m = Value::Object(Map::new());
    }
    m.as_object_mut()
}

pub fn set_meta(obj: &mut Value, key: &str, value: Value) {
    if let Some(m) = meta_mut(obj) {
        m.insert(key.to_string(), value);
    }
}

pub fn remove_meta(obj: &mut Value, key: &str) -> Option<Value> {
    meta_mut(obj)?.remove(key)
}

pub fn finalizers(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|f| f.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

pub fn set_finalizers(obj: &mut Value, f: &[String]) {
    if f.is_empty() {
        remove_meta(obj, "finalizers");
    } else {
        set_meta(obj, "finalizers", Value::from(f.to_vec()));
    }
}

pub fn is_deleting(obj: &Value) -> bool {
    obj.pointer("/metadata/deletionTimestamp")
        .is_some_and(|v| !v.is_null())
}

pub fn labels(obj: &Value) -> std::collections::BTreeMap<String, String> {
    obj.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| v.as_str().map(|s| (k.clone(), s.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// RFC 3339 UTC with second precision, as Kubernetes writes `metav1.Time`.
pub fn now_rfc3339() -> String {
    jiff::Timestamp::now()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

/// `generateName` suffix: 5 characters from the apiserver's alphabet.
pub fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut rng = rand::rng();
    (0..5)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
        .collect()
}

/// Everything but `metadata` (and `status` when `without_status`): what generation tracks.
pub fn spec_part(obj: &Value, without_status: bool) -> Value {
    let mut v = obj.clone();
    if let Value::Object(m) = &mut v {
        m.remove("metadata");
        m.remove("apiVersion");
        m.remove("kind");
        if without_status {
            m.remove("status");
        }
    }
    v
}

/// Reads a `.spec.replicas`-style path.
pub fn get_dotted<'a>(obj: &'a Value, path: &str) -> Option<&'a Value> {
    let mut cur = obj;
    for seg in path.trim_start_matches('.').split('.') {
        cur = cur.get(seg)?;
    }
    Some(cur)
}

/// Writes a `.spec.replicas`-style path, creating objects on the way.
pub fn set_dotted(obj: &mut Value, path: &str, value: Value) {
    let segs: Vec<&str> = path.trim_start_matches('.').split('.').collect();
    let mut cur = obj;
    for (i, seg) in segs.iter().enumerate() {
        if !cur.is_object() {
            *cur = Value::Object(Map::new());
        }
        let Value::Object(m) = cur else { return };
        if i + 1 == segs.len() {
            m.insert(seg.to_string(), value);
            return;
        }
        cur = m
            .entry(seg.to_string())
            .or_insert_with(|| Value::Object(Map::new()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn dotted_paths_round_trip() {
        let mut v = json!({"spec": {}});
        set_dotted(&mut v, ".spec.replicas", json!(3));
        set_dotted(&mut v, ".status.a.b", json!("x"));
        assert_eq!(get_dotted(&v, ".spec.replicas"), Some(&json!(3)));
        assert_eq!(v["status"]["a"]["b"], "x");
        assert!(get_dotted(&v, ".spec.nope").is_none());
    }

    #[test]
    fn suffix_uses_the_alphabet() {
        let s = random_suffix();
        assert_eq!(s.len(), 5);
        assert!(s.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
    }

    #[test]
    fn meta_mut_repairs_non_objects() {
        let mut v = json!({"metadata": 3});
        set_meta(&mut v, "name", json!("a"));
        assert_eq!(name(&v), "a");
    }
}
