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

mod compare;
mod merge;
mod remove;
pub use compare::{Comparison, compare};
pub use merge::merge;
pub use remove::{remove_paths, with_named_parents};

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

/// The items of a list by their path element (key, value or index), in order; a repeated
/// element keeps its first item.
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

#[cfg(test)]
mod tests;
