//! Values typed the way structured-merge-diff types them for server-side apply: a CRD's
//! structural schema (`x-kubernetes-list-type` atomic/set/map with `x-kubernetes-list-map-keys`,
//! `x-kubernetes-map-type` atomic/granular, lists without a list type atomic), ObjectMeta's known
//! list types (finalizers a set, ownerReferences a map keyed by uid), built-in kinds with their
//! fields declared and lists atomic, and the "deduced" type for unknown fields.
//!
//! Operations: the field set of a value (`ToFieldSet`), the comparison of two values
//! (added/modified/removed paths), the apply merge, and removal of paths.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::fieldpath::{Path, PathElement, Set};

/// How a list merges.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ListKind {
    Atomic,
    Set,
    /// Keyed by these fields; a key field an item leaves out takes its schema default (how
    /// structured-merge-diff keys `ports` by `protocol: TCP` when an item omits it).
    Map(Vec<String>, Map<String, Value>),
}

/// A type node.
#[derive(Debug, Clone, Copy)]
pub enum Ty<'a> {
    /// The root of an object whose kind has a structural schema (a custom resource).
    Root(&'a Value),
    /// A structural-schema node.
    Json(&'a Value),
    /// The root of a built-in object.
    BuiltinRoot,
    /// A built-in struct without a schema: every field declared, lists atomic.
    Builtin,
    /// The root of a built-in object typed by its kind's definitions (`openapi/builtin.rs`,
    /// with the list and map types of `openapi/merge_types.rs`); `$ref`s resolved on the way.
    DefRoot(&'a Map<String, Value>, &'a Value),
    /// A node of those definitions.
    Def(&'a Map<String, Value>, &'a Value),
    /// `metadata`.
    ObjectMeta,
    /// One `ownerReferences` item.
    OwnerReference,
    /// A map with undeclared keys whose values are of the inner type (labels, annotations).
    StringMap,
    /// Unknown content: granular maps with undeclared keys, atomic lists.
    Deduced,
    /// A leaf.
    Scalar,
}

/// The shape a type gives a value.
enum Shape {
    Leaf,
    /// Granular map: children with their type and whether the field is declared.
    Map,
    List(ListKind),
}

impl<'a> Ty<'a> {
    /// The root type for an object of a kind with `schema` (None: a built-in kind).
    pub fn root(schema: Option<&'a Value>) -> Self {
        match schema {
            Some(s) => Ty::Root(s),
            None => Ty::BuiltinRoot,
        }
    }

    /// A built-in kind's root type from its definitions.
    pub fn builtin(defs: &'a Map<String, Value>, root: &'a Value) -> Self {
        Ty::DefRoot(defs, root)
    }

    /// The schema node of a schema-typed node, `$ref`s resolved.
    fn node(&self) -> Option<&'a Value> {
        match *self {
            Ty::Json(s) | Ty::Root(s) => Some(s),
            Ty::Def(defs, s) | Ty::DefRoot(defs, s) => Some(crate::openapi::resolve_ref(defs, s).0),
            _ => None,
        }
    }

    /// A child schema node typed like its parent.
    fn wrap(&self, s: &'a Value) -> Ty<'a> {
        match *self {
            Ty::Def(defs, _) | Ty::DefRoot(defs, _) => Ty::Def(defs, s),
            _ => Ty::Json(s),
        }
    }

    fn shape(&self, v: &Value) -> Shape {
        match self {
            Ty::Scalar => Shape::Leaf,
            Ty::Json(_) | Ty::Root(_) | Ty::Def(..) | Ty::DefRoot(..) => {
                let Some(s) = self.node() else {
                    return Shape::Leaf;
                };
                if v.is_object() {
                    if s.get("x-kubernetes-map-type").and_then(Value::as_str) == Some("atomic") {
                        Shape::Leaf
                    } else {
                        Shape::Map
                    }
                } else if v.is_array() {
                    match s.get("x-kubernetes-list-type").and_then(Value::as_str) {
                        Some("set") => Shape::List(ListKind::Set),
                        Some("map") => {
                            let keys: Vec<String> = s
                                .get("x-kubernetes-list-map-keys")
                                .and_then(Value::as_array)
                                .map(|a| {
                                    a.iter()
                                        .filter_map(|k| k.as_str().map(str::to_string))
                                        .collect()
                                })
                                .unwrap_or_default();
                            let item = s.get("items").map(|i| self.wrap(i));
                            let defaults = keys
                                .iter()
                                .filter_map(|k| {
                                    let d = item?.field(k).0.node()?.get("default")?;
                                    Some((k.clone(), d.clone()))
                                })
                                .collect();
                            Shape::List(ListKind::Map(keys, defaults))
                        }
                        _ => Shape::List(ListKind::Atomic),
                    }
                } else {
                    Shape::Leaf
                }
            }
            // An owner reference is atomic (`+structType=atomic`): owned whole.
            Ty::OwnerReference => Shape::Leaf,
            Ty::ObjectMeta => {
                if v.is_object() {
                    Shape::Map
                } else {
                    Shape::Leaf
                }
            }
            _ => {
                if v.is_object() {
                    Shape::Map
                } else if v.is_array() {
                    Shape::List(ListKind::Atomic)
                } else {
                    Shape::Leaf
                }
            }
        }
    }

    /// The type of a map child and whether it is a declared (struct) field.
    fn field(&self, key: &str) -> (Ty<'a>, bool) {
        match self {
            Ty::Root(_) | Ty::DefRoot(..) if key == "metadata" => (Ty::ObjectMeta, true),
            Ty::Root(_) | Ty::Json(_) | Ty::Def(..) | Ty::DefRoot(..) => {
                let Some(s) = self.node() else {
                    return (Ty::Deduced, false);
                };
                if s.get("x-kubernetes-embedded-resource")
                    .and_then(Value::as_bool)
                    == Some(true)
                    && key == "metadata"
                {
                    return (Ty::ObjectMeta, true);
                }
                if let Some(p) = s.get("properties").and_then(|p| p.get(key)) {
                    return (self.wrap(p), true);
                }
                match s.get("additionalProperties") {
                    Some(ap) if ap.is_object() => (self.wrap(ap), false),
                    _ => (Ty::Deduced, false),
                }
            }
            Ty::BuiltinRoot if key == "metadata" => (Ty::ObjectMeta, true),
            Ty::BuiltinRoot | Ty::Builtin | Ty::OwnerReference => (Ty::Builtin, true),
            Ty::ObjectMeta => match key {
                "labels" | "annotations" => (Ty::StringMap, true),
                "managedFields" => (Ty::Scalar, true),
                _ => (Ty::Builtin, true),
            },
            Ty::StringMap => (Ty::Scalar, false),
            Ty::Deduced => (Ty::Deduced, false),
            Ty::Scalar => (Ty::Scalar, false),
        }
    }

    /// The list kind of `metadata.<key>` (resolved by the parent for ObjectMeta lists).
    fn meta_list(key: &str) -> Option<(ListKind, Ty<'static>)> {
        match key {
            "finalizers" => Some((ListKind::Set, Ty::Scalar)),
            "ownerReferences" => Some((
                ListKind::Map(vec!["uid".into()], Map::new()),
                Ty::OwnerReference,
            )),
            _ => None,
        }
    }

    fn item(&self) -> Ty<'a> {
        match self {
            Ty::Json(_) | Ty::Root(_) | Ty::Def(..) | Ty::DefRoot(..) => self
                .node()
                .and_then(|s| s.get("items"))
                .map(|i| self.wrap(i))
                .unwrap_or(Ty::Deduced),
            Ty::Deduced => Ty::Deduced,
            _ => Ty::Builtin,
        }
    }
}

/// A map child's type, with ObjectMeta's list fields resolved.
fn child<'a>(parent: Ty<'a>, key: &str) -> (Ty<'a>, bool, Option<ListKind>) {
    if matches!(parent, Ty::ObjectMeta)
        && let Some((kind, item)) = Ty::meta_list(key)
    {
        // The list node carries its item type; the parent forces the list kind.
        return (item, true, Some(kind));
    }
    let (t, declared) = parent.field(key);
    (t, declared, None)
}

/// Shape of a value under a type, honouring a list kind forced by the parent.
fn shape_of(t: &Ty, forced: &Option<ListKind>, v: &Value) -> Shape {
    match forced {
        Some(kind) if v.is_array() => Shape::List(kind.clone()),
        _ => t.shape(v),
    }
}

/// The item type of a list node (for forced ObjectMeta lists the node type is the item type).
fn item_of<'a>(t: &Ty<'a>, forced: &Option<ListKind>) -> Ty<'a> {
    if forced.is_some() { *t } else { t.item() }
}

/// The path element of a list item, or None when the list kind has no per-item identity.
fn item_pe(kind: &ListKind, item: &Value, index: usize) -> PathElement {
    match kind {
        ListKind::Set => PathElement::value_of(item),
        ListKind::Map(keys, defaults) if !keys.is_empty() => {
            let missing: Vec<_> = defaults
                .iter()
                .filter(|(k, _)| item.get(k.as_str()).is_none())
                .collect();
            if missing.is_empty() {
                PathElement::key_of(item, keys)
            } else {
                let mut filled = item.clone();
                for (k, d) in missing {
                    filled[k.as_str()] = d.clone();
                }
                PathElement::key_of(&filled, keys)
            }
        }
        _ => PathElement::Index(index),
    }
}

/// `ToFieldSet`: member paths of a value.
pub fn to_set(v: &Value, t: Ty) -> Set {
    let mut out = Set::new();
    walk_set(v, t, &None, &mut Vec::new(), &mut out);
    out
}

fn walk_set(v: &Value, t: Ty, forced: &Option<ListKind>, path: &mut Path, out: &mut Set) {
    match shape_of(&t, forced, v) {
        Shape::Leaf => {
            if !path.is_empty() {
                out.insert(path.clone());
            }
        }
        Shape::List(ListKind::Atomic) => {
            out.insert(path.clone());
        }
        Shape::List(kind) => {
            let item_t = item_of(&t, forced);
            for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                path.push(item_pe(&kind, item, i));
                walk_set(item, item_t, &None, path, out);
                out.insert(path.clone());
                path.pop();
            }
        }
        Shape::Map => {
            for (k, cv) in v.as_object().into_iter().flatten() {
                let (ct, declared, cforced) = child(t, k);
                path.push(PathElement::Field(k.clone()));
                walk_set(cv, ct, &cforced, path, out);
                let empty_map = cv.as_object().is_some_and(Map::is_empty);
                if cv.is_null() || empty_map || !declared {
                    out.insert(path.clone());
                }
                path.pop();
            }
        }
    }
}

/// The fields of `v` its type does not declare, as structured-merge-diff's validation of an
/// apply patch reports them (`.spec.b`): a map's keys in order, the first undeclared one ending
/// that map's walk (its validator stops iterating there). Maps that take any key (labels,
/// `additionalProperties`, `x-kubernetes-preserve-unknown-fields`, objects without properties,
/// built-ins without a schema) report nothing.
pub fn undeclared(v: &Value, t: Ty) -> Vec<String> {
    let mut out = Vec::new();
    walk_undeclared(v, t, &None, &mut Vec::new(), &mut out);
    out
}

impl Ty<'_> {
    /// Whether a map of this type takes keys it does not declare.
    fn takes_any_key(&self) -> bool {
        match self {
            Ty::ObjectMeta => false,
            Ty::Root(_) | Ty::Json(_) | Ty::Def(..) | Ty::DefRoot(..) => {
                let Some(s) = self.node() else {
                    return true;
                };
                s.get("x-kubernetes-preserve-unknown-fields")
                    .and_then(Value::as_bool)
                    == Some(true)
                    || s.get("additionalProperties")
                        .is_some_and(|a| a != &Value::Bool(false))
                    || s.get("properties")
                        .is_none_or(|p| p.as_object().is_none_or(Map::is_empty))
            }
            _ => true,
        }
    }

    /// Fields every object root has whether or not its schema lists them.
    fn implicit_field(&self, key: &str) -> bool {
        let embedded = self.node().is_some_and(|s| {
            s.get("x-kubernetes-embedded-resource")
                .and_then(Value::as_bool)
                == Some(true)
        });
        (matches!(self, Ty::Root(_) | Ty::DefRoot(..)) || embedded)
            && matches!(key, "apiVersion" | "kind" | "metadata")
    }
}

fn walk_undeclared(
    v: &Value,
    t: Ty,
    forced: &Option<ListKind>,
    path: &mut Path,
    out: &mut Vec<String>,
) {
    match shape_of(&t, forced, v) {
        Shape::Leaf | Shape::List(ListKind::Atomic) => {}
        Shape::List(kind) => {
            let item_t = item_of(&t, forced);
            for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                path.push(item_pe(&kind, item, i));
                walk_undeclared(item, item_t, &None, path, out);
                path.pop();
            }
        }
        Shape::Map => {
            let open = t.takes_any_key();
            for (k, cv) in v.as_object().into_iter().flatten() {
                let known = match t {
                    Ty::ObjectMeta => crate::schema::OBJECT_META_FIELDS.contains(&k.as_str()),
                    _ => open || t.implicit_field(k) || child(t, k).1,
                };
                path.push(PathElement::Field(k.clone()));
                if !known {
                    out.push(super::fieldpath::display(path));
                    path.pop();
                    break;
                }
                let (ct, _, cforced) = child(t, k);
                walk_undeclared(cv, ct, &cforced, path, out);
                path.pop();
            }
        }
    }
}

/// Added, modified and removed paths between two values (structured-merge-diff `Compare`).
#[derive(Debug, Default, Clone)]
pub struct Comparison {
    pub added: Set,
    pub modified: Set,
    pub removed: Set,
}

impl Comparison {
    pub fn is_same(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }
}

pub fn compare(old: &Value, new: &Value, t: Ty) -> Comparison {
    let mut c = Comparison::default();
    walk_compare(Some(old), Some(new), t, &None, &mut Vec::new(), &mut c);
    c
}

fn all_paths(v: &Value, t: Ty, forced: &Option<ListKind>, path: &mut Path, out: &mut Set) {
    out.insert(path.clone());
    match shape_of(&t, forced, v) {
        Shape::Leaf | Shape::List(ListKind::Atomic) => {}
        Shape::List(kind) => {
            let item_t = item_of(&t, forced);
            for (i, item) in v.as_array().into_iter().flatten().enumerate() {
                path.push(item_pe(&kind, item, i));
                all_paths(item, item_t, &None, path, out);
                path.pop();
            }
        }
        Shape::Map => {
            for (k, cv) in v.as_object().into_iter().flatten() {
                let (ct, _, cforced) = child(t, k);
                path.push(PathElement::Field(k.clone()));
                all_paths(cv, ct, &cforced, path, out);
                path.pop();
            }
        }
    }
}

fn index_items<'v>(
    kind: &ListKind,
    v: Option<&'v Value>,
) -> (Vec<PathElement>, BTreeMap<PathElement, &'v Value>) {
    let mut order = Vec::new();
    let mut by_pe = BTreeMap::new();
    for (i, item) in v
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .enumerate()
    {
        let pe = item_pe(kind, item, i);
        if by_pe.insert(pe.clone(), item).is_none() {
            order.push(pe);
        }
    }
    (order, by_pe)
}

fn walk_compare(
    old: Option<&Value>,
    new: Option<&Value>,
    t: Ty,
    forced: &Option<ListKind>,
    path: &mut Path,
    c: &mut Comparison,
) {
    match (old, new) {
        (None, None) => {}
        (None, Some(n)) => all_paths(n, t, forced, path, &mut c.added),
        (Some(o), None) => all_paths(o, t, forced, path, &mut c.removed),
        // A null on one side takes the other side's shape (structured-merge-diff's nil
        // wildcard): its children are added or removed, the node itself is neither.
        (Some(o), Some(n))
            if o.is_null() != n.is_null()
                && matches!(
                    shape_of(&t, forced, if o.is_null() { n } else { o }),
                    Shape::Map | Shape::List(ListKind::Set | ListKind::Map(..))
                ) =>
        {
            let (value, added) = if o.is_null() { (n, true) } else { (o, false) };
            let mut sub = Comparison::default();
            all_paths(value, t, forced, path, &mut sub.added);
            sub.added.remove(&*path);
            if added {
                c.added.extend(sub.added);
            } else {
                c.removed.extend(sub.added);
            }
        }
        (Some(o), Some(n)) => {
            let (so, sn) = (shape_of(&t, forced, o), shape_of(&t, forced, n));
            match (so, sn) {
                (Shape::Map, Shape::Map) => {
                    // Every key of either map once: the old map's keys, then the new-only ones
                    // (the result is a set, so the visiting order does not matter).
                    let (om, nm) = (o.as_object(), n.as_object());
                    let old_keys = om.into_iter().flat_map(|m| m.keys());
                    let new_only = nm
                        .into_iter()
                        .flat_map(|m| m.keys())
                        .filter(|k| !om.is_some_and(|m| m.contains_key(k.as_str())));
                    for k in old_keys.chain(new_only) {
                        let (ov, nv) = (o.get(k), n.get(k));
                        // An equal subtree adds no path: skip it without building its paths.
                        if ov == nv {
                            continue;
                        }
                        let (ct, _, cforced) = child(t, k);
                        path.push(PathElement::Field(k.clone()));
                        walk_compare(ov, nv, ct, &cforced, path, c);
                        path.pop();
                    }
                }
                (Shape::List(ko), Shape::List(kn))
                    if ko == kn && !matches!(kn, ListKind::Atomic) =>
                {
                    let item_t = item_of(&t, forced);
                    let (oo, ob) = index_items(&ko, Some(o));
                    let (no, nb) = index_items(&kn, Some(n));
                    let mut seen = std::collections::BTreeSet::new();
                    for pe in oo.iter().chain(no.iter()) {
                        if !seen.insert(pe.clone()) {
                            continue;
                        }
                        path.push(pe.clone());
                        walk_compare(
                            ob.get(pe).copied(),
                            nb.get(pe).copied(),
                            item_t,
                            &None,
                            path,
                            c,
                        );
                        path.pop();
                    }
                }
                _ => {
                    if o != n {
                        c.modified.insert(path.clone());
                    }
                }
            }
        }
    }
}

/// The apply merge of `config` into `live`: granular maps merge by key, `map` lists by item
/// key, `set` lists by value, atomic values are replaced. A `null` in the config removes.
pub fn merge(live: &Value, config: &Value, t: Ty) -> Value {
    merge_node(Some(live), config, t, &None).unwrap_or(Value::Null)
}

fn merge_node(
    live: Option<&Value>,
    config: &Value,
    t: Ty,
    forced: &Option<ListKind>,
) -> Option<Value> {
    if config.is_null() {
        return None;
    }
    let Some(live) = live else {
        return Some(config.clone());
    };
    match (shape_of(&t, forced, live), shape_of(&t, forced, config)) {
        (Shape::Map, Shape::Map) => {
            let mut out = live.as_object().cloned().unwrap_or_default();
            for (k, cv) in config.as_object().into_iter().flatten() {
                let (ct, _, cforced) = child(t, k);
                match merge_node(out.get(k), cv, ct, &cforced) {
                    Some(v) => {
                        out.insert(k.clone(), v);
                    }
                    None => {
                        out.remove(k);
                    }
                }
            }
            Some(Value::Object(out))
        }
        (Shape::List(kl), Shape::List(kc)) if kl == kc && !matches!(kc, ListKind::Atomic) => {
            let item_t = item_of(&t, forced);
            Some(Value::Array(merge_list(live, config, &kc, item_t)))
        }
        _ => Some(config.clone()),
    }
}

/// Items of both lists: live-only items keep their place, config items come in config order.
fn merge_list(live: &Value, config: &Value, kind: &ListKind, item_t: Ty) -> Vec<Value> {
    let (lorder, lby) = index_items(kind, Some(live));
    let (corder, cby) = index_items(kind, Some(config));
    let mut out = Vec::new();
    let mut emitted = std::collections::BTreeSet::new();
    let mut ci = 0;
    let emit = |pe: &PathElement,
                out: &mut Vec<Value>,
                emitted: &mut std::collections::BTreeSet<PathElement>| {
        if !emitted.insert(pe.clone()) {
            return;
        }
        let merged = match cby.get(pe) {
            Some(cv) => merge_node(lby.get(pe).copied(), cv, item_t, &None),
            None => lby.get(pe).map(|v| (*v).clone()),
        };
        if let Some(v) = merged {
            out.push(v);
        }
    };
    for pe in &lorder {
        if cby.contains_key(pe) {
            // Emit config items up to and including this shared one.
            while ci < corder.len() {
                let cpe = &corder[ci];
                ci += 1;
                emit(cpe, &mut out, &mut emitted);
                if cpe == pe {
                    break;
                }
            }
        } else {
            emit(pe, &mut out, &mut emitted);
        }
    }
    for cpe in &corder[ci..] {
        emit(cpe, &mut out, &mut emitted);
    }
    out
}

/// Removes every path of `paths` (a field, a list item or a set value) from `v`.
pub fn remove_paths(v: &mut Value, paths: &Set, t: Ty) {
    // Shallowest first: a list item must go while its key fields still identify it.
    let mut sorted: Vec<&Path> = paths.iter().collect();
    sorted.sort_by_key(|p| p.len());
    for p in sorted {
        remove_one(v, p, t, &None);
    }
}

fn remove_one(v: &mut Value, path: &[PathElement], t: Ty, forced: &Option<ListKind>) {
    let Some((first, rest)) = path.split_first() else {
        return;
    };
    match first {
        PathElement::Field(k) => {
            let (ct, _, cforced) = child(t, k);
            let Some(m) = v.as_object_mut() else {
                return;
            };
            if rest.is_empty() {
                m.remove(k);
            } else if let Some(c) = m.get_mut(k) {
                remove_one(c, rest, ct, &cforced);
            }
        }
        pe => {
            let Shape::List(kind) = shape_of(&t, forced, v) else {
                return;
            };
            let item_t = item_of(&t, forced);
            let Some(items) = v.as_array_mut() else {
                return;
            };
            let positions: Vec<usize> = items
                .iter()
                .enumerate()
                .filter(|(i, item)| &item_pe(&kind, item, *i) == pe)
                .map(|(i, _)| i)
                .collect();
            if rest.is_empty() {
                for i in positions.into_iter().rev() {
                    items.remove(i);
                }
            } else {
                for i in positions {
                    if let Some(item) = items.get_mut(i) {
                        remove_one(item, rest, item_t, &None);
                    }
                }
            }
        }
    }
}

/// Makes the named (declared struct) fields along every path members, as structured-merge-diff's
/// `EnsureNamedFieldsAreMembers` does before pruning.
pub fn with_named_parents(set: &Set, t: Ty) -> Set {
    let mut out = set.clone();
    for p in set {
        let mut cur_t = t;
        let mut cur_forced: Option<ListKind> = None;
        for (i, pe) in p.iter().enumerate() {
            match pe {
                PathElement::Field(k) => {
                    let (ct, declared, cforced) = child(cur_t, k);
                    if declared && i + 1 < p.len() {
                        out.insert(p[..=i].to_vec());
                    }
                    cur_t = ct;
                    cur_forced = cforced;
                }
                _ => {
                    cur_t = item_of(&cur_t, &cur_forced);
                    cur_forced = None;
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod tests;
