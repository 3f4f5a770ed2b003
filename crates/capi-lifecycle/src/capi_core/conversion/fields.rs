//! The pieces every kind's conversion is made of: references, ready flags, conditions, failure
//! domains, and [`StatusShape`], the table of how one kind's status differs between the versions.

use super::{ConvertError, VersionLookup};
use serde_json::{Map, Value, json};

pub(super) fn set_or_remove(obj: &mut Map<String, Value>, key: &str, v: Value) {
    if v.as_object().is_some_and(Map::is_empty) {
        obj.remove(key);
    } else {
        obj.insert(key.into(), v);
    }
}

pub(super) fn obj_of(v: &Value) -> Map<String, Value> {
    v.as_object().cloned().unwrap_or_default()
}

pub(super) fn at<'a>(v: Option<&'a Value>, path: &str) -> Option<&'a Value> {
    path.split('.').try_fold(v?, |cur, k| cur.get(k))
}

pub(super) fn non_empty_str(v: Option<&Value>) -> Option<&str> {
    v.and_then(Value::as_str).filter(|s| !s.is_empty())
}

// ---------------------------------------------------------------------------------------------
// References.

/// What a down-conversion's references need: the object's namespace and where the referenced
/// kinds' `apiVersion` comes from.
pub(super) struct Down<'a> {
    pub namespace: &'a str,
    pub lookup: &'a dyn VersionLookup,
}

/// v1beta2 ContractVersionedObjectReference → v1beta1 ObjectReference (`None`: undefined ref).
pub(super) fn ref_down(r: Option<&Value>, cx: &Down<'_>) -> Result<Option<Value>, ConvertError> {
    let Some(r) = r.filter(|r| r.is_object()) else {
        return Ok(None);
    };
    let group = r
        .get("apiGroup")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let kind = r.get("kind").and_then(Value::as_str).unwrap_or_default();
    let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
    if group.is_empty() && kind.is_empty() && name.is_empty() {
        return Ok(None);
    }
    let api_version = cx.lookup.api_version(group, kind)?;
    Ok(Some(json!({
        "apiVersion": api_version,
        "kind": kind,
        "name": name,
        "namespace": cx.namespace,
    })))
}

/// v1beta1 ObjectReference → v1beta2 ContractVersionedObjectReference.
pub(super) fn ref_up(r: Option<&Value>) -> Option<Value> {
    let r = r.filter(|r| r.is_object())?;
    let api_version = r
        .get("apiVersion")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let group = match api_version.split_once('/') {
        Some((g, _)) => g,
        // `v1` (core group) or empty.
        None => "",
    };
    let kind = r.get("kind").and_then(Value::as_str).unwrap_or_default();
    let name = r.get("name").and_then(Value::as_str).unwrap_or_default();
    if group.is_empty() && kind.is_empty() && name.is_empty() {
        return None;
    }
    Some(json!({"apiGroup": group, "kind": kind, "name": name}))
}

// ---------------------------------------------------------------------------------------------
// Flags: v1beta1 bool ↔ v1beta2 *bool.

pub(super) fn flag_down(v: Option<&Value>) -> bool {
    v.and_then(Value::as_bool).unwrap_or(false)
}

/// `Convert_bool_To_Pointer_bool`: true → true; false → the restored explicit false, else absent.
pub(super) fn flag_up(v: Option<&Value>, restored: Option<&Value>) -> Option<Value> {
    if v.and_then(Value::as_bool) == Some(true) {
        return Some(json!(true));
    }
    (restored.and_then(Value::as_bool) == Some(false)).then_some(json!(false))
}

// ---------------------------------------------------------------------------------------------
// Conditions and failure domains.

/// Moves v1beta2 `conditions` / `deprecated.v1beta1.{conditions, failureReason, failureMessage}`
/// into v1beta1 `v1beta2.conditions` / `conditions`, `failureReason`, `failureMessage`.
pub(super) fn conditions_down(src: &Map<String, Value>, out: &mut Map<String, Value>) {
    out.remove("conditions");
    out.remove("deprecated");
    let mut v1beta2 = Map::new();
    if let Some(c) = src.get("conditions") {
        v1beta2.insert("conditions".into(), c.clone());
    }
    if let Some(dep) = src
        .get("deprecated")
        .and_then(|d| d.get("v1beta1"))
        .and_then(Value::as_object)
    {
        for (k, v) in dep {
            out.insert(k.clone(), v.clone());
        }
    }
    if !v1beta2.is_empty() {
        out.insert("v1beta2".into(), Value::Object(v1beta2));
    }
}

/// The reverse of [`conditions_down`]; `deprecated_keys` are the v1beta1 top-level status keys
/// that live under `deprecated.v1beta1` in v1beta2.
pub(super) fn conditions_up(
    src: &Map<String, Value>,
    out: &mut Map<String, Value>,
    deprecated_keys: &[&str],
) {
    out.remove("conditions");
    out.remove("v1beta2");
    let mut dep = Map::new();
    if let Some(c) = src.get("conditions") {
        dep.insert("conditions".into(), c.clone());
    }
    for k in deprecated_keys {
        if let Some(v) = src.get(*k) {
            out.remove(*k);
            dep.insert((*k).to_string(), v.clone());
        }
    }
    if let Some(c) = src.get("v1beta2").and_then(|v| v.get("conditions")) {
        out.insert("conditions".into(), c.clone());
    }
    if !dep.is_empty() {
        out.insert("deprecated".into(), json!({ "v1beta1": dep }));
    }
}

pub(super) fn failure_domains_down(list: Option<&Value>) -> Option<Value> {
    let list = list?.as_array()?;
    let mut map = Map::new();
    for fd in list {
        let Some(name) = fd.get("name").and_then(Value::as_str) else {
            continue;
        };
        let mut spec = Map::new();
        spec.insert(
            "controlPlane".into(),
            json!(
                fd.get("controlPlane")
                    .and_then(Value::as_bool)
                    .unwrap_or(false)
            ),
        );
        if let Some(a) = fd.get("attributes") {
            spec.insert("attributes".into(), a.clone());
        }
        map.insert(name.to_string(), Value::Object(spec));
    }
    Some(Value::Object(map))
}

pub(crate) fn failure_domains_up(map: Option<&Value>) -> Option<Value> {
    let map = map?.as_object()?;
    if map.is_empty() {
        return None;
    }
    let mut names: Vec<&String> = map.keys().collect();
    names.sort();
    Some(Value::Array(
        names
            .into_iter()
            .map(|name| {
                let spec = &map[name];
                let mut fd = json!({
                    "name": name,
                    "controlPlane": spec.get("controlPlane").and_then(Value::as_bool).unwrap_or(false),
                });
                if let Some(a) = spec.get("attributes") {
                    fd["attributes"] = a.clone();
                }
                fd
            })
            .collect(),
    ))
}

// ---------------------------------------------------------------------------------------------
// Status shapes.

/// How a kind's status differs between v1beta1 and v1beta2, besides its conditions.
pub(super) struct StatusShape {
    /// v1beta1 ready flag (`bool`) ↔ v1beta2 `status.initialization.<field>` (`*bool`).
    pub flags: &'static [(&'static str, &'static str)],
    /// v1beta2 top-level status keys that v1beta1 keeps under `status.v1beta2`.
    pub under_v1beta2: &'static [&'static str],
    /// v1beta1 top-level status keys that v1beta2 keeps under `status.deprecated.v1beta1`.
    pub deprecated: &'static [&'static str],
}

/// v1beta2 → v1beta1 of what `shape` describes (plus the conditions); the rest is copied.
pub(super) fn status_down(status: &Value, shape: &StatusShape) -> Map<String, Value> {
    let src = obj_of(status);
    let mut out = src.clone();
    for k in shape.under_v1beta2 {
        out.remove(*k);
    }
    out.remove("initialization");
    let init = status.get("initialization");
    for (v1beta1, v1beta2) in shape.flags {
        out.insert((*v1beta1).into(), json!(flag_down(at(init, v1beta2))));
    }
    conditions_down(&src, &mut out);
    let nested: Map<String, Value> = shape
        .under_v1beta2
        .iter()
        .filter_map(|k| src.get(*k).map(|v| ((*k).to_string(), v.clone())))
        .collect();
    if !nested.is_empty() {
        let v1beta2 = out.entry("v1beta2").or_insert_with(|| json!({}));
        if let Some(m) = v1beta2.as_object_mut() {
            m.extend(nested);
        }
    }
    out
}

/// v1beta1 → v1beta2 of what `shape` describes; `restored`: the hub the annotation recorded
/// (explicit `false` flags).
pub(super) fn status_up(
    status: &Value,
    restored: Option<&Value>,
    shape: &StatusShape,
) -> Map<String, Value> {
    let src = obj_of(status);
    let mut out = src.clone();
    conditions_up(&src, &mut out, shape.deprecated);
    if let Some(v1beta2) = src.get("v1beta2") {
        for k in shape.under_v1beta2 {
            if let Some(v) = v1beta2.get(*k) {
                out.insert((*k).into(), v.clone());
            }
        }
    }
    let mut init = Map::new();
    for (v1beta1, v1beta2) in shape.flags {
        out.remove(*v1beta1);
        let recorded = at(restored, &format!("status.initialization.{v1beta2}"));
        if let Some(v) = flag_up(src.get(*v1beta1), recorded) {
            init.insert((*v1beta2).into(), v);
        }
    }
    if !init.is_empty() {
        out.insert("initialization".into(), Value::Object(init));
    }
    out
}
