//! The comparison of two values of one type: added, modified and removed paths
//! (structured-merge-diff's `Compare`).

use serde_json::Value;

use super::{ListKind, Shape, Ty, child, index_items, item_of, item_pe, shape_of};
use crate::fieldpath::{Path, PathElement, Set};

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
