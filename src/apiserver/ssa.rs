//! Server-side apply baseline (emulator-spec M6, part of S3): field sets per manager in
//! `metadata.managedFields` (FieldsV1), removal of fields a manager stopped applying, and
//! conflicts between Apply managers (`force=true` takes ownership). Lists are atomic.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::error::{ApiError, StatusCause};
use super::meta;
use super::ops::{self, Target, UpdateKind, WriteOpts, Written};
use super::store::Store;

type Path = Vec<String>;

const UNTRACKED_META: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "managedFields",
    "creationTimestamp",
    "generation",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
];

/// Leaf paths of an applied configuration.
pub fn leaf_paths(obj: &Value) -> BTreeSet<Path> {
    let mut out = BTreeSet::new();
    if let Some(m) = obj.as_object() {
        for (k, v) in m {
            if k == "apiVersion" || k == "kind" {
                continue;
            }
            if k == "metadata" {
                if let Some(mm) = v.as_object() {
                    for (mk, mv) in mm {
                        if !UNTRACKED_META.contains(&mk.as_str()) {
                            walk(mv, vec!["metadata".into(), mk.clone()], &mut out);
                        }
                    }
                }
                continue;
            }
            walk(v, vec![k.clone()], &mut out);
        }
    }
    out
}

fn walk(v: &Value, path: Path, out: &mut BTreeSet<Path>) {
    match v.as_object() {
        Some(m) if !m.is_empty() => {
            for (k, child) in m {
                let mut p = path.clone();
                p.push(k.clone());
                walk(child, p, out);
            }
        }
        _ => {
            out.insert(path);
        }
    }
}

/// FieldsV1 JSON for a set of leaf paths.
pub fn to_fields_v1(paths: &BTreeSet<Path>) -> Value {
    let mut root = Map::new();
    for p in paths {
        let mut cur = &mut root;
        for seg in p {
            let entry = cur
                .entry(format!("f:{seg}"))
                .or_insert_with(|| Value::Object(Map::new()));
            if !entry.is_object() {
                *entry = Value::Object(Map::new());
            }
            let Some(next) = entry.as_object_mut() else {
                break;
            };
            cur = next;
        }
    }
    Value::Object(root)
}

/// Leaf paths encoded in FieldsV1.
pub fn from_fields_v1(v: &Value) -> BTreeSet<Path> {
    let mut out = BTreeSet::new();
    fields_walk(v, Vec::new(), &mut out);
    out
}

fn fields_walk(v: &Value, path: Path, out: &mut BTreeSet<Path>) {
    let children: Vec<(&String, &Value)> = v
        .as_object()
        .map(|m| m.iter().filter(|(k, _)| k.starts_with("f:")).collect())
        .unwrap_or_default();
    if children.is_empty() {
        if !path.is_empty() {
            out.insert(path);
        }
        return;
    }
    for (k, child) in children {
        let mut p = path.clone();
        p.push(k.trim_start_matches("f:").to_string());
        fields_walk(child, p, out);
    }
}

fn get_path<'a>(v: &'a Value, p: &Path) -> Option<&'a Value> {
    p.iter().try_fold(v, |cur, seg| cur.get(seg))
}

fn remove_path(v: &mut Value, p: &Path) {
    let Some((last, parents)) = p.split_last() else {
        return;
    };
    let mut cur = v;
    for seg in parents {
        match cur.get_mut(seg) {
            Some(next) => cur = next,
            None => return,
        }
    }
    if let Some(m) = cur.as_object_mut() {
        m.remove(last);
    }
}

fn deep_merge(base: &mut Value, patch: &Value) {
    match (base.as_object_mut(), patch.as_object()) {
        (Some(b), Some(p)) => {
            for (k, v) in p {
                if v.is_null() {
                    continue;
                }
                match b.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => {
                        deep_merge(existing, v)
                    }
                    _ => {
                        b.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        _ => *base = patch.clone(),
    }
}

fn dotted(p: &Path) -> String {
    format!(".{}", p.join("."))
}

struct Entry {
    manager: String,
    operation: String,
    subresource: String,
    api_version: String,
    fields: BTreeSet<Path>,
}

fn entries(obj: &Value) -> Vec<Entry> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|e| Entry {
                    manager: meta::str_at(e, "/manager").to_string(),
                    operation: meta::str_at(e, "/operation").to_string(),
                    subresource: meta::str_at(e, "/subresource").to_string(),
                    api_version: meta::str_at(e, "/apiVersion").to_string(),
                    fields: e.get("fieldsV1").map(from_fields_v1).unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default()
}

fn render(entries: &[Entry]) -> Value {
    let now = meta::now_rfc3339();
    Value::Array(
        entries
            .iter()
            .filter(|e| !e.fields.is_empty())
            .map(|e| {
                let mut v = json!({
                    "manager": e.manager,
                    "operation": e.operation,
                    "apiVersion": e.api_version,
                    "time": now,
                    "fieldsType": "FieldsV1",
                    "fieldsV1": to_fields_v1(&e.fields),
                });
                if !e.subresource.is_empty() {
                    v["subresource"] = json!(e.subresource);
                }
                v
            })
            .collect(),
    )
}

/// `PATCH` with `application/apply-patch+yaml`.
pub fn apply(
    store: &mut Store,
    t: &Target,
    body: Value,
    opts: &WriteOpts,
) -> Result<(Written, u16), ApiError> {
    let Some(manager) = opts.field_manager.clone() else {
        return Err(ApiError::invalid(
            "meta.k8s.io",
            "PatchOptions",
            "",
            vec![StatusCause::new(
                "FieldValueRequired",
                "fieldManager",
                "Required value: is required for apply patch",
            )],
        ));
    };
    if !body.is_object() {
        return Err(ApiError::bad_request("apply patch must be an object"));
    }
    let subresource = t.subresource.clone().unwrap_or_default();
    let applied = leaf_paths(&body);
    let api_version = t.rt.api_version(&t.version);
    let current = match ops::get(store, t) {
        Ok(c) => c,
        Err(e) if e.code == 404 && t.subresource.is_none() => {
            let mut obj = body;
            meta::set_meta(&mut obj, "name", json!(t.name));
            let e = Entry {
                manager,
                operation: "Apply".into(),
                subresource,
                api_version,
                fields: applied,
            };
            meta::set_meta(&mut obj, "managedFields", render(&[e]));
            let w = ops::create(store, t, obj, opts)?;
            return Ok((w, 201));
        }
        Err(e) => return Err(e),
    };
    let old = ops::present(&t.rt, &t.version, current);
    let mut managers = entries(&old);
    // Conflicts with other Apply managers over differing values.
    let mut conflicts: Vec<(String, Path)> = Vec::new();
    for e in managers
        .iter()
        .filter(|e| e.manager != manager && e.operation == "Apply" && e.subresource == subresource)
    {
        for p in applied.intersection(&e.fields) {
            if get_path(&old, p) != get_path(&body, p) {
                conflicts.push((e.manager.clone(), p.clone()));
            }
        }
    }
    if !conflicts.is_empty() && !opts.force {
        let causes: Vec<StatusCause> = conflicts
            .iter()
            .map(|(m, p)| {
                StatusCause::new(
                    "FieldManagerConflict",
                    &dotted(p),
                    format!("conflict with \"{m}\" using {api_version}"),
                )
            })
            .collect();
        let n = causes.len();
        let list: Vec<String> = conflicts
            .iter()
            .map(|(m, p)| format!("conflict with \"{m}\" using {api_version}: {}", dotted(p)))
            .collect();
        let message = if n == 1 {
            format!("Apply failed with 1 conflict: {}", list[0])
        } else {
            format!("Apply failed with {n} conflicts: {}", list.join("\n"))
        };
        return Err(ApiError::new(409, "Conflict", message).with_details(json!({"causes": causes})));
    }
    for e in managers.iter_mut().filter(|e| e.manager != manager) {
        for (_, p) in &conflicts {
            e.fields.remove(p);
        }
    }
    let previous: BTreeSet<Path> = managers
        .iter()
        .filter(|e| e.manager == manager && e.operation == "Apply" && e.subresource == subresource)
        .flat_map(|e| e.fields.iter().cloned())
        .collect();
    let others: BTreeSet<Path> = managers
        .iter()
        .filter(|e| e.manager != manager)
        .flat_map(|e| e.fields.iter().cloned())
        .collect();
    let mut new = old.clone();
    deep_merge(&mut new, &body);
    for p in previous.difference(&applied) {
        if !others.contains(p) {
            remove_path(&mut new, p);
        }
    }
    managers.retain(|e| {
        !(e.manager == manager && e.operation == "Apply" && e.subresource == subresource)
    });
    managers.push(Entry {
        manager,
        operation: "Apply".into(),
        subresource,
        api_version,
        fields: applied,
    });
    meta::set_meta(&mut new, "managedFields", render(&managers));
    if meta::resource_version(&body).is_empty() {
        meta::set_meta(
            &mut new,
            "resourceVersion",
            json!(meta::resource_version(&old)),
        );
    }
    let w = ops::update(store, t, new, UpdateKind::Patch, opts)?;
    Ok((w, 200))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_v1_round_trip() {
        let obj = json!({"apiVersion": "v1", "kind": "X", "metadata": {"name": "a", "labels": {"k": "v"}}, "spec": {"size": "s", "list": [1, 2]}});
        let paths = leaf_paths(&obj);
        let f = to_fields_v1(&paths);
        assert_eq!(
            f,
            json!({"f:metadata": {"f:labels": {"f:k": {}}}, "f:spec": {"f:list": {}, "f:size": {}}})
        );
        assert_eq!(from_fields_v1(&f), paths);
    }

    #[test]
    fn merge_and_remove() {
        let mut v = json!({"spec": {"a": 1, "b": {"c": 2}}});
        deep_merge(&mut v, &json!({"spec": {"b": {"d": 3}}}));
        assert_eq!(v, json!({"spec": {"a": 1, "b": {"c": 2, "d": 3}}}));
        remove_path(&mut v, &vec!["spec".into(), "a".into()]);
        assert_eq!(v, json!({"spec": {"b": {"c": 2, "d": 3}}}));
    }
}
