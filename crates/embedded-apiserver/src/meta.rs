//! Small helpers over `serde_json::Value` objects: metadata access, timestamps, names.

use rand::Rng;
use serde_json::{Map, Value};

/// `Value::pointer` without its per-segment allocations (serde_json unescapes every token into a
/// new String): plain object paths are walked in place; escapes (`~`) and arrays take the
/// serde_json path, so the result is always the same as `v.pointer(ptr)`.
pub fn at<'a>(v: &'a Value, ptr: &str) -> Option<&'a Value> {
    if ptr.contains('~') {
        return v.pointer(ptr);
    }
    let Some(rest) = ptr.strip_prefix('/') else {
        return v.pointer(ptr);
    };
    let mut cur = v;
    for token in rest.split('/') {
        cur = match cur {
            Value::Object(m) => m.get(token)?,
            Value::Array(_) => return v.pointer(ptr),
            _ => return None,
        };
    }
    Some(cur)
}

pub fn str_at<'a>(v: &'a Value, ptr: &str) -> &'a str {
    at(v, ptr).and_then(Value::as_str).unwrap_or_default()
}

/// The string items of the array at `ptr` (non-strings skipped; absent → empty).
pub fn strings_at(v: &Value, ptr: &str) -> Vec<String> {
    at(v, ptr)
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
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
    // `entry` would allocate the key on every call; the metadata map almost always exists.
    if !root.get("metadata").is_some_and(Value::is_object) {
        root.insert("metadata".into(), Value::Object(Map::new()));
    }
    root.get_mut("metadata").and_then(Value::as_object_mut)
}

pub fn set_meta(obj: &mut Value, key: &str, value: Value) {
    if let Some(m) = meta_mut(obj) {
        match m.get_mut(key) {
            Some(slot) => *slot = value,
            None => {
                m.insert(key.to_string(), value);
            }
        }
    }
}

pub fn remove_meta(obj: &mut Value, key: &str) -> Option<Value> {
    meta_mut(obj)?.remove(key)
}

pub fn finalizers(obj: &Value) -> Vec<String> {
    at(obj, "/metadata/finalizers")
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
    at(obj, "/metadata/deletionTimestamp").is_some_and(|v| !v.is_null())
}

pub fn labels(obj: &Value) -> std::collections::BTreeMap<String, String> {
    at(obj, "/metadata/labels")
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
    let frozen = REPLAY.with_borrow(|r| r.as_ref().map(|r| r.second));
    rfc3339_at_second(frozen.unwrap_or_else(|| jiff::Timestamp::now().as_second()))
}

/// The clock and the random values of a write that is replayed until its webhook answers are
/// known (webhook::oracle): every replay sees the same time, uids and generated names.
#[derive(Debug)]
pub struct ReplaySeed {
    second: i64,
    values: Vec<String>,
    next: usize,
}

impl ReplaySeed {
    pub fn new() -> Self {
        Self {
            second: jiff::Timestamp::now().as_second(),
            values: Vec::new(),
            next: 0,
        }
    }
}

impl Default for ReplaySeed {
    fn default() -> Self {
        Self::new()
    }
}

thread_local! {
    static REPLAY: std::cell::RefCell<Option<ReplaySeed>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with `seed` as this thread's clock and source of uids and generated names.
pub fn with_replay<R>(seed: &mut ReplaySeed, f: impl FnOnce() -> R) -> R {
    struct Restore<'a>(&'a mut ReplaySeed);
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            if let Some(s) = REPLAY.with_borrow_mut(Option::take) {
                self.0.values = s.values;
            }
        }
    }
    let installed = ReplaySeed {
        second: seed.second,
        values: std::mem::take(&mut seed.values),
        next: 0,
    };
    REPLAY.with_borrow_mut(|r| *r = Some(installed));
    let _restore = Restore(seed);
    f()
}

/// A random value, repeated identically by every replay of a write.
fn replayed(generate: impl FnOnce() -> String) -> String {
    let known = REPLAY.with_borrow_mut(|r| {
        let r = r.as_mut()?;
        let v = r.values.get(r.next).cloned();
        if v.is_some() {
            r.next += 1;
        }
        Some(v)
    });
    match known {
        None => generate(),
        Some(Some(v)) => v,
        Some(None) => {
            let v = generate();
            REPLAY.with_borrow_mut(|r| {
                if let Some(r) = r.as_mut() {
                    r.values.push(v.clone());
                    r.next += 1;
                }
            });
            v
        }
    }
}

/// A fresh object uid.
pub fn new_uid() -> String {
    replayed(|| uuid::Uuid::new_v4().to_string())
}

/// RFC 3339 of a Unix second, formatted once per second per thread (every write stamps times).
fn rfc3339_at_second(second: i64) -> String {
    thread_local! {
        static LAST: std::cell::RefCell<(i64, String)> =
            const { std::cell::RefCell::new((i64::MIN, String::new())) };
    }
    LAST.with_borrow_mut(|(at, text)| {
        if *at != second || text.is_empty() {
            let ts = jiff::Timestamp::from_second(second).unwrap_or(jiff::Timestamp::UNIX_EPOCH);
            *text = ts.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
            *at = second;
        }
        text.clone()
    })
}

/// `generateName` suffix: 5 characters from the apiserver's alphabet.
pub fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    replayed(|| {
        let mut rng = rand::rng();
        (0..5)
            .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())] as char)
            .collect()
    })
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

/// Whether two objects have the same [`spec_part`], compared in place (no clones: this runs on
/// every update of a generation-tracking object).
pub fn same_spec_part(a: &Value, b: &Value, without_status: bool) -> bool {
    let ignored = |k: &str| {
        matches!(k, "metadata" | "apiVersion" | "kind") || (without_status && k == "status")
    };
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let kept = |m: &Map<String, Value>| m.keys().filter(|k| !ignored(k)).count();
            kept(x) == kept(y)
                && x.iter()
                    .filter(|(k, _)| !ignored(k))
                    .all(|(k, v)| y.get(k) == Some(v))
        }
        _ => a == b,
    }
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
    fn rfc3339_per_second_cache() {
        assert_eq!(rfc3339_at_second(0), "1970-01-01T00:00:00Z");
        assert_eq!(rfc3339_at_second(86_401), "1970-01-02T00:00:01Z");
        assert_eq!(rfc3339_at_second(86_401), "1970-01-02T00:00:01Z");
        assert_eq!(rfc3339_at_second(0), "1970-01-01T00:00:00Z");
        assert_eq!(now_rfc3339().len(), 20);
    }

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
    fn at_agrees_with_pointer() {
        let v = json!({"metadata": {"name": "n", "a/b": 1, "m~n": 2, "": {"x": 3}},
            "list": [{"k": "v"}, 7], "s": "str"});
        for p in [
            "",
            "/",
            "/metadata",
            "/metadata/name",
            "/metadata/a~1b",
            "/metadata/m~0n",
            "/metadata//x",
            "/list/0/k",
            "/list/1",
            "/list/01",
            "/list/2",
            "/s/x",
            "/nope",
            "metadata",
            "/metadata/name/deeper",
        ] {
            assert_eq!(at(&v, p), v.pointer(p), "pointer {p:?}");
        }
        assert_eq!(str_at(&v, "/metadata/name"), "n");
        assert_eq!(str_at(&v, "/list/0/k"), "v");
    }

    #[test]
    fn same_spec_part_agrees_with_spec_part() {
        let base = json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x"},
            "spec": {"r": 1}, "status": {"s": 1}});
        let variants = [
            json!({"apiVersion": "a/v2", "kind": "K", "metadata": {"name": "y"}, "spec": {"r": 1}, "status": {"s": 1}}),
            json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x"}, "spec": {"r": 2}, "status": {"s": 1}}),
            json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x"}, "spec": {"r": 1}, "status": {"s": 2}}),
            json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x"}, "spec": {"r": 1}}),
            json!({"apiVersion": "a/v1", "kind": "K", "metadata": {"name": "x"}, "spec": {"r": 1}, "status": {"s": 1}, "data": {}}),
            json!({"spec": {"r": 1}}),
            json!(3),
        ];
        for v in &variants {
            for without_status in [true, false] {
                assert_eq!(
                    same_spec_part(&base, v, without_status),
                    spec_part(&base, without_status) == spec_part(v, without_status),
                    "{v} without_status={without_status}"
                );
            }
        }
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
