//! Removing paths from a value (what server-side apply prunes), and the named parents
//! structured-merge-diff makes members before pruning.

use serde_json::Value;

use super::{ListKind, Shape, Ty, child, item_of, item_pe, shape_of};
use crate::fieldpath::{Path, PathElement, Set};

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
