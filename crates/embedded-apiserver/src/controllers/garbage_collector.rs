//! The garbage collector (kube-controller-manager's `garbagecollector`): dependents of a deleted
//! owner are deleted, a foreground deletion waits for its blocking dependents, an orphaning one
//! strips its dependents' references first.

use serde_json::Value;

use super::{patch_as_controller, target};
use crate::meta;
use crate::ops::{self, DeleteOpts};
use crate::state::EmbeddedServer;

/// The `(uid, blockOwnerDeletion)` of each of `obj`'s ownerReferences, borrowed.
pub(super) fn owner_uids(obj: &Value) -> impl Iterator<Item = (&str, bool)> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|r| {
            (
                meta::str_at(r, "/uid"),
                r.get("blockOwnerDeletion")
                    .and_then(Value::as_bool)
                    .unwrap_or(false),
            )
        })
}

pub(super) fn has_finalizer(obj: &Value, finalizer: &str) -> bool {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| f.iter().any(|x| x.as_str() == Some(finalizer)))
}

/// Whether a deletion gives the collector work: some object names a deleted one as its owner,
/// or a deleted object's owner is itself being deleted (and may wait on its dependents).
pub(super) fn deletions_matter(server: &EmbeddedServer, deleted: &[(String, Vec<String>)]) -> bool {
    use std::collections::HashSet;
    if deleted.is_empty() {
        return false;
    }
    let gone: HashSet<&str> = deleted.iter().map(|(u, _)| u.as_str()).collect();
    let owners: HashSet<&str> = deleted
        .iter()
        .flat_map(|(_, o)| o.iter().map(String::as_str))
        .collect();
    let store = server.lock();
    store.objects.values().any(|o| {
        owner_uids(o).any(|(u, _)| gone.contains(u))
            || (!owners.is_empty() && owners.contains(meta::uid(o)) && meta::is_deleting(o))
    })
}

/// One pass of the garbage collector over the whole store: the owners of every object and
/// the dependents of every owner are read from two indexes built once per round.
pub(super) fn garbage_collect(server: &EmbeddedServer) {
    use std::collections::HashMap;
    let mut store = server.lock();
    for _round in 0..8 {
        let mut actions: Vec<(String, String, String, String, Action)> = Vec::new();
        {
            let live: HashMap<&str, &Value> = store
                .objects
                .values()
                .map(|o| (meta::uid(o), &**o))
                .collect();
            // Owner uid → whether some dependent blocks its deletion.
            let mut dependents: HashMap<&str, bool> = HashMap::new();
            for o in store.objects.values() {
                for (u, block) in owner_uids(o) {
                    *dependents.entry(u).or_default() |= block;
                }
            }
            for ((g, r, ns, name), o) in &store.objects {
                let mut owners = owner_uids(o).peekable();
                if owners.peek().is_none() {
                    continue;
                }
                let mut any_live = false;
                let mut all_foreground = true;
                let mut orphaning: Vec<String> = Vec::new();
                for (u, _) in owners {
                    let Some(ow) = live.get(u) else { continue };
                    any_live = true;
                    let deleting = meta::is_deleting(ow);
                    if deleting && has_finalizer(ow, "orphan") {
                        orphaning.push(u.to_string());
                    }
                    if !(deleting && has_finalizer(ow, "foregroundDeletion")) {
                        all_foreground = false;
                    }
                }
                let act = if !orphaning.is_empty() {
                    Some(Action::StripOwners(orphaning))
                } else if !any_live && !meta::is_deleting(o) {
                    Some(Action::Delete(None))
                } else if !meta::is_deleting(o) && all_foreground {
                    Some(Action::Delete(Some("Foreground".into())))
                } else {
                    None
                };
                if let Some(a) = act {
                    actions.push((g.clone(), r.clone(), ns.clone(), name.clone(), a));
                }
            }
            // Owners waiting on foreground/orphan whose dependents are done.
            for ((g, r, ns, name), o) in &store.objects {
                if !meta::is_deleting(o) {
                    continue;
                }
                let blocked = dependents.get(meta::uid(o)).copied();
                if has_finalizer(o, "foregroundDeletion") && blocked != Some(true) {
                    actions.push((
                        g.clone(),
                        r.clone(),
                        ns.clone(),
                        name.clone(),
                        Action::DropFinalizer("foregroundDeletion"),
                    ));
                }
                if has_finalizer(o, "orphan") && blocked.is_none() {
                    actions.push((
                        g.clone(),
                        r.clone(),
                        ns.clone(),
                        name.clone(),
                        Action::DropFinalizer("orphan"),
                    ));
                }
            }
        }
        if actions.is_empty() {
            return;
        }
        for (g, r, ns, name, a) in actions {
            let Some(t) = target(&store, &g, &r, &ns, &name) else {
                continue;
            };
            let Some(current) = store.objects.get(&t.key()).map(|o| (**o).clone()) else {
                continue;
            };
            match a {
                Action::Delete(policy) => {
                    let _ = ops::delete(
                        &mut store,
                        &t,
                        &DeleteOpts {
                            propagation: policy,
                            ..Default::default()
                        },
                    );
                }
                Action::StripOwners(uids) => {
                    let mut new = current;
                    if let Some(refs) = new
                        .pointer_mut("/metadata/ownerReferences")
                        .and_then(Value::as_array_mut)
                    {
                        refs.retain(|r| !uids.iter().any(|u| u == meta::str_at(r, "/uid")));
                        if refs.is_empty() {
                            meta::remove_meta(&mut new, "ownerReferences");
                        }
                    }
                    let _ = patch_as_controller(&mut store, &t, new);
                }
                Action::DropFinalizer(f) => {
                    let mut new = current;
                    let left: Vec<String> = meta::finalizers(&new)
                        .into_iter()
                        .filter(|x| x != f)
                        .collect();
                    meta::set_finalizers(&mut new, &left);
                    let _ = patch_as_controller(&mut store, &t, new);
                }
            }
        }
    }
}

enum Action {
    Delete(Option<String>),
    StripOwners(Vec<String>),
    DropFinalizer(&'static str),
}
