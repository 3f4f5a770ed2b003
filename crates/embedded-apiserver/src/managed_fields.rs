//! The common case of managedFields tracking without decoding and re-encoding every entry: a
//! non-apply write whose changed fields its manager already owns alone (a controller or client
//! writing the same fields again). The stored `managedFields` are then kept as they are, only the
//! writer's entry gets the new `time`, and the entries are re-sorted as kube-apiserver sorts them.
//!
//! [`super::field_manager::track_update`] stays the definition: [`touch_owner`] answers only when its result
//! is exactly what the full computation would store (every entry already in the canonical form
//! the full computation renders, no entry to merge or cap), and `None` otherwise.

use serde_json::{Map, Value};

use super::fieldpath::{Path, PathElement, Set};

/// kube-apiserver keeps at most this many Update entries.
pub(crate) const MAX_UPDATE_MANAGERS: usize = 10;

/// The identity of the writer's `Update` entry.
pub struct Writer<'a> {
    pub manager: &'a str,
    pub subresource: &'a str,
    pub api_version: &'a str,
}

/// The keys of one rendered entry.
const ENTRY_KEYS: [&str; 7] = [
    "manager",
    "operation",
    "apiVersion",
    "fieldsType",
    "fieldsV1",
    "time",
    "subresource",
];

/// The sort key of a canonical entry: operation, time, manager, apiVersion, subresource.
type SortKey<'a> = (&'a str, Option<&'a str>, &'a str, &'a str, &'a str);

/// The sort key of `e` when it is rendered exactly as the full computation renders entries.
fn canonical_entry(e: &Value) -> Option<SortKey<'_>> {
    let m = e.as_object()?;
    if !m.keys().all(|k| ENTRY_KEYS.contains(&k.as_str())) {
        return None;
    }
    let manager = m.get("manager")?.as_str()?;
    let operation = m.get("operation")?.as_str()?;
    let api_version = m.get("apiVersion")?.as_str()?;
    if m.get("fieldsType")?.as_str()? != "FieldsV1" {
        return None;
    }
    let time = match m.get("time") {
        None => None,
        Some(t) => Some(t.as_str()?),
    };
    let subresource = match m.get("subresource") {
        None => "",
        Some(s) => Some(s.as_str()?).filter(|s| !s.is_empty())?,
    };
    let fields = m.get("fieldsV1")?.as_object()?;
    if fields.is_empty() || fields.contains_key(".") || !canonical_trie(fields) {
        return None;
    }
    Some((operation, time, manager, api_version, subresource))
}

/// Whether decoding this `FieldsV1` node and encoding it again gives it back unchanged.
fn canonical_trie(node: &Map<String, Value>) -> bool {
    node.iter().all(|(k, child)| {
        if k == "." {
            // The member mark of a node that also has children.
            return node.len() > 1 && child.as_object().is_some_and(Map::is_empty);
        }
        let Some(pe) = PathElement::decode(k) else {
            return false;
        };
        if matches!(pe, PathElement::Index(_)) && pe.encode() != *k {
            return false;
        }
        child.as_object().is_some_and(canonical_trie)
    })
}

/// Whether `path` is a member of the `FieldsV1` trie.
fn contains(fields: &Value, path: &Path) -> bool {
    let mut node = fields;
    for pe in path {
        match node.as_object().and_then(|m| m.get(&pe.encode())) {
            Some(child) => node = child,
            None => return false,
        }
    }
    node.as_object()
        .is_some_and(|m| m.is_empty() || m.contains_key("."))
}

/// The new `managedFields` when the writer's own entry already holds every changed field, no
/// other entry holds any of them, and no entry holds a removed field; `None` when the full
/// computation is needed. `live` is the stored object's non-empty `managedFields` array.
pub fn touch_owner(
    live: &Value,
    changed: &Set,
    removed: &Set,
    writer: &Writer,
    now: &str,
) -> Option<Vec<Value>> {
    let items = live.as_array().filter(|a| !a.is_empty())?;
    let mut mine = None;
    let mut updaters = 0;
    for (i, e) in items.iter().enumerate() {
        let (operation, _, manager, api_version, subresource) = canonical_entry(e)?;
        let fields = e.get("fieldsV1")?;
        let is_writer = operation == "Update"
            && manager == writer.manager
            && subresource == writer.subresource
            && api_version == writer.api_version;
        if operation == "Update" {
            updaters += 1;
        }
        if is_writer {
            if mine.is_some() {
                return None;
            }
            mine = Some(i);
        }
        if removed.iter().any(|p| contains(fields, p))
            || changed.iter().any(|p| contains(fields, p) != is_writer)
        {
            return None;
        }
    }
    if updaters > MAX_UPDATE_MANAGERS {
        return None;
    }
    let mut out = items.clone();
    if !changed.is_empty() {
        let entry = out.get_mut(mine?)?.as_object_mut()?;
        entry.insert("time".into(), Value::String(now.to_string()));
    }
    // Canonical entries were checked above; the key never fails here.
    out.sort_by(|a, b| canonical_entry(a).cmp(&canonical_entry(b)));
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn f(s: &str) -> PathElement {
        PathElement::Field(s.into())
    }

    fn writer() -> Writer<'static> {
        Writer {
            manager: "m",
            subresource: "",
            api_version: "example.com/v1",
        }
    }

    fn live() -> Value {
        json!([
            {"manager": "m", "operation": "Update", "apiVersion": "example.com/v1", "time": "2024-01-01T00:00:05Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:replicas": {}}}},
            {"manager": "other", "operation": "Update", "apiVersion": "example.com/v1", "time": "2024-01-01T00:00:09Z",
             "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {".": {}, "f:size": {}}}}
        ])
    }

    #[test]
    fn owner_rewriting_its_field_only_moves_its_time() {
        let changed: Set = [vec![f("spec"), f("replicas")]].into_iter().collect();
        let out = touch_owner(
            &live(),
            &changed,
            &Set::new(),
            &writer(),
            "2024-01-01T00:00:10Z",
        )
        .unwrap();
        assert_eq!(out[0]["manager"], "other");
        assert_eq!(out[1]["manager"], "m");
        assert_eq!(out[1]["time"], "2024-01-01T00:00:10Z");
        assert_eq!(out[1]["fieldsV1"], json!({"f:spec": {"f:replicas": {}}}));
    }

    #[test]
    fn declines_when_ownership_moves_or_fields_go() {
        let w = writer();
        let now = "2024-01-01T00:00:10Z";
        let theirs: Set = [vec![f("spec"), f("size")]].into_iter().collect();
        assert!(touch_owner(&live(), &theirs, &Set::new(), &w, now).is_none());
        let unowned: Set = [vec![f("spec"), f("mode")]].into_iter().collect();
        assert!(touch_owner(&live(), &unowned, &Set::new(), &w, now).is_none());
        let mine: Set = [vec![f("spec"), f("replicas")]].into_iter().collect();
        assert!(touch_owner(&live(), &Set::new(), &mine, &w, now).is_none());
        let stranger = Writer {
            manager: "new",
            ..writer()
        };
        assert!(touch_owner(&live(), &mine, &Set::new(), &stranger, now).is_none());
    }

    #[test]
    fn declines_entries_not_in_canonical_form() {
        let changed: Set = [vec![f("spec"), f("replicas")]].into_iter().collect();
        let now = "2024-01-01T00:00:10Z";
        for edit in [
            json!({"extra": 1}),
            json!({"fieldsType": "Other"}),
            json!({"time": null}),
            json!({"subresource": ""}),
            json!({"fieldsV1": {}}),
            json!({"fieldsV1": {"f:spec": {"f:replicas": {}, "x:bad": {}}}}),
            json!({"fieldsV1": {"f:spec": {"f:replicas": {".": {}}}}}),
            json!({"fieldsV1": {"f:spec": {"f:replicas": {}}, "i:01": {}}}),
            json!({"fieldsV1": {"f:spec": {"f:replicas": 1}}}),
        ] {
            let mut l = live();
            for (k, v) in edit.as_object().unwrap() {
                l[1][k] = v.clone();
            }
            assert!(
                touch_owner(&l, &changed, &Set::new(), &writer(), now).is_none(),
                "{edit}"
            );
        }
    }
}
