//! `metadata.managedFields` of every write (docs/embedded-apiserver.md M6, S3): the fields a
//! non-apply write (POST, PUT, non-apply PATCH, on the main resource or `/status`, `/scale`)
//! added or changed move to the writer's `Update` entry (manager from `fieldManager`, else the
//! User-Agent prefix); removed fields leave every entry. Entries are keyed by manager,
//! operation, subresource and (for Update) apiVersion, as kube-apiserver keys them. Apply is
//! `ssa.rs`, the fast paths `managed_fields.rs`.

use serde_json::{Value, json};

use super::fieldpath::{self, Path, PathElement, Set};
use super::managed_fields;
use super::meta;
use super::target::Target;
use super::typed::{self, Ty};

/// kube-apiserver's limit on a field manager name.
const MAX_MANAGER_LEN: usize = 128;

/// Top-level fields never tracked (structured-merge-diff's strip set in kube-apiserver).
const STRIPPED_TOP: [&str; 3] = ["apiVersion", "kind", "metadata"];

/// `metadata` fields never tracked.
const STRIPPED_META: [&str; 9] = [
    "name",
    "namespace",
    "creationTimestamp",
    "selfLink",
    "uid",
    "clusterName",
    "generation",
    "managedFields",
    "resourceVersion",
];

/// Whether `p` is in the strip set (checked in place: no set is built per write).
pub(crate) fn is_stripped(p: &[PathElement]) -> bool {
    match p {
        [PathElement::Field(f)] => STRIPPED_TOP.contains(&f.as_str()),
        [PathElement::Field(m), PathElement::Field(f)] => {
            m == "metadata" && STRIPPED_META.contains(&f.as_str())
        }
        _ => false,
    }
}

/// The manager of a non-apply write: `fieldManager`, else the User-Agent up to its first `/`.
pub fn update_manager(field_manager: Option<&str>, user_agent: &str) -> String {
    let m = match field_manager.filter(|m| !m.is_empty()) {
        Some(m) => m,
        None => user_agent.split('/').next().unwrap_or_default(),
    };
    m.chars().take(MAX_MANAGER_LEN).collect()
}

/// One `managedFields` entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) manager: String,
    pub(crate) operation: String,
    pub(crate) subresource: String,
    pub(crate) api_version: String,
    pub(crate) time: Option<String>,
    pub(crate) fields: Set,
}

impl Entry {
    /// kube-apiserver's manager identifier: Apply entries ignore the apiVersion.
    pub(crate) fn same_identity(&self, other: &Entry) -> bool {
        self.manager == other.manager
            && self.operation == other.operation
            && self.subresource == other.subresource
            && (self.operation == "Apply" || self.api_version == other.api_version)
    }

    /// How a conflict names this manager.
    pub(crate) fn describe(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if !self.subresource.is_empty() {
            s = format!("{s} with subresource {:?}", self.subresource);
        }
        if self.operation == "Update" {
            s = format!("{s} using {}", self.api_version);
        }
        s
    }
}

pub(crate) fn entries_of(v: Option<&Value>) -> Vec<Entry> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|e| Entry {
                    manager: meta::str_at(e, "/manager").to_string(),
                    operation: meta::str_at(e, "/operation").to_string(),
                    subresource: meta::str_at(e, "/subresource").to_string(),
                    api_version: meta::str_at(e, "/apiVersion").to_string(),
                    time: e.get("time").and_then(Value::as_str).map(str::to_string),
                    fields: e
                        .get("fieldsV1")
                        .map(fieldpath::from_fields_v1)
                        .unwrap_or_default(),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Writes the entries into `obj` in kube-apiserver's order (operation, time, manager,
/// apiVersion, subresource), dropping empty ones.
pub(crate) fn store_entries(obj: &mut Value, mut entries: Vec<Entry>) {
    entries.retain(|e| !e.fields.is_empty());
    cap_update_managers(&mut entries);
    entries.sort_by(|a, b| {
        (
            &a.operation,
            &a.time,
            &a.manager,
            &a.api_version,
            &a.subresource,
        )
            .cmp(&(
                &b.operation,
                &b.time,
                &b.manager,
                &b.api_version,
                &b.subresource,
            ))
    });
    if entries.is_empty() {
        meta::remove_meta(obj, "managedFields");
        return;
    }
    let rendered: Vec<Value> = entries
        .iter()
        .map(|e| {
            let mut v = json!({
                "manager": e.manager,
                "operation": e.operation,
                "apiVersion": e.api_version,
                "fieldsType": "FieldsV1",
                "fieldsV1": fieldpath::to_fields_v1(&e.fields),
            });
            if let Some(t) = &e.time {
                v["time"] = json!(t);
            }
            if !e.subresource.is_empty() {
                v["subresource"] = json!(e.subresource);
            }
            v
        })
        .collect();
    meta::set_meta(obj, "managedFields", Value::Array(rendered));
}

pub(crate) use super::managed_fields::MAX_UPDATE_MANAGERS;

/// Older Update entries are merged into this manager, one per apiVersion.
const ANCIENT_CHANGES: &str = "ancient-changes";

/// Merges the oldest Update entries into per-apiVersion `ancient-changes` buckets until at most
/// [`MAX_UPDATE_MANAGERS`] Update entries remain (kube-apiserver's capManagersManager).
pub(crate) fn cap_update_managers(entries: &mut Vec<Entry>) {
    let mut updaters: Vec<usize> = (0..entries.len())
        .filter(|&i| entries[i].operation == "Update")
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    updaters.sort_by(|&a, &b| {
        (&entries[a].time, &entries[a].manager).cmp(&(&entries[b].time, &entries[b].manager))
    });
    let mut length = updaters.len();
    let mut first_of_version: std::collections::BTreeMap<String, usize> = Default::default();
    let mut merged_away: Vec<usize> = Vec::new();
    for &i in &updaters {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let version = entries[i].api_version.clone();
        match first_of_version.get(&version) {
            Some(&first) => {
                let moved = std::mem::take(&mut entries[i].fields);
                let time = entries[i].time.clone();
                let bucket = &mut entries[first];
                bucket.manager = ANCIENT_CHANGES.into();
                bucket.subresource = String::new();
                bucket.fields.extend(moved);
                bucket.time = time;
                merged_away.push(i);
                length -= 1;
            }
            None => {
                first_of_version.insert(version, i);
            }
        }
    }
    merged_away.sort_unstable();
    for i in merged_away.into_iter().rev() {
        entries.remove(i);
    }
}

/// Fields a write to this endpoint may not own: `status` on the main resource of a kind with a
/// status subresource, `spec` through `/status` (the strategies' reset fields).
pub(crate) fn ignored(t: &Target) -> Vec<Path> {
    let f = |s: &str| vec![PathElement::Field(s.to_string())];
    match t.subresource.as_deref() {
        Some("status") => vec![f("spec")],
        None if t.rt.has_status(&t.version) => vec![f("status")],
        _ => Vec::new(),
    }
}

/// A set without stripped and ignored paths.
pub(crate) fn tracked(set: Set, ignored: &[Path]) -> Set {
    set.into_iter()
        .filter(|p| !is_stripped(p) && !ignored.iter().any(|i| p.starts_with(i)))
        .collect()
}

/// How server-side apply types an object of the target's kind: a custom resource by its
/// structural schema, a built-in kind by its definitions (with the list and map types kube
/// publishes), the rest with every list atomic.
pub(crate) fn schema_ty(t: &Target) -> Ty<'_> {
    if !t.rt.custom
        && let Some(b) = crate::openapi::builtin_schema(&t.rt.group, &t.version, &t.rt.kind)
        && let Some(root) = b.definitions.get(b.name)
    {
        return Ty::builtin(b.definitions, root);
    }
    Ty::root(
        t.rt.version(&t.version)
            .and_then(|v| v.schema.as_ref())
            .filter(|_| t.rt.custom),
    )
}

/// Records a non-apply write by `manager` in `new`'s managedFields. `old` is the live object
/// (None on create); `requested` is the managedFields the client sent, which replace the live
/// ones when non-empty (how clients reset them), except through a subresource.
pub fn track_update(
    t: &Target,
    old: Option<&Value>,
    new: &mut Value,
    manager: &str,
    requested: Option<&Value>,
    via_subresource: Option<&str>,
) {
    let w = UpdateWrite {
        manager,
        requested,
        via_subresource,
        now: &meta::now_rfc3339(),
    };
    track_update_at(t, old, new, &w, true);
}

/// A non-apply write as [`track_update`] records it.
pub(crate) struct UpdateWrite<'a> {
    manager: &'a str,
    requested: Option<&'a Value>,
    via_subresource: Option<&'a str>,
    /// The entry time of this write.
    now: &'a str,
}

/// [`track_update`]; `in_place` allows [`managed_fields::touch_owner`] (off in tests, to compare
/// it with the full computation).
pub(crate) fn track_update_at(
    t: &Target,
    old: Option<&Value>,
    new: &mut Value,
    w: &UpdateWrite,
    in_place: bool,
) {
    let (manager, now) = (w.manager, w.now);
    let subresource = w
        .via_subresource
        .or(t.subresource.as_deref())
        .unwrap_or_default();
    let requested_entries = w
        .requested
        .filter(|r| r.as_array().is_some_and(|a| !a.is_empty()))
        .filter(|_| subresource.is_empty());
    let live_entries = old.and_then(|o| meta::at(o, "/metadata/managedFields"));
    let ty = schema_ty(t);
    let empty = json!({});
    let c = typed::compare(old.unwrap_or(&empty), new, ty);
    let ignored = ignored(t);
    let changed = tracked(c.added.union(&c.modified).cloned().collect(), &ignored);
    let removed = tracked(c.removed, &ignored);
    // kube's scale handler gives an entry it makes for the scale subresource the time its
    // manager's main-resource entry had: none for a new one, the old one after (not the
    // write's time).
    let scale = subresource == "scale";
    if in_place
        && !scale
        && requested_entries.is_none()
        && let Some(live) = live_entries
    {
        let api_version = t.rt.api_version(&t.version);
        let writer = managed_fields::Writer {
            manager,
            subresource,
            api_version: &api_version,
        };
        if let Some(out) = managed_fields::touch_owner(live, &changed, &removed, &writer, now) {
            meta::set_meta(new, "managedFields", Value::Array(out));
            return;
        }
    }
    let mut entries = match requested_entries {
        Some(r) => entries_of(Some(r)),
        None => entries_of(live_entries),
    };
    for e in &mut entries {
        e.fields
            .retain(|p| !changed.contains(p) && !removed.contains(p));
    }
    if !changed.is_empty() {
        let me = Entry {
            manager: manager.to_string(),
            operation: "Update".into(),
            subresource: subresource.to_string(),
            api_version: t.rt.api_version(&t.version),
            time: (!scale).then(|| now.to_string()),
            fields: changed,
        };
        match entries.iter_mut().find(|e| e.same_identity(&me)) {
            Some(prev) => {
                prev.fields.extend(me.fields);
                if !scale {
                    prev.time = me.time;
                }
            }
            None => entries.push(me),
        }
    }
    store_entries(new, entries);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    #[test]
    fn manager_from_user_agent_prefix() {
        assert_eq!(update_manager(Some("m"), "kubectl/v1.32"), "m");
        assert_eq!(
            update_manager(None, "kubectl/v1.32.4 (linux/amd64) kubernetes/abc"),
            "kubectl"
        );
        assert_eq!(update_manager(Some(""), ""), "");
        assert_eq!(update_manager(None, &"x".repeat(300)).len(), 128);
    }

    #[test]
    fn update_entries_are_capped_into_ancient_changes() {
        let entries: Vec<Entry> = (0..12)
            .map(|i| Entry {
                manager: format!("m{i:02}"),
                operation: "Update".into(),
                subresource: String::new(),
                api_version: "v1".into(),
                time: Some(format!("2024-01-01T00:00:{i:02}Z")),
                fields: [vec![PathElement::Field(format!("f{i}"))]]
                    .into_iter()
                    .collect(),
            })
            .collect();
        let mut obj = json!({"metadata": {}});
        store_entries(&mut obj, entries);
        let mf = obj["metadata"]["managedFields"].as_array().unwrap();
        assert_eq!(mf.len(), 10);
        let bucket = mf.iter().find(|e| e["manager"] == ANCIENT_CHANGES).unwrap();
        assert_eq!(bucket["time"], "2024-01-01T00:00:02Z");
        assert_eq!(
            bucket["fieldsV1"],
            json!({"f:f0": {}, "f:f1": {}, "f:f2": {}})
        );
    }

    /// The in-place path of `track_update` stores exactly what the full computation stores, on
    /// writes it takes and on writes it hands over.
    #[test]
    fn in_place_tracking_equals_full_computation() {
        let store = Store::new(10);
        let t = Target {
            rt: store.registry.get("", "configmaps").unwrap(),
            version: "v1".into(),
            namespace: "default".into(),
            name: "c".into(),
            subresource: None,
        };
        let entry = |m: &str, op: &str, time: &str, fields: Value| {
            json!({"manager": m, "operation": op, "apiVersion": "v1", "time": time,
                   "fieldsType": "FieldsV1", "fieldsV1": fields})
        };
        let lives = [
            json!([entry(
                "w",
                "Update",
                "2024-01-01T00:00:01Z",
                json!({"f:data": {"f:a": {}}})
            )]),
            json!([
                entry(
                    "x",
                    "Apply",
                    "2024-01-01T00:00:09Z",
                    json!({"f:data": {"f:b": {}}})
                ),
                entry(
                    "w",
                    "Update",
                    "2024-01-01T00:00:01Z",
                    json!({"f:data": {"f:a": {}}})
                ),
                entry(
                    "y",
                    "Update",
                    "2024-01-01T00:00:05Z",
                    json!({"f:metadata": {"f:labels": {".": {}, "f:l": {}}}})
                ),
            ]),
            json!([entry(
                "w",
                "Update",
                "2024-01-01T00:00:01Z",
                json!({"f:data": {"f:a": {}, "f:b": {}}})
            )]),
            json!([entry(
                "w",
                "Update",
                "2024-01-01T00:00:01Z",
                json!({"f:data": {"f:a": {}}, "x": {}})
            )]),
            json!([entry("w", "Update", "2024-01-01T00:00:01Z", json!({}))]),
            json!([]),
        ];
        let datas = [
            json!({"a": "1", "b": "2"}),
            json!({"a": "9", "b": "2"}),
            json!({"a": "9"}),
            json!({"b": "3"}),
            json!({"a": "1", "b": "2", "c": "4"}),
        ];
        let mut in_place_taken = 0;
        for live in &lives {
            for data in &datas {
                for manager in ["w", "z"] {
                    let old = json!({"metadata": {"name": "c", "labels": {"l": "v"}, "managedFields": live},
                                     "data": {"a": "1", "b": "2"}});
                    let mut new = old.clone();
                    new["data"] = data.clone();
                    let w = UpdateWrite {
                        manager,
                        requested: None,
                        via_subresource: None,
                        now: "2024-01-01T00:00:30Z",
                    };
                    let (mut fast, mut full) = (new.clone(), new.clone());
                    track_update_at(&t, Some(&old), &mut fast, &w, true);
                    track_update_at(&t, Some(&old), &mut full, &w, false);
                    assert_eq!(fast, full, "live {live}, data {data}, manager {manager}");
                    let c = typed::compare(&old, &new, Ty::BuiltinRoot);
                    let changed: Set = tracked(c.added.union(&c.modified).cloned().collect(), &[]);
                    let writer = managed_fields::Writer {
                        manager,
                        subresource: "",
                        api_version: "v1",
                    };
                    if managed_fields::touch_owner(
                        live,
                        &changed,
                        &tracked(c.removed, &[]),
                        &writer,
                        w.now,
                    )
                    .is_some()
                    {
                        in_place_taken += 1;
                    }
                }
            }
        }
        // Both paths were exercised.
        assert!(in_place_taken > 0 && in_place_taken < lives.len() * datas.len() * 2);
    }

    #[test]
    fn entries_sort_apply_first_then_time() {
        let e = |m: &str, op: &str, t: &str| Entry {
            manager: m.into(),
            operation: op.into(),
            subresource: String::new(),
            api_version: "v1".into(),
            time: Some(t.into()),
            fields: [vec![PathElement::Field(m.into())]].into_iter().collect(),
        };
        let mut obj = json!({"metadata": {}});
        store_entries(
            &mut obj,
            vec![
                e("b", "Update", "2024-01-01T00:00:02Z"),
                e("c", "Apply", "2024-01-01T00:00:09Z"),
                e("a", "Update", "2024-01-01T00:00:01Z"),
            ],
        );
        let order: Vec<&str> = obj["metadata"]["managedFields"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["manager"].as_str().unwrap())
            .collect();
        assert_eq!(order, ["c", "a", "b"]);
    }
}
